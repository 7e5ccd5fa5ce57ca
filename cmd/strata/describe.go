package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/jackc/pgx/v5/pgtype"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stratadb/strata/sql/pglex"
)

// \d NAME (and \d+ NAME) prints a relation as psql's \d prints a table:
// a title (Table "public.t", Materialized view "public.v", Source
// "public.s"), the columns in psql's layout (Column | Type | Nullable,
// "not null" for a column that holds no NULL), then footers: the key as
// psql lists a primary key's index (Indexes: "t_pkey" PRIMARY KEY, btree
// (k), the key order kept), the watermark (Watermark: FOR ts AS ts -
// INTERVAL '5' SECOND), and a view's query (View definition:, as psql's
// \d+ prints it). Strata has no column defaults or collations, so psql's
// columns for them are left out.
//
// The columns come from DESCRIBE; the key order, the watermark and the
// view's query from SHOW CREATE, which writes them as CREATE takes them
// (server/showcreate.go): the key as PRIMARY KEY (...) and the watermark
// as WATERMARK FOR col AS expr, the last elements of the column list, and
// the view's query after the first AS outside quotes and parentheses.

// describedKind is what SHOW CREATE found a relation to be: the statement
// that shows it and psql's word for it in the title.
type describedKind struct {
	show, title string
}

var describedKinds = []describedKind{
	{"SHOW CREATE TABLE ", "Table"},
	{"SHOW CREATE MATERIALIZED VIEW ", "Materialized view"},
	{"SHOW CREATE SOURCE ", "Source"},
}

// describe runs \d name and reports as exec does: a relation that does not
// exist fails with DESCRIBE's error.
func (s *sqlSession) describe(ctx context.Context, name string) (ok, lost bool) {
	q := "DESCRIBE " + name
	_, cols, err := s.fetch(ctx, q)
	var pe *pgconn.PgError
	if err != nil && errors.As(err, &pe) && pe.Code == "42P01" && systemSchema(name) {
		return s.describeSystem(ctx, name)
	}
	if err != nil {
		return false, s.report(err, q)
	}
	kind, display, create := describedKind{title: "Table"}, name, ""
	for _, k := range describedKinds {
		_, rows, err := s.fetch(ctx, k.show+name)
		var pe *pgconn.PgError
		if err != nil && errors.As(err, &pe) {
			continue // another kind of relation (42809, 42P01, 42704)
		}
		if err != nil {
			return false, s.report(err, k.show+name)
		}
		if len(rows) == 1 && len(rows[0]) == 2 {
			kind, display, create = k, rows[0][0], rows[0][1]
		}
		break
	}
	if !strings.Contains(display, ".") {
		display = "public." + display
	}
	printDescribed(s.out, kind.title+` "`+display+`"`, cols, describedFooters(kind, display, cols, create))
	return true, false
}

// systemSchema reports whether name is qualified by a schema of system
// views (strata_catalog, pg_catalog, information_schema), which DESCRIBE,
// a statement about the catalog's own objects, does not know.
func systemSchema(name string) bool {
	i := strings.IndexByte(name, '.')
	if i < 0 {
		return false
	}
	switch strings.ToLower(strings.Trim(name[:i], `"`)) {
	case "strata_catalog", "pg_catalog", "information_schema":
		return true
	}
	return false
}

// describeSystem runs \d of a system view: its columns and their types
// from the row description of a query that reads at most one row, under
// psql's title for a view. Nullability is not known, so none is shown as not
// null.
func (s *sqlSession) describeSystem(ctx context.Context, name string) (ok, lost bool) {
	q := "SELECT * FROM " + name + " LIMIT 1"
	results, err := s.conn.Exec(ctx, q).ReadAll()
	if err == nil && len(results) != 1 {
		err = fmt.Errorf("%s gave %d results", q, len(results))
	}
	if err != nil {
		return false, s.report(err, q)
	}
	res := results[0]
	types := pgtype.NewMap()
	cols := make([][]string, len(res.FieldDescriptions))
	for i, f := range res.FieldDescriptions {
		typ := "unknown"
		if t, ok := types.TypeForOID(f.DataTypeOID); ok {
			typ = t.Name
		}
		cols[i] = []string{f.Name, pgOIDTypeName(typ), "true", "false"}
	}
	printDescribed(s.out, `View "`+strings.ToLower(name)+`"`, cols, nil)
	return true, false
}

