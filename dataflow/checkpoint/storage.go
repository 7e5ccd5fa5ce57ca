package checkpoint

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/internal/base"
)

// MetadataVersion is the version field of the metadata file: 2 since
// small subtask states are inlined (FileInfo.Inline); a reader takes 1 and
// 2.
const MetadataVersion = 2

// InlineLimit is the largest subtask payload kept inside the metadata
// rather than in a file of its own (Flink's
// state.storage.fs.memory-threshold, 20 KB there): most subtasks of a job
// hold a few bytes (a source's position, a stateless operator's barrier
// state), and a file each, created and fsynced at every checkpoint, cost
// more than their bytes. The metadata is fsynced and renamed into place as
// before, so an inlined state is as durable as a file.
//
// It is 256 KiB, above Flink's default, because checkpoints here are
// taken as often as every 100 ms, where each file's create, fsync and
// later unlink cost more than encoding its bytes into the metadata (base64
// in JSON, a third more): a heap state backend's handle carries up to
// 256 KiB of its arena itself (a small keyed state whole), and a table
// sink's state its prepared epochs; with a 16 KiB limit most jobs of the
// demo wrote two or three state files per checkpoint.
const InlineLimit = 256 << 10

// trailerLen is the length of a subtask file's trailer (format.md).
const trailerLen = 12

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// FileInfo describes one stored subtask file.
type FileInfo struct {
	Vertex  string `json:"vertex"`
	Subtask int    `json:"subtask"`
	File    string `json:"file"`
	Size    int64  `json:"size"`
	CRC32C  uint32 `json:"crc32c"`
	// Inline, when not nil, is the payload itself (at most InlineLimit
	// bytes), stored in the metadata; File is then empty and Size is the
	// payload's size.
	Inline []byte `json:"inline,omitempty"`
}

// Metadata describes one completed checkpoint (format.md).
type Metadata struct {
	Version    int               `json:"version"`
	Job        string            `json:"job"`
	Checkpoint base.CheckpointID `json:"checkpoint"`
	Mode       string            `json:"mode"`
	Subtasks   []FileInfo        `json:"subtasks"`
	Shared     []string          `json:"shared,omitempty"`
	// KeyGroupHash is the key-group hash version the job's keyed state
	// was written with (state.KeyGroupHash); 0, absent, is version 1.
	KeyGroupHash int `json:"key_group_hash,omitempty"`

	// path is the file the metadata was read from or committed to.
	path string
}

// Path returns the file this metadata was read from or committed to:
// <root>/chk-<id>.metadata or <root>/chk-<id>/_metadata (doc.go, Layout);
// "" for metadata not yet committed.
func (m *Metadata) Path() string { return m.path }

// Subtask returns the file of subtask i of vertex, or false.
func (m *Metadata) Subtask(vertex string, i int) (FileInfo, bool) {
	for _, f := range m.Subtasks {
		if f.Vertex == vertex && f.Subtask == i {
			return f, true
		}
	}
	return FileInfo{}, false
}

// Storage stores a job's checkpoints under one root directory. Subtask
// files of one checkpoint may be written concurrently by the subtasks;
// Commit, Retain, Discard, Latest and Cleanup are called by the job's
// driver alone.
type Storage struct {
	fs     FS
	root   string
	retain int
	mu     struct {
		sync.Mutex
		// known holds the completed checkpoints by id, with the forms
		// each has a name in (both: invariant directory-wins): those this
		// storage committed, and, once listed, those it found in the
		// root. Metadata is immutable once written, so retention reads
		// and parses none of it again.
		known map[base.CheckpointID]stored
		// listed says that known has every completed checkpoint the root
		// held when it was last listed (by Cleanup, or the first
		// retention), so retention need not list it again: since then
		// only this storage has added or removed checkpoints.
		listed bool
		// rootMade says that this storage has made the root and synced
		// its parent.
		rootMade bool
	}
}

// stored is a completed checkpoint this storage knows of.
type stored struct {
	m     *Metadata
	forms form // the forms with a name in the root: those retention deletes
}

