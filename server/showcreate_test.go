package server

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/ddl"
)

// TestShowCreateRoundTrip: SHOW CREATE of a table, a materialized view, a
// source and a sink gives one row (Name, Create Sql) whose statement
// parses and, run on a fresh server, makes an equal object: the same
// columns, key, options and query.
func TestShowCreateRoundTrip(t *testing.T) {
	a, ca := startConn(t)
	script := []string{
		`CREATE TABLE orders (id BIGINT, "Note" VARCHAR(20) NOT NULL, amount NUMERIC(10,2), at TIMESTAMP(3), p_time TIMESTAMPTZ GENERATED ALWAYS AS (proctime()) STORED, PRIMARY KEY (id)) WITH ("merge-engine" = 'deduplicate', bucket = '2')`,
		`CREATE TABLE events (k INT, "select" TEXT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '1.5 seconds')`,
		`CREATE MATERIALIZED VIEW totals WITH (bucket = '2', timezone = 'Europe/Paris') AS SELECT id, sum(amount) AS total, 'it''s' AS quote FROM orders GROUP BY id`,
		`CREATE SOURCE gen (k BIGINT, v TEXT) WITH (connector = 'datagen', 'rows-per-second' = '10', 'fields.v.length' = '5', seed = '7')`,
		`CREATE TABLE tgt (id BIGINT PRIMARY KEY, amount NUMERIC(10,2))`,
		`CREATE SINK copy INTO tgt AS SELECT id, amount FROM orders`,
	}
	for _, q := range script {
		exec(t, ca, q)
	}
	objects := []struct{ kind, name string }{
		{"TABLE", "orders"}, {"TABLE", "events"}, {"TABLE", "tgt"}, {"MATERIALIZED VIEW", "totals"}, {"SOURCE", "gen"}, {"SINK", "copy"},
	}
	shown := map[string]string{}
	for _, o := range objects {
		rows, err := ca.Query(context.Background(), "SHOW CREATE "+o.kind+" "+o.name)
		if err != nil {
			t.Fatalf("SHOW CREATE %s %s: %v", o.kind, o.name, err)
		}
		fd := rows.FieldDescriptions()
		var name, sql string
		n := 0
		for rows.Next() {
			if err := rows.Scan(&name, &sql); err != nil {
				t.Fatal(err)
			}
			n++
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if len(fd) != 2 || fd[0].Name != "Name" || fd[1].Name != "Create Sql" || n != 1 || name != o.name {
			t.Fatalf("SHOW CREATE %s %s: columns %v, %d rows, name %q", o.kind, o.name, fd, n, name)
		}
		if _, err := ddl.Parse(sql); err != nil {
			t.Fatalf("SHOW CREATE %s %s gave %q, which does not parse: %v", o.kind, o.name, sql, err)
		}
		t.Logf("%s", sql)
		shown[o.name] = sql
	}

	b, cb := startConn(t)
	for _, name := range []string{"orders", "events", "totals", "gen", "tgt", "copy"} {
		exec(t, cb, shown[name])
	}
	ctx := context.Background()
	catA, err := a.Engine.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	catB, err := b.Engine.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"orders", "events", "tgt", "totals"} {
		ta, err := catA.Table(catalog.Name("dev", n))
		if err != nil {
			t.Fatal(err)
		}
		tb, err := catB.Table(catalog.Name("dev", n))
		if err != nil {
			t.Fatalf("%s not created from %q: %v", n, shown[n], err)
		}
		if !slices.Equal(ta.Columns, tb.Columns) || !slices.Equal(ta.PrimaryKey, tb.PrimaryKey) || !maps.Equal(ta.Options, tb.Options) || ta.Query != tb.Query || ta.Kind != tb.Kind {
			t.Errorf("%s differs:\n%+v\n%+v", n, ta, tb)
		}
	}
	sa, _ := catA.Source(catalog.Name("dev", "gen"))
	sb, err := catB.Source(catalog.Name("dev", "gen"))
	if err != nil || sa.Connector != sb.Connector || !maps.Equal(sa.Options, sb.Options) || !slices.Equal(sa.Columns, sb.Columns) {
		t.Errorf("source differs: %+v\n%+v (%v)", sa, sb, err)
	}
	// The view's job options (time zone) and the sink come back alike.
	for _, o := range []struct{ kind, name string }{{"MATERIALIZED VIEW", "totals"}, {"SINK", "copy"}} {
		if got := rowsText(t, cb, "SHOW CREATE "+o.kind+" "+o.name); got != o.name+"|"+shown[o.name] {
			t.Errorf("SHOW CREATE %s %s on the copy: %q, want %q", o.kind, o.name, got, shown[o.name])
		}
	}

	// Wrong kinds and missing objects.
	for q, code := range map[string]string{
		"SHOW CREATE TABLE totals":             "42809",
		"SHOW CREATE MATERIALIZED VIEW orders": "42809",
		"SHOW CREATE TABLE nope":               "42P01",
		"SHOW CREATE SINK nope":                "42704",
	} {
		_, err := ca.Exec(ctx, q)
		if err == nil || sqlState(err) != code {
			t.Errorf("%s: %v, want %s", q, err, code)
		}
	}
}

// sqlState is the SQLSTATE of a server error, "" for other errors.
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// TestShowCreateTableClauses: the options Strata keeps for a CDC table's
// FROM clause and a watermark come back as those clauses, names that need
// quotes are quoted, and the statement parses to the same definition.
func TestShowCreateTableClauses(t *testing.T) {
	s := &Session{db: "dev"}
	tbl := catalog.Table{
		Name: catalog.Name("dev", "Orders"), Kind: catalog.KindTable,
		Columns: []catalog.Column{
			{Name: "id", Type: types.Int64, NotNull: true},
			{Name: "user", Type: types.Text},
			{Name: "ts", Type: types.Type{Kind: types.KindTimestamp, Precision: 3}, NotNull: true},
		},
		PrimaryKey: []string{"id"},
		Options: map[string]string{
			"source": "other.pg", "source.table": "public.o'rders", "bucket": "4",
			"watermark.column": "ts", "watermark.delay": "2m30s",
		},
	}
	sql := s.createTableSQL(tbl)
	want := `CREATE TABLE "Orders" (id BIGINT, "user" TEXT, ts TIMESTAMP(3) NOT NULL, PRIMARY KEY (id), WATERMARK FOR ts AS ts - INTERVAL '150' SECOND) FROM other.pg TABLE 'public.o''rders' WITH ('bucket' = '4')`
	if sql != want {
		t.Fatalf("got  %s\nwant %s", sql, want)
	}
	stmts, err := ddl.Parse(sql)
	if err != nil {
		t.Fatal(err)
	}
	ct := stmts[0].(*ddl.CreateTable)
	if ct.Name != "Orders" || ct.FromSource != "other.pg" || ct.FromTable != "public.o'rders" || ct.Watermark == nil ||
		ct.Watermark.Column != "ts" || ct.Watermark.Delay != 150*time.Second || !maps.Equal(ct.With, map[string]string{"bucket": "4"}) ||
		!slices.Equal(ct.PrimaryKey, []string{"id"}) || len(ct.Columns) != 3 || ct.Columns[1].Name != "user" || !ct.Columns[2].NotNull {
		t.Fatalf("parsed back as %+v", ct)
	}
}
