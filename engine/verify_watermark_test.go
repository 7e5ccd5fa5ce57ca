package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// TestVerifyWatermarkNote checks that a view whose input's watermark
// dropped a late row is reported as different, with a note naming the
// watermark, and that an equal view has no note.
func TestVerifyWatermarkNote(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	ev := catalog.Name(DefaultDatabase, "ev")
	cols := []catalog.Column{{Name: "k", Type: types.Int64}, {Name: "ts", Type: types.Timestamp}}
	opts := map[string]string{OptionWatermarkColumn: "ts", OptionWatermarkDelay: "1s"}
	if err := e.CreateTable(ctx, catalog.Table{Name: ev, Columns: cols, Options: opts}, false); err != nil {
		t.Fatal(err)
	}
	n := catalog.Name(DefaultDatabase, "n")
	if err := e.CreateView(ctx, n, "SELECT count(*) AS c FROM ev", nil, false); err != nil {
		t.Fatal(err)
	}
	insert := func(k, sec int64) {
		c := types.NewChunk([]types.Type{types.Int64, types.Timestamp}, 1)
		c.Append(types.Insert, types.Row{types.NewInt64(k), types.NewTimestamp(sec * 1_000_000)})
		ep, err := e.Apply(ctx, ev, c)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.WaitCommitted(ctx, n, ep); err != nil {
			t.Fatal(err)
		}
	}
	insert(1, 100)
	if v, err := e.Verify(ctx, n, 0); err != nil || !v.OK() || len(v.Notes) != 0 {
		t.Fatalf("before a late row: %v %v", v, err)
	}
	insert(2, 10) // 90 s behind the watermark: dropped by the view
	v, err := e.Verify(ctx, n, 0)
	if err != nil {
		t.Fatal(err)
	}
	if v.OK() || len(v.Notes) != 2 || !strings.Contains(v.Notes[0], "input ev has a watermark (ts - 1s)") || !strings.Contains(v.String(), "note: input ev") {
		t.Fatalf("after a late row: %s", v)
	}
	if v.Notes[1] != "the view's job has dropped 1 late row so far" {
		t.Fatalf("after a late row, the count: %q", v.Notes[1])
	}
}