// NewStorage returns the storage under root keeping the newest retain
// (at least 1) completed checkpoints. It does no I/O: the root is listed
// by Cleanup or the first Retain.
func NewStorage(fs FS, root string, retain int) *Storage {
	if retain < 1 {
		retain = 1
	}
	s := &Storage{fs: fs, root: root, retain: retain}
	s.mu.known = map[base.CheckpointID]stored{}
	return s
}

// Root returns the root directory.
func (s *Storage) Root() string { return s.root }

// WriteSubtask stores payload as subtask i of vertex in checkpoint id, with
// its trailer, fsynced, and returns what the metadata records of it. A
// payload of at most InlineLimit bytes is not written: the returned
// FileInfo holds it, and so will the metadata.
func (s *Storage) WriteSubtask(id base.CheckpointID, vertex string, i int, payload []byte) (FileInfo, error) {
	if len(payload) <= InlineLimit {
		// Never nil, so that an empty payload stays inline.
		inline := append(make([]byte, 0, len(payload)), payload...)
		return FileInfo{Vertex: vertex, Subtask: i, Size: int64(len(payload)), CRC32C: crc32.Checksum(payload, castagnoli), Inline: inline}, nil
	}
	dir := s.Dir(id)
	if err := s.fs.MkdirAll(dir); err != nil {
		return FileInfo{}, fmt.Errorf("checkpoint %d: %w", id, err)
	}
	name := fmt.Sprintf("%s-%d.state", vertex, i)
	crc := crc32.Checksum(payload, castagnoli)
	data := make([]byte, 0, len(payload)+trailerLen)
	data = append(data, payload...)
	data = binary.LittleEndian.AppendUint32(data, crc)
	data = binary.LittleEndian.AppendUint64(data, uint64(len(payload)))
	if err := s.fs.WriteFile(join(dir, name), data); err != nil {
		return FileInfo{}, fmt.Errorf("checkpoint %d file %s: %w", id, name, err)
	}
	return FileInfo{Vertex: vertex, Subtask: i, File: name, Size: int64(len(data)), CRC32C: crc}, nil
}

// ReadSubtask reads and checks the payload of subtask i of vertex in the
// completed checkpoint m. A missing entry wraps base.ErrNotFound; a size or
// checksum mismatch wraps base.ErrChecksum.
func (s *Storage) ReadSubtask(m *Metadata, vertex string, i int) ([]byte, error) {
	fi, ok := m.Subtask(vertex, i)
	if !ok {
		return nil, fmt.Errorf("checkpoint %d has no state for %s subtask %d: %w", m.Checkpoint, vertex, i, base.ErrNotFound)
	}
	if fi.File == "" {
		if int64(len(fi.Inline)) != fi.Size || crc32.Checksum(fi.Inline, castagnoli) != fi.CRC32C {
			return nil, fmt.Errorf("checkpoint %d: inline state of %s subtask %d: %w", m.Checkpoint, vertex, i, base.ErrChecksum)
		}
		return fi.Inline, nil
	}
	name := join(s.Dir(m.Checkpoint), fi.File)
	data, err := s.fs.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %d: %w", m.Checkpoint, err)
	}
	if int64(len(data)) != fi.Size || len(data) < trailerLen {
		return nil, fmt.Errorf("checkpoint file %s: %d bytes, metadata says %d: %w", name, len(data), fi.Size, base.ErrChecksum)
	}
	payload := data[:len(data)-trailerLen]
	crc := binary.LittleEndian.Uint32(data[len(payload):])
	n := binary.LittleEndian.Uint64(data[len(payload)+4:])
	if n != uint64(len(payload)) || crc != fi.CRC32C || crc32.Checksum(payload, castagnoli) != crc {
		return nil, fmt.Errorf("checkpoint file %s: %w", name, base.ErrChecksum)
	}
	return payload, nil
}