// pgOIDTypeName maps pgtype's names of PostgreSQL types (the catalog's
// typname) to format_type's, which psql's \d shows.
func pgOIDTypeName(typname string) string {
	switch typname {
	case "int2":
		return "smallint"
	case "int4":
		return "integer"
	case "int8":
		return "bigint"
	case "float4":
		return "real"
	case "float8":
		return "double precision"
	case "bool":
		return "boolean"
	case "varchar":
		return "character varying"
	case "bpchar":
		return "character"
	case "timestamp":
		return "timestamp without time zone"
	case "timestamptz":
		return "timestamp with time zone"
	case "time":
		return "time without time zone"
	}
	return typname
}

// fetch runs text, one statement, and returns its result's column names
// and rows (NULL as "").
func (s *sqlSession) fetch(ctx context.Context, text string) ([]string, [][]string, error) {
	res := s.conn.ExecParams(ctx, text, nil, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, nil, res.Err
	}
	names := make([]string, len(res.FieldDescriptions))
	for i, f := range res.FieldDescriptions {
		names[i] = f.Name
	}
	rows := make([][]string, len(res.Rows))
	for i, r := range res.Rows {
		rows[i] = make([]string, len(r))
		for j, v := range r {
			rows[i][j] = string(v)
		}
	}
	return names, rows, nil
}

// describedFooters returns the footer lines of \d: the key, the watermark
// and a view's definition. cols are DESCRIBE's rows (name, type,
// nullable, primary_key); create is SHOW CREATE's text ("" if unknown).
func describedFooters(kind describedKind, display string, cols [][]string, create string) []string {
	el := createElements(create)
	var key []string
	nullableKey := false
	for _, c := range cols {
		if len(c) >= 4 && c[3] == "true" {
			key = append(key, c[0])
			nullableKey = nullableKey || c[2] == "true"
		}
	}
	if len(el.key) == len(key) {
		key = el.key // the declared order
	}
	var out []string
	if len(key) > 0 {
		rel := display[strings.LastIndexByte(display, '.')+1:]
		if nullableKey {
			// A view's key over nullable columns: NULL keys form one
			// group, as PostgreSQL 15's unique NULLS NOT DISTINCT.
			out = append(out, "Indexes:", `    "`+rel+`_key" UNIQUE CONSTRAINT, btree (`+strings.Join(key, ", ")+`) NULLS NOT DISTINCT`)
		} else {
			out = append(out, "Indexes:", `    "`+rel+`_pkey" PRIMARY KEY, btree (`+strings.Join(key, ", ")+`)`)
		}
	}
	if el.watermark != "" {
		out = append(out, "Watermark: FOR "+el.watermark)
	}
	if kind.title == "Materialized view" && el.query != "" {
		out = append(out, "View definition:")
		for _, l := range strings.Split(" "+strings.TrimSuffix(strings.TrimSpace(el.query), ";")+";", "\n") {
			out = append(out, strings.TrimRight(l, " \t\r"))
		}
	}
	return out
}

// createParts are what \d shows of a SHOW CREATE text.
type createParts struct {
	key       []string // PRIMARY KEY (a, b), as written
	watermark string   // "ts AS ts - INTERVAL '5' SECOND", after WATERMARK FOR
	query     string   // a view's query, after AS
}

// createElements reads a SHOW CREATE text: the elements of its column
// list (depth 1) that are the key and the watermark, and for a view the
// text after the first AS at depth 0. Quoted names and literals are
// skipped whole, so a name or an option value cannot be mistaken for a
// keyword.
func createElements(create string) createParts {
	var p createParts
	depth, elemStart := 0, -1
	element := func(end int) {
		if elemStart < 0 {
			return
		}
		e := strings.TrimSpace(create[elemStart:end])
		elemStart = -1
		switch {
		case hasWordPrefix(e, "PRIMARY KEY"):
			list := strings.TrimSpace(e[len("PRIMARY KEY"):])
			p.key = splitNames(strings.TrimSuffix(strings.TrimPrefix(list, "("), ")"))
		case hasWordPrefix(e, "WATERMARK FOR"):
			p.watermark = strings.TrimSpace(e[len("WATERMARK FOR"):])
		}
	}
	for i := 0; i < len(create); {
		c := create[i]
		switch {
		case c == '\'' || c == '"':
			i, _ = pglex.ScanQuoted(create, i+1, c, false, nil)
			continue
		case c == '(':
			depth++
			if depth == 1 {
				elemStart = i + 1
			}
		case c == ')':
			if depth == 1 {
				element(i)
			}
			depth = max(depth-1, 0)
		case c == ',' && depth == 1:
			element(i)
			elemStart = i + 1
		case depth == 0 && pglex.IsIdentStart(c):
			j := i
			for j < len(create) && pglex.IsIdentChar(create[j]) {
				j++
			}
			if strings.EqualFold(create[i:j], "AS") && strings.HasPrefix(create, "CREATE MATERIALIZED VIEW ") {
				p.query = strings.TrimSpace(create[j:])
				return p
			}
			i = j
			continue
		}
		i++
	}
	return p
}

