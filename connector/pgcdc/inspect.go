package pgcdc

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stratadb/strata/internal/base"
)

// query runs sql with text parameters and returns the rows as strings
// (NULL as "").
func query(ctx context.Context, conn *pgconn.PgConn, sql string, args ...string) ([][]string, error) {
	params := make([][]byte, len(args))
	for i, a := range args {
		params[i] = []byte(a)
	}
	res := conn.ExecParams(ctx, sql, params, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, res.Err
	}
	out := make([][]string, len(res.Rows))
	for i, r := range res.Rows {
		out[i] = make([]string, len(r))
		for j, v := range r {
			out[i][j] = string(v)
		}
	}
	return out, nil
}

// inspect checks one table against the database's catalog: it exists, has
// every declared column with a supported type that fits, and a replica
// identity that can feed the Strata table.
func inspect(ctx context.Context, conn *pgconn.PgConn, t Table) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("postgres-cdc: table %s (upstream %s): %s: %w", t.Name, t.Upstream, fmt.Sprintf(format, args...), base.ErrInvalidArgument)
	}
	ident, err := query(ctx, conn, "SELECT c.relreplident, c.relkind FROM pg_class c WHERE c.oid = to_regclass($1)", t.qualified())
	if err != nil {
		return fmt.Errorf("postgres-cdc: table %s: look up %s: %w", t.Name, t.Upstream, err)
	}
	if len(ident) == 0 {
		return bad("no such table")
	}
	if k := ident[0][1]; k != "r" && k != "p" {
		return bad("not a table (relkind %q)", k)
	}
	cols, err := query(ctx, conn, `SELECT a.attname, a.atttypid, format_type(a.atttypid, a.atttypmod), t.typcategory = 'A'
		FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
		WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped`, t.qualified())
	if err != nil {
		return fmt.Errorf("postgres-cdc: table %s: columns of %s: %w", t.Name, t.Upstream, err)
	}
	byName := map[string][]string{}
	for _, c := range cols {
		byName[c[0]] = c
	}
	for _, c := range t.Columns {
		pc, ok := byName[c.Name]
		if !ok {
			return fmt.Errorf("postgres-cdc: table %s column %s: %s has no such column: %w", t.Name, c.Name, t.Upstream, base.ErrInvalidArgument)
		}
		oid, _ := strconv.ParseUint(pc[1], 10, 32)
		if err := checkType(t.Name, c.Name, uint32(oid), pc[2], pc[3] == "t", c.Type); err != nil {
			return err
		}
	}
	switch ident[0][0] {
	case "f": // FULL: every change carries the whole old row
		return nil
	case "n":
		return bad("REPLICA IDENTITY NOTHING gives no old rows for updates and deletes; set REPLICA IDENTITY FULL")
	}
	// DEFAULT (the primary key) or USING INDEX: an upsert changelog.
	keys, err := query(ctx, conn, `SELECT a.attname FROM pg_index i
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
		WHERE i.indrelid = to_regclass($1) AND CASE WHEN $2 = 'd' THEN i.indisprimary ELSE i.indisreplident END`,
		t.qualified(), ident[0][0])
	if err != nil {
		return fmt.Errorf("postgres-cdc: table %s: replica identity of %s: %w", t.Name, t.Upstream, err)
	}
	var identity []string
	for _, k := range keys {
		identity = append(identity, k[0])
	}
	if len(identity) == 0 {
		return bad("it has no primary key for REPLICA IDENTITY DEFAULT; add one or set REPLICA IDENTITY FULL")
	}
	slices.Sort(identity)
	pk := slices.Sorted(slices.Values(t.PrimaryKey))
	if !slices.Equal(identity, pk) {
		return bad("its replica identity is the key (%s), which gives an upsert changelog: the Strata table needs that primary key, not (%s); or set REPLICA IDENTITY FULL",
			strings.Join(identity, ", "), strings.Join(pk, ", "))
	}
	for _, c := range t.Columns {
		if c.NotNull && !slices.Contains(pk, c.Name) {
			return fmt.Errorf("postgres-cdc: table %s column %s: deletes under a key replica identity carry the key only, so non-key columns must be nullable; or set REPLICA IDENTITY FULL on %s: %w",
				t.Name, c.Name, t.Upstream, base.ErrInvalidArgument)
		}
	}
	return nil
}

// ensurePublication creates publication FOR TABLE the tables when it does
// not exist, and otherwise adds the tables it does not list yet (ALTER
// PUBLICATION ... ADD TABLE: a source gains a table); a publication that
// cannot be altered (not its owner) is an error naming the table. A
// publication it creates gets the comment that marks it as the source's
// (cleanup.go), in the same transaction.
func ensurePublication(ctx context.Context, conn *pgconn.PgConn, pub, slot string, tables []Table) error {
	rows, err := query(ctx, conn, "SELECT 1 FROM pg_publication WHERE pubname = $1", pub)
	if err != nil {
		return fmt.Errorf("postgres-cdc: look up publication %s: %w", pub, err)
	}
	if len(rows) == 0 && len(tables) == 0 {
		// Every table is quarantined: a publication of nothing, which a
		// later source of the same name extends.
		if _, err := conn.Exec(ctx, "CREATE PUBLICATION "+quoteIdent(pub)+"; "+commentPublication(pub, slot)).ReadAll(); err != nil {
			return fmt.Errorf("postgres-cdc: create publication %s: %w", pub, err)
		}
		return nil
	}
	if len(rows) == 0 {
		names := make([]string, len(tables))
		for i, t := range tables {
			names[i] = t.qualified()
		}
		if _, err := conn.Exec(ctx, "CREATE PUBLICATION "+quoteIdent(pub)+" FOR TABLE "+strings.Join(names, ", ")+"; "+commentPublication(pub, slot)).ReadAll(); err != nil {
			return fmt.Errorf("postgres-cdc: create publication %s: %w", pub, err)
		}
		return nil
	}
	for _, t := range tables {
		s, tb := t.schemaTable()
		rows, err := query(ctx, conn, "SELECT 1 FROM pg_publication_tables WHERE pubname = $1 AND schemaname = $2 AND tablename = $3", pub, s, tb)
		if err != nil {
			return fmt.Errorf("postgres-cdc: look up publication %s: %w", pub, err)
		}
		if len(rows) == 0 {
			if _, err := conn.Exec(ctx, "ALTER PUBLICATION "+quoteIdent(pub)+" ADD TABLE "+t.qualified()).ReadAll(); err != nil {
				return fmt.Errorf("postgres-cdc: table %s: publication %s does not publish %s and cannot be altered (%v): %w", t.Name, pub, t.Upstream, err, base.ErrInvalidArgument)
			}
		}
	}
	return nil
}
