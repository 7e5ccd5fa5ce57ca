package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// TestUnionKeyThroughWideningCasts: a UNION ALL of two keyed tables told
// apart by a literal keeps its key when one branch's key column is cast to
// the other's wider type, implicitly or explicitly; a narrowing cast does
// not carry the key (the view is then stored as a multiset).
func TestUnionKeyThroughWideningCasts(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	for _, tb := range []catalog.Table{
		{Name: catalog.Name(DefaultDatabase, "orders"), Columns: []catalog.Column{{Name: "id", Type: types.Int64}}, PrimaryKey: []string{"id"}},
		{Name: catalog.Name(DefaultDatabase, "refunds"), Columns: []catalog.Column{{Name: "k", Type: types.Int32}}, PrimaryKey: []string{"k"}},
	} {
		if err := e.CreateTable(ctx, tb, false); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ name, query, key string }{
		{"u_implicit", "SELECT id, 'order' AS kind FROM orders UNION ALL SELECT k, 'refund' AS kind FROM refunds", "[kind id]"},
		{"u_explicit", "SELECT id, 'order' AS kind FROM orders UNION ALL SELECT k::bigint AS id, 'refund' AS kind FROM refunds", "[kind id]"},
		{"u_narrow", "SELECT id::smallint AS id, 'order' AS kind FROM orders UNION ALL SELECT k::smallint AS id, 'refund' AS kind FROM refunds", "[]"},
	} {
		if err := e.CreateView(ctx, catalog.Name(DefaultDatabase, c.name), c.query, nil, false); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		cat, err := e.Catalog(ctx)
		if err != nil {
			t.Fatal(err)
		}
		v, err := cat.Table(catalog.Name(DefaultDatabase, c.name))
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(v.PrimaryKey); got != c.key {
			t.Errorf("%s: key %s, want %s", c.name, got, c.key)
		}
	}
}
