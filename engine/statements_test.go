package engine

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/sqlerr"
)

// TestDMLStatements runs INSERT, UPDATE and DELETE statements on a table
// and checks the table and a view over it after each, read at a
// consistent version.
func TestDMLStatements(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	cols := []catalog.Column{{Name: "k", Type: types.Int64}, {Name: "name", Type: types.Text}, {Name: "qty", Type: types.Int32}}
	if err := e.CreateTable(ctx, catalog.Table{Name: tName, Columns: cols, PrimaryKey: []string{"k"}}, false); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateView(ctx, v1Name, "SELECT name, sum(qty) AS total, count(*) AS n FROM t GROUP BY name", nil, false); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateTable(ctx, catalog.Table{Name: catalog.Name(DefaultDatabase, "logs"), Columns: []catalog.Column{{Name: "msg", Type: types.Text}}}, false); err != nil {
		t.Fatal(err)
	}
	ectx := &expr.Context{}
	run := func(text string) (int, error) {
		st, err := parser.ParseOne(text)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case st.Node.GetInsertStmt() != nil:
			n, _, err := e.Insert(ctx, DefaultDatabase, st.Node.GetInsertStmt(), text, ectx, nil)
			return n, err
		case st.Node.GetUpdateStmt() != nil:
			n, _, err := e.Update(ctx, DefaultDatabase, st.Node.GetUpdateStmt(), text, ectx, nil)
			return n, err
		case st.Node.GetDeleteStmt() != nil:
			n, _, err := e.Delete(ctx, DefaultDatabase, st.Node.GetDeleteStmt(), text, ectx, nil)
			return n, err
		}
		t.Fatalf("not DML: %s", text)
		return 0, nil
	}
	query := func(text string) string {
		st, err := parser.ParseOne(text)
		if err != nil {
			t.Fatal(err)
		}
		_, rows, _, err := e.Query(ctx, DefaultDatabase, st.Node, text, ReadSpec{Mode: version.Strong}, ectx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return sorted(rows)
	}
	steps := []struct {
		sql       string
		n         int
		table     string
		viewAfter string
	}{
		{"INSERT INTO t VALUES (1, 'a', 5), (2, 'b', 7), (3, 'a', '2')", 3,
			"(1, a, 5)\n(2, b, 7)\n(3, a, 2)", "(a, 7, 2)\n(b, 7, 1)"},
		{"INSERT INTO t (qty, k) VALUES (1, 4)", 1,
			"(1, a, 5)\n(2, b, 7)\n(3, a, 2)\n(4, NULL, 1)", "(NULL, 1, 1)\n(a, 7, 2)\n(b, 7, 1)"},
		{"UPDATE t SET qty = qty * 10, name = 'b' WHERE k % 2 = 1", 2,
			"(1, b, 50)\n(2, b, 7)\n(3, b, 20)\n(4, NULL, 1)", "(NULL, 1, 1)\n(b, 77, 3)"},
		{"UPDATE t SET k = k + 100 WHERE name IS NULL", 1,
			"(1, b, 50)\n(104, NULL, 1)\n(2, b, 7)\n(3, b, 20)", "(NULL, 1, 1)\n(b, 77, 3)"},
		{"DELETE FROM t WHERE qty > 10", 2,
			"(104, NULL, 1)\n(2, b, 7)", "(NULL, 1, 1)\n(b, 7, 1)"},
		{"INSERT INTO t SELECT k + 1000, 'copy', qty FROM t", 2,
			"(1002, copy, 7)\n(104, NULL, 1)\n(1104, copy, 1)\n(2, b, 7)", "(NULL, 1, 1)\n(b, 7, 1)\n(copy, 8, 2)"},
		{"UPDATE t SET k = k + 1", 4,
			"(1003, copy, 7)\n(105, NULL, 1)\n(1105, copy, 1)\n(3, b, 7)", "(NULL, 1, 1)\n(b, 7, 1)\n(copy, 8, 2)"},
		{"UPDATE t SET k = 1106 - k WHERE k > 1000", 2,
			"(1, copy, 1)\n(103, copy, 7)\n(105, NULL, 1)\n(3, b, 7)", "(NULL, 1, 1)\n(b, 7, 1)\n(copy, 8, 2)"},
		{"DELETE FROM t", 4, "", ""},
	}
	for _, s := range steps {
		n, err := run(s.sql)
		if err != nil {
			t.Fatalf("%s: %v", s.sql, err)
		}
		if n != s.n {
			t.Fatalf("%s: %d rows, want %d", s.sql, n, s.n)
		}
		if got := query("SELECT * FROM t"); got != s.table {
			t.Fatalf("after %s: t\n%s\nwant\n%s", s.sql, got, s.table)
		}
		c, err := e.meta.CommittedEpoch(ctx, tName)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.WaitCommitted(ctx, v1Name, c.Epoch); err != nil {
			t.Fatal(err)
		}
		if got := query("SELECT name, total, n FROM v1"); got != s.viewAfter {
			t.Fatalf("after %s: v1\n%s\nwant\n%s", s.sql, got, s.viewAfter)
		}
	}
	if _, err := run("INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 2)"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ sql, code string }{
		{"UPDATE t SET k = 2 WHERE k = 1", sqlerr.UniqueViolation},
		{"UPDATE t SET k = 5", sqlerr.UniqueViolation},
		{"INSERT INTO t VALUES (NULL, 'x', 1)", sqlerr.NotNullViolation},
		{"INSERT INTO t (k, name, qty) VALUES (1, 'x')", sqlerr.SyntaxError},
		{"INSERT INTO t (name, qty) VALUES ('x', 1)", sqlerr.NotNullViolation},
		{"INSERT INTO t (k, nope) VALUES (1, 2)", sqlerr.UndefinedColumn},
		{"INSERT INTO nope VALUES (1)", sqlerr.UndefinedTable},
		{"INSERT INTO t VALUES (1, 'x', 99999999999)", sqlerr.NumericValueOutOfRange},
		{"INSERT INTO v1 VALUES ('x', 1, 1)", sqlerr.WrongObjectType},
		{"UPDATE t SET nope = 1", sqlerr.UndefinedColumn},
		{"DELETE FROM t WHERE nope = 1", sqlerr.UndefinedColumn},
		{"DELETE FROM logs", sqlerr.FeatureNotSupported},
		{"UPDATE logs SET msg = 'x'", sqlerr.FeatureNotSupported},
	} {
		_, err := run(c.sql)
		if got := sqlerr.Code(err); got != c.code {
			t.Errorf("%s: %v (%s), want %s", c.sql, err, got, c.code)
		}
	}
}

