package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/internal/base"
)

func commit(t *testing.T, s *Storage, id base.CheckpointID, payload string, shared ...string) {
	t.Helper()
	fi, err := s.WriteSubtask(id, "agg", 0, []byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(&Metadata{Job: "j", Checkpoint: id, Subtasks: []FileInfo{fi}, Shared: shared}); err != nil {
		t.Fatal(err)
	}
	if err := s.Retain(); err != nil {
		t.Fatal(err)
	}
}

func TestCommitLatestRetention(t *testing.T) {
	root := t.TempDir()
	s := NewStorage(OSFS{}, root, 2)
	if _, err := s.Latest(); !errors.Is(err, base.ErrNotFound) {
		t.Fatalf("Latest of empty storage: %v", err)
	}
	src := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(src, []byte("sst"), 0o644); err != nil {
		t.Fatal(err)
	}
	share := func(n string) {
		if _, err := s.Shared().WriteShared(n, src); err != nil {
			t.Fatal(err)
		}
	}
	share("a.sst")
	commit(t, s, 1, "one", "a.sst")
	share("a.sst") // already there: kept, not rewritten
	share("b.sst")
	commit(t, s, 2, "two", "a.sst", "b.sst")
	commit(t, s, 3, "three", "b.sst")
	// Checkpoint 4 was written but never committed: not the latest.
	if _, err := s.WriteSubtask(4, "agg", 0, []byte("four")); err != nil {
		t.Fatal(err)
	}
	m, err := s.Latest()
	if err != nil || m.Checkpoint != 3 {
		t.Fatalf("Latest = %v, %v; want checkpoint 3", m, err)
	}
	payload, err := s.ReadSubtask(m, "agg", 0)
	if err != nil || string(payload) != "three" {
		t.Fatalf("ReadSubtask = %q, %v", payload, err)
	}
	if _, err := os.Stat(s.Dir(1)); !os.IsNotExist(err) {
		t.Fatal("retention kept checkpoint 1 of 3 with retain=2")
	}
	if _, err := s.ReadSubtask(m, "agg", 1); !errors.Is(err, base.ErrNotFound) {
		t.Fatalf("missing subtask: %v", err)
	}
	if err := s.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir(4)); !os.IsNotExist(err) {
		t.Fatal("Cleanup kept the orphan checkpoint 4")
	}
	// a.sst was only referenced by checkpoints 1 and 2... 2 is retained.
	if _, err := os.Stat(filepath.Join(root, "shared", "a.sst")); err != nil {
		t.Fatal("a shared file referenced by a retained checkpoint was deleted")
	}
	commit(t, s, 5, "five", "b.sst")
	if _, err := os.Stat(filepath.Join(root, "shared", "a.sst")); !os.IsNotExist(err) {
		t.Fatal("unreferenced shared file a.sst survived")
	}
	dst := filepath.Join(t.TempDir(), "out")
	if err := s.Shared().ReadShared("b.sst", dst); err != nil {
		t.Fatal(err)
	}
}

func TestDamageDetected(t *testing.T) {
	s := NewStorage(OSFS{}, t.TempDir(), 3)
	commit(t, s, 1, strings.Repeat("payload ", InlineLimit))
	m, _ := s.Latest()
	name := filepath.Join(s.Dir(1), "agg-0.state")
	data, _ := os.ReadFile(name)
	data[2] ^= 1
	_ = os.WriteFile(name, data, 0o644)
	if _, err := s.ReadSubtask(m, "agg", 0); !errors.Is(err, base.ErrChecksum) || !errors.Is(err, base.ErrCorruption) {
		t.Fatalf("flipped bit: %v", err)
	}
	_ = os.WriteFile(name, data[:5], 0o644)
	if _, err := s.ReadSubtask(m, "agg", 0); !errors.Is(err, base.ErrChecksum) {
		t.Fatalf("truncated: %v", err)
	}
	// Damaged metadata: the checkpoint is not complete.
	_ = os.WriteFile(filepath.Join(s.Dir(1), "_metadata"), []byte("{"), 0o644)
	if _, err := s.Latest(); !errors.Is(err, base.ErrNotFound) {
		t.Fatalf("Latest with damaged metadata: %v", err)
	}
}