// Commit makes checkpoint m.Checkpoint complete by writing its metadata
// last and atomically (invariant metadata-last), durable when it returns:
// a checkpoint whose subtask states are all inline and that references
// no shared file as the single file chk-<id>.metadata, others as
// chk-<id>/_metadata beside their state files (doc.go, Layout). An error leaves the checkpoint incomplete (an
// orphan for Cleanup or Discard) or, when it came after the rename,
// complete but perhaps not durable. The caller applies retention
// afterwards (Retain).
func (s *Storage) Commit(m *Metadata) error {
	m.Version = MetadataVersion
	// Compact JSON: indenting cost about 1% of the CPU of a run that
	// checkpoints six jobs ten times a second, for a file read only at
	// restore.
	data, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("checkpoint %d metadata: %w", m.Checkpoint, err)
	}
	// The single-file form only when the checkpoint has no file of its
	// own and references no shared file: a build before that form does
	// not see it, and its retention would delete every shared file no
	// checkpoint it sees references, leaving this one unrestorable after
	// a downgrade and an upgrade again (TestSharedFilesSurviveOlderBuild).
	f := inFile
	if len(m.Shared) > 0 {
		f = inDir
	}
	for _, fi := range m.Subtasks {
		if fi.File != "" {
			f = inDir
			break
		}
	}
	if err := s.makeRoot(); err != nil {
		return fmt.Errorf("checkpoint %d: %w", m.Checkpoint, err)
	}
	if f == inFile {
		err = s.commitFile(m.Checkpoint, data)
	} else {
		err = s.commitDir(m.Checkpoint, data)
	}
	if err != nil {
		return fmt.Errorf("checkpoint %d metadata: %w", m.Checkpoint, err)
	}
	m.path = s.metadataPath(m.Checkpoint, f)
	s.remember(m, f)
	return nil
}

// commitFile writes the single file of checkpoint id: a temporary file in
// the root, fsynced, renamed into place, and the root fsynced so that the
// rename is durable. One inode per checkpoint, and no directory: on a
// file system where every creation costs more the more inodes were
// recently deleted (ext4 without a journal checks each new inode against
// them), the directory and its metadata file were two creations and two
// deletions a checkpoint.
func (s *Storage) commitFile(id base.CheckpointID, data []byte) error {
	name := s.file(id)
	tmp := name + tempSuffix
	if err := s.fs.WriteFile(tmp, data); err != nil {
		return err
	}
	if err := s.fs.Rename(tmp, name); err != nil {
		return err
	}
	return s.fs.SyncDir(s.root)
}

// commitDir writes chk-<id>/_metadata beside the state files WriteSubtask
// wrote: a temporary file, fsynced, renamed into place, the directory
// fsynced (its state files' names with it) and then the root, which holds
// the directory's name.
func (s *Storage) commitDir(id base.CheckpointID, data []byte) error {
	dir := s.Dir(id)
	if err := s.fs.MkdirAll(dir); err != nil {
		return err
	}
	tmp := join(dir, metadataName+tempSuffix)
	if err := s.fs.WriteFile(tmp, data); err != nil {
		return err
	}
	if err := s.fs.Rename(tmp, join(dir, metadataName)); err != nil {
		return err
	}
	if err := s.fs.SyncDir(dir); err != nil {
		return err
	}
	return s.fs.SyncDir(s.root)
}

// makeRoot makes the root and syncs its parent, once per storage, so that
// the root's own name is as durable as the checkpoints in it.
func (s *Storage) makeRoot() error {
	s.mu.Lock()
	made := s.mu.rootMade
	s.mu.Unlock()
	if made {
		return nil
	}
	if err := s.fs.MkdirAll(s.root); err != nil {
		return err
	}
	if err := s.fs.SyncDir(filepath.Dir(s.root)); err != nil {
		return err
	}
	s.mu.Lock()
	s.mu.rootMade = true
	s.mu.Unlock()
	return nil
}

// remember records m, a checkpoint this storage completed in form f.
func (s *Storage) remember(m *Metadata, f form) {
	s.mu.Lock()
	s.mu.known[m.Checkpoint] = stored{m: m, forms: f}
	s.mu.Unlock()
}

