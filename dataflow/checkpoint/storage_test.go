package checkpoint

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
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

// rootNames returns the names in root, sorted.
func rootNames(t *testing.T, root string) []string {
	t.Helper()
	names, err := OSFS{}.List(root)
	if err != nil {
		t.Fatal(err)
	}
	return names
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
	if _, err := s.WriteSubtask(4, "agg", 0, bytes.Repeat([]byte("4"), InlineLimit+1)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir(4)); err != nil {
		t.Fatalf("checkpoint 4's state file: %v", err)
	}
	m, err := s.Latest()
	if err != nil || m.Checkpoint != 3 {
		t.Fatalf("Latest = %v, %v; want checkpoint 3", m, err)
	}
	payload, err := s.ReadSubtask(m, "agg", 0)
	if err != nil || string(payload) != "three" {
		t.Fatalf("ReadSubtask = %q, %v", payload, err)
	}
	if got := rootNames(t, root); !slices.Equal(got, []string{"chk-2", "chk-3", "chk-4", "shared"}) {
		t.Fatalf("root holds %q after retention kept 2 and 3 of 1..3", got)
	}
	if _, err := s.ReadSubtask(m, "agg", 1); !errors.Is(err, base.ErrNotFound) {
		t.Fatalf("missing subtask: %v", err)
	}
	if err := s.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if got := rootNames(t, root); !slices.Equal(got, []string{"chk-2", "chk-3", "shared"}) {
		t.Fatalf("root holds %q after Cleanup, want the orphan checkpoint 4 gone", got)
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

// countingFS counts the metadata files read and the listings of the root
// through it.
type countingFS struct {
	OSFS
	root                  string
	metadataReads, listed int
}

func (f *countingFS) ReadFile(name string) ([]byte, error) {
	if b := filepath.Base(name); b == metadataName || strings.HasSuffix(b, fileSuffix) {
		f.metadataReads++
	}
	return f.OSFS.ReadFile(name)
}

func (f *countingFS) List(dir string) ([]string, error) {
	if filepath.Clean(dir) == filepath.Clean(f.root) {
		f.listed++
	}
	return f.OSFS.List(dir)
}

// Retention lists the root once, the first time, and reads only the
// metadata an earlier instance left, which it then deletes in turn; a
// restore (Latest) still reads from disk, the newest checkpoint only.
func TestRetentionListsRootOnce(t *testing.T) {
	for _, cleanup := range []bool{false, true} {
		t.Run(fmt.Sprintf("cleanup=%v", cleanup), func(t *testing.T) {
			root := t.TempDir()
			fs := &countingFS{root: root}
			old := NewStorage(fs, root, 2)
			commit(t, old, 1, "one", "a.sst")
			commit(t, old, 2, strings.Repeat("2", InlineLimit+1), "a.sst") // the directory form
			s := NewStorage(fs, root, 2)                                   // as after a restart
			fs.metadataReads, fs.listed = 0, 0
			if cleanup {
				if err := s.Cleanup(); err != nil {
					t.Fatal(err)
				}
			}
			for id := base.CheckpointID(3); id <= 8; id++ {
				commit(t, s, id, "state", "b.sst")
				if id == 3 && !rootHas(t, root, "chk-2") {
					t.Fatal("retention after checkpoint 3 deleted checkpoint 2")
				}
			}
			// Cleanup reads 1 and 2 and then retention never; without
			// Cleanup the first retention reads them, after checkpoint 3.
			if fs.metadataReads != 2 || fs.listed != 1 {
				t.Fatalf("retentions read %d metadata files and listed the root %d times, want 2 and 1", fs.metadataReads, fs.listed)
			}
			if got := rootNames(t, root); !slices.Equal(got, []string{"chk-7", "chk-8"}) {
				t.Fatalf("root holds %q, want checkpoints 7 and 8", got)
			}
			m, err := s.Latest()
			if err != nil || m.Checkpoint != 8 || fs.metadataReads != 3 {
				t.Fatalf("Latest: %s, %v, after %d metadata reads; want checkpoint 8 after 1", latestName(m), err, fs.metadataReads-2)
			}
			ms, err := s.Completed()
			if err != nil || len(ms) != 2 || ms[0].Checkpoint != 7 || ms[1].Checkpoint != 8 {
				t.Fatalf("Completed: %d checkpoints, %v", len(ms), err)
			}
		})
	}
}

func rootHas(t *testing.T, root, name string) bool {
	t.Helper()
	return slices.Contains(rootNames(t, root), name)
}

// TestSingleFileForm: a checkpoint whose states are all inline adds
// exactly one file to the root and no directory; one with a state file
// adds its directory holding the file and the metadata. Both restore, as
// they are and through a storage opened afterwards.
func TestSingleFileForm(t *testing.T) {
	root := t.TempDir()
	s := NewStorage(OSFS{}, root, 5)
	small := []byte("source position 42")
	commit(t, s, 1, string(small))
	if got := rootNames(t, root); !slices.Equal(got, []string{"chk-1.metadata"}) {
		t.Fatalf("root holds %q after an all-inline checkpoint, want chk-1.metadata alone", got)
	}
	if st, err := os.Stat(filepath.Join(root, "chk-1.metadata")); err != nil || !st.Mode().IsRegular() {
		t.Fatalf("chk-1.metadata: %v, %v", st, err)
	}
	bigState := bytes.Repeat([]byte{9}, InlineLimit+1)
	commit(t, s, 2, string(bigState))
	if got := rootNames(t, root); !slices.Equal(got, []string{"chk-1.metadata", "chk-2"}) {
		t.Fatalf("root holds %q after a checkpoint with a state file, want chk-2 added", got)
	}
	if got := rootNames(t, s.Dir(2)); !slices.Equal(got, []string{metadataName, "agg-0.state"}) {
		t.Fatalf("chk-2 holds %q", got)
	}
	commit(t, s, 3, "three")
	if got := rootNames(t, root); !slices.Equal(got, []string{"chk-1.metadata", "chk-2", "chk-3.metadata"}) {
		t.Fatalf("root holds %q after checkpoint 3", got)
	}
	for _, r := range []*Storage{s, NewStorage(OSFS{}, root, 5)} {
		ms, err := r.Completed()
		if err != nil || len(ms) != 3 {
			t.Fatalf("Completed: %d, %v", len(ms), err)
		}
		wantPath := []string{join(root, "chk-1.metadata"), join(root, "chk-2", metadataName), join(root, "chk-3.metadata")}
		wantState := [][]byte{small, bigState, []byte("three")}
		for i, m := range ms {
			if m.Checkpoint != base.CheckpointID(i+1) || m.Path() != wantPath[i] {
				t.Fatalf("completed %d: checkpoint %d at %s, want %d at %s", i, m.Checkpoint, m.Path(), i+1, wantPath[i])
			}
			if got, err := r.ReadSubtask(m, "agg", 0); err != nil || !bytes.Equal(got, wantState[i]) {
				t.Fatalf("checkpoint %d state: %d bytes, %v", m.Checkpoint, len(got), err)
			}
		}
	}
}

// writeOld writes checkpoint id as a build before the single-file form
// did, by hand: chk-<id>/_metadata with the given JSON, and a state file
// when state is not nil.
func writeOld(t *testing.T, root string, id int, metadata string, state []byte) {
	t.Helper()
	dir := filepath.Join(root, fmt.Sprintf("chk-%d", id))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if state != nil {
		data := binary.LittleEndian.AppendUint32(slices.Clone(state), crc32.Checksum(state, castagnoli))
		data = binary.LittleEndian.AppendUint64(data, uint64(len(state)))
		if err := os.WriteFile(filepath.Join(dir, "agg-0.state"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "_metadata"), []byte(metadata), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOldLayout: a root written before the single-file form (every
// checkpoint a directory, all-inline ones too, metadata of versions 1 and
// 2, an orphan) restores, and its checkpoints are retained and deleted
// like new ones while new ones are written beside them.
func TestOldLayout(t *testing.T) {
	root := t.TempDir()
	v1 := []byte("version 1 state in a file")
	writeOld(t, root, 1, fmt.Sprintf(`{"version": 1, "job": "j", "checkpoint": 1, "mode": "aligned",
		"subtasks": [{"vertex": "agg", "subtask": 0, "file": "agg-0.state", "size": %d, "crc32c": %d}]}`,
		len(v1)+trailerLen, crc32.Checksum(v1, castagnoli)), v1)
	v2 := []byte("inline state")
	writeOld(t, root, 2, fmt.Sprintf(`{"version": 2, "job": "j", "checkpoint": 2, "mode": "aligned",
		"subtasks": [{"vertex": "agg", "subtask": 0, "file": "", "size": %d, "crc32c": %d, "inline": "%s"}],
		"key_group_hash": 2}`, len(v2), crc32.Checksum(v2, castagnoli), base64.StdEncoding.EncodeToString(v2)), nil)
	// Checkpoint 3 crashed before its metadata was renamed into place.
	if err := os.MkdirAll(filepath.Join(root, "chk-3"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "chk-3", "_metadata.tmp"), []byte(`{"vers`), 0o644); err != nil {
		t.Fatal(err)
	}

	s := NewStorage(OSFS{}, root, 2)
	m, err := s.Latest()
	if err != nil || m.Checkpoint != 2 || m.KeyGroupHash != 2 || m.Path() != join(root, "chk-2", metadataName) {
		t.Fatalf("Latest of the old layout: %s, %v", latestName(m), err)
	}
	if got, err := s.ReadSubtask(m, "agg", 0); err != nil || !bytes.Equal(got, v2) {
		t.Fatalf("old inline state: %q, %v", got, err)
	}
	ms, err := s.Completed()
	if err != nil || len(ms) != 2 {
		t.Fatalf("Completed of the old layout: %d, %v", len(ms), err)
	}
	if got, err := s.ReadSubtask(ms[0], "agg", 0); err != nil || !bytes.Equal(got, v1) {
		t.Fatalf("old version-1 state file: %q, %v", got, err)
	}
	if err := s.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if got := rootNames(t, root); !slices.Equal(got, []string{"chk-1", "chk-2"}) {
		t.Fatalf("root holds %q after Cleanup, want the orphan chk-3 gone", got)
	}
	commit(t, s, 3, "three")
	if got := rootNames(t, root); !slices.Equal(got, []string{"chk-2", "chk-3.metadata"}) {
		t.Fatalf("root holds %q after checkpoint 3, want old checkpoint 1 deleted", got)
	}
	commit(t, s, 4, "four")
	if got := rootNames(t, root); !slices.Equal(got, []string{"chk-3.metadata", "chk-4.metadata"}) {
		t.Fatalf("root holds %q after checkpoint 4, want old checkpoint 2 deleted", got)
	}
}

// TestDirectoryWins: when one id has both forms, readers take the
// directory's metadata while it is readable, else the single file's, and
// Cleanup deletes the other; retention deletes both.
func TestDirectoryWins(t *testing.T) {
	root := t.TempDir()
	s := NewStorage(OSFS{}, root, 1)
	commit(t, s, 5, "file")
	file, err := os.ReadFile(filepath.Join(root, "chk-5.metadata"))
	if err != nil {
		t.Fatal(err)
	}
	dirMeta := strings.Replace(string(file), `"mode":""`, `"mode":"from the directory"`, 1)
	if dirMeta == string(file) {
		t.Fatalf("no mode in %s", file)
	}
	writeOld(t, root, 5, dirMeta, nil)
	r := NewStorage(OSFS{}, root, 1)
	m, err := r.Latest()
	if err != nil || m.Mode != "from the directory" || m.Path() != join(root, "chk-5", metadataName) {
		t.Fatalf("Latest of both forms: %s, %v", latestName(m), err)
	}
	if ms, err := r.Completed(); err != nil || len(ms) != 1 || ms[0].Mode != "from the directory" {
		t.Fatalf("Completed of both forms: %d, %v", len(ms), err)
	}
	if err := r.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if got := rootNames(t, root); !slices.Equal(got, []string{"chk-5"}) {
		t.Fatalf("root holds %q after Cleanup, want the directory alone", got)
	}

	// A damaged directory loses to the file.
	if err := os.WriteFile(filepath.Join(root, "chk-5.metadata"), file, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "chk-5", metadataName), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if m, err := r.Latest(); err != nil || m.Mode != "" || m.Path() != join(root, "chk-5.metadata") {
		t.Fatalf("Latest with a damaged directory: %s, %v", latestName(m), err)
	}
	if err := r.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if got := rootNames(t, root); !slices.Equal(got, []string{"chk-5.metadata"}) {
		t.Fatalf("root holds %q after Cleanup, want the file alone", got)
	}

	// Retention, listing the root for the first time, deletes both.
	writeOld(t, root, 5, dirMeta, nil)
	r = NewStorage(OSFS{}, root, 1)
	commit(t, r, 6, "six")
	if got := rootNames(t, root); !slices.Equal(got, []string{"chk-6.metadata"}) {
		t.Fatalf("root holds %q after retention, want checkpoint 6 alone", got)
	}
}

// TestDiscardAndOrphans: Discard removes both forms and a temporary
// metadata file; Cleanup removes temporary files, directories without
// metadata and damaged single files, and leaves names that are not
// checkpoints.
func TestDiscardAndOrphans(t *testing.T) {
	root := t.TempDir()
	s := NewStorage(OSFS{}, root, 3)
	commit(t, s, 1, "one")
	for _, n := range []string{"chk-2.metadata", "chk-2.metadata.tmp", "chk-3.metadata.tmp", "chk-4.metadata", "chk-07.metadata", "notes"} {
		if err := os.WriteFile(filepath.Join(root, n), []byte("{"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.WriteSubtask(2, "agg", 0, bytes.Repeat([]byte{2}, InlineLimit+1)); err != nil {
		t.Fatal(err)
	}
	if err := s.Discard(2); err != nil {
		t.Fatal(err)
	}
	want := []string{"chk-07.metadata", "chk-1.metadata", "chk-3.metadata.tmp", "chk-4.metadata", "notes"}
	if got := rootNames(t, root); !slices.Equal(got, want) {
		t.Fatalf("root holds %q after Discard(2), want %q", got, want)
	}
	if m, err := s.Latest(); err != nil || m.Checkpoint != 1 {
		t.Fatalf("Latest with a damaged checkpoint 4: %s, %v", latestName(m), err)
	}
	if err := s.Cleanup(); err != nil {
		t.Fatal(err)
	}
	want = []string{"chk-07.metadata", "chk-1.metadata", "notes"}
	if got := rootNames(t, root); !slices.Equal(got, want) {
		t.Fatalf("root holds %q after Cleanup, want %q", got, want)
	}
}

func TestParseName(t *testing.T) {
	for _, c := range []struct {
		name string
		id   base.CheckpointID
		f    form
		ok   bool
	}{
		{"chk-12", 12, inDir, true},
		{"chk-12.metadata", 12, inFile, true},
		{"chk-12.metadata.tmp", 12, 0, true},
		{"chk-0", 0, 0, false},
		{"chk-012", 0, 0, false},
		{"chk-+1", 0, 0, false},
		{"chk-", 0, 0, false},
		{"chk-.metadata", 0, 0, false},
		{"chk-1.tmp", 0, 0, false},
		{"chk-1.metadata.metadata", 0, 0, false},
		{"shared", 0, 0, false},
		{"chk-18446744073709551616", 0, 0, false},
	} {
		id, f, ok := parseName(c.name)
		if id != c.id || f != c.f || ok != c.ok {
			t.Errorf("parseName(%q) = %d, %d, %v; want %d, %d, %v", c.name, id, f, ok, c.id, c.f, c.ok)
		}
	}
}

// removeFailingFS fails RemoveAll while fail is set.
type removeFailingFS struct {
	OSFS
	fail bool
}

func (f *removeFailingFS) RemoveAll(name string) error {
	if f.fail {
		return errInjected
	}
	return f.OSFS.RemoveAll(name)
}

// A checkpoint that retention failed to delete is deleted by the next
// one, which lists nothing to find it.
func TestRetentionRetriesFailedDeletion(t *testing.T) {
	root := t.TempDir()
	fs := &removeFailingFS{}
	s := NewStorage(fs, root, 1)
	commit(t, s, 1, "one")
	fs.fail = true
	fi, err := s.WriteSubtask(2, "agg", 0, []byte("two"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(&Metadata{Job: "j", Checkpoint: 2, Subtasks: []FileInfo{fi}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Retain(); !errors.Is(err, errInjected) {
		t.Fatalf("Retain with a failing RemoveAll: %v", err)
	}
	fs.fail = false
	commit(t, s, 3, "three")
	if got := rootNames(t, root); !slices.Equal(got, []string{"chk-3.metadata"}) {
		t.Fatalf("root holds %q, want checkpoint 3 alone", got)
	}
}

// TestSharedFileNamesChecked: a shared file name that is not a plain name
// in the shared directory is refused (as corrupt when read from a handle,
// as invalid when a backend writes it), and SharedSize gives a stored
// file's size.
func TestSharedFileNamesChecked(t *testing.T) {
	sf := NewStorage(OSFS{}, t.TempDir(), 1).Shared()
	if err := sf.WriteSharedBytes("heap-1-1.arena", []byte("abc")); err != nil {
		t.Fatal(err)
	}
	if n, err := sf.SharedSize("heap-1-1.arena"); err != nil || n != 3 {
		t.Fatalf("SharedSize = %d, %v; want 3", n, err)
	}
	if _, err := sf.SharedSize("missing"); !errors.Is(err, base.ErrNotFound) {
		t.Errorf("SharedSize of a missing file: %v, want not found", err)
	}
	for _, name := range []string{"", ".", "..", "../x", "/etc/hostname", "a\\b", "a\x00b"} {
		if err := sf.ReadSharedBytes(name, make([]byte, 3)); !errors.Is(err, base.ErrCorruption) {
			t.Errorf("ReadSharedBytes(%q): %v, want corruption", name, err)
		}
		if _, err := sf.SharedSize(name); !errors.Is(err, base.ErrCorruption) {
			t.Errorf("SharedSize(%q): %v, want corruption", name, err)
		}
		if err := sf.ReadShared(name, filepath.Join(t.TempDir(), "out")); !errors.Is(err, base.ErrCorruption) {
			t.Errorf("ReadShared(%q): %v, want corruption", name, err)
		}
		if err := sf.WriteSharedBytes(name, []byte("x")); !errors.Is(err, base.ErrInvalidArgument) {
			t.Errorf("WriteSharedBytes(%q): %v, want invalid argument", name, err)
		}
	}
}
