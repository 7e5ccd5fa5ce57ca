package parser

import (
	"testing"

	"github.com/stratadb/strata/sql/sqlerr"
)

func TestParseSplitsStatements(t *testing.T) {
	in := "CREATE TABLE t (a int PRIMARY KEY, b text) WITH (buckets = '4');\n  SELECT a, b FROM t WHERE a > 1 ;;"
	stmts, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(stmts) != 2 {
		t.Fatalf("got %d statements, want 2", len(stmts))
	}
	if stmts[0].Node.GetCreateStmt() == nil || stmts[1].Node.GetSelectStmt() == nil {
		t.Fatalf("statement kinds: %T, %T", stmts[0].Node.Node, stmts[1].Node.Node)
	}
	if got := stmts[1].SQL; got != "SELECT a, b FROM t WHERE a > 1" {
		t.Fatalf("second statement text %q", got)
	}
	opts := stmts[0].Node.GetCreateStmt().GetOptions()
	if len(opts) != 1 || opts[0].GetDefElem().GetDefname() != "buckets" {
		t.Fatalf("WITH options not parsed: %v", opts)
	}
}

func TestMaterializedViewAndTumble(t *testing.T) {
	st, err := ParseOne(`CREATE MATERIALIZED VIEW v AS
		SELECT auction, count(*) FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND) GROUP BY auction, window_start`)
	if err != nil {
		t.Fatal(err)
	}
	ctas := st.Node.GetCreateTableAsStmt()
	if ctas == nil || ctas.GetObjtype().String() != "OBJECT_MATVIEW" {
		t.Fatalf("not a materialized view: %v", st.Node)
	}
	from := ctas.GetQuery().GetSelectStmt().GetFromClause()
	if len(from) != 1 || from[0].GetRangeFunction() == nil {
		t.Fatalf("TUMBLE(...) in FROM should be a RangeFunction, got %v", from)
	}
}

func TestSyntaxErrorHasPositionAndCode(t *testing.T) {
	in := "SELECT é, FROM t"
	_, err := Parse(in)
	e := sqlerr.From(err)
	if e == nil || e.Code != sqlerr.SyntaxError {
		t.Fatalf("error %v, want 42601", err)
	}
	// Postgres: syntax error at or near "FROM", character 11.
	if e.Position != 11 {
		t.Fatalf("position %d, want 11 (%s)", e.Position, e.Message)
	}
	if _, err := ParseOne(";"); sqlerr.Code(err) != sqlerr.SyntaxError {
		t.Fatalf("empty input: %v", err)
	}
	if _, err := ParseOne("SELECT 1; SELECT 2"); sqlerr.Code(err) != sqlerr.SyntaxError {
		t.Fatalf("two statements for ParseOne: %v", err)
	}
}

func TestPosition(t *testing.T) {
	in := "SELECT 'é' + x"
	if got := Position(in, 13); got != 13 { // x is the 13th character, at byte 13
		t.Fatalf("Position = %d, want 13", got)
	}
	if Position(in, -1) != 0 {
		t.Fatal("unknown location must give 0")
	}
}

func TestDeparse(t *testing.T) {
	st, err := ParseOne("select a+1 as b from t where c = 'x'")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Deparse(st.Node)
	if err != nil {
		t.Fatal(err)
	}
	if got != "SELECT a + 1 AS b FROM t WHERE c = 'x'" {
		t.Fatalf("Deparse = %q", got)
	}
}
