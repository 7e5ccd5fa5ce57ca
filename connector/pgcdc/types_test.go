package pgcdc_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/connector/pgcdc"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// TestTypes reads a row of every supported type through the snapshot and
// through the stream, and compares each value with one built
// independently with the datum constructors.
func TestTypes(t *testing.T) {
	ctx := context.Background()
	opts, conn := db(t, "types")
	run(t, conn, `CREATE TABLE every (
		id int PRIMARY KEY, b bool, i2 smallint, i8 bigint, f4 real, f8 double precision,
		n numeric(10,3), nu numeric, tx text, v varchar(10), c char(4), d date, tm time,
		ts timestamp, tz timestamptz, iv interval, j json, jb jsonb, by bytea, u uuid,
		big text, i4 integer);
		ALTER TABLE every REPLICA IDENTITY FULL;
		ALTER TABLE every ALTER COLUMN big SET STORAGE EXTERNAL;`)
	values := `true, -3, 9000000000, 1.5, 0.1, 12.345, 123456789.000000001, 'x''y', 'vé', 'ab',
		'2024-02-29', '23:59:59.5', '1999-12-31 23:59:59.123456', '2024-01-01 00:00:00-05',
		'1 year 2 mons 3 days 04:05:06.7', '{"b": 1, "a": [true, null]}', '{"b": 1, "a": [true, null]}',
		'\x00ff10', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', repeat('long ', 1000), 2147483647`
	run(t, conn, "INSERT INTO every VALUES (1, "+values+"), (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)")
	n103, _ := types.NumericType(10, 3)
	cols := []catalog.Column{col("id", types.Int32, true), col("b", types.Bool, false), col("i2", types.Int16, false),
		col("i8", types.Int64, false), col("f4", types.Float32, false), col("f8", types.Float64, false),
		col("n", n103, false), col("nu", types.Numeric, false), col("tx", types.Text, false),
		col("v", types.Varchar, false), col("c", types.Type{Kind: types.KindChar, Length: 4}, false),
		col("d", types.Date, false), col("tm", types.Time, false), col("ts", types.Timestamp, false),
		col("tz", types.TimestampTZ, false), col("iv", types.Interval, false), col("j", types.JSONB, false),
		col("jb", types.JSONB, false), col("by", types.Bytea, false), col("u", types.UUID, false),
		col("big", types.Text, false), col("i4", types.Int32, false)}
	s, err := pgcdc.Open(ctx, pgcdc.Config{Options: opts, Tables: []pgcdc.Table{{Upstream: "every", Name: "every", Columns: cols}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	dec := func(s string) types.Datum {
		d, _, err := apd.NewFromString(s)
		if err != nil {
			t.Fatal(err)
		}
		return types.NewNumeric(d)
	}
	js, err := types.NewJSONB(`{"a": [true, null], "b": 1}`)
	if err != nil {
		t.Fatal(err)
	}
	var u [16]byte
	copy(u[:], []byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11})
	want := types.Row{
		types.NewInt32(1), types.NewBool(true), types.NewInt16(-3), types.NewInt64(9000000000),
		types.NewFloat32(1.5), types.NewFloat64(0.1), dec("12.345"), dec("123456789.000000001"),
		types.NewText("x'y"), types.NewVarchar("vé"), types.NewChar("ab  "),
		types.NewDate(int32(time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC).Unix() / 86400)),
		types.NewTime((23*3600+59*60+59)*1_000_000 + 500_000),
		types.NewTimestamp(time.Date(1999, 12, 31, 23, 59, 59, 123456000, time.UTC).UnixMicro()),
		types.NewTimestampTZ(time.Date(2024, 1, 1, 5, 0, 0, 0, time.UTC).UnixMicro()),
		types.NewInterval(types.IntervalValue{Months: 14, Days: 3, Micros: (4*3600+5*60+6)*1_000_000 + 700_000}),
		js, js, types.NewBytea([]byte{0, 0xff, 0x10}), types.NewUUID(u),
		types.NewText(strings.Repeat("long ", 1000)), types.NewInt32(2147483647),
	}
	check := func(what string, c *types.Chunk, r int, kind types.RowKind, want types.Row) {
		t.Helper()
		if c.Kind(r) != kind {
			t.Fatalf("%s: row kind %s, want %s", what, c.Kind(r), kind)
		}
		for j, w := range want {
			got := c.Datum(1+j, r)
			if got.IsNull() != w.IsNull() || (!w.IsNull() && (got.Kind() != w.Kind() || !types.Equal(got, w))) {
				t.Fatalf("%s: column %s is %v (%s), want %v (%s)", what, cols[j].Name, got, got.Kind(), w, w.Kind())
			}
		}
	}
	nulls := make(types.Row, len(want))
	for j := range nulls {
		nulls[j] = types.Null
	}
	nulls[0] = types.NewInt32(2)

	snap, pos := next(t, s, 0)
	if snap.Len() != 2 {
		t.Fatalf("snapshot has %d rows, want 2", snap.Len())
	}
	check("snapshot", snap, 0, types.Insert, want)
	check("snapshot NULLs", snap, 1, types.Insert, nulls)

	// Streamed: an insert, then an update that leaves the TOASTed column
	// unchanged (pgoutput does not send it; the old row under FULL has
	// it).
	run(t, conn, "INSERT INTO every VALUES (3, "+values+")")
	run(t, conn, "UPDATE every SET i4 = 5 WHERE id = 3")
	c, pos := next(t, s, pos)
	want[0] = types.NewInt32(3)
	check("streamed insert", c, 0, types.Insert, want)
	c, _ = next(t, s, pos)
	check("update, old row", c, 0, types.UpdateBefore, want)
	want[len(want)-1] = types.NewInt32(5)
	check("update, new row with the unchanged TOASTed value", c, 1, types.UpdateAfter, want)
}

// TestRefused checks that what the source cannot represent is refused
// by Check with an error naming the table and column: arrays and other
// types, a missing column, a type that does not fit, a key identity
// without a matching primary key, REPLICA IDENTITY NOTHING. Open
// quarantines such a table instead and follows the others; at run time a
// value out of the declared range and a TRUNCATE quarantine their table.
func TestRefused(t *testing.T) {
	ctx := context.Background()
	opts, conn := db(t, "refused")
	run(t, conn, `
		CREATE TABLE arr (id int PRIMARY KEY, tags text[]);
		CREATE TABLE pt (id int PRIMARY KEY, p point);
		CREATE TABLE plain (id int PRIMARY KEY, v text, big bigint);
		CREATE TABLE nothing (id int PRIMARY KEY);
		ALTER TABLE nothing REPLICA IDENTITY NOTHING;
		CREATE TABLE full_t (id int PRIMARY KEY, v text);
		ALTER TABLE full_t REPLICA IDENTITY FULL;`)
	id := col("id", types.Int32, true)
	cases := []struct {
		name  string
		table pgcdc.Table
		want  []string
	}{
		{"array", pgcdc.Table{Upstream: "arr", Name: "s_arr", PrimaryKey: []string{"id"}, Columns: []catalog.Column{id, col("tags", types.Text, false)}},
			[]string{"s_arr", "tags", "array type text[]"}},
		{"point", pgcdc.Table{Upstream: "pt", Name: "s_pt", PrimaryKey: []string{"id"}, Columns: []catalog.Column{id, col("p", types.Text, false)}},
			[]string{"s_pt", "column p", "point is not supported"}},
		{"missing column", pgcdc.Table{Upstream: "plain", Name: "s_plain", PrimaryKey: []string{"id"}, Columns: []catalog.Column{id, col("w", types.Text, false)}},
			[]string{"s_plain", "column w", "no such column"}},
		{"type does not fit", pgcdc.Table{Upstream: "plain", Name: "s_plain", PrimaryKey: []string{"id"}, Columns: []catalog.Column{id, col("v", types.Int64, false)}},
			[]string{"s_plain", "column v", "cannot feed a column of type BIGINT"}},
		{"no primary key for a key identity", pgcdc.Table{Upstream: "plain", Name: "s_plain", Columns: []catalog.Column{id, col("v", types.Text, false)}},
			[]string{"s_plain", "upsert changelog", "REPLICA IDENTITY FULL"}},
		{"NOT NULL non-key column under a key identity", pgcdc.Table{Upstream: "plain", Name: "s_plain", PrimaryKey: []string{"id"}, Columns: []catalog.Column{id, col("v", types.Text, true)}},
			[]string{"s_plain", "column v", "nullable"}},
		{"replica identity nothing", pgcdc.Table{Upstream: "nothing", Name: "s_nothing", PrimaryKey: []string{"id"}, Columns: []catalog.Column{id}},
			[]string{"s_nothing", "REPLICA IDENTITY NOTHING"}},
		{"no such table", pgcdc.Table{Upstream: "public.gone", Name: "s_gone", Columns: []catalog.Column{id}},
			[]string{"s_gone", "no such table"}},
	}
	for _, tc := range cases {
		err := pgcdc.Check(ctx, opts, tc.table)
		if !errors.Is(err, base.ErrInvalidArgument) {
			t.Fatalf("%s: %v, want ErrInvalidArgument", tc.name, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("%s: error %q does not say %q", tc.name, err, w)
			}
		}
	}

	// Open quarantines a table it cannot follow from the first position
	// asked (here the snapshot) and follows the others.
	narrow := pgcdc.Table{Upstream: "plain", Name: "s_plain", PrimaryKey: []string{"id"},
		Columns: []catalog.Column{id, col("v", types.Text, false), col("big", types.Int16, false)}}
	full := pgcdc.Table{Upstream: "full_t", Name: "s_full", PrimaryKey: []string{"id"}, Columns: []catalog.Column{id, col("v", types.Text, false)}}
	s0, err := pgcdc.Open(ctx, pgcdc.Config{Options: opts, Tables: []pgcdc.Table{cases[0].table, full}})
	if err != nil {
		t.Fatal(err)
	}
	_, pos := next(t, s0, 0)
	if q := s0.Quarantined(); len(q) != 1 || q[0].Table != "s_arr" || q[0].From != 0 || !strings.Contains(q[0].Err, "array type text[]") {
		t.Fatalf("quarantined at Open: %+v", q)
	}
	run(t, conn, "INSERT INTO full_t VALUES (0, 'z')")
	c, _ := next(t, s0, pos)
	sameLines(t, "beside a quarantined table", rows(s0.Layout(), c), []string{"s_full +I 0|z"})
	s0.Close()
	run(t, conn, "DELETE FROM full_t")

	// At run time: a value out of the declared range quarantines its
	// table, naming the column and the transaction; a TRUNCATE too.
	opts1 := opts
	opts1.Slot, opts1.Publication = opts.Slot+"1", opts.Publication+"1"
	s, err := pgcdc.Open(ctx, pgcdc.Config{Options: opts1, Tables: []pgcdc.Table{narrow, full}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, pos = next(t, s, 0)
	run(t, conn, "BEGIN; INSERT INTO plain VALUES (1, 'a', 70000); INSERT INTO full_t VALUES (1, 'a'); COMMIT")
	c, pos = next(t, s, pos)
	sameLines(t, "beside an out-of-range value", rows(s.Layout(), c), []string{"s_full +I 1|a"})
	if q := s.Quarantined(); len(q) != 1 || !strings.Contains(q[0].Err, "s_plain column big") || !strings.Contains(q[0].Err, "committing at") || !strings.Contains(q[0].Err, "out of range") {
		t.Fatalf("out-of-range value: %+v", q)
	}
	run(t, conn, "BEGIN; TRUNCATE full_t; INSERT INTO plain VALUES (2, 'b', 1); COMMIT")
	c, _ = next(t, s, pos)
	if c.Len() != 0 {
		t.Fatalf("a TRUNCATE and a quarantined table's row gave %v", rows(s.Layout(), c))
	}
	q := s.Quarantined()
	if len(q) != 2 || q[1].Table != "s_full" || !strings.Contains(q[1].Err, "TRUNCATE of public.full_t (table s_full)") {
		t.Fatalf("truncate: %+v", q)
	}
}

// TestSchemaChange alters an upstream table while the Stream runs: a new
// column is not read and the stream goes on; a declared column whose
// type changes to one that cannot feed the Strata column quarantines the
// table with an error naming the table and column, and the source's
// other table goes on.
func TestSchemaChange(t *testing.T) {
	ctx := context.Background()
	opts, conn := db(t, "schemachange")
	run(t, conn, "CREATE TABLE items (id int PRIMARY KEY, qty int); ALTER TABLE items REPLICA IDENTITY FULL; CREATE TABLE other (id int PRIMARY KEY)")
	s, err := pgcdc.Open(ctx, pgcdc.Config{Options: opts, Tables: []pgcdc.Table{
		{Upstream: "items", Name: "s_items", PrimaryKey: []string{"id"}, Columns: []catalog.Column{col("id", types.Int32, true), col("qty", types.Int32, false)}},
		{Upstream: "other", Name: "s_other", PrimaryKey: []string{"id"}, Columns: []catalog.Column{col("id", types.Int32, true)}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, pos := next(t, s, 0)
	run(t, conn, "INSERT INTO items VALUES (1, 5)")
	c, pos := next(t, s, pos)
	sameLines(t, "before the change", rows(s.Layout(), c), []string{"s_items +I 1|5"})
	run(t, conn, "ALTER TABLE items ADD COLUMN note text; INSERT INTO items VALUES (2, 6, 'new')")
	c, pos = next(t, s, pos)
	sameLines(t, "after adding a column", rows(s.Layout(), c), []string{"s_items +I 2|6"})
	run(t, conn, "ALTER TABLE items ALTER COLUMN qty TYPE text; BEGIN; INSERT INTO items VALUES (3, 'seven', NULL); INSERT INTO other VALUES (1); COMMIT")
	c, pos = next(t, s, pos)
	sameLines(t, "after the type change", rows(s.Layout(), c), []string{"s_other +I 1"})
	q := s.Quarantined()
	if len(q) != 1 || q[0].Table != "s_items" || !strings.HasSuffix(q[0].Err, "table s_items column qty: Postgres type text cannot feed a column of type INTEGER") {
		t.Fatalf("type change: %+v", q)
	}
	run(t, conn, "INSERT INTO items VALUES (4, 'eight', NULL)")
	run(t, conn, "INSERT INTO other VALUES (2)")
	var got []string
	for range 2 {
		c, pos = next(t, s, pos)
		got = append(got, rows(s.Layout(), c)...)
	}
	sameLines(t, "later", got, []string{"s_other +I 2"})
}
