package olap

import (
	"context"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

// TestMultisetInput: a multiset view's table (keyed by all columns, the
// multiplicity last) reads with each row as often as its count says and
// without the count column, in queries ([multiset-inputs]) and in Verify;
// a wrong count is a difference.
func TestMultisetInput(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t)
	fs := fileio.NewMem()
	bids, err := table.Create(fs, "wh/dev/bids", []schema.Field{{Name: "item", Type: types.Text}, {Name: "price", Type: types.Int64}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	view, err := table.Create(fs, "wh/dev/v", []schema.Field{
		{Name: "item", Type: types.Text}, {Name: "_strata_count", Type: types.Int64},
	}, []string{"item"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	bw, _ := bids.NewWriter("ingest")
	b := func(item string, price int64) change { return ins(types.Row{types.NewText(item), i64(price)}) }
	commitEpoch(t, bids, bw, 1, b("a", 1), b("a", 2), b("a", 2), b("b", 5))
	commitEpoch(t, bids, bw, 2, b("b", 1))
	vw, _ := view.NewWriter("view")
	v := func(item string, n int64) types.Row { return types.Row{types.NewText(item), i64(n)} }
	commitEpoch(t, view, vw, 1, ins(v("a", 3)), ins(v("b", 1)))
	commitEpoch(t, view, vw, 2, upd(v("b", 2)))

	res, err := e.Query(ctx, []Input{{Name: "v", Table: view, Epoch: 2, Multiset: true}}, "SELECT * FROM v ORDER BY item", QueryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Columns) != 1 || res.Columns[0].Name != "item" {
		t.Fatalf("columns %v, want item only", res.Columns)
	}
	if got := text(res.Rows); got != "a\na\na\nb\nb\n" {
		t.Errorf("rows at epoch 2:\n%s\nwant a three times, b twice", got)
	}
	const q = "SELECT item FROM bids"
	for ep := base.Epoch(1); ep <= 2; ep++ {
		d, err := e.Verify(ctx, q, []Input{{Name: "bids", Table: bids, Epoch: ep}}, Input{Name: "v", Table: view, Epoch: ep, Multiset: true})
		if err != nil {
			t.Fatal(err)
		}
		if !d.Empty() || d.Stored != map[base.Epoch]int{1: 4, 2: 5}[ep] {
			t.Errorf("epoch %d: stored %d rows: %s", ep, d.Stored, d)
		}
	}
	// The view at epoch 1 against the input at 2 misses one b.
	d, err := e.Verify(ctx, q, []Input{{Name: "bids", Table: bids, Epoch: 2}}, Input{Name: "v", Table: view, Epoch: 1, Multiset: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Missing) != 1 || len(d.Extra) != 0 {
		t.Errorf("view at 1, input at 2: %s", d)
	}
}