// TestConcurrentDML: sessions inserting distinct keys into one table at
// once lose nothing, and concurrent read-modify-write UPDATEs of one row
// lose no increment.
func TestConcurrentDML(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	cols := []catalog.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}}
	if err := e.CreateTable(ctx, catalog.Table{Name: tName, Columns: cols, PrimaryKey: []string{"k"}}, false); err != nil {
		t.Fatal(err)
	}
	ectx := &expr.Context{}
	run := func(text string) error {
		st, err := parser.ParseOne(text)
		if err != nil {
			return err
		}
		if ins := st.Node.GetInsertStmt(); ins != nil {
			_, _, err = e.Insert(ctx, DefaultDatabase, ins, text, ectx, nil)
			return err
		}
		_, _, err = e.Update(ctx, DefaultDatabase, st.Node.GetUpdateStmt(), text, ectx, nil)
		return err
	}
	if err := run("INSERT INTO t VALUES (0, 0)"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				if err := run(fmt.Sprintf("INSERT INTO t VALUES (%d, 1)", 1+w*100+i)); err != nil {
					errs <- err
				}
			}
		}()
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 6 {
				if err := run("UPDATE t SET v = v + 1 WHERE k = 0"); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	r, err := e.ReadConsistent(ctx, []catalog.ObjectName{tName}, version.Strong, "test")
	if err != nil {
		t.Fatal(err)
	}
	rows := r.Rows[tName]
	if len(rows) != 33 {
		t.Fatalf("%d rows, want 33", len(rows))
	}
	for _, row := range rows {
		if row[0].Int64() == 0 && row[1].Int64() != 12 {
			t.Fatalf("the counter row holds %d after 12 concurrent increments", row[1].Int64())
		}
	}
}
