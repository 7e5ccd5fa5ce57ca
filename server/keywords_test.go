package server

import "testing"

// TestKeywordColumnNames: a column named by a word PostgreSQL takes as a
// name but DuckDB as a keyword (by, at, columns) is read, grouped and
// ordered by like any other column.
func TestKeywordColumnNames(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE px (k INT PRIMARY KEY, by BYTEA, at INT, columns TEXT)")
	exec(t, c, `INSERT INTO px VALUES (1, '\x01', 10, 'a'), (2, '\x02', 10, 'b')`)
	wantRows(t, c, "SELECT by FROM px ORDER BY k", `\x01`+"\n"+`\x02`)
	wantRows(t, c, "SELECT px.at, count(*) FROM px GROUP BY at ORDER BY at", "10|2")
	wantRows(t, c, "SELECT columns FROM px ORDER BY by DESC", "b\na")
	if got := columnNames(t, c, "SELECT by, at, columns FROM px"); got != "by|at|columns" {
		t.Fatalf("column names %s", got)
	}
}

// TestAvgOfIntegersIsNumeric: avg over integer columns is NUMERIC on the
// SELECT path, as in PostgreSQL, exact for bigint values whose sum
// overflows bigint, and with the digits PostgreSQL 15 prints for means
// between 1 and 9999; avg of floats stays double precision.
func TestAvgOfIntegersIsNumeric(t *testing.T) {
	_, c := startConn(t)
	setup := []string{
		"CREATE TABLE ai (k INT PRIMARY KEY, x BIGINT, i INT, s SMALLINT, d DOUBLE PRECISION, g INT)",
		"INSERT INTO ai VALUES (1, 9223372036854775807, 1, 1, 1.5, 1), (2, 9223372036854775807, 2, 2, 2, 1), " +
			"(3, 9223372036854775807, 2, -2, 2, 2), (4, -9223372036854775808, 2, -3, 3, 2), (5, NULL, 5, -2, NULL, 3)",
	}
	for _, q := range setup {
		exec(t, c, q)
	}
	queries := map[string]string{
		"SELECT avg(i), pg_typeof(avg(i)), pg_typeof(avg(s)), pg_typeof(avg(x)) FROM ai": "2.4000000000000000|numeric|numeric|numeric",
		"SELECT g, avg(i), avg(s), avg(i) * 2 FROM ai GROUP BY g ORDER BY g":             "1|1.5000000000000000|1.5000000000000000|3.0000000000000000\n2|2.0000000000000000|-2.5000000000000000|4.0000000000000000\n3|5.0000000000000000|-2.0000000000000000|10.0000000000000000",
		"SELECT avg(s) FROM ai WHERE g = 2 OR k = 5":                                     "-2.3333333333333333",
		"SELECT avg(i) FROM ai WHERE g = 1 OR k = 3":                                     "1.6666666666666667",
		"SELECT avg(i) FROM ai WHERE g > 5":                                              "NULL",
		"SELECT avg(d), pg_typeof(avg(d)) FROM ai":                                       "2.125|double precision",
		"SELECT round(avg(x), 2) FROM ai WHERE k < 5":                                    "4611686018427387903.25",
	}
	for q, want := range queries {
		wantRows(t, c, q, want)
	}
	if got := columnNames(t, c, "SELECT avg(i) FROM ai"); got != "avg" {
		t.Fatalf("column name %s", got)
	}
	// The same queries in PostgreSQL give the same text.
	_, up := upstreamPG(t, "avgint", setup...)
	for q, want := range queries {
		if q == "SELECT round(avg(x), 2) FROM ai WHERE k < 5" {
			continue // PostgreSQL rounds this mean at 0 digits first
		}
		wantRows(t, up, q, want)
	}
}
