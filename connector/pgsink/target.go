package pgsink

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/catalog"
)

// target is what the sink learned about its target table, and the
// statements it writes it with.
type target struct {
	// castTo[i] is the type column i's text values are cast to: the
	// Postgres column's type without modifiers, so that the insert's
	// assignment applies them (and refuses a value too long for
	// varchar(n) instead of cutting it, as an explicit cast would).
	castTo []string
	// upsert and remove are the statements (see doc.go, Writes).
	upsert, remove string
}

// pgColumn is one column of the target table as pg_attribute has it.
type pgColumn struct {
	name     string
	oid      uint32 // the type, or a domain's base type
	typeName string // format_type with modifiers
	bare     string // format_type without modifiers
	notNull  bool
	defaults bool // has a default, is an identity or generated column
	array    bool
}

// inspect reads the target table from the catalog and checks that it can
// take the sink's rows: it exists, has a column of a fitting type for
// every sink column, has no other NOT NULL column without a default, and
// has a primary key or a unique index on exactly the key columns. Errors
// wrap base.ErrNotFound (no table) or base.ErrInvalidArgument and name
// the table and the column.
func inspect(ctx context.Context, conn *pgx.Conn, o Options, cols []catalog.Column, key []int) (*target, error) {
	name := o.Target()
	var (
		relid   uint32
		relkind string
	)
	err := conn.QueryRow(ctx, `SELECT c.oid, c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = $2`, o.Schema, o.Table).Scan(&relid, &relkind)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres sink: table %s does not exist in database %s (create it first, e.g. %s): %w",
			name, o.Database, createHint(o, cols, key), base.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres sink: table %s: %w", name, err)
	}
	if relkind != "r" && relkind != "p" {
		return nil, fmt.Errorf("postgres sink: %s is not a table (relkind %s): %w", name, relkind, base.ErrInvalidArgument)
	}
	rows, err := conn.Query(ctx, `SELECT a.attname::text, CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE a.atttypid END,
			format_type(a.atttypid, a.atttypmod), format_type(a.atttypid, NULL), a.attnotnull,
			a.atthasdef OR a.attidentity <> '' OR a.attgenerated <> '', t.typcategory = 'A'
		FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
		WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, relid)
	if err != nil {
		return nil, fmt.Errorf("postgres sink: columns of %s: %w", name, err)
	}
	var pgCols []pgColumn
	for rows.Next() {
		var c pgColumn
		if err := rows.Scan(&c.name, &c.oid, &c.typeName, &c.bare, &c.notNull, &c.defaults, &c.array); err != nil {
			rows.Close()
			return nil, fmt.Errorf("postgres sink: columns of %s: %w", name, err)
		}
		pgCols = append(pgCols, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres sink: columns of %s: %w", name, err)
	}
	t := &target{castTo: make([]string, len(cols))}
	for i, c := range cols {
		j := slices.IndexFunc(pgCols, func(p pgColumn) bool { return p.name == c.Name })
		if j < 0 {
			return nil, fmt.Errorf("postgres sink: table %s has no column %q (add it: ALTER TABLE %s ADD COLUMN %s %s): %w",
				name, c.Name, quoted(o.Schema, o.Table), pgx.Identifier{c.Name}.Sanitize(), TypeFor(c.Type), base.ErrInvalidArgument)
		}
		p := pgCols[j]
		if p.array || !Accepts(p.oid, c.Type) {
			return nil, fmt.Errorf("postgres sink: table %s column %q is %s, which cannot hold the sink's %s values (use one of: %s): %w",
				name, c.Name, p.typeName, c.Type, acceptedNames(c.Type), base.ErrInvalidArgument)
		}
		t.castTo[i] = p.bare
		if slices.Contains(stringOIDs, p.oid) {
			// "character" as a cast is character(1): cast string
			// columns to text and let the assignment check the length.
			t.castTo[i] = "text"
		}
	}
	for _, p := range pgCols {
		if p.notNull && !p.defaults && !slices.ContainsFunc(cols, func(c catalog.Column) bool { return c.Name == p.name }) {
			return nil, fmt.Errorf("postgres sink: table %s column %q is NOT NULL without a default, and the sink has no such column: %w",
				name, p.name, base.ErrInvalidArgument)
		}
	}
	if err := checkUnique(ctx, conn, name, relid, cols, key); err != nil {
		return nil, err
	}
	t.upsert, t.remove = statements(o, cols, key, t.castTo)
	return t, nil
}

// checkUnique finds a primary key or a valid unique index, without
// expressions or predicate, on exactly the key columns (in any order):
// what INSERT ... ON CONFLICT (key) needs.
func checkUnique(ctx context.Context, conn *pgx.Conn, name string, relid uint32, cols []catalog.Column, key []int) error {
	rows, err := conn.Query(ctx, `SELECT i.indexrelid::regclass::text,
			array(SELECT a.attname::text FROM unnest(i.indkey::int2[]) k JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k)
		FROM pg_index i WHERE i.indrelid = $1 AND i.indisunique AND i.indisvalid AND i.indpred IS NULL AND i.indexprs IS NULL`, relid)
	if err != nil {
		return fmt.Errorf("postgres sink: indexes of %s: %w", name, err)
	}
	want := make([]string, len(key))
	for i, k := range key {
		want[i] = cols[k].Name
	}
	slices.Sort(want)
	var seen []string
	found := false
	for rows.Next() {
		var (
			index string
			on    []string
		)
		if err := rows.Scan(&index, &on); err != nil {
			rows.Close()
			return fmt.Errorf("postgres sink: indexes of %s: %w", name, err)
		}
		seen = append(seen, fmt.Sprintf("%s (%s)", index, strings.Join(on, ", ")))
		slices.Sort(on)
		found = found || slices.Equal(on, want)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres sink: indexes of %s: %w", name, err)
	}
	if !found {
		have := "none"
		if len(seen) > 0 {
			have = strings.Join(seen, ", ")
		}
		return fmt.Errorf("postgres sink: table %s has no primary key or unique index on exactly (%s), the key of the sink's rows, which upserts need (unique indexes: %s): %w",
			name, strings.Join(want, ", "), have, base.ErrInvalidArgument)
	}
	return nil
}

// quoted returns schema.table with both names quoted.
func quoted(schema, table string) string { return pgx.Identifier{schema, table}.Sanitize() }

// createHint spells a CREATE TABLE that fits the sink's rows.
func createHint(o Options, cols []catalog.Column, key []int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (", quoted(o.Schema, o.Table))
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", pgx.Identifier{c.Name}.Sanitize(), TypeFor(c.Type))
	}
	b.WriteString(", PRIMARY KEY (")
	for i, k := range key {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pgx.Identifier{cols[k].Name}.Sanitize())
	}
	b.WriteString("))")
	return b.String()
}

// statements returns the upsert and the delete of a batch: each takes one
// text[] parameter per column (upsert) or key column (delete), unnested
// into rows and cast to the columns' types.
//
//	INSERT INTO "s"."t" ("id", "v") SELECT u."id"::bigint, u."v"::text
//	  FROM unnest($1::text[], $2::text[]) AS u("id", "v")
//	  ON CONFLICT ("id") DO UPDATE SET "v" = EXCLUDED."v"
//	DELETE FROM "s"."t" AS t USING unnest($1::text[]) AS u("id")
//	  WHERE t."id" = u."id"::bigint
func statements(o Options, cols []catalog.Column, key []int, castTo []string) (upsert, remove string) {
	q := func(s string) string { return pgx.Identifier{s}.Sanitize() }
	var names, sel, params, set []string
	for i, c := range cols {
		names = append(names, q(c.Name))
		sel = append(sel, fmt.Sprintf("u.%s::%s", q(c.Name), castTo[i]))
		params = append(params, fmt.Sprintf("$%d::text[]", i+1))
		if !slices.Contains(key, i) {
			set = append(set, fmt.Sprintf("%s = EXCLUDED.%s", q(c.Name), q(c.Name)))
		}
	}
	var keyNames, keyParams, match []string
	for n, k := range key {
		keyNames = append(keyNames, q(cols[k].Name))
		keyParams = append(keyParams, fmt.Sprintf("$%d::text[]", n+1))
		match = append(match, fmt.Sprintf("t.%s = u.%s::%s", q(cols[k].Name), q(cols[k].Name), castTo[k]))
	}
	conflict := "DO NOTHING"
	if len(set) > 0 {
		conflict = "DO UPDATE SET " + strings.Join(set, ", ")
	}
	upsert = fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM unnest(%s) AS u(%s) ON CONFLICT (%s) %s",
		quoted(o.Schema, o.Table), strings.Join(names, ", "), strings.Join(sel, ", "), strings.Join(params, ", "),
		strings.Join(names, ", "), strings.Join(keyNames, ", "), conflict)
	remove = fmt.Sprintf("DELETE FROM %s AS t USING unnest(%s) AS u(%s) WHERE %s",
		quoted(o.Schema, o.Table), strings.Join(keyParams, ", "), strings.Join(keyNames, ", "), strings.Join(match, " AND "))
	return upsert, remove
}
