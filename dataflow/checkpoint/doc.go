// Package checkpoint is checkpoint storage: where a job's completed
// checkpoints live, how their files are laid out, written and checked.
// The protocol that decides when to checkpoint is the coordinator
// sub-package.
//
// # Layout
//
//	<root>/chk-<id>.metadata                   a checkpoint whose subtask
//	                                           states are all inline and
//	                                           that references no shared
//	                                           file: its metadata alone
//	<root>/chk-<id>/<vertex>-<subtask>.state   one file per subtask whose
//	                                           state is over InlineLimit
//	<root>/chk-<id>/_metadata                  written last: the commit point
//	                                           of a checkpoint with state files
//	<root>/shared/<name>                       files several checkpoints share
//	                                           (incremental state backends)
//
// Smaller subtask states are inlined in the metadata (Flink's
// memory-threshold), which saves a file creation and an fsync each per
// checkpoint for the many subtasks that hold a few bytes. A checkpoint
// left with no state file then needs no directory either: it is the
// single file chk-<id>.metadata (the single-file form), one inode created
// and later deleted per checkpoint instead of a directory and its
// metadata file. Checkpoints with state files keep the directory form,
// and so do those written before the single-file form existed; every
// reader takes both. Builds before the single-file form do not see it,
// so a checkpoint that references shared files keeps the directory form
// too: such a build's retention deletes every shared file that no
// checkpoint it sees references, and after a downgrade and an upgrade
// again the checkpoint could not be restored.
//
// A checkpoint is completed exactly when its metadata file exists under
// its final name (invariant metadata-last). In the single-file form the
// metadata is written to <root>/chk-<id>.metadata.tmp, fsynced, renamed
// into place and the root fsynced. In the directory form subtask files
// are written and fsynced first, then the metadata is written to a
// temporary file in the directory, fsynced, renamed to _metadata, the
// directory fsynced and then the root. Commit returns once the rename is
// durable. A crash at any instant leaves either a complete checkpoint or
// an orphan (a temporary file, a directory without metadata), which
// Cleanup removes.
//
// Should one id have both forms with readable metadata (no build writes
// that; an older build may write the directory after a newer one wrote
// the file, on a downgrade), the directory wins (invariant
// directory-wins): readers take its metadata and Cleanup deletes the
// single file.
//
// Every file read is checked: the metadata carries each subtask file's
// size and CRC-32C, and each subtask file ends with a trailer repeating
// both (format.md). A mismatch gives an error wrapping base.ErrChecksum; a
// missing or unreadable metadata file makes the checkpoint not complete.
//
// # Retention
//
// After each commit, completed checkpoints beyond the newest Retain are
// deleted, in whichever form they are, and shared files that no retained
// checkpoint references are deleted with them. The storage knows every
// completed checkpoint it committed and caches its metadata; it lists the
// root once, at Cleanup or at its first retention, to learn those earlier
// processes completed, so a retention neither lists the root nor reads
// any metadata again. It still lists shared/, whose files an aborted
// checkpoint may have left without any metadata naming them.
//
// All I/O goes through FS, so object storage can be added and tests can
// inject faults.
package checkpoint
