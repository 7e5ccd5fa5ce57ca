package ddl

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stratadb/strata/sql/sqlerr"
)

// TestParseScript parses a script whose strings, dollar quotes, quoted
// identifiers and comments hold semicolons and Strata's keywords, and
// checks each statement's kind, text and offset.
func TestParseScript(t *testing.T) {
	script := `-- the orders pipeline; CREATE SINK in a comment
CREATE TABLE "Weird;Name" (a INT PRIMARY KEY, note TEXT) WITH (comment = 'semi;colon', body = $x$ a ; b $x$);
/* block ; comment with 'quote */
INSERT INTO "Weird;Name" VALUES (1, 'it''s; fine'), (2, E'tab\t;');
SELECT a, 'é;' AS "x;y" FROM "Weird;Name" AS OF EPOCH 3;;
CREATE SINK k INTO t AS SELECT $$;$$ AS s -- trailing ; comment
;
  SHOW TABLES   ;
CREATE MATERIALIZED VIEW v AS SELECT count(*) FROM "Weird;Name";
DROP SOURCE s`
	stmts, err := Parse(script)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ summary, text string }{
		{`CREATE TABLE Weird;Name (a INTEGER NOT NULL@77, note TEXT@96) pk(a) with{body= a ; b ,comment=semi;colon}`,
			`CREATE TABLE "Weird;Name" (a INT PRIMARY KEY, note TEXT) WITH (comment = 'semi;colon', body = $x$ a ; b $x$)`},
		{"INSERT Weird;Name () rows[VALUES (1, 'it''s; fine'), (2, 'tab\t;')] [INSERT INTO \"Weird;Name\" VALUES (1, 'it''s; fine'), (2, 'tab\t;')]",
			`INSERT INTO "Weird;Name" VALUES (1, 'it''s; fine'), (2, E'tab\t;')`},
		{`QUERY [SELECT a, 'é;' AS "x;y" FROM "Weird;Name"] text[SELECT a, 'é;' AS "x;y" FROM "Weird;Name"] epoch=3`,
			`SELECT a, 'é;' AS "x;y" FROM "Weird;Name" AS OF EPOCH 3`},
		{`CREATE SINK k into t as[SELECT ';' AS s] text[SELECT $$;$$ AS s]`,
			`CREATE SINK k INTO t AS SELECT $$;$$ AS s`},
		{`SHOW TABLES`, `SHOW TABLES`},
		{`CREATE VIEW v as[SELECT count(*) FROM "Weird;Name"] text[SELECT count(*) FROM "Weird;Name"]`,
			`CREATE MATERIALIZED VIEW v AS SELECT count(*) FROM "Weird;Name"`},
		{`DROP SOURCE s`, `DROP SOURCE s`},
	}
	if len(stmts) != len(want) {
		for _, st := range stmts {
			t.Logf("%s", summary(t, st))
		}
		t.Fatalf("got %d statements, want %d", len(stmts), len(want))
	}
	for i, st := range stmts {
		if got := summary(t, st); got != want[i].summary {
			t.Errorf("statement %d:\n got %s\nwant %s", i, got, want[i].summary)
		}
		if st.Text() != want[i].text {
			t.Errorf("statement %d text %q, want %q", i, st.Text(), want[i].text)
		}
		if off := st.Offset(); off != strings.Index(script, want[i].text) {
			t.Errorf("statement %d offset %d, want %d", i, off, strings.Index(script, want[i].text))
		}
		checkPositions(t, script, st)
	}

	// Parse-tree locations are offsets in the whole script: the SELECT's
	// second target and the view's count(*) point at their text.
	sel := stmts[2].(*Query).Node.GetSelectStmt()
	loc := int(sel.GetTargetList()[1].GetResTarget().GetLocation())
	if !strings.HasPrefix(script[loc:], `'é;' AS "x;y"`) {
		t.Errorf("target location %d points at %.15q", loc, script[loc:])
	}
	view := stmts[5].(*CreateView).Query.GetSelectStmt()
	loc = int(view.GetTargetList()[0].GetResTarget().GetVal().GetFuncCall().GetLocation())
	if !strings.HasPrefix(script[loc:], `count(*)`) {
		t.Errorf("count location %d points at %.15q", loc, script[loc:])
	}
}

