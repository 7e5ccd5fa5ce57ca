package stream

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/dataflow/state/heap"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
)

// expandInTypes is the input of the column-wise expansion tests: (a
// BIGINT, s TEXT, t TIMESTAMPTZ, x NUMERIC).
var expandInTypes = []types.Type{types.Int64, types.Text, types.TimestampTZ, types.Numeric}

// randomExpandChunk returns n random rows of expandInTypes with every row
// kind, NULLs in every column, times at ±infinity and before 1970.
func randomExpandChunk(t *testing.T, rng *rand.Rand, n int) *types.Chunk {
	t.Helper()
	kinds := []types.RowKind{types.Insert, types.Delete, types.UpdateBefore, types.UpdateAfter}
	c := types.NewChunk(expandInTypes, n)
	for range n {
		r := make(types.Row, 4)
		if rng.IntN(8) > 0 {
			r[0] = types.NewInt64(rng.Int64N(5))
		}
		if rng.IntN(8) > 0 {
			r[1] = types.NewText(strings.Repeat("s", rng.IntN(3)))
		}
		switch rng.IntN(20) {
		case 0:
		case 1:
			r[2] = types.NewTimestampTZ(types.TimestampInfinity)
		case 2:
			r[2] = types.NewTimestampTZ(types.TimestampNegInfinity)
		default:
			r[2] = types.NewTimestampTZ(rng.Int64N(40*86_400*sec) - 20*86_400*sec)
		}
		if rng.IntN(4) > 0 {
			r[3] = mustNumeric(t, []string{"1.5", "1.50", "-2", "0"}[rng.IntN(4)])
		}
		c.Append(kinds[rng.IntN(len(kinds))], r)
	}
	return c
}

// TestWindowExpandColumnsMatchRows checks that the column-wise
// expansion emits what the row-by-row expansion emits, row for row, for
// every window kind, local windows, outputs that reorder, repeat and drop
// columns, and random inputs with retractions, NULLs and infinite times.
func TestWindowExpandColumnsMatchRows(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	ref := func(i int) expr.Expr {
		typ := types.TimestampTZ
		if i < len(expandInTypes) {
			typ = expandInTypes[i]
		}
		return &expr.ColumnRef{Index: i, Typ: typ}
	}
	projections := map[string][]expr.Expr{
		"all":      nil,
		"keys":     {ref(0), ref(4), ref(5)},
		"reorder":  {ref(5), ref(3), ref(1), ref(0), ref(4), ref(2)},
		"repeated": {ref(0), ref(0), ref(4), ref(4)},
	}
	windows := []struct {
		kind                plan.WindowKind
		size, slide, offset int64
		loc                 *time.Location
	}{
		{plan.Tumble, 10 * sec, 0, 0, nil},
		{plan.Tumble, 86_400 * sec, 0, 3 * sec, nil},
		{plan.Hop, 10 * sec, 2 * sec, 0, nil},
		{plan.Hop, 86_400 * sec, 3_600 * sec, 0, ny},
		{plan.Cumulate, 10 * sec, 5 * sec, 0, nil},
		{plan.Cumulate, 2 * 86_400 * sec, 86_400 * sec, 0, ny},
	}
	for name, exprs := range projections {
		for _, win := range windows {
			var outs [2]*collector
			for i := range outs {
				outs[i] = &collector{}
				w := &WindowExpand{Kind: win.kind, InTypes: expandInTypes, TimeCol: 2, Size: win.size, Slide: win.slide,
					Offset: win.offset, Loc: win.loc, Exprs: exprs, rowWise: i == 1}
				if err := w.Open(newContext(t, heap.New(), outs[i], 0)); err != nil {
					t.Fatal(err)
				}
				if w.colSrc == nil {
					t.Fatalf("%s: the column-wise expansion does not apply", name)
				}
				r := rand.New(rand.NewPCG(uint64(len(name)), uint64(win.size)))
				for range 20 {
					if err := w.Process(0, randomExpandChunk(t, r, r.IntN(200))); err != nil {
						t.Fatal(err)
					}
				}
			}
			cols, rows := outs[0].rows(), outs[1].rows()
			if len(rows) < 1000 {
				t.Fatalf("%s %s: only %d rows expanded", name, win.kind, len(rows))
			}
			if !slices.Equal(cols, rows) {
				t.Fatalf("%s %s size %d: column-wise expansion differs:\n%v\nrow by row:\n%v", name, win.kind, win.size, cols[:min(20, len(cols))], rows[:min(20, len(rows))])
			}
		}
	}
	// An output that computes something goes row by row.
	w := &WindowExpand{Kind: plan.Tumble, InTypes: expandInTypes, TimeCol: 2, Size: 10 * sec,
		Exprs: []expr.Expr{&expr.Const{Value: types.NewInt64(1)}}}
	if err := w.Open(newContext(t, heap.New(), &collector{}, 0)); err != nil {
		t.Fatal(err)
	}
	if w.colSrc != nil {
		t.Fatal("a constant output column was taken for a column of the expanded row")
	}
}

// TestWindowExpandColumnsExact checks the column-wise expansion's rows
// on a small input: each row once per window, in window order, NULL and
// infinite times dropped, kinds kept.
func TestWindowExpandColumnsExact(t *testing.T) {
	out := &collector{}
	w := &WindowExpand{Kind: plan.Hop, InTypes: bidTypes, TimeCol: 1, Size: 10 * sec, Slide: 5 * sec,
		Exprs: []expr.Expr{&expr.ColumnRef{Index: 3, Typ: types.Timestamp}, &expr.ColumnRef{Index: 0, Typ: types.Int64}}}
	if err := w.Open(newContext(t, heap.New(), out, 0)); err != nil {
		t.Fatal(err)
	}
	c := bids(types.Insert, bid(1, 5))
	c.Append(types.Insert, types.Row{types.NewInt64(1), types.Null})
	c.Append(types.Delete, types.Row{types.Null, types.NewTimestamp(-sec)})
	c.Append(types.Insert, types.Row{types.NewInt64(3), types.NewTimestamp(types.TimestampInfinity)})
	if err := w.Process(0, c); err != nil {
		t.Fatal(err)
	}
	want := "+I (1970-01-01 00:00:10, 1); +I (1970-01-01 00:00:15, 1); " +
		"-D (1970-01-01 00:00:00, NULL); -D (1970-01-01 00:00:05, NULL)"
	if got := strings.Join(out.rows(), "; "); got != want {
		t.Fatalf("expand:\n got %s\nwant %s", got, want)
	}
}
