package task

import (
	"slices"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/internal/types"
)

// TestSelectRowsMatchesChunkSelect: the exchange's fast row selection
// gives what Chunk.Select gives, for every representation of a column.
func TestSelectRowsMatchesChunkSelect(t *testing.T) {
	ts := []types.Type{types.Int64, types.Text, types.Float64, types.Numeric, types.Interval, types.Bool}
	c := types.NewChunk(ts, 4)
	for i := range 5 {
		row := types.Row{types.NewInt64(int64(i)), types.NewText(string(rune('a' + i))), types.NewFloat64(float64(i) / 2),
			types.NewNumeric(apd.New(int64(i), -1)), types.NewInterval(types.IntervalValue{Months: int32(i), Days: 1, Micros: int64(i)}), types.NewBool(i%2 == 0)}
		if i == 3 {
			row = types.Row{types.Null, types.Null, types.Null, types.Null, types.Null, types.Null}
		}
		c.Append(types.RowKind(i%4), row)
	}
	sel := []int{4, 0, 3, 3, 1}
	sel32 := []int32{4, 0, 3, 3, 1}
	got := selectRows(c, sel32, scan(c, chunkFacts{}))
	want := c.Select(sel).String()
	if got.String() != want {
		t.Fatalf("selectRows:\n%s\nChunk.Select:\n%s", got, want)
	}
	// The columns share their backing arrays: growing one must leave
	// the others as they are.
	for k := range got.Cols {
		got.Cols[k].Nulls = append(got.Cols[k].Nulls, true)
		if got.Cols[k].Ints != nil {
			got.Cols[k].Ints = append(got.Cols[k].Ints, -7)
		}
	}
	got.Kinds = append(got.Kinds, types.Insert)
	for k := range got.Cols {
		got.Cols[k].Nulls = got.Cols[k].Nulls[:len(sel)]
		if got.Cols[k].Ints != nil {
			got.Cols[k].Ints = got.Cols[k].Ints[:len(sel)]
		}
	}
	got.Kinds = got.Kinds[:len(sel)]
	if got.String() != want {
		t.Fatalf("selectRows after appends to its columns:\n%s\nwant:\n%s", got, want)
	}
}

// TestSelectRowsWithoutNullsOrRetractions covers the path that leaves
// all-zero kinds and NULL flags ungathered, next to a column with NULLs.
func TestSelectRowsWithoutNullsOrRetractions(t *testing.T) {
	ts := []types.Type{types.Int64, types.Text, types.Int64}
	c := types.NewChunk(ts, 6)
	for i := range 6 {
		third := types.NewInt64(int64(-i))
		if i == 2 {
			third = types.Null
		}
		c.Append(types.Insert, types.Row{types.NewInt64(int64(i * 3)), types.NewText(string(rune('p' + i))), third})
	}
	f := scan(c, chunkFacts{})
	if !f.allInserts || !f.noNulls[0] || !f.noNulls[1] || f.noNulls[2] {
		t.Fatalf("facts %+v", f)
	}
	sel := []int{5, 2, 0}
	if got, want := selectRows(c, []int32{5, 2, 0}, f).String(), c.Select(sel).String(); got != want {
		t.Fatalf("selectRows:\n%s\nChunk.Select:\n%s", got, want)
	}
}

// TestSelectPooledMatchesChunkSelect: the recycling path gives what
// Chunk.Select gives, into a new chunk and into a recycled one whose
// memory still holds another chunk's rows, NULLs and retractions.
func TestSelectPooledMatchesChunkSelect(t *testing.T) {
	ts := []types.Type{types.Int64, types.Int32, types.Bool}
	mk := func(seed int64, nulls, retract bool) *types.Chunk {
		c := types.NewChunk(ts, 8)
		for i := range int64(8) {
			row := types.Row{types.NewInt64(seed*100 + i), types.NewInt32(int32(seed - i)), types.NewBool(i%3 == 0)}
			if nulls && i%2 == 1 {
				row[1] = types.Null
			}
			kind := types.Insert
			if retract && i%4 == 2 {
				kind = types.UpdateBefore
			}
			c.Append(kind, row)
		}
		return c
	}
	dirty, clean := mk(7, true, true), mk(3, false, false)
	if !intsOnly(dirty) || !intsOnly(clean) {
		t.Fatal("integer and boolean chunks are Ints-only")
	}
	sel := []int{6, 1, 4, 5, 0, 7}
	sel32 := []int32{6, 1, 4, 5, 0, 7}
	buf := selectPooled(dirty, sel32, scan(dirty, chunkFacts{}), nil)
	if got, want := buf.String(), dirty.Select(sel).String(); got != want {
		t.Fatalf("new chunk:\n%s\nwant:\n%s", got, want)
	}
	// Reuse the memory for fewer rows of a chunk without NULLs or
	// retractions: every stale value must be overwritten.
	got := selectPooled(clean, sel32[:4], scan(clean, chunkFacts{}), buf)
	if got != buf {
		t.Fatal("the recycled chunk was not reused")
	}
	if want := clean.Select(sel[:4]).String(); got.String() != want {
		t.Fatalf("recycled chunk:\n%s\nwant:\n%s", got, want)
	}
	text := types.NewChunk([]types.Type{types.Int64, types.Text}, 1)
	text.Append(types.Insert, types.Row{types.NewInt64(1), types.NewText("x")})
	if intsOnly(text) {
		t.Fatal("a chunk with a text column is not Ints-only")
	}
}

