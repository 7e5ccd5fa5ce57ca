package tablesource

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/dataflow/state/heap"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

func row(k, v int64) types.Row { return types.Row{types.NewInt64(k), types.NewInt64(v)} }

// A table with epochs 1 (two inserts), 2 (nothing), 3 (an update), 4
// (nothing, committed).
func newTable(t *testing.T) *table.Table {
	t.Helper()
	tb, err := table.Create(fileio.NewMem(), "wh/dev/t", []schema.Field{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64, Nullable: true}},
		[]string{"k"}, map[string]string{"bucket": "1"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := tb.NewWriter("w")
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.Write(1, types.Insert, row(1, 10)))
	must(w.Write(1, types.Insert, row(2, 20)))
	must(w.Write(3, types.UpdateAfter, row(1, 11)))
	msgs, err := w.PrepareCommit(4)
	must(err)
	_, err = tb.Commit(msgs)
	must(err)
	return tb
}

func drain(t *testing.T, s *Source, n int) []string {
	t.Helper()
	var out []string
	for len(out) < n {
		it, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case it.Done:
			return append(out, "done")
		case it.Epoch != base.NoEpoch:
			out = append(out, fmt.Sprintf("epoch %d", it.Epoch))
		case it.Chunk != nil:
			out = append(out, strings.TrimSuffix(strings.ReplaceAll(it.Chunk.String(), "\n", "; "), "; "))
		}
	}
	return out
}

func TestEpochsInOrderWithoutGapsAndRestore(t *testing.T) {
	tb := newTable(t)
	cfg := Config{Table: tb, Name: "t", Types: []types.Type{types.Int64, types.Int64}, UntilEpoch: 4}
	backend := heap.New()
	ctx := &operator.Context{Vertex: "src", Parallelism: 1, State: state.NewStore(backend, state.RangeOf(0, 1, 128), 128)}
	s := New(cfg)
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	first := drain(t, s, 2)
	if err := s.Snapshot(1); err != nil {
		t.Fatal(err)
	}
	snap, err := backend.Snapshot(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	rest := drain(t, s, 10)
	want := "+I (1, 10); +I (2, 20) | epoch 1 | epoch 2 | -U (1, 10); +U (1, 11) | epoch 3 | epoch 4 | done"
	if got := strings.Join(append(first, rest...), " | "); got != want {
		t.Fatalf("items:\n got %s\nwant %s", got, want)
	}
	// A restored source resumes after the checkpoint: nothing twice.
	restored, err := heap.Restore(snap.Handle, nil)
	if err != nil {
		t.Fatal(err)
	}
	s2 := New(cfg)
	if err := s2.Open(&operator.Context{Vertex: "src", Parallelism: 1, Restored: 1, State: state.NewStore(restored, state.RangeOf(0, 1, 128), 128)}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(drain(t, s2, 10), " | "); got != strings.Join(rest, " | ") {
		t.Fatalf("after restore:\n got %s\nwant %s", got, strings.Join(rest, " | "))
	}
}
