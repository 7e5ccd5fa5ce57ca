package pebble

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/dataflow/state/statetest"
	"github.com/stratadb/strata/internal/base"
)

// countingFiles counts the bytes stored as shared files.
type countingFiles struct {
	*checkpoint.SharedFiles
	written int64
}

func (c *countingFiles) WriteShared(name, local string) (int64, error) {
	n, err := c.SharedFiles.WriteShared(name, local)
	c.written += n
	return n, err
}

func TestSuite(t *testing.T) {
	root := t.TempDir()
	files := checkpoint.NewStorage(checkpoint.OSFS{}, filepath.Join(root, "chk"), 100).Shared()
	n := 0
	dir := func() string { n++; return filepath.Join(root, fmt.Sprintf("db%d", n)) }
	statetest.Run(t, statetest.Factory{
		New: func(t *testing.T) state.Backend {
			b, err := Open(dir())
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
		Restore: func(t *testing.T, h []byte, f state.SnapshotFiles) state.Backend {
			b, err := Restore(dir(), h, f)
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
		Files: files,
	})
}

// TestIncremental: after a large state is checkpointed once, a checkpoint
// after a small change stores about the size of the change, and a restore
// from it sees both the old and the new data.
func TestIncremental(t *testing.T) {
	root := t.TempDir()
	files := &countingFiles{SharedFiles: checkpoint.NewStorage(checkpoint.OSFS{}, filepath.Join(root, "chk"), 100).Shared()}
	b, err := Open(filepath.Join(root, "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	val := make([]byte, 100)
	rng := rand.New(rand.NewPCG(1, 2))
	ns := []byte("ns")
	const big = 200000 // ~20 MB of values
	for i := range big {
		for j := range val {
			val[j] = byte(rng.Uint32()) // incompressible
		}
		if err := b.Set(ns, fmt.Appendf(nil, "key-%08d", i), val); err != nil {
			t.Fatal(err)
		}
	}
	if sn, err := b.Snapshot(1, files); err != nil || sn.Upload() != nil {
		t.Fatal(err)
	}
	first := files.written
	const small = 2000 // ~1% of the state
	for i := range small {
		if err := b.Set(ns, fmt.Appendf(nil, "new-%08d", i), val); err != nil {
			t.Fatal(err)
		}
	}
	files.written = 0
	sn, err := b.Snapshot(2, files)
	if err != nil {
		t.Fatal(err)
	}
	if err := sn.Upload(); err != nil {
		t.Fatal(err)
	}
	h, shared := sn.Handle, sn.Shared
	second := files.written
	t.Logf("first checkpoint stored %d bytes, the second %d bytes (%d shared files)", first, second, len(shared))
	if first < 5<<20 {
		t.Fatalf("first checkpoint stored only %d bytes of a ~20 MB state", first)
	}
	if second*20 > first {
		t.Fatalf("second checkpoint stored %d bytes after a 1%% change of a state whose checkpoint took %d", second, first)
	}
	r, err := Restore(filepath.Join(root, "restored"), h, files)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, k := range []string{"key-00000000", fmt.Sprintf("key-%08d", big-1), "new-00000000", fmt.Sprintf("new-%08d", small-1)} {
		if _, ok, err := r.Get(ns, []byte(k)); !ok || err != nil {
			t.Fatalf("restored state lacks %s: %v", k, err)
		}
	}
	if _, ok, _ := r.Get(ns, []byte("key-x")); ok {
		t.Fatal("restored state has a key never written")
	}
}

func TestRestoreRejectsDamage(t *testing.T) {
	root := t.TempDir()
	for i, h := range [][]byte{nil, {7}, {handleVersion, 5}} {
		if _, err := Restore(filepath.Join(root, fmt.Sprint(i)), h, nil); !errors.Is(err, base.ErrCorruption) {
			t.Errorf("Restore(%x) = %v, want corruption", h, err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "exists"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(filepath.Join(root, "exists")); !errors.Is(err, base.ErrInvalidArgument) {
		t.Errorf("Open of an existing dir: %v", err)
	}
}
