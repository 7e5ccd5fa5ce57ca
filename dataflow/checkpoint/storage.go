package checkpoint

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"strconv"
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

const (
	metadataName = "_metadata"
	sharedDir    = "shared"
	chkPrefix    = "chk-"
	trailerLen   = 12
)

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
}

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
// Commit, Latest and Cleanup are called by the job's driver alone.
type Storage struct {
	fs     FS
	root   string
	retain int
	// mu guards known: the metadata of the completed checkpoints this
	// storage committed, by id. Metadata is immutable once written, so
	// retention after every checkpoint lists the directories but reads
	// and parses only the metadata of checkpoints it did not commit.
	mu    sync.Mutex
	known map[base.CheckpointID]*Metadata
}

// NewStorage returns the storage under root keeping the newest retain
// (at least 1) completed checkpoints.
func NewStorage(fs FS, root string, retain int) *Storage {
	if retain < 1 {
		retain = 1
	}
	return &Storage{fs: fs, root: root, retain: retain, known: map[base.CheckpointID]*Metadata{}}
}

// Root returns the root directory.
func (s *Storage) Root() string { return s.root }

// Dir returns the directory of checkpoint id.
func (s *Storage) Dir(id base.CheckpointID) string {
	return join(s.root, chkPrefix+strconv.FormatUint(uint64(id), 10))
}

func parseChk(name string) (base.CheckpointID, bool) {
	if !strings.HasPrefix(name, chkPrefix) {
		return 0, false
	}
	n, err := strconv.ParseUint(name[len(chkPrefix):], 10, 64)
	if err != nil || n == 0 {
		return 0, false
	}
	return base.CheckpointID(n), true
}

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
// last and atomically (invariant metadata-last). An error leaves the
// checkpoint incomplete (an orphan for Cleanup). The caller applies
// retention afterwards (Retain).
func (s *Storage) Commit(m *Metadata) error {
	m.Version = MetadataVersion
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("checkpoint %d metadata: %w", m.Checkpoint, err)
	}
	dir := s.Dir(m.Checkpoint)
	if err := s.fs.MkdirAll(dir); err != nil {
		return fmt.Errorf("checkpoint %d: %w", m.Checkpoint, err)
	}
	tmp := join(dir, metadataName+".tmp")
	if err := s.fs.WriteFile(tmp, data); err != nil {
		return fmt.Errorf("checkpoint %d metadata: %w", m.Checkpoint, err)
	}
	if err := s.fs.Rename(tmp, join(dir, metadataName)); err != nil {
		return fmt.Errorf("checkpoint %d metadata: %w", m.Checkpoint, err)
	}
	if err := s.fs.SyncDir(dir); err != nil {
		return fmt.Errorf("checkpoint %d directory: %w", m.Checkpoint, err)
	}
	s.remember(m)
	return nil
}

// remember caches m, a completed checkpoint's metadata.
func (s *Storage) remember(m *Metadata) {
	s.mu.Lock()
	s.known[m.Checkpoint] = m
	s.mu.Unlock()
}

// forget drops the cached metadata of checkpoint id.
func (s *Storage) forget(id base.CheckpointID) {
	s.mu.Lock()
	delete(s.known, id)
	s.mu.Unlock()
}

// Retain deletes completed checkpoints beyond the newest Retain and the
// shared files no retained checkpoint references. It must not run while a
// checkpoint is writing shared files: the coordinator keeps at most one in
// flight and calls it after a commit.
func (s *Storage) Retain() error {
	if err := s.retention(); err != nil {
		return fmt.Errorf("checkpoint storage %s retention: %w", s.root, err)
	}
	return nil
}

// readMetadata reads the metadata of checkpoint id. A missing file wraps
// base.ErrNotFound, a damaged one base.ErrCorruption.
func (s *Storage) readMetadata(id base.CheckpointID) (*Metadata, error) {
	data, err := s.fs.ReadFile(join(s.Dir(id), metadataName))
	if err != nil {
		return nil, fmt.Errorf("checkpoint %d: %w", id, err)
	}
	var m Metadata
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("checkpoint %d metadata: %v: %w", id, err, base.ErrCorruption)
	}
	if (m.Version != 1 && m.Version != MetadataVersion) || m.Checkpoint != id {
		return nil, fmt.Errorf("checkpoint %d metadata: version %d for checkpoint %d: %w", id, m.Version, m.Checkpoint, base.ErrCorruption)
	}
	return &m, nil
}

// ids returns the checkpoint ids that have a directory, ascending.
func (s *Storage) ids() ([]base.CheckpointID, error) {
	names, err := s.fs.List(s.root)
	if err != nil {
		return nil, fmt.Errorf("checkpoint storage %s: %w", s.root, err)
	}
	var ids []base.CheckpointID
	for _, n := range names {
		if id, ok := parseChk(n); ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// Completed returns the metadata of every completed checkpoint, oldest
// first. Directories without readable metadata are skipped.
func (s *Storage) Completed() ([]*Metadata, error) { return s.completed(false) }

// completed is Completed; with cached, the metadata of checkpoints this
// storage committed is taken from memory instead of read again (for
// retention; a restore reads what is on disk).
func (s *Storage) completed(cached bool) ([]*Metadata, error) {
	ids, err := s.ids()
	if err != nil {
		return nil, err
	}
	var out []*Metadata
	for _, id := range ids {
		s.mu.Lock()
		known, ok := s.known[id]
		s.mu.Unlock()
		if ok && cached {
			out = append(out, known)
			continue
		}
		m, err := s.readMetadata(id)
		if errors.Is(err, base.ErrNotFound) || errors.Is(err, base.ErrCorruption) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// Latest returns the newest completed checkpoint, or an error wrapping
// base.ErrNotFound when there is none.
func (s *Storage) Latest() (*Metadata, error) {
	ms, err := s.Completed()
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("checkpoint storage %s: no completed checkpoint: %w", s.root, base.ErrNotFound)
	}
	return ms[len(ms)-1], nil
}

// Discard removes what an aborted checkpoint wrote.
func (s *Storage) Discard(id base.CheckpointID) error {
	s.forget(id)
	return s.fs.RemoveAll(s.Dir(id))
}

// retention deletes completed checkpoints beyond the newest Retain, and
// then unreferenced shared files.
func (s *Storage) retention() error {
	ms, err := s.completed(true)
	if err != nil {
		return err
	}
	for len(ms) > s.retain {
		s.forget(ms[0].Checkpoint)
		if err := s.fs.RemoveAll(s.Dir(ms[0].Checkpoint)); err != nil {
			return err
		}
		ms = ms[1:]
	}
	return s.sweepShared(ms)
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

// Cleanup removes orphans after a crash or a failed attempt: checkpoint
// directories without valid metadata, completed checkpoints beyond the
// retention, and shared files no retained checkpoint references. Call it
// when no checkpoint is in flight (before a job starts or restarts).
func (s *Storage) Cleanup() error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := s.readMetadata(id); err != nil {
			if !errors.Is(err, base.ErrNotFound) && !errors.Is(err, base.ErrCorruption) {
				return err
			}
			s.forget(id)
			if err := s.fs.RemoveAll(s.Dir(id)); err != nil {
				return fmt.Errorf("checkpoint %d orphan: %w", id, err)
			}
		}
	}
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

// ReadShared copies shared file name to localPath.
func (f *SharedFiles) ReadShared(name, localPath string) error {
	_, err := f.s.fs.CopyOut(join(f.s.root, sharedDir, name), localPath)
	if err != nil {
		return fmt.Errorf("shared file %s: %w", name, err)
	}
	return nil
}
