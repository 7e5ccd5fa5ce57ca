package state

import "github.com/stratadb/strata/internal/base"

// Backend stores a subtask's state as (namespace, user key) -> value. It
// is used by one goroutine, the subtask's.
type Backend interface {
	// Get returns the value of (ns, key) and whether it exists.
	Get(ns, key []byte) ([]byte, bool, error)
	// Set stores a copy of value under (ns, key).
	Set(ns, key, value []byte) error
	// Delete removes (ns, key); deleting a missing entry is no error.
	Delete(ns, key []byte) error
	// Iterate calls fn for every entry of ns in ascending user-key order;
	// an error from fn stops the iteration and is returned.
	Iterate(ns []byte, fn func(key, value []byte) error) error
	// DeleteNamespace removes every entry of ns.
	DeleteNamespace(ns []byte) error
	// Snapshot captures the current state for checkpoint id. The
	// capture is synchronous (it sees the state at the barrier); storing
	// large files may be left to Snapshot.Upload, which the runtime runs
	// later off the subtask's goroutine (Flink's synchronous and
	// asynchronous snapshot parts).
	Snapshot(id base.CheckpointID, files SnapshotFiles) (Snapshot, error)
	// Close releases the backend's resources.
	Close() error
}

// Snapshot is a captured state.
type Snapshot struct {
	// Handle is what Restore takes.
	Handle []byte
	// Shared names the shared files the handle references (the
	// checkpoint's metadata lists them so that retention keeps them).
	Shared []string
	// Upload, when not nil, stores the shared files through the
	// SnapshotFiles given to Snapshot. It must have returned without error
	// before the checkpoint is acknowledged. Uploads of one backend run one
	// at a time, in snapshot order.
	Upload func() error
	// Discard, when not nil, releases what the snapshot holds when the
	// checkpoint is dropped before Upload runs.
	Discard func()
	// Encode, when not nil, returns the handle (Handle is then nil). Only
	// AsyncSnapshotter.SnapshotAsync sets it; it may run on another
	// goroutine while the backend changes, after Upload, and gives the
	// state as it was at the snapshot.
	Encode func() ([]byte, error)
}

// AsyncSnapshotter is a Backend that can leave the encoding of a snapshot's
// handle to a later call off the subtask's goroutine (Flink's asynchronous
// snapshot part, which its heap backend gets from copy-on-write state
// maps). Backend.Snapshot of such a backend still returns the handle
// itself.
type AsyncSnapshotter interface {
	Backend
	// SnapshotAsync is Snapshot with the handle left to Snapshot.Encode.
	SnapshotAsync(id base.CheckpointID, files SnapshotFiles) (Snapshot, error)
}

// SnapshotFiles is the part of checkpoint storage a backend writes to:
// files private to one checkpoint, and shared files that several
// checkpoints reference (incremental snapshots).
type SnapshotFiles interface {
	// WriteShared stores the file at localPath as shared file name unless
	// a file of that name is already stored, and returns its stored size.
	WriteShared(name, localPath string) (int64, error)
	// ReadShared copies shared file name to localPath, checking its size.
	ReadShared(name, localPath string) error
}

// SharedBytes is implemented by SnapshotFiles that can store a shared file
// from memory and read one into memory, for backends whose state lives in
// memory (the heap backend's arena): no local file stands between, and a
// reader fills a buffer it allocated once for many files, in parallel.
type SharedBytes interface {
	// WriteSharedBytes stores data as shared file name, durably and
	// atomically, unless a file of that name is already stored.
	WriteSharedBytes(name string, data []byte) error
	// ReadSharedBytes fills dst with shared file name, which must have
	// exactly len(dst) bytes; another size gives an error wrapping
	// base.ErrChecksum, a missing file one wrapping base.ErrNotFound. It
	// may be called from several goroutines at once.
	ReadSharedBytes(name string, dst []byte) error
}

// SharedSizer is implemented by SnapshotFiles that can tell a shared file's
// size without reading it, so that a restore checks the sizes a handle
// gives before it allocates buffers for them: a damaged handle could give
// terabytes.
type SharedSizer interface {
	// SharedSize returns the size in bytes of shared file name; a missing
	// file gives an error wrapping base.ErrNotFound.
	SharedSize(name string) (int64, error)
}
