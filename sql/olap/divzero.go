package olap

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
)

// The division guard: see [division-by-zero] in doc.go.

// divisionMacros are created once per engine.
var divisionMacros = []string{
	"CREATE MACRO strata_div(a, b) AS CASE WHEN b = 0 AND a IS NOT NULL THEN error('division by zero') ELSE a / b END",
	"CREATE MACRO strata_intdiv(a, b) AS CASE WHEN b = 0 AND a IS NOT NULL THEN error('division by zero') ELSE a // b END",
	"CREATE MACRO strata_mod(a, b) AS CASE WHEN b = 0 AND a IS NOT NULL THEN error('division by zero') ELSE a % b END",
}

// compatMacros give DuckDB the PostgreSQL functions it lacks under their
// PostgreSQL names: date_bin(stride, source, origin) is DuckDB's
// time_bucket(width, ts, origin) for strides without months (Postgres
// refuses months in date_bin as well). pg_typeof(x) is PostgreSQL's name
// of x's type (integer, numeric, text, timestamp without time zone,
// integer[]) rather than DuckDB's (INTEGER, DECIMAL(38,0), VARCHAR):
// strata_pgtype maps one element type name as [type-map] maps the type
// ("NULL", DuckDB's type of a bare NULL, is PostgreSQL's unknown), and an
// array of any depth is one [] as in PostgreSQL. The macro in the main
// schema shadows DuckDB's own pg_typeof. current_schema (DuckDB: main) is
// public, the schema psql shows Strata's tables in. btrim is DuckDB's
// trim. initcap upper-cases the first letter of each run of letters and
// digits and lower-cases the rest, as PostgreSQL's does in the C locale.
// to_char and format are Go functions behind macros (pgfuncs.go).
var compatMacros = []string{
	"CREATE MACRO date_bin(stride, source, origin) AS time_bucket(stride, source, origin)",
	"CREATE MACRO current_schema() AS 'public'",
	"CREATE MACRO btrim(s) AS trim(s), (s, chars) AS trim(s, chars)",
	`CREATE MACRO initcap(s) AS array_to_string(list_transform(regexp_extract_all(lower(s), '[[:alnum:]]+|[^[:alnum:]]+'), w -> upper(w[1]) || w[2:]), '')`,
	`CREATE MACRO strata_pgtype(t) AS CASE
		WHEN t LIKE 'DECIMAL(%' OR t IN ('HUGEINT', 'UBIGINT', 'UHUGEINT') THEN 'numeric'
		WHEN t IN ('TINYINT', 'SMALLINT', 'UTINYINT') THEN 'smallint'
		WHEN t IN ('INTEGER', 'USMALLINT') THEN 'integer'
		WHEN t IN ('BIGINT', 'UINTEGER') THEN 'bigint'
		WHEN t = 'VARCHAR' THEN 'text'
		WHEN t = 'FLOAT' THEN 'real'
		WHEN t = 'DOUBLE' THEN 'double precision'
		WHEN t = 'TIMESTAMP' THEN 'timestamp without time zone'
		WHEN t = 'TIME' THEN 'time without time zone'
		WHEN t = 'BLOB' THEN 'bytea'
		WHEN t = 'JSON' THEN 'jsonb'
		WHEN t = '"NULL"' OR t = 'NULL' THEN 'unknown'
		ELSE lower(t) END`,
	`CREATE MACRO pg_typeof(x) AS CASE
		WHEN typeof(x) LIKE '%[]' THEN strata_pgtype(regexp_replace(typeof(x), '(\[\])+$', '')) || '[]'
		ELSE strata_pgtype(typeof(x)) END`,
}

var divisionOps = map[string]string{"/": "strata_div", "//": "strata_intdiv", "%": "strata_mod"}

// hasDivision reports whether sqlText has a division or modulo operator
// outside literals and comments.
func hasDivision(sqlText string) bool {
	if !strings.ContainsAny(sqlText, "/%") {
		return false
	}
	for _, t := range lex(sqlText) {
		if t.kind == tokPunct && strings.ContainsAny(t.text, "/%") {
			return true
		}
	}
	return false
}

// guardDivision rewrites sqlText's division operators on conn (see
// [division-by-zero]); it returns sqlText unchanged when there are none or
// DuckDB cannot round-trip the text.
func guardDivision(ctx context.Context, conn *sql.Conn, sqlText string) (string, error) {
	if !hasDivision(sqlText) {
		return sqlText, nil
	}
	var tree string
	if err := conn.QueryRowContext(ctx, "SELECT json_serialize_sql(?::VARCHAR)::VARCHAR", sqlText).Scan(&tree); err != nil {
		return "", mapError(err)
	}
	var root map[string]any
	dec := json.NewDecoder(strings.NewReader(tree))
	dec.UseNumber() // keeps 64-bit fields (query_location) exact
	if err := dec.Decode(&root); err != nil {
		return sqlText, nil
	}
	if failed, _ := root["error"].(bool); failed {
		return sqlText, nil
	}
	if !renameDivisions(root) {
		return sqlText, nil
	}
	b, err := json.Marshal(root)
	if err != nil {
		return sqlText, nil
	}
	var out string
	if err := conn.QueryRowContext(ctx, "SELECT json_deserialize_sql(?::JSON)", string(b)).Scan(&out); err != nil {
		return sqlText, nil
	}
	return out, nil
}

// renameDivisions renames the division operator nodes under v and reports
// whether it found any.
func renameDivisions(v any) bool {
	found := false
	switch x := v.(type) {
	case map[string]any:
		if x["class"] == "FUNCTION" && x["is_operator"] == true {
			if fn, ok := x["function_name"].(string); ok && divisionOps[fn] != "" {
				x["function_name"] = divisionOps[fn]
				x["is_operator"] = false
				found = true
			}
		}
		for _, c := range x {
			if renameDivisions(c) {
				found = true
			}
		}
	case []any:
		for _, c := range x {
			if renameDivisions(c) {
				found = true
			}
		}
	}
	return found
}
