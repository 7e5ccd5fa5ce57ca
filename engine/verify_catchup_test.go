package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/sqlerr"
)

// TestVerifyWhileCatchingUp creates a HOP view over a long history of
// appends and verifies it again and again from the moment it exists, while
// more rows arrive: each attempt either cannot verify yet (55000: the view
// has committed nothing, or not its first epoch) or finds the view equal;
// never a difference.
func TestVerifyWhileCatchingUp(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	bid := catalog.Name(DefaultDatabase, "bid")
	cols := []catalog.Column{{Name: "price", Type: types.Int64}, {Name: "date_time", Type: types.Timestamp}}
	if err := e.CreateTable(ctx, catalog.Table{Name: bid, Columns: cols}, false); err != nil {
		t.Fatal(err)
	}
	next := int64(0)
	apply := func(n int) {
		c := types.NewChunk([]types.Type{types.Int64, types.Timestamp}, n)
		for range n {
			c.Append(types.Insert, types.Row{types.NewInt64(next % 997), types.NewTimestamp(1_700_000_000_000_000 + next*3_000)})
			next++
		}
		if _, err := e.Apply(ctx, bid, c); err != nil {
			t.Fatal(err)
		}
	}
	for range 40 {
		apply(5000)
	}
	hv := catalog.Name(DefaultDatabase, "hv")
	if err := e.CreateView(ctx, hv, "SELECT window_start, window_end, count(*) AS n, sum(price) AS s FROM HOP(bid, date_time, INTERVAL '5' SECOND, INTERVAL '10' SECOND) GROUP BY window_start, window_end", nil, false); err != nil {
		t.Fatal(err)
	}
	start := e.ViewStartEpoch(ctx, hv)
	verified, refused := 0, 0
	deadline := time.Now().Add(20 * time.Second)
	for verified < 5 && time.Now().Before(deadline) {
		apply(2000)
		v, err := e.Verify(ctx, hv, 0)
		switch {
		case sqlerr.Code(err) == sqlerr.ObjectNotInPrerequisiteState:
			refused++
			t.Logf("refused: %v", err)
		case err != nil:
			t.Fatal(err)
		case !v.OK():
			t.Fatalf("view starting at epoch %d, verified at its committed epoch: %s", start, v)
		default:
			verified++
		}
	}
	if verified == 0 {
		t.Fatalf("never verified (%d refusals)", refused)
	}
	t.Logf("start epoch %d: %d refusals, then %d verifications", start, refused, verified)
}