// TestSplitRoutesByKeyGroup: the exchange sends every row to the subtask
// that owns its key's group (state.KeyGroupOf of the encoded key, then
// state.SubtaskOf), in row order, with a power-of-two maximum parallelism
// (the masked path) and another, to two and three targets; splitInt64,
// which takes two targets and a power-of-two maximum, selects the same
// rows as split, and declines the other edges and a key column with NULLs.
// TestSelectPooledAnyColumnCount: selectPooled gathers the Ints two
// columns at a time, and the last one alone when their number is odd; for
// one to five columns, new and recycled, it gives what Chunk.Select gives.
func TestSelectPooledAnyColumnCount(t *testing.T) {
	for ncols := 1; ncols <= 5; ncols++ {
		ts := make([]types.Type, ncols)
		for k := range ts {
			ts[k] = types.Int64
		}
		var buf *types.Chunk
		for round := range int64(3) {
			c := types.NewChunk(ts, 16)
			for i := range int64(16) {
				row := make(types.Row, ncols)
				for k := range row {
					row[k] = types.NewInt64((round+1)*1000*int64(k+1) - i*int64(k+3))
				}
				c.Append(types.Insert, row)
			}
			sel := []int{15, 2, 3, 9, 0, 11, 7}[:7-round]
			sel32 := make([]int32, len(sel))
			for j, i := range sel {
				sel32[j] = int32(i)
			}
			buf = selectPooled(c, sel32, scan(c, chunkFacts{}), buf)
			if got, want := buf.String(), c.Select(sel).String(); got != want {
				t.Fatalf("%d columns, round %d:\n%s\nwant:\n%s", ncols, round, got, want)
			}
		}
	}
}

func TestSplitRoutesByKeyGroup(t *testing.T) {
	ts := []types.Type{types.Int64, types.Int64}
	c := types.NewChunk(ts, 0)
	for i := range 3000 {
		c.Append(types.Insert, types.Row{types.NewInt64(int64(i*i) - 40000), types.NewInt64(int64(i))})
	}
	withNull := types.NewChunk(ts, 0)
	withNull.Append(types.Insert, types.Row{types.NewInt64(1), types.NewInt64(1)})
	withNull.Append(types.Insert, types.Row{types.Null, types.NewInt64(2)})
	for _, tc := range []struct{ maxPar, targets int }{{128, 3}, {1000, 3}, {128, 2}, {1000, 2}} {
		maxPar, targets := tc.maxPar, tc.targets
		o := &edgeOut{edge: graph.Edge{Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: ts[:1]}, maxPar: maxPar,
			sel: make([][]int32, targets), route: make([]int32, maxPar)}
		for g := range o.route {
			o.route[g] = int32(state.SubtaskOf(state.KeyGroup(g), maxPar, targets))
		}
		o.hashes = state.HashKeys(c, o.edge.KeyColumns, o.edge.KeyTypes, o.hashes)
		o.split(c.Len())
		seen := 0
		for tg, sel := range o.sel {
			for j, r := range sel {
				if j > 0 && sel[j-1] >= r {
					t.Fatalf("max %d, %d targets: target %d rows out of order: %v", maxPar, targets, tg, sel[j-1:j+1])
				}
				key := types.EncodeKey(nil, c.Row(int(r)), []int{0}, ts[:1])
				if want := state.SubtaskOf(state.KeyGroupOf(key, maxPar), maxPar, targets); want != tg {
					t.Fatalf("max %d, %d targets: row %d sent to %d, its key group belongs to %d", maxPar, targets, r, tg, want)
				}
			}
			if len(sel) == 0 {
				t.Fatalf("max %d, %d targets: no rows for target %d", maxPar, targets, tg)
			}
			seen += len(sel)
		}
		if seen != c.Len() {
			t.Fatalf("max %d, %d targets: %d rows routed of %d", maxPar, targets, seen, c.Len())
		}

		want := make([][]int32, targets)
		for tg := range o.sel {
			want[tg] = slices.Clone(o.sel[tg])
		}
		o.facts = scan(c, o.facts)
		fused := o.splitInt64(c)
		if fused != (targets == 2 && maxPar == 128) {
			t.Fatalf("max %d, %d targets: splitInt64 took the edge: %v", maxPar, targets, fused)
		}
		if fused && !slices.EqualFunc(o.sel, want, slices.Equal) {
			t.Fatalf("max %d, %d targets: splitInt64 selected %v rows, split %v", maxPar, targets, lens(o.sel), lens(want))
		}
		o.facts = scan(withNull, o.facts)
		if o.splitInt64(withNull) {
			t.Fatalf("max %d, %d targets: splitInt64 took a key column with NULLs", maxPar, targets)
		}
	}
}

func lens(sel [][]int32) []int {
	var n []int
	for _, s := range sel {
		n = append(n, len(s))
	}
	return n
}
