package engine

import (
	"context"
	"testing"

	"github.com/stratadb/strata/internal/base"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
)

// TestNewViewStartsAtInputsPresent runs the epoch clock for many epochs,
// then creates views over a table created just before (empty, nothing
// committed yet), over such a view, and over a table whose only rows were
// written near the clock's start and whose epochs since changed nothing.
// Each view's first epoch must be near the clock's present, not near the
// server's start (inputsPresent), and each must equal its query: the old
// table's history backfilled exactly once, later writes streamed.
func TestNewViewStartsAtInputsPresent(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	cols := []catalog.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}}
	oldT, newT := catalog.Name(DefaultDatabase, "old_t"), catalog.Name(DefaultDatabase, "new_t")
	for _, n := range []catalog.ObjectName{oldT, newT} {
		if n == newT {
			// The clock runs a while before the new table exists.
			if _, err := e.Meta().WaitEpoch(ctx, 120); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.CreateTable(ctx, catalog.Table{Name: n, Columns: cols, PrimaryKey: []string{"k"}}, false); err != nil {
			t.Fatal(err)
		}
		if n == oldT {
			// History: rows written in the clock's first epochs.
			c := types.NewChunk([]types.Type{types.Int64, types.Int64}, 4)
			for k := range int64(4) {
				c.Append(types.Insert, types.Row{types.NewInt64(k), types.NewInt64(10 * k)})
			}
			if _, err := e.Apply(ctx, oldT, c); err != nil {
				t.Fatal(err)
			}
		}
	}
	cur, err := e.Meta().CurrentEpoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	overNew, overView, overOld := catalog.Name(DefaultDatabase, "over_new"), catalog.Name(DefaultDatabase, "over_view"), catalog.Name(DefaultDatabase, "over_old")
	for _, v := range []struct {
		name  catalog.ObjectName
		query string
	}{
		{overNew, "SELECT k % 2 AS g, sum(v) AS s, count(*) AS n FROM new_t GROUP BY k % 2"},
		{overView, "SELECT sum(s) AS total FROM over_new"},
		{overOld, "SELECT k % 2 AS g, sum(v) AS s, count(*) AS n FROM old_t GROUP BY k % 2"},
	} {
		var inputs []catalog.ObjectName
		switch v.name {
		case overNew:
			inputs = []catalog.ObjectName{newT}
		case overView:
			inputs = []catalog.ObjectName{overNew}
		case overOld:
			inputs = []catalog.ObjectName{oldT}
		}
		committed := committedEpoch(t, e, inputs[0])
		if err := e.CreateView(ctx, v.name, v.query, nil, false); err != nil {
			t.Fatal(err)
		}
		// The view's first epoch is the one after its start_after: past
		// what its input had committed before, and, for an input that had
		// committed nothing, near the clock's present. Before a new input
		// counted as committed up to the clock's last closed epoch, a view
		// over a new table started after epoch 0 and closed every epoch
		// since; the margin of half the clock leaves room for the inputs'
		// commit lag on a loaded machine.
		start := e.ViewStartEpoch(ctx, v.name)
		if start <= committed || 2*start < cur.Epoch {
			t.Fatalf("view %s starts at epoch %d; its input %s had committed %d and the clock was at %d when it was created",
				v.name.Name, start, inputs[0].Name, committed, cur.Epoch)
		}
	}

	// Writes after the views exist stream into them.
	c := types.NewChunk([]types.Type{types.Int64, types.Int64}, 3)
	for k := range int64(3) {
		c.Append(types.Insert, types.Row{types.NewInt64(k), types.NewInt64(k + 1)})
	}
	wrote := map[catalog.ObjectName]base.Epoch{}
	if wrote[newT], err = e.Apply(ctx, newT, c); err != nil {
		t.Fatal(err)
	}
	c = types.NewChunk([]types.Type{types.Int64, types.Int64}, 2)
	c.Append(types.UpdateBefore, types.Row{types.NewInt64(1), types.NewInt64(10)})
	c.Append(types.UpdateAfter, types.Row{types.NewInt64(1), types.NewInt64(11)})
	if wrote[oldT], err = e.Apply(ctx, oldT, c); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		names []catalog.ObjectName
		view  catalog.ObjectName
		rows  string
	}{
		// new_t: (0,1) (1,2) (2,3): g 0 sums 1+3 over 2 rows, g 1 sums 2.
		{[]catalog.ObjectName{newT, overNew, overView}, overNew, "(0, 4, 2)\n(1, 2, 1)"},
		{[]catalog.ObjectName{newT, overNew, overView}, overView, "(6)"},
		// old_t: (0,0) (1,11) (2,20) (3,30), each row counted once.
		{[]catalog.ObjectName{oldT, overOld}, overOld, "(0, 20, 2)\n(1, 41, 2)"},
	} {
		// A strong read after the views have committed the writes'
		// epoch sees them (reads wait as a session's SELECT would).
		for _, n := range want.names {
			if err := e.WaitCommitted(ctx, n, wrote[want.names[0]]); err != nil {
				t.Fatal(err)
			}
		}
		r, err := e.ReadConsistent(ctx, want.names, version.Strong, "test")
		if err != nil {
			t.Fatal(err)
		}
		if got := sorted(r.Rows[want.view]); got != want.rows {
			t.Fatalf("view %s at epochs %v:\n%s\nwant\n%s", want.view.Name, r.Version.Epochs, got, want.rows)
		}
		if ep, start := r.Version.Epochs[want.view], e.ViewStartEpoch(ctx, want.view); ep < start {
			t.Fatalf("view %s read at epoch %d, before its first epoch %d", want.view.Name, ep, start)
		}
	}
}

// committedEpoch returns table name's committed epoch.
func committedEpoch(t *testing.T, e *Engine, name catalog.ObjectName) base.Epoch {
	t.Helper()
	tb, err := e.Table(name)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tb.CommittedEpoch()
	if err != nil {
		t.Fatal(err)
	}
	return c
}
