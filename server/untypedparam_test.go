package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestUntypedParameterInExpression: over the extended protocol, a
// parameter the client gives no type inside an expression ($1 + 1,
// s = $1 OR $1 IS NULL) takes its type from the context as in
// PostgreSQL, and the statement describes, and returns, every result
// column (DuckDB alone described one column named "unknown"); a
// parameter nothing gives a type to ($1 IS NULL alone, an unused $1) is
// refused with 42P18 as PostgreSQL refuses it.
func TestUntypedParameterInExpression(t *testing.T) {
	_, c := startConn(t)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE pt (id INT PRIMARY KEY, s TEXT, n INT)")
	exec(t, c, "INSERT INTO pt VALUES (10, 'a', 100), (11, 'b', 110), (12, NULL, 120)")

	for _, q := range []struct {
		sql    string
		args   []any
		fields []string
		oids   []uint32
		rows   string
	}{
		{"SELECT id, s, n FROM pt WHERE id = $1 + 1", []any{10}, []string{"id", "s", "n"}, []uint32{23}, "11|b|110"},
		{"SELECT id, s FROM pt WHERE s = $1 OR $1 IS NULL ORDER BY id", []any{"a"}, []string{"id", "s"}, []uint32{25}, "10|a"},
		{"SELECT id, s FROM pt WHERE s = $1 OR $1 IS NULL ORDER BY id", []any{nil}, []string{"id", "s"}, []uint32{25}, "10|a;11|b;12|NULL"},
		{"SELECT id, s FROM pt WHERE $1 IS NULL OR s = $1 ORDER BY id", []any{"b"}, []string{"id", "s"}, []uint32{25}, "11|b"},
		{"SELECT id, s, n FROM pt WHERE $1::text IS NULL ORDER BY id", []any{nil}, []string{"id", "s", "n"}, []uint32{25}, "10|a|100;11|b|110;12|NULL|120"},
		{"SELECT id, s, n FROM pt WHERE $1::text IS NULL ORDER BY id", []any{"x"}, []string{"id", "s", "n"}, []uint32{25}, ""},
		{"SELECT id, $1 AS x FROM pt WHERE n = $2 + 10", []any{"k", 100}, []string{"id", "x"}, []uint32{25, 23}, "11|k"},
		{"SELECT id, n FROM pt WHERE n > $1 * 2 ORDER BY id", []any{55}, []string{"id", "n"}, []uint32{23}, "12|120"},
		{"SELECT id, s, n FROM pt WHERE id = $1::bigint + 1", []any{10}, []string{"id", "s", "n"}, []uint32{20}, "11|b|110"},
		{"SELECT id, s, n FROM pt WHERE id = $1 OR id = $1", []any{12}, []string{"id", "s", "n"}, []uint32{23}, "12|NULL|120"},
	} {
		sd, err := c.Prepare(ctx, "", q.sql)
		if err != nil {
			t.Errorf("prepare %s: %v", q.sql, err)
			continue
		}
		var names []string
		for _, f := range sd.Fields {
			names = append(names, f.Name)
		}
		if strings.Join(names, ",") != strings.Join(q.fields, ",") {
			t.Errorf("%s: fields %v, want %v", q.sql, names, q.fields)
		}
		if !slices.Equal(sd.ParamOIDs, q.oids) {
			t.Errorf("%s: parameter OIDs %v, want %v", q.sql, sd.ParamOIDs, q.oids)
		}
		rows, err := c.Query(ctx, q.sql, q.args...)
		if err != nil {
			t.Errorf("%s %v: %v", q.sql, q.args, err)
			continue
		}
		var got []string
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Errorf("%s: %v", q.sql, err)
				break
			}
			parts := make([]string, len(vals))
			for i, v := range vals {
				if v == nil {
					parts[i] = "NULL"
				} else {
					parts[i] = fmt.Sprint(v)
				}
			}
			got = append(got, strings.Join(parts, "|"))
		}
		if err := rows.Err(); err != nil {
			t.Errorf("%s %v: %v", q.sql, q.args, err)
			continue
		}
		if strings.Join(got, ";") != q.rows {
			t.Errorf("%s %v: rows %q, want %q", q.sql, q.args, strings.Join(got, ";"), q.rows)
		}
	}

	// Scanning into as many targets as the statement has columns works.
	var id int32
	var str *string
	if err := c.QueryRow(ctx, "SELECT id, s FROM pt WHERE s = $1 OR $1 IS NULL ORDER BY id LIMIT 1", nil).Scan(&id, &str); err != nil || id != 10 || str == nil || *str != "a" {
		t.Fatalf("scan two columns: %d %v %v", id, str, err)
	}

	// Nothing gives $1 a type (IS NULL takes any type; $1 unused):
	// 42P18 when the statement is prepared, as in PostgreSQL, and the
	// connection goes on.
	for _, q := range []string{
		"SELECT id, s, n FROM pt WHERE $1 IS NULL",
		"SELECT id FROM pt WHERE $1 IS NOT NULL AND s = $2",
		"SELECT id FROM pt WHERE n = $2",
		"SELECT 1 WHERE $1 IS NULL",
	} {
		_, err := c.Prepare(ctx, "", q)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42P18" || pgErr.Message != "could not determine data type of parameter $1" {
			t.Errorf("%s: %v, want 42P18 could not determine data type of parameter $1", q, err)
		}
	}
	wantRows(t, c, "SELECT count(*) FROM pt", "3")
}