// splitNames splits a list of names at its commas outside quotes.
func splitNames(list string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(list); {
		switch {
		case i == len(list) || list[i] == ',':
			out = append(out, strings.TrimSpace(list[start:i]))
			start = i + 1
		case list[i] == '"':
			i, _ = pglex.ScanQuoted(list, i+1, '"', false, nil)
			continue
		}
		i++
	}
	return out
}

// hasWordPrefix tells whether s starts with the keywords w, in any case,
// followed by a blank or a parenthesis.
func hasWordPrefix(s, w string) bool {
	if len(s) <= len(w) || !strings.EqualFold(s[:len(w)], w) {
		return false
	}
	c := s[len(w)]
	return c == ' ' || c == '(' || c == '\t' || c == '\n'
}

// printDescribed prints \d's output: the title centred over the columns
// table (Column | Type | Nullable, as psql's aligned format lays it out,
// without a row count), then the footers. The title is centred as psql
// centres it: padded by half the room the table's width leaves.
func printDescribed(out io.Writer, title string, cols [][]string, footers []string) {
	names := []string{"Column", "Type", "Nullable"}
	rows := make([][]string, len(cols))
	for i, c := range cols {
		nullable := "not null"
		if len(c) >= 3 && c[2] == "true" {
			nullable = ""
		}
		rows[i] = []string{c[0], pgColumnType(c[1]), nullable}
	}
	var table strings.Builder
	printTable(&table, names, make([]bool, len(names)), rows)
	lines := strings.Split(strings.TrimSuffix(table.String(), "\n"), "\n")
	lines = lines[:len(lines)-1] // the row count, which \d does not print
	width := utf8.RuneCountInString(lines[1])
	if pad := (width - utf8.RuneCountInString(title)) / 2; pad > 0 {
		title = strings.Repeat(" ", pad) + title
	}
	fmt.Fprintln(out, title)
	for _, l := range append(lines, footers...) {
		fmt.Fprintln(out, l)
	}
}

// pgTypeNames maps the type names DESCRIBE gives (Strata's, upper case)
// to the ones psql's \d shows (PostgreSQL's format_type).
var pgTypeNames = map[string]string{
	"BOOLEAN": "boolean", "BOOL": "boolean", "SMALLINT": "smallint", "INTEGER": "integer", "INT": "integer",
	"BIGINT": "bigint", "REAL": "real", "FLOAT4": "real", "DOUBLE": "double precision",
	"DOUBLE PRECISION": "double precision", "FLOAT8": "double precision", "NUMERIC": "numeric",
	"DECIMAL": "numeric", "CHAR": "character", "VARCHAR": "character varying", "TEXT": "text",
	"UUID": "uuid", "BYTEA": "bytea", "DATE": "date", "TIME": "time without time zone",
	"TIMESTAMP": "timestamp without time zone", "TIMESTAMPTZ": "timestamp with time zone",
	"TIMESTAMP WITH TIME ZONE": "timestamp with time zone", "INTERVAL": "interval", "JSONB": "jsonb",
}

// pgColumnType returns PostgreSQL's name of the DESCRIBE type t, its
// modifiers kept ("NUMERIC(10,2)" is "numeric(10,2)", "VARCHAR(20)"
// "character varying(20)"); a type it does not know is lower-cased.
func pgColumnType(t string) string {
	base, mods := t, ""
	if i := strings.IndexByte(t, '('); i > 0 {
		base, mods = strings.TrimSpace(t[:i]), t[i:]
	}
	if name, ok := pgTypeNames[strings.ToUpper(base)]; ok {
		return name + mods
	}
	return strings.ToLower(t)
}
