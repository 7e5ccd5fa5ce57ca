package stream

import (
	"strings"
	"testing"

	"github.com/stratadb/strata/dataflow/state/heap"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
)

// versionedTable is a LookupTable whose rows change by epoch: versions[e]
// maps a key to its row from epoch e on.
type versionedTable struct {
	versions map[base.Epoch]map[int64]types.Row
	calls    []base.Epoch
}

func (v *versionedTable) LookupAt(e base.Epoch, keys []types.Row) ([]types.Row, error) {
	v.calls = append(v.calls, e)
	out := make([]types.Row, len(keys))
	for i, k := range keys {
		for at := base.Epoch(0); at <= e; at++ {
			if r, ok := v.versions[at][k[0].Int64()]; ok {
				out[i] = r
			}
		}
	}
	return out, nil
}

// TestLookupJoinReadsTheTableAtTheRowsEpoch: rows meet the table as it is
// at their own epoch; a later change does not revisit them; a row whose
// key is NULL or absent is dropped by an inner join and NULL-padded by a
// left one; the open epoch's rows survive a checkpoint and a reopen.
func TestLookupJoinReadsTheTableAtTheRowsEpoch(t *testing.T) {
	tbl := &versionedTable{versions: map[base.Epoch]map[int64]types.Row{
		1: {1: {types.NewInt64(1), types.NewText("gold")}},
		3: {1: {types.NewInt64(1), types.NewText("platinum")}, 2: {types.NewInt64(2), types.NewText("silver")}},
	}}
	dimTypes := []types.Type{types.Int64, types.Text}
	for _, c := range []struct {
		kind plan.JoinKind
		want []string
	}{
		{plan.InnerJoin, []string{"+I (1, 10, a, 1, gold)", "+I (1, 11, b, 1, gold)", "+I (1, 12, c, 1, platinum); +I (2, 13, d, 2, silver)"}},
		{plan.LeftJoin, []string{"+I (1, 10, a, 1, gold); +I (2, 20, b, NULL, NULL)", "+I (1, 11, b, 1, gold); +I (NULL, 0, n, NULL, NULL)", "+I (1, 12, c, 1, platinum); +I (2, 13, d, 2, silver)"}},
	} {
		b := heap.New()
		out := &collector{}
		newOp := func() *LookupJoin {
			return &LookupJoin{Kind: c.kind, LeftTypes: inTypes, RightTypes: dimTypes,
				Keys: []expr.Expr{&expr.ColumnRef{Index: 0, Typ: types.Int64}}, KeyTypes: []types.Type{types.Int64}, Table: tbl}
		}
		j := newOp()
		if err := j.Open(newContext(t, b, out, 0)); err != nil {
			t.Fatal(err)
		}
		var got []string
		epoch := func(e base.Epoch) {
			n := len(out.rows())
			if err := j.OnEpoch(e); err != nil {
				t.Fatal(err)
			}
			got = append(got, strings.Join(out.rows()[n:], "; "))
		}
		step := func(rows ...types.Row) {
			if err := j.Process(0, chunkOf(types.Insert, rows...)); err != nil {
				t.Fatal(err)
			}
		}
		step(row(1, 10, "a"), row(2, 20, "b"))
		epoch(1)
		step(row(1, 11, "b"))
		step(types.Row{types.Null, types.NewInt64(0), types.NewText("n")})
		if c.kind == plan.InnerJoin {
			// Checkpoint mid-epoch, reopen: the buffered rows come back.
			if err := j.Snapshot(1); err != nil {
				t.Fatal(err)
			}
			j = newOp()
			if err := j.Open(newContext(t, b, out, 1)); err != nil {
				t.Fatal(err)
			}
		}
		epoch(2)
		step(row(1, 12, "c"), row(2, 13, "d"))
		epoch(3)
		if strings.Join(got, " | ") != strings.Join(c.want, " | ") {
			t.Fatalf("%s join:\n got %q\nwant %q", c.kind, got, c.want)
		}
		if err := j.Process(0, chunkOf(types.Delete, row(1, 10, "a"))); err == nil {
			t.Fatal("a retraction in the stream was accepted")
		}
	}
	// The table was read at each epoch, once per epoch.
	if got := tbl.calls; len(got) != 6 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Fatalf("lookups at epochs %v", got)
	}
}