// forget drops checkpoint id from the completed checkpoints known.
func (s *Storage) forget(id base.CheckpointID) {
	s.mu.Lock()
	delete(s.mu.known, id)
	s.mu.Unlock()
}

// Retain deletes completed checkpoints beyond the newest Retain and the
// shared files no retained checkpoint references. It lists the root only
// the first time (when no Cleanup did): after that the storage knows
// every completed checkpoint, having committed or listed each. It must
// not run while a checkpoint is writing shared files: the coordinator
// keeps at most one in flight and calls it after a commit.
func (s *Storage) Retain() error {
	if err := s.retention(); err != nil {
		return fmt.Errorf("checkpoint storage %s retention: %w", s.root, err)
	}
	return nil
}

// readMetadata reads the metadata of checkpoint id in form f. A missing
// file wraps base.ErrNotFound, a damaged one base.ErrCorruption.
func (s *Storage) readMetadata(id base.CheckpointID, f form) (*Metadata, error) {
	name := s.metadataPath(id, f)
	data, err := s.fs.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %d: %w", id, err)
	}
	var m Metadata
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("checkpoint %d metadata %s: %v: %w", id, name, err, base.ErrCorruption)
	}
	if (m.Version != 1 && m.Version != MetadataVersion) || m.Checkpoint != id {
		return nil, fmt.Errorf("checkpoint %d metadata %s: version %d for checkpoint %d: %w", id, name, m.Version, m.Checkpoint, base.ErrCorruption)
	}
	m.path = name
	return &m, nil
}

