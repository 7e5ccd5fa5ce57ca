package checkpoint

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// oldBuildSweep does what a build before the single-file form does at a
// job's start (Cleanup, then retention): it knows completed checkpoints
// only as chk-<id>/_metadata and deletes every shared file that none of
// them references.
func oldBuildSweep(t *testing.T, root string) {
	t.Helper()
	names, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var referenced []string
	for _, e := range names {
		if _, f, ok := parseName(e.Name()); !ok || f != inDir {
			continue // chk-<id>.metadata is no name of a checkpoint to it
		}
		b, err := os.ReadFile(filepath.Join(root, e.Name(), metadataName))
		if err != nil {
			continue
		}
		var m Metadata
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		referenced = append(referenced, m.Shared...)
	}
	shared, err := os.ReadDir(filepath.Join(root, sharedDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range shared {
		if !slices.Contains(referenced, e.Name()) {
			if err := os.Remove(filepath.Join(root, sharedDir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// A checkpoint whose subtask states are all inline but which references
// shared files (the heap backend's arenas, pebble's SSTs) must stay
// visible to a build before the single-file form: that build's retention
// deletes every shared file no checkpoint it sees references, so a
// downgrade (which the directory-wins invariant expects) destroys the
// incremental state of every such job, and the upgraded build can then
// never restore it (the job restarts forever on "shared file ... not
// found").
func TestSharedFilesSurviveOlderBuild(t *testing.T) {
	root := t.TempDir()
	s := NewStorage(OSFS{}, root, 2)
	arena := []byte("arena bytes of the heap backend")
	if err := s.Shared().WriteSharedBytes("heap-1.arena", arena); err != nil {
		t.Fatal(err)
	}
	commit(t, s, 1, "small inline state", "heap-1.arena")

	oldBuildSweep(t, root)

	r := NewStorage(OSFS{}, root, 2)
	if err := r.Cleanup(); err != nil {
		t.Fatal(err)
	}
	m, err := r.Latest()
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, len(arena))
	if err := r.Shared().ReadSharedBytes("heap-1.arena", dst); err != nil {
		t.Fatalf("checkpoint %d (%s) lost its shared file to an older build's retention: %v; root holds %v",
			m.Checkpoint, m.Path(), err, rootNames(t, root))
	}
	if string(dst) != string(arena) {
		t.Fatalf("shared file reads %q, want %q", dst, arena)
	}
}
