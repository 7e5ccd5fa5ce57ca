// Package scan reads tables: batch reads of a snapshot (merge on read),
// at an epoch or latest, and streaming reads of the changelog from a
// snapshot onward, resumable from a serializable Position and delimited by
// epochs.
//
// # Batch reads
//
// A batch read takes the snapshot's live files, groups them by bucket,
// merges each bucket's runs with the table's merge function and drops
// retract results (mergetree). Files are decoded in parallel, a bounded
// number at a time (GOMAXPROCS), into record.Blocks, and each bucket
// merges as soon as its files are decoded, so every core decodes or
// merges until the end. ReadChunks gives the merged rows as chunks sliced
// from each bucket's merged columns (mergetree.MergeValues gathers only
// the values), without a datum per value; Read builds rows of datums from
// them, ReadKVs records with keys and sequence numbers.
// ReadAtEpoch(E) reads the newest snapshot
// whose epoch is <= E; that is the table at epoch E as long as the
// table's committed epoch is >= E (the caller checks that against the
// meta service's consistent version).
//
// A batch read is not registered anywhere: if expiration removes its
// snapshot while it runs, it fails with an error wrapping base.ErrNotFound.
// The default snapshot.time-retained (1h) keeps this from happening in
// practice; a longer read should pin its snapshot with a tag.
//
// # Streaming reads
//
// A Stream walks the snapshots from Position.Snapshot on. Each APPEND
// snapshot is one epoch: the stream returns its changelog records (for
// append tables: the rows of its new data files) in pieces of at most
// MaxRows, then an end-of-epoch batch, after which the caller may emit
// epoch barrier Batch.Epoch. COMPACT and ROLLBACK snapshots carry no
// changes and are skipped. Epochs that changed nothing have no snapshot:
// when the stream is caught up, CommittedEpoch tells up to which epoch all
// changes have been delivered. The Position after each batch is what a
// source stores in its checkpoint; with a consumer id the stream also
// persists it, so expiration keeps what the stream still needs
// (snapshot.SetConsumer, the expiry fence).
//
// A stream reads a snapshot's changelog a file at a time (invariant
// one-file): it lists the snapshot's files when it reaches it, decodes
// only the file that holds its offset, and drops that file once its
// records are returned, so a stream holds at most one decoded file and
// one piece of rows, however large the snapshot. Position.Offset counts
// records of the whole snapshot's changelog (its files concatenated in
// manifest order), so a saved position resumes at the same record
// whatever the pieces' bounds were; the files before it are skipped by
// the record counts their manifest entries give.
package scan
