package stream

import (
	"strings"
	"testing"

	"github.com/stratadb/strata/dataflow/state/heap"
	"github.com/stratadb/strata/internal/types"
)

// TestNormalizeUpsertChangelog: +U without -U and -D by key become the
// retract changelog of each epoch's net change per key; a key that ends
// an epoch as it began emits nothing; a checkpoint in the middle of an
// epoch keeps the epoch's changes.
func TestNormalizeUpsertChangelog(t *testing.T) {
	b := heap.New()
	out := &collector{}
	newOp := func() *Normalize {
		return &Normalize{Types: inTypes, KeyCols: []int{0}, KeyTypes: []types.Type{types.Int64}}
	}
	n := newOp()
	if err := n.Open(newContext(t, b, out, 0)); err != nil {
		t.Fatal(err)
	}
	epoch := func(want string) {
		t.Helper()
		before := len(out.rows())
		if err := n.OnEpoch(0); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(out.rows()[before:], "; "); got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
	step := func(kind types.RowKind, rows ...types.Row) {
		t.Helper()
		if err := n.Process(0, chunkOf(kind, rows...)); err != nil {
			t.Fatal(err)
		}
	}
	step(types.UpdateAfter, row(1, 10, "a"), row(2, 20, "b"))
	step(types.Delete, row(3, 0, "")) // a tombstone of a key never seen
	epoch("+I (1, 10, a); +I (2, 20, b)")
	// Key 1 upserted and back: nothing; key 2 upserted twice: one pair.
	step(types.UpdateAfter, row(1, 11, "a"), row(2, 21, "b"))
	step(types.UpdateBefore, row(2, 21, "b")) // dropped
	step(types.UpdateAfter, row(1, 10, "a"), row(2, 22, "c"))
	epoch("-U (2, 20, b); +U (2, 22, c)")
	// A delete by key whatever its other columns; then a checkpoint in
	// the middle of an epoch and a restore.
	step(types.Delete, types.Row{types.NewInt64(1), types.Null, types.Null})
	step(types.Insert, row(4, 40, "d"))
	if err := n.Snapshot(1); err != nil {
		t.Fatal(err)
	}
	n = newOp()
	if err := n.Open(newContext(t, b, out, 1)); err != nil {
		t.Fatal(err)
	}
	step(types.UpdateAfter, row(4, 41, "d"))
	epoch("-D (1, 10, a); +I (4, 41, d)")
}