// Completed returns the metadata of every completed checkpoint in the
// root, read from disk, oldest first, in either form (doc.go, Layout).
// Names without readable metadata are skipped.
func (s *Storage) Completed() ([]*Metadata, error) {
	slots, err := s.slots()
	if err != nil {
		return nil, err
	}
	var out []*Metadata
	for _, x := range slots {
		m, _, err := s.resolve(x)
		if incomplete(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// Latest returns the newest completed checkpoint, read from disk, or an
// error wrapping base.ErrNotFound when there is none. It reads metadata
// from the newest id down to the first that is readable.
func (s *Storage) Latest() (*Metadata, error) {
	slots, err := s.slots()
	if err != nil {
		return nil, err
	}
	for i := len(slots) - 1; i >= 0; i-- {
		m, _, err := s.resolve(slots[i])
		if incomplete(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return m, nil
	}
	return nil, fmt.Errorf("checkpoint storage %s: no completed checkpoint: %w", s.root, base.ErrNotFound)
}

// Discard removes what an aborted checkpoint wrote: its directory, its
// single file (a Commit that failed after the rename) and a temporary
// metadata file.
func (s *Storage) Discard(id base.CheckpointID) error {
	s.forget(id)
	return errors.Join(s.remove(id, inDir|inFile), s.fs.RemoveAll(s.file(id)+tempSuffix))
}

// retention deletes completed checkpoints beyond the newest Retain, and
// then unreferenced shared files. The first one of a storage that no
// Cleanup listed lists the root for the checkpoints earlier processes
// completed; later ones work from what the storage knows.
func (s *Storage) retention() error {
	s.mu.Lock()
	listed := s.mu.listed
	s.mu.Unlock()
	if !listed {
		if err := s.learn(); err != nil {
			return err
		}
	}
	s.mu.Lock()
	all := make([]stored, 0, len(s.mu.known))
	for _, k := range s.mu.known {
		all = append(all, k)
	}
	s.mu.Unlock()
	slices.SortFunc(all, func(a, b stored) int { return cmp.Compare(a.m.Checkpoint, b.m.Checkpoint) })
	for len(all) > s.retain {
		// Forgotten only once deleted, so that a failed deletion is tried
		// again by the next retention.
		if err := s.remove(all[0].m.Checkpoint, all[0].forms); err != nil {
			return err
		}
		s.forget(all[0].m.Checkpoint)
		all = all[1:]
	}
	retained := make([]*Metadata, len(all))
	for i, k := range all {
		retained[i] = k.m
	}
	return s.sweepShared(retained)
}

// learn lists the root and adds to the known checkpoints every completed
// one there, reading the metadata of those it did not commit itself.
// Names without readable metadata are left to Cleanup.
func (s *Storage) learn() error {
	slots, err := s.slots()
	if err != nil {
		return err
	}
	for _, x := range slots {
		s.mu.Lock()
		k, ok := s.mu.known[x.id]
		s.mu.Unlock()
		if !ok {
			m, _, err := s.resolve(x)
			if incomplete(err) {
				continue
			}
			if err != nil {
				return err
			}
			k.m = m
		}
		// Every name of the id goes when the checkpoint does.
		k.forms |= x.forms
		s.mu.Lock()
		s.mu.known[x.id] = k
		s.mu.Unlock()
	}
	s.mu.Lock()
	s.mu.listed = true
	s.mu.Unlock()
	return nil
}

func (s *Storage) sweepShared(retained []*Metadata) error {
	keep := map[string]bool{}
	for _, m := range retained {
		for _, f := range m.Shared {
			keep[f] = true
		}
	}
	names, err := s.fs.List(join(s.root, sharedDir))
	if err != nil {
		return err
	}
	for _, n := range names {
		if !keep[n] {
			if err := s.fs.RemoveAll(join(s.root, sharedDir, n)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Cleanup removes orphans after a crash or a failed attempt: temporary
// metadata files, checkpoint directories and single files without
// readable metadata, the losing form of an id stored in both
// (invariant directory-wins), completed checkpoints beyond the retention,
// and shared files no retained checkpoint references. It reads every
// checkpoint's metadata from disk and so relearns what the storage knows.
// Call it when no checkpoint is in flight (before a job starts or
// restarts).
func (s *Storage) Cleanup() error {
	slots, err := s.slots()
	if err != nil {
		return err
	}
	known := map[base.CheckpointID]stored{}
	for _, x := range slots {
		if x.temp {
			if err := s.fs.RemoveAll(s.file(x.id) + tempSuffix); err != nil {
				return fmt.Errorf("checkpoint %d orphan: %w", x.id, err)
			}
		}
		m, f, err := s.resolve(x)
		switch {
		case err == nil:
			if err := s.remove(x.id, x.forms&^f); err != nil {
				return fmt.Errorf("checkpoint %d second form: %w", x.id, err)
			}
			known[x.id] = stored{m: m, forms: f}
		case incomplete(err):
			if err := s.remove(x.id, x.forms); err != nil {
				return fmt.Errorf("checkpoint %d orphan: %w", x.id, err)
			}
		default:
			return err
		}
	}
	s.mu.Lock()
	s.mu.known = known
	s.mu.listed = true
	s.mu.Unlock()
	return s.retention()
}

// Shared returns the state.SnapshotFiles view of the shared directory, for
// incremental state backends.
func (s *Storage) Shared() *SharedFiles { return &SharedFiles{s: s} }

// SharedCounting is Shared that adds to written the bytes of every shared
// file it stores (not those already stored): what a checkpoint's
// incremental state added, Flink's "checkpointed data size".
func (s *Storage) SharedCounting(written *atomic.Int64) *SharedFiles {
	return &SharedFiles{s: s, written: written}
}

// SharedFiles stores files shared between checkpoints under
// <root>/shared/.
type SharedFiles struct {
	s       *Storage
	written *atomic.Int64 // nil: not counted
}

func (f *SharedFiles) count(n int64) {
	if f.written != nil {
		f.written.Add(n)
	}
}

// WriteShared copies localPath in as shared file name unless it exists.
func (f *SharedFiles) WriteShared(name, localPath string) (int64, error) {
	if err := checkSharedName(name, base.ErrInvalidArgument); err != nil {
		return 0, err
	}
	dir := join(f.s.root, sharedDir)
	dst := join(dir, name)
	if ok, err := f.s.fs.Exists(dst); err != nil || ok {
		return 0, err
	}
	if err := f.s.fs.MkdirAll(dir); err != nil {
		return 0, err
	}
	tmp := dst + ".tmp"
	n, err := f.s.fs.CopyIn(localPath, tmp)
	if err != nil {
		return 0, fmt.Errorf("shared file %s: %w", name, err)
	}
	if err := f.s.fs.Rename(tmp, dst); err != nil {
		return 0, fmt.Errorf("shared file %s: %w", name, err)
	}
	f.count(n)
	return n, f.s.fs.SyncDir(dir)
}

// WriteSharedBytes stores data as shared file name unless it exists
// (state.SharedBytes): a temporary file, fsynced, renamed into place, the
// directory fsynced.
func (f *SharedFiles) WriteSharedBytes(name string, data []byte) error {
	if err := checkSharedName(name, base.ErrInvalidArgument); err != nil {
		return err
	}
	dir := join(f.s.root, sharedDir)
	dst := join(dir, name)
	if ok, err := f.s.fs.Exists(dst); err != nil || ok {
		return err
	}
	if err := f.s.fs.MkdirAll(dir); err != nil {
		return err
	}
	tmp := dst + ".tmp"
	if err := f.s.fs.WriteFile(tmp, data); err != nil {
		return fmt.Errorf("shared file %s: %w", name, err)
	}
	if err := f.s.fs.Rename(tmp, dst); err != nil {
		return fmt.Errorf("shared file %s: %w", name, err)
	}
	f.count(int64(len(data)))
	return f.s.fs.SyncDir(dir)
}

// ReadSharedBytes fills dst with shared file name (state.SharedBytes).
func (f *SharedFiles) ReadSharedBytes(name string, dst []byte) error {
	if err := checkSharedName(name, base.ErrCorruption); err != nil {
		return err
	}
	if err := f.s.fs.ReadFileInto(join(f.s.root, sharedDir, name), dst); err != nil {
		return fmt.Errorf("shared file %s: %w", name, err)
	}
	return nil
}

// Size returns the bytes checkpoint m holds: its subtask files and every
// shared file it references (which it may share with other checkpoints).
func (s *Storage) Size(m *Metadata) (int64, error) {
	var n int64
	for _, f := range m.Subtasks {
		n += f.Size
	}
	for _, name := range m.Shared {
		size, err := s.fs.Size(join(s.root, sharedDir, name))
		if err != nil {
			return 0, fmt.Errorf("checkpoint %d: shared file %s: %w", m.Checkpoint, name, err)
		}
		n += size
	}
	return n, nil
}

// SharedSize returns the size of shared file name (state.SharedSizer).
func (f *SharedFiles) SharedSize(name string) (int64, error) {
	if err := checkSharedName(name, base.ErrCorruption); err != nil {
		return 0, err
	}
	n, err := f.s.fs.Size(join(f.s.root, sharedDir, name))
	if err != nil {
		return 0, fmt.Errorf("shared file %s: %w", name, err)
	}
	return n, nil
}

// checkSharedName refuses a shared file name that is not a plain name in
// the shared directory (empty, ".", "..", or with a separator or a NUL
// byte), which would read or write outside it; the error wraps kind:
// base.ErrCorruption for a name read from a state handle,
// base.ErrInvalidArgument for one a backend chose.
func checkSharedName(name string, kind error) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
		return fmt.Errorf("shared file name %q is not a plain file name: %w", name, kind)
	}
	return nil
}

// ReadShared copies shared file name to localPath.
func (f *SharedFiles) ReadShared(name, localPath string) error {
	if err := checkSharedName(name, base.ErrCorruption); err != nil {
		return err
	}
	_, err := f.s.fs.CopyOut(join(f.s.root, sharedDir, name), localPath)
	if err != nil {
		return fmt.Errorf("shared file %s: %w", name, err)
	}
	return nil
}
