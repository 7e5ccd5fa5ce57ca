package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/sqlerr"
)

// TestPebbleStateBackendView: a view created WITH (state.backend =
// 'pebble') keeps its join state in Pebble under the data directory,
// survives a restart of the engine (its state restored from the
// checkpoint into a fresh working directory), verifies against its query
// recomputed, and leaves no state behind when dropped; an unknown backend
// is refused, naming the option.
func TestPebbleStateBackendView(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := openTest(t, dir)
	cols := []catalog.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}}
	if err := e.CreateTable(ctx, catalog.Table{Name: tName, Columns: cols, PrimaryKey: []string{"k"}}, false); err != nil {
		t.Fatal(err)
	}
	view := catalog.Name(DefaultDatabase, "pairs")
	const q = "SELECT a.k, b.k AS k2, b.v FROM t a JOIN t b ON a.v = b.k"
	err := e.CreateView(ctx, catalog.Name(DefaultDatabase, "bad"), q, map[string]string{"state.backend": "tape"}, false)
	if sqlerr.Code(err) != sqlerr.InvalidParameterValue || !strings.Contains(err.Error(), "state.backend") {
		t.Fatalf("state.backend = 'tape': %v, want invalid parameter value", err)
	}
	if err := e.CreateView(ctx, view, q, map[string]string{"state.backend": "pebble"}, false); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	state := map[int64]int64{}
	apply := func(e *Engine) {
		t.Helper()
		ep, err := e.Apply(ctx, tName, changes(r, state, 30, 1+r.IntN(8)))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.WaitCommitted(ctx, view, ep); err != nil {
			t.Fatal(err)
		}
	}
	verify := func(e *Engine) {
		t.Helper()
		res, err := e.Verify(ctx, view, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !res.OK() || res.Rows == 0 {
			t.Fatalf("verify: %s", res)
		}
	}
	for range 10 {
		apply(e)
	}
	verify(e)
	stateDir := e.stateDir(viewJobName(view))
	if es, err := os.ReadDir(stateDir); err != nil || len(es) == 0 {
		t.Fatalf("pebble working directory %s: %d entries, %v; want the join's Pebble instances", stateDir, len(es), err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openTest(t, dir)
	defer e.Close()
	for range 10 {
		apply(e)
	}
	verify(e)
	if err := e.Drop(ctx, "view", view, false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stateDir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after DROP the state directory %s is still there (%v)", stateDir, err)
	}
}
