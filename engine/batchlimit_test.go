package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/sqlerr"
)

// TestBatchRowLimit: an INSERT ... SELECT whose input tables hold more
// rows than the batch executor may read into memory is refused (54000,
// naming the table and its rows) before anything is read or written,
// where it used to take the process down; under the limit it runs.
func TestBatchRowLimit(t *testing.T) {
	defer func(old int64) { batchRowLimit = old }(batchRowLimit)
	batchRowLimit = 100
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	src, dst := catalog.Name(DefaultDatabase, "src"), catalog.Name(DefaultDatabase, "dst")
	cols := []catalog.Column{{Name: "k", Type: types.Int64}}
	for _, n := range []catalog.ObjectName{src, dst} {
		if err := e.CreateTable(ctx, catalog.Table{Name: n, Columns: cols}, false); err != nil {
			t.Fatal(err)
		}
	}
	insert := func(text string) error {
		st, err := parser.ParseOne(text)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = e.Insert(ctx, DefaultDatabase, st.Node.GetInsertStmt(), text, &expr.Context{}, nil)
		return err
	}
	c := types.NewChunk([]types.Type{types.Int64}, 150)
	for i := range int64(150) {
		c.Append(types.Insert, types.Row{types.NewInt64(i)})
	}
	if _, err := e.Apply(ctx, src, c); err != nil {
		t.Fatal(err)
	}
	err := insert("INSERT INTO dst SELECT k FROM src LIMIT 5")
	if sqlerr.Code(err) != sqlerr.ProgramLimitExceeded || !strings.Contains(err.Error(), "src holds 150") {
		t.Fatalf("INSERT ... SELECT over 150 rows with a limit of 100: %v; want 54000 naming src", err)
	}
	if got := queryOne(t, e, "SELECT count(*) FROM dst"); got != "(0)" {
		t.Fatalf("dst after the refused INSERT: %s, want (0)", got)
	}
	batchRowLimit = 1000
	if err := insert("INSERT INTO dst SELECT k FROM src WHERE k < 5"); err != nil {
		t.Fatal(err)
	}
	if got := queryOne(t, e, "SELECT count(*), sum(k) FROM dst"); got != "(5, 10)" {
		t.Fatalf("dst: %s, want (5, 10)", got)
	}
}