// TestInlineState: a small payload lives in the metadata, reads back, and a
// damaged copy there is detected; a large one gets a file.
func TestInlineState(t *testing.T) {
	root := t.TempDir()
	s := NewStorage(OSFS{}, root, 3)
	small := []byte("source position 42")
	fi, err := s.WriteSubtask(1, "src", 0, small)
	if err != nil {
		t.Fatal(err)
	}
	big, err := s.WriteSubtask(1, "agg", 0, bytes.Repeat([]byte{7}, InlineLimit+1))
	if err != nil {
		t.Fatal(err)
	}
	if fi.File != "" || big.File == "" || big.Inline != nil {
		t.Fatalf("small state in file %q, large state inline %v", fi.File, big.Inline != nil)
	}
	if err := s.Commit(&Metadata{Job: "j", Checkpoint: 1, Subtasks: []FileInfo{fi, big}}); err != nil {
		t.Fatal(err)
	}
	files, _ := os.ReadDir(s.Dir(1))
	if len(files) != 2 { // _metadata and agg-0.state
		t.Fatalf("checkpoint directory holds %d files, want 2", len(files))
	}
	m, err := s.Latest()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReadSubtask(m, "src", 0); err != nil || !bytes.Equal(got, small) {
		t.Fatalf("ReadSubtask(src) = %q, %v", got, err)
	}
	if got, err := s.ReadSubtask(m, "agg", 0); err != nil || len(got) != InlineLimit+1 {
		t.Fatalf("ReadSubtask(agg) = %d bytes, %v", len(got), err)
	}
	m.Subtasks[0].Inline[3] ^= 1
	if _, err := s.ReadSubtask(m, "src", 0); !errors.Is(err, base.ErrChecksum) {
		t.Fatalf("damaged inline state: %v", err)
	}
}

func TestSubtaskStateRoundTrip(t *testing.T) {
	in := &SubtaskState{Handle: []byte("h"), Align: barrier.AlignState{LastEpoch: 4, PendingEpoch: 5, Arrived: []int{0, 2}}, Channels: []byte{1, 2}}
	b := in.Encode()
	out, err := DecodeSubtaskState(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(out.Handle) != "h" || out.Align.LastEpoch != 4 || out.Align.PendingEpoch != 5 || len(out.Align.Arrived) != 2 || out.Align.Arrived[1] != 2 || len(out.Channels) != 2 {
		t.Fatalf("round trip = %+v", out)
	}
	for i := range len(b) {
		if _, err := DecodeSubtaskState(b[:i]); !errors.Is(err, base.ErrCorruption) {
			t.Fatalf("truncated at %d: %v", i, err)
		}
	}
}

// TestSharedCountingCountsWhatItStores: a counting view adds the bytes of
// the shared files it stores, and nothing for a file already stored.
func TestSharedCountingCountsWhatItStores(t *testing.T) {
	root := t.TempDir()
	s := NewStorage(OSFS{}, root, 2)
	var n atomic.Int64
	f := s.SharedCounting(&n)
	if err := f.WriteSharedBytes("a.arena", make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(t.TempDir(), "x.sst")
	if err := os.WriteFile(local, make([]byte, 300), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteShared("b.sst", local); err != nil {
		t.Fatal(err)
	}
	if got := n.Load(); got != 1300 {
		t.Fatalf("counted %d bytes after storing 1000 and 300, want 1300", got)
	}
	if err := f.WriteSharedBytes("a.arena", make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SharedCounting(&n).WriteShared("b.sst", local); err != nil {
		t.Fatal(err)
	}
	if got := n.Load(); got != 1300 {
		t.Fatalf("counted %d bytes after storing the same files again, want 1300", got)
	}
}

// readCountingFS counts the metadata files read through it.
type readCountingFS struct {
	OSFS
	metadataReads int
}

func (f *readCountingFS) ReadFile(name string) ([]byte, error) {
	if filepath.Base(name) == metadataName {
		f.metadataReads++
	}
	return f.OSFS.ReadFile(name)
}

// Retention after each checkpoint reads no metadata the storage committed
// itself (it is immutable), only what an earlier instance left; a restore
// (Latest) still reads from disk.
func TestRetentionReadsOnlyUnknownMetadata(t *testing.T) {
	root := t.TempDir()
	fs := &readCountingFS{}
	old := NewStorage(fs, root, 2)
	commit(t, old, 1, "one", "a.sst")
	s := NewStorage(fs, root, 2) // as after a restart: checkpoint 1 is not its own
	fs.metadataReads = 0
	for id := base.CheckpointID(2); id <= 6; id++ {
		commit(t, s, id, "state", "b.sst")
	}
	// Checkpoint 1 is read by the retentions after 2 and 3 (the second
	// deletes it); 2..6 never.
	if fs.metadataReads != 2 {
		t.Fatalf("retention read %d metadata files, want 2", fs.metadataReads)
	}
	m, err := s.Latest()
	if err != nil || m.Checkpoint != 6 {
		t.Fatalf("Latest: %v, %v", m, err)
	}
	if fs.metadataReads != 2+2 {
		t.Fatalf("Latest read %d metadata files, want the 2 retained", fs.metadataReads-2)
	}
	ms, err := s.Completed()
	if err != nil || len(ms) != 2 || ms[0].Checkpoint != 5 {
		t.Fatalf("Completed: %d checkpoints, %v", len(ms), err)
	}
}
