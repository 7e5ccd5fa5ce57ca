package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// TestCatalogTableSize: pg_table_size (psql's \dt+) gives a table's bytes
// of data files in its latest snapshot, not 0.
func TestCatalogTableSize(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	a := catalog.Name(DefaultDatabase, "a")
	if err := e.CreateTable(ctx, catalog.Table{Name: a, Columns: []catalog.Column{{Name: "k", Type: types.Int64}}}, false); err != nil {
		t.Fatal(err)
	}
	c := types.NewChunk([]types.Type{types.Int64}, 1000)
	for i := range int64(1000) {
		c.Append(types.Insert, types.Row{types.NewInt64(i)})
	}
	if _, err := e.Apply(ctx, a, c); err != nil {
		t.Fatal(err)
	}
	want := e.dataBytes(a)
	if want <= 0 {
		t.Fatalf("data bytes of a: %d, want some", want)
	}
	res, err := e.CatalogQuery(ctx, DefaultDatabase, "SELECT c.relname, pg_catalog.pg_table_size(c.oid) FROM pg_catalog.pg_class c WHERE c.relname = 'a'")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0][1].String() != fmt.Sprint(want) {
		t.Fatalf("pg_table_size of a: %v, want %d", res.Rows, want)
	}
}
