// Package checkpoint is checkpoint storage: where a job's completed
// checkpoints live, how their files are laid out, written and checked.
// The protocol that decides when to checkpoint is the coordinator
// sub-package.
//
// # Layout
//
//	<root>/chk-<id>/<vertex>-<subtask>.state   one file per subtask whose
//	                                           state is over InlineLimit
//	<root>/chk-<id>/_metadata                  written last: the commit point
//	<root>/shared/<name>                       files several checkpoints share
//	                                           (incremental state backends)
//
// Smaller subtask states are inlined in the metadata (Flink's
// memory-threshold), which saves a file creation and an fsync each per
// checkpoint for the many subtasks that hold a few bytes.
//
// A checkpoint is completed exactly when its _metadata file exists
// (invariant metadata-last): subtask files are written and fsynced first,
// then the metadata is written to a temporary file, fsynced, renamed into
// place and the directory fsynced. A crash at any instant leaves either a
// complete checkpoint or a directory without metadata, which Cleanup
// removes as an orphan.
//
// Every file read is checked: the metadata carries each subtask file's
// size and CRC-32C, and each subtask file ends with a trailer repeating
// both (format.md). A mismatch gives an error wrapping base.ErrChecksum; a
// missing or unreadable metadata file makes the checkpoint not complete.
//
// # Retention
//
// After each commit, completed checkpoints beyond the newest Retain are
// deleted, and shared files that no retained checkpoint references are
// deleted with them.
//
// All I/O goes through FS, so object storage can be added and tests can
// inject faults.
package checkpoint