// TestEmptyScripts: nothing but blanks, comments and semicolons is no
// statement and no error.
func TestEmptyScripts(t *testing.T) {
	for _, in := range []string{"", "   ", ";", " ; ;; ", "-- only a comment", "/* a */ ; -- b\n;"} {
		stmts, err := Parse(in)
		if err != nil || len(stmts) != 0 {
			t.Errorf("Parse(%q) = %d statements, %v; want none", in, len(stmts), err)
		}
	}
}

// TestErrorInLaterStatement: the position of an error in the third
// statement counts characters of the whole script, multi-byte ones
// included.
func TestErrorInLaterStatement(t *testing.T) {
	script := "SELECT 'ünïcödé';\nCREATE SOURCE s (a int) WITH (connector = 'x');\nCREATE TABLE t (a int, b text[])"
	_, err := Parse(script)
	var e *sqlerr.Error
	if !errors.As(err, &e) || e.Code != sqlerr.FeatureNotSupported {
		t.Fatalf("Parse = %v, want 0A000", err)
	}
	want := utf8.RuneCountInString(script[:strings.Index(script, "text[]")]) + 1
	if e.Position != want {
		t.Fatalf("position %d, want %d (%s)", e.Position, want, e.Message)
	}
}

// TestLongIdentifiers: names longer than 63 bytes are cut as Postgres's
// scanner cuts them, in the pre-parser's clauses (the watermark, the
// table name) as in the column list Postgres parses, so they still match.
func TestLongIdentifiers(t *testing.T) {
	long := strings.Repeat("a", 70)
	quoted := `"` + strings.Repeat("é", 40) + `"` // 80 bytes
	sql := "CREATE TABLE " + long + " (" + long + " timestamp, " + quoted + " int, WATERMARK FOR " + long + " AS " + long + ")"
	stmts, err := Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	ct := stmts[0].(*CreateTable)
	cut := strings.Repeat("a", 63)
	if ct.Name != cut || ct.Columns[0].Name != cut || ct.Watermark.Column != cut {
		t.Fatalf("names not cut to 63 bytes: %q %q %+v", ct.Name, ct.Columns[0].Name, ct.Watermark)
	}
	if want := strings.Repeat("é", 31); ct.Columns[1].Name != want {
		t.Fatalf("quoted name cut to %q (%d bytes), want 31 characters (62 bytes)", ct.Columns[1].Name, len(ct.Columns[1].Name))
	}
}

// TestCatalogObjects: the catalog objects of CREATE TABLE and CREATE
// SOURCE pass the catalog's own validation.
func TestCatalogObjects(t *testing.T) {
	stmts, err := Parse(`CREATE TABLE shop.orders (id BIGINT, total NUMERIC(10,2), PRIMARY KEY (id)) WITH (buckets = 4);
		CREATE SOURCE events (id INT, ts TIMESTAMPTZ) WITH (connector = 'kafka', topic = 'ev')`)
	if err != nil {
		t.Fatal(err)
	}
	tbl := stmts[0].(*CreateTable).Table("dev")
	if err := tbl.Validate(); err != nil {
		t.Fatal(err)
	}
	if tbl.Name.String() != "shop.orders" || len(tbl.Columns) != 2 || !tbl.Columns[0].NotNull ||
		tbl.Columns[1].Type.String() != "NUMERIC(10,2)" || tbl.PrimaryKey[0] != "id" || tbl.Options["buckets"] != "4" {
		t.Fatalf("table %+v", tbl)
	}
	src := stmts[1].(*CreateSource).Source("dev")
	if err := src.Validate(); err != nil {
		t.Fatal(err)
	}
	if src.Name.String() != "dev.events" || src.Connector != "kafka" || len(src.Options) != 1 || src.Options["topic"] != "ev" ||
		src.Columns[1].Type.String() != "TIMESTAMPTZ" {
		t.Fatalf("source %+v", src)
	}
}
