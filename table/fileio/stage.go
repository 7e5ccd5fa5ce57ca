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
	// and never torn ([no-torn-write]) when Stage returns, the name only
	// once SyncDir of its directory has returned: after a crash before
	// that, path may be missing.
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
