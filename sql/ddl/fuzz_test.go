package ddl

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stratadb/strata/sql/sqlerr"
)

// FuzzParse checks that Parse never panics, that every error is a
// *sqlerr.Error with a code and a position inside the input (or just past
// its end), and that every statement's text is where its offset says.
//
//	go test ./sql/ddl/ -run '^$' -fuzz FuzzParse -fuzztime 60s
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`CREATE TABLE t (a INT PRIMARY KEY, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH (connector = 'nexmark', nexmark.table = 'bid')`,
		`CREATE SOURCE s (a int) WITH (connector = 'kafka', 'x.y' = E'\n', z = $q$;$q$)`,
		`CREATE TABLE o (id int) FROM pg TABLE 'public.orders'; CREATE TABLE c AS SELECT 1`,
		`CREATE MATERIALIZED VIEW v WITH (p = 1) AS SELECT * FROM t; CREATE SINK k INTO t AS SELECT 1`,
		`CREATE SINK k FROM v WITH (connector = 'file'); DROP SINK IF EXISTS k, j CASCADE`,
		`SHOW MATERIALIZED VIEWS; SHOW timezone; DESC t; EXPLAIN ANALYZE SELECT 1 AS OF EPOCH 9`,
		`INSERT INTO t VALUES (1); UPDATE t SET a = 2; DELETE FROM t; SET TIME ZONE 'UTC'; RESET ALL; BEGIN`,
		`SELECT 'é;' AS "x;y" -- c ;
		/* ; */ FROM t;;`,
		`CREATE TABLE t (WATERMARK FOR a AS a, a timestamp`,
		`EXPLAIN (ANALYZE, ANALYZE) EXPLAIN SELECT`,
		`CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT 2; END`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		stmts, err := Parse(in)
		if err != nil {
			var e *sqlerr.Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse(%q) error %T %v is not a *sqlerr.Error", in, err, err)
			}
			if len(e.Code) != 5 {
				t.Fatalf("Parse(%q) error %q has code %q", in, e.Message, e.Code)
			}
			if e.Position < 0 || e.Position > utf8.RuneCountInString(in)+1 {
				t.Fatalf("Parse(%q) error %q at position %d outside the input", in, e.Message, e.Position)
			}
			return
		}
		for _, st := range stmts {
			off, text := st.Offset(), st.Text()
			if text == "" || off < 0 || off+len(text) > len(in) || in[off:off+len(text)] != text {
				t.Fatalf("Parse(%q): statement %T text %q at offset %d is not in the input", in, st, text, off)
			}
			if strings.TrimSpace(text) != text {
				t.Fatalf("Parse(%q): statement text %q has blanks around it", in, text)
			}
		}
	})
}
