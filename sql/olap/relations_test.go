package olap

import (
	"context"
	"fmt"
	"testing"

	"github.com/stratadb/strata/internal/types"
)

// TestQueryRelations: relations given by value are read by their
// qualified and plain names, for one query only: their DuckDB tables are
// gone after it.
func TestQueryRelations(t *testing.T) {
	e := newEngine(t)
	ctx := context.Background()
	rels := []Relation{{
		Name:    "strata_catalog.tables",
		Columns: []Column{{Name: "name", Type: types.Text}, {Name: "committed_epoch", Type: types.Int64}},
		Rows:    []types.Row{{txt("a"), i64(7)}, {txt("b"), i64(9)}},
	}}
	res, err := e.QueryRelations(ctx, rels, "SELECT (SELECT committed_epoch FROM strata_catalog.tables WHERE name = $1), (SELECT count(*) FROM tables)",
		QueryOptions{Params: []types.Datum{txt("b")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(res.Rows); got != "[(9, 2)]" {
		t.Fatalf("rows %s", got)
	}
	if res.Columns[0].Name != "committed_epoch" || res.Columns[0].Type != types.Int64 {
		t.Fatalf("columns %+v", res.Columns)
	}
	cols, _, err := e.DescribeRelations(ctx, rels, "SELECT name FROM strata_catalog.tables")
	if err != nil || len(cols) != 1 || cols[0].Type != types.Text {
		t.Fatalf("describe: %+v %v", cols, err)
	}
	var left int
	if err := e.db.QueryRow("SELECT count(*) FROM duckdb_tables() WHERE schema_name = '" + dataSchema + "'").Scan(&left); err != nil || left != 0 {
		t.Fatalf("tables left after the queries: %d, %v", left, err)
	}
}
