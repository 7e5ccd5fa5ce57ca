package engine

import (
	"context"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/sqlerr"
)

// TestGroupingSetsRefusedInViews: ROLLUP, CUBE and GROUPING SETS, which a
// one-shot SELECT runs, are refused in a materialized view with 0A000 at
// their position, and nothing is created; a plain GROUP BY is accepted.
func TestGroupingSetsRefusedInViews(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	orders := catalog.Table{Name: catalog.Name(DefaultDatabase, "orders"), PrimaryKey: []string{"id"},
		Columns: []catalog.Column{{Name: "id", Type: types.Int64}, {Name: "customer", Type: types.Text}, {Name: "amount", Type: types.Int64}}}
	if err := e.CreateTable(ctx, orders, false); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"SELECT customer, sum(amount) AS s FROM orders GROUP BY ROLLUP(customer)",
		"SELECT customer, sum(amount) AS s FROM orders GROUP BY CUBE(customer)",
		"SELECT customer, sum(amount) AS s FROM orders GROUP BY GROUPING SETS ((customer), ())",
		"SELECT * FROM (SELECT customer, count(*) AS n FROM orders GROUP BY id, ROLLUP(customer)) q",
	} {
		err := e.CreateView(ctx, catalog.Name(DefaultDatabase, "rv"), q, nil, false)
		se, ok := err.(*sqlerr.Error)
		if !ok || se.Code != sqlerr.FeatureNotSupported || se.Position == 0 {
			t.Fatalf("%s: %v", q, err)
		}
		cat, err := e.Catalog(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cat.Table(catalog.Name(DefaultDatabase, "rv")); err == nil {
			t.Fatalf("%s: the view was created", q)
		}
	}
	if err := e.CreateView(ctx, catalog.Name(DefaultDatabase, "rv"), "SELECT customer, sum(amount) AS s FROM orders GROUP BY customer", nil, false); err != nil {
		t.Fatal(err)
	}
}
