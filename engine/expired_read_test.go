package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/sqlerr"
)

// TestReadAtExpiredEpoch: a read at an epoch whose snapshot has expired
// fails with 55000 saying so and naming the earliest epoch kept, where it
// used to read the table as empty; an epoch still kept reads its rows,
// and an epoch before a table's first commit (nothing expired) still
// reads empty.
func TestReadAtExpiredEpoch(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	tb := catalog.Name(DefaultDatabase, "short")
	if err := e.CreateTable(ctx, catalog.Table{Name: tb, Columns: []catalog.Column{{Name: "k", Type: types.Int64}},
		Options: map[string]string{"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "3"}}, false); err != nil {
		t.Fatal(err)
	}
	var epochs []base.Epoch
	for i := range int64(8) {
		c := types.NewChunk([]types.Type{types.Int64}, 1)
		c.Append(types.Insert, types.Row{types.NewInt64(i)})
		ep, err := e.Apply(ctx, tb, c)
		if err != nil {
			t.Fatal(err)
		}
		epochs = append(epochs, ep)
	}
	if err := e.WaitCommitted(ctx, tb, epochs[7]); err != nil {
		t.Fatal(err)
	}
	if err := e.expireAll(ctx); err != nil {
		t.Fatal(err)
	}
	at := func(ep base.Epoch) (string, error) {
		text := "SELECT count(*) FROM short"
		st, err := parser.ParseOne(text)
		if err != nil {
			t.Fatal(err)
		}
		_, rows, _, err := e.Query(ctx, DefaultDatabase, st.Node, text, ReadSpec{Mode: version.Strong, AtEpoch: &ep}, &expr.Context{}, nil)
		return sorted(rows), err
	}
	got, err := at(epochs[7])
	if err != nil || got != "(8)" {
		t.Fatalf("at the last epoch %d: %s, %v; want (8)", epochs[7], got, err)
	}
	_, err = at(epochs[1])
	if sqlerr.Code(err) != sqlerr.ObjectNotInPrerequisiteState || !strings.Contains(err.Error(), "no longer kept") || !strings.Contains(err.Error(), `"short"`) {
		t.Fatalf("at expired epoch %d: %v; want 55000 saying it is no longer kept", epochs[1], err)
	}
	// The batch read of one table (verify's) says the same.
	if _, _, _, err := e.ReadAt(ctx, tb, epochs[1]); sqlerr.Code(err) != sqlerr.ObjectNotInPrerequisiteState || !strings.Contains(err.Error(), "no longer kept") {
		t.Fatalf("ReadAt expired epoch %d: %v; want 55000", epochs[1], err)
	}

	// Nothing expired: an epoch before the first commit reads empty.
	fresh := catalog.Name(DefaultDatabase, "fresh")
	if err := e.CreateTable(ctx, catalog.Table{Name: fresh, Columns: []catalog.Column{{Name: "k", Type: types.Int64}}}, false); err != nil {
		t.Fatal(err)
	}
	c := types.NewChunk([]types.Type{types.Int64}, 1)
	c.Append(types.Insert, types.Row{types.NewInt64(1)})
	ep, err := e.Apply(ctx, fresh, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.WaitCommitted(ctx, fresh, ep); err != nil {
		t.Fatal(err)
	}
	if _, rows, _, err := e.ReadAt(ctx, fresh, epochs[0]); err != nil || len(rows) != 0 {
		t.Fatalf("fresh at epoch %d, before its first commit: %v, %v; want no rows", epochs[0], rows, err)
	}
}
