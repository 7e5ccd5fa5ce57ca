package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/olap"
	"github.com/stratadb/strata/sql/sqlerr"
)

// TestVerifyEpochAboveCommitted: verifying a view over a view above its
// committed epoch names the view verified, as a materialized view, and
// its committed epoch, not the input read first; an input that has not
// committed the epoch is named as the view's input, with what it is.
func TestVerifyEpochAboveCommitted(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	l0 := catalog.Name(DefaultDatabase, "l0")
	if err := e.CreateTable(ctx, catalog.Table{Name: l0, Columns: []catalog.Column{{Name: "k", Type: types.Int64}}}, false); err != nil {
		t.Fatal(err)
	}
	l1, l2 := catalog.Name(DefaultDatabase, "l1"), catalog.Name(DefaultDatabase, "l2")
	if err := e.CreateView(ctx, l1, "SELECT k, count(*) AS n FROM l0 GROUP BY k", nil, false); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateView(ctx, l2, "SELECT n, count(*) AS c FROM l1 GROUP BY n", nil, false); err != nil {
		t.Fatal(err)
	}
	c := types.NewChunk([]types.Type{types.Int64}, 1)
	c.Append(types.Insert, types.Row{types.NewInt64(1)})
	ep, err := e.Apply(ctx, l0, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.WaitCommitted(ctx, l2, ep); err != nil {
		t.Fatal(err)
	}
	tb, err := e.Table(l2)
	if err != nil {
		t.Fatal(err)
	}
	// The view commits on: its committed epoch is read before and after.
	before, err := tb.CommittedEpoch()
	if err != nil {
		t.Fatal(err)
	}
	_, verr := e.Verify(ctx, l2, 999999)
	after, err := tb.CommittedEpoch()
	if err != nil {
		t.Fatal(err)
	}
	var committed, again uint64
	if verr == nil || sqlerr.Code(verr) != sqlerr.ObjectNotInPrerequisiteState {
		t.Fatalf("verify l2 at 999999: %v", verr)
	}
	n, _ := fmt.Sscanf(verr.Error(), `materialized view "l2": epoch 999999 is above its committed epoch %d; verify it at %d or below`, &committed, &again)
	if n != 2 || committed != again || committed < uint64(before) || committed > uint64(after) {
		t.Fatalf("verify l2 at 999999: %q, want the view named with its committed epoch (%d to %d)", verr, before, after)
	}
	cat, err := e.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	in, err := e.Table(l1)
	if err != nil {
		t.Fatal(err)
	}
	ce, err := in.CommittedEpoch()
	if err != nil {
		t.Fatal(err)
	}
	inputs := []olap.Input{{Name: "l1", Table: in, Epoch: ce + 5}}
	err = inputsCommitted(l2, []catalog.ObjectName{l1}, inputs, ce+5, cat)
	want := fmt.Sprintf(`materialized view "l2": epoch %d is above the committed epoch %d of its input, materialized view "l1"`, ce+5, ce)
	if err == nil || err.Error() != want {
		t.Errorf("input l1 behind: %v, want %q", err, want)
	}
	if err := inputsCommitted(l2, []catalog.ObjectName{l1}, inputs, ce, cat); err != nil {
		t.Errorf("input l1 at its committed epoch: %v", err)
	}
}
