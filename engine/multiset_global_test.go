package engine

import (
	"context"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// TestMultisetOverGlobalAggregates: a multiset view over the UNION ALL of
// two global aggregates (one row each, updated by every write) holds
// exactly the current two rows after several writes, and verifies.
func TestMultisetOverGlobalAggregates(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	name := catalog.Name(DefaultDatabase, "orders")
	if err := e.CreateTable(ctx, catalog.Table{Name: name, PrimaryKey: []string{"id"},
		Columns: []catalog.Column{{Name: "id", Type: types.Int64}, {Name: "amount", Type: types.Int64}}}, false); err != nil {
		t.Fatal(err)
	}
	v := catalog.Name(DefaultDatabase, "totals")
	if err := e.CreateView(ctx, v, "SELECT sum(amount) AS x FROM orders UNION ALL SELECT count(*) AS x FROM orders", nil, false); err != nil {
		t.Fatal(err)
	}
	var last base.Epoch
	for i := int64(1); i <= 4; i++ {
		c := types.NewChunk([]types.Type{types.Int64, types.Int64}, 1)
		c.Append(types.Insert, types.Row{types.NewInt64(i), types.NewInt64(10 * i)})
		ep, err := e.Apply(ctx, name, c)
		if err != nil {
			t.Fatal(err)
		}
		last = ep
	}
	if err := e.WaitCommitted(ctx, v, last); err != nil {
		t.Fatal(err)
	}
	_, rows, _, err := e.ReadAt(ctx, v, last)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("totals at epoch %d: %v, want the sum and the count", last, rows)
	}
	res, err := e.Verify(ctx, v, last)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() {
		t.Fatalf("verify: %s", res)
	}
	t.Log(res)
}
