package fileio

// Stager is implemented by file systems on which making a new file's name
// durable costs a synchronous write of its directory (a local disk): a
// commit that creates several files stages each and syncs their directory
// once, before the file that makes them reachable is published. Object
// storage has no directories to sync and does not implement it; the
// functions Stage, SyncDir and WriteHint below fall back to PutIfAbsent,
// nothing and WriteFile.
//
// The idea is the ordering a database log relies on: write everything a
// commit record names, make it durable in one step, then write the commit
// record. Nothing reads a staged file before the snapshot (or checkpoint)
// naming it is published, and that publication happens after SyncDir.
type Stager interface {
	// Stage creates path with data; it fails with an error wrapping
	// ErrExist, changing nothing, if path exists. The content is durable
	// when Stage returns, the name only once SyncDir of its directory has
	// returned: after a crash before that, path may be missing, and after
	// a crash before Stage returned it may hold a prefix of data (an
	// unnamed file that orphan cleanup removes, see [no-torn-write]).
	Stage(path string, data []byte) error
	// SyncDir makes the names created in dir durable (fsync of the
	// directory).
	SyncDir(dir string) error
	// WriteHint replaces path with data atomically but not durably: after
	// a crash path holds its old content, its new content or, on some
	// file systems, nothing readable. For hints that readers check and
	// fall back from (LATEST, EARLIEST).
	WriteHint(path string, data []byte) error
}

// Stage creates path with data through f's Stager, or publishes it with
// PutIfAbsent when f has none (then its name is durable at once).
func Stage(f FS, path string, data []byte) error {
	if s, ok := f.(Stager); ok {
		return s.Stage(path, data)
	}
	return f.PutIfAbsent(path, data)
}

// SyncDir makes the names Stage created in dir durable; without a Stager
// there is nothing to do.
func SyncDir(f FS, dir string) error {
	if s, ok := f.(Stager); ok {
		return s.SyncDir(dir)
	}
	return nil
}

// WriteHint replaces a hint file through f's Stager, or with WriteFile
// when f has none.
func WriteHint(f FS, path string, data []byte) error {
	if s, ok := f.(Stager); ok {
		return s.WriteHint(path, data)
	}
	return f.WriteFile(path, data)
}

// Pending is a file whose content is written and durable but which has no
// name yet: Publish gives it its name with put-if-absent (failing with an
// error wrapping ErrExist, changing nothing, if the name is taken), Discard
// drops it. As with Stage, the name is durable once SyncDir of its
// directory returns. A commit prepares its snapshot file while it writes
// the manifests the snapshot names, and publishes it after they are
// durable: the snapshot's content costs no time after that point, only
// its name does.
type Pending interface {
	// Publish creates the name; call it at most once.
	Publish() error
	// Discard drops an unpublished file (best effort); after Publish it
	// does nothing.
	Discard()
}

// Preparer is implemented by file systems that can write a file's content
// durably before giving it its name (a local disk: a fsynced temporary
// file, moved to its name at Publish).
type Preparer interface {
	// Prepare writes data for path without creating path.
	Prepare(path string, data []byte) (Pending, error)
}

// Prepare writes data for path through f's Preparer; without one, the
// returned Pending holds data and its Publish is Stage (object storage:
// one put-if-absent, which is durable at once). The caller leaves data
// unchanged until Publish or Discard.
func Prepare(f FS, path string, data []byte) (Pending, error) {
	if p, ok := f.(Preparer); ok {
		return p.Prepare(path, data)
	}
	return &heldPut{f: f, path: path, data: data}, nil
}

// heldPut is the Pending of a file system without a Preparer.
type heldPut struct {
	f    FS
	path string
	data []byte
}

func (h *heldPut) Publish() error { return Stage(h.f, h.path, h.data) }

func (h *heldPut) Discard() {}
