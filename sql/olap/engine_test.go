package olap

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"
	duck "github.com/duckdb/duckdb-go/v2"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
	"github.com/stratadb/strata/table/write"
)

func newEngine(t testing.TB) *Engine {
	t.Helper()
	e, err := Open(Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

type change struct {
	kind types.RowKind
	row  types.Row
}

func ins(r types.Row) change { return change{types.Insert, r} }
func upd(r types.Row) change { return change{types.UpdateAfter, r} }
func del(r types.Row) change { return change{types.Delete, r} }

// commitEpoch writes changes in epoch e and commits them.
func commitEpoch(t testing.TB, tb *table.Table, w *write.Writer, e base.Epoch, changes ...change) {
	t.Helper()
	for _, c := range changes {
		if err := w.Write(e, c.kind, c.row); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := w.PrepareCommit(e)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Commit(msgs); err != nil {
		t.Fatal(err)
	}
}

func i64(v int64) types.Datum  { return types.NewInt64(v) }
func txt(s string) types.Datum { return types.NewText(s) }

func num(s string) types.Datum {
	d, _, err := apd.NewFromString(s)
	if err != nil {
		panic(err)
	}
	return types.NewNumeric(d)
}

func mustQuery(t *testing.T, e *Engine, inputs []Input, q string) *Result {
	t.Helper()
	res, err := e.Query(context.Background(), inputs, q, QueryOptions{})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return res
}

// text renders rows one per line, values in PostgreSQL text form.
func text(rows []types.Row) string {
	var b strings.Builder
	for _, r := range rows {
		for i, d := range r {
			if i > 0 {
				b.WriteString("|")
			}
			if d.IsNull() {
				b.WriteString("NULL")
			} else {
				b.WriteString(types.FormatText(d, nil))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// accounts makes a primary-key table written over three epochs with
// inserts, updates and deletes:
//
//	epoch 1: +1 alice 10.50, +2 bob 20, +3 carol 30.25
//	epoch 2: 1 -> 11.00, -2, +4 dave 40
//	epoch 3: nothing
//	epoch 4: -3, 4 -> 41.5
func accounts(t testing.TB, fs fileio.FS, dir string) *table.Table {
	t.Helper()
	tb, err := table.Create(fs, dir, []schema.Field{
		{Name: "id", Type: types.Int64},
		{Name: "name", Type: types.Text, Nullable: true},
		{Name: "balance", Type: types.Type{Kind: types.KindNumeric, Precision: 10, Scale: 2}, Nullable: true},
	}, []string{"id"}, map[string]string{"bucket": "2"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := tb.NewWriter("job/sink")
	if err != nil {
		t.Fatal(err)
	}
	row := func(id int64, name, bal string) types.Row { return types.Row{i64(id), txt(name), num(bal)} }
	commitEpoch(t, tb, w, 1, ins(row(1, "alice", "10.50")), ins(row(2, "bob", "20.00")), ins(row(3, "carol", "30.25")))
	commitEpoch(t, tb, w, 2, upd(row(1, "alice", "11.00")), del(row(2, "", "0")), ins(row(4, "dave", "40.00")))
	commitEpoch(t, tb, w, 3)
	commitEpoch(t, tb, w, 4, del(row(3, "", "0")), upd(row(4, "dave", "41.50")))
	return tb
}

func TestQueryReadsExactlyTheEpoch(t *testing.T) {
	e := newEngine(t)
	tb := accounts(t, fileio.NewMem(), "wh/dev/accounts")
	want := map[base.Epoch]string{
		0: "",
		1: "1|alice|10.50\n2|bob|20.00\n3|carol|30.25\n",
		2: "1|alice|11.00\n3|carol|30.25\n4|dave|40.00\n",
		3: "1|alice|11.00\n3|carol|30.25\n4|dave|40.00\n",
		4: "1|alice|11.00\n4|dave|41.50\n",
	}
	for round := 0; round < 2; round++ {
		for ep := base.Epoch(0); ep <= 4; ep++ {
			res := mustQuery(t, e, []Input{{Name: "accounts", Table: tb, Epoch: ep}}, "SELECT id, name, balance FROM accounts ORDER BY id")
			if got := text(res.Rows); got != want[ep] {
				t.Errorf("epoch %d:\n%s\nwant\n%s", ep, got, want[ep])
			}
			if len(res.Columns) != 3 || res.Columns[0].Type != types.Int64 || res.Columns[2].Type.String() != "NUMERIC(10,2)" {
				t.Errorf("epoch %d: columns %v", ep, res.Columns)
			}
		}
	}
	// Epochs 2 and 3 share a snapshot; epoch 0 is the empty table. In each
	// round the table at epoch 1 is brought forward to epoch 2 (giving up
	// epoch 1's), and in the first round epoch 2's on to epoch 4: the
	// cache ends with epochs 0, 2 and 4 ([cache-advance]).
	if n, rows := e.CacheStats(); n != 3 || rows != 3+2 {
		t.Errorf("cache holds %d tables, %d rows; want 3 and 5", n, rows)
	}
	e.cache.mu.Lock()
	advanced := e.cache.mu.advanced
	e.cache.mu.Unlock()
	if advanced != 3 {
		t.Errorf("%d loads brought an older table forward, want 3", advanced)
	}
	_, err := e.Query(context.Background(), []Input{{Name: "accounts", Table: tb, Epoch: 5}}, "SELECT * FROM accounts", QueryOptions{})
	if sqlerr.Code(err) != sqlerr.ObjectNotInPrerequisiteState || !errors.Is(err, base.ErrOutOfRange) {
		t.Errorf("epoch above the committed one: %v (%s)", err, sqlerr.Code(err))
	}
}

func TestCacheEvictsOldSnapshots(t *testing.T) {
	e, err := Open(Options{Threads: 1, CacheTables: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	tb := accounts(t, fileio.NewMem(), "wh/dev/accounts")
	for _, ep := range []base.Epoch{1, 2, 4, 1} {
		res := mustQuery(t, e, []Input{{Name: "a", Table: tb, Epoch: ep}}, "SELECT count(*) FROM a")
		want := map[base.Epoch]string{1: "3\n", 2: "3\n", 4: "2\n"}[ep]
		if got := text(res.Rows); got != want {
			t.Errorf("epoch %d: count %s, want %s", ep, got, want)
		}
		if n, _ := e.CacheStats(); n > 2 {
			t.Errorf("cache holds %d tables, bound 2", n)
		}
	}
}

func TestTypesRoundTrip(t *testing.T) {
	e := newEngine(t)
	fields := []schema.Field{
		{Name: "k", Type: types.Int32},
		{Name: "i2", Type: types.Int16, Nullable: true},
		{Name: "i8", Type: types.Int64, Nullable: true},
		{Name: "f8", Type: types.Float64, Nullable: true},
		{Name: "n", Type: types.Type{Kind: types.KindNumeric, Precision: 12, Scale: 3}, Nullable: true},
		{Name: "nu", Type: types.Numeric, Nullable: true},
		{Name: "big", Type: types.Type{Kind: types.KindNumeric, Precision: 30, Scale: 4}, Nullable: true},
		{Name: "s", Type: types.Text, Nullable: true},
		{Name: "vc", Type: types.Type{Kind: types.KindVarchar, Length: 8}, Nullable: true},
		{Name: "b", Type: types.Bool, Nullable: true},
		{Name: "d", Type: types.Date, Nullable: true},
		{Name: "tm", Type: types.Time, Nullable: true},
		{Name: "ts", Type: types.Timestamp, Nullable: true},
		{Name: "tz", Type: types.TimestampTZ, Nullable: true},
		{Name: "iv", Type: types.Interval, Nullable: true},
		{Name: "j", Type: types.JSONB, Nullable: true},
		{Name: "by", Type: types.Bytea, Nullable: true},
		{Name: "u", Type: types.UUID, Nullable: true},
	}
	tb, err := table.Create(fileio.NewMem(), "wh/dev/all", fields, []string{"k"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	parse := func(i int, s string) types.Datum {
		d, err := types.ParseText(fields[i].Type, s, time.UTC)
		if err != nil {
			t.Fatalf("%s %q: %v", fields[i].Name, s, err)
		}
		return d
	}
	vals := []string{"1", "-7", "9000000000", "1.25", "-12345.678", "3.14159", "12345678901234567890.1234", "héllo 'q'", "short", "t",
		"1969-07-20", "13:05:07.25", "1969-12-31 23:59:59.5", "2024-01-01 12:00:00+00", "1 mon 2 days 00:00:03", `{"a": [1, 2.5, "x"], "b": null}`, `\x01ff`, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}
	row := make(types.Row, len(fields))
	nulls := make(types.Row, len(fields))
	for i, v := range vals {
		row[i] = parse(i, v)
		nulls[i] = types.Null
	}
	nulls[0] = types.NewInt32(2)
	w, _ := tb.NewWriter("w")
	commitEpoch(t, tb, w, 1, ins(row), ins(nulls))
	res := mustQuery(t, e, []Input{{Name: "all", Table: tb, Epoch: 1}}, `SELECT * FROM "all" ORDER BY k`)
	wantTypes := []string{"INTEGER", "SMALLINT", "BIGINT", "DOUBLE PRECISION", "NUMERIC(12,3)", "NUMERIC(38,5)", "NUMERIC(30,4)", "TEXT", "TEXT",
		"BOOLEAN", "DATE", "TIME", "TIMESTAMP", "TIMESTAMPTZ", "INTERVAL", "JSONB", "BYTEA", "UUID"}
	for i, c := range res.Columns {
		if c.Name != fields[i].Name || c.Type.String() != wantTypes[i] {
			t.Errorf("column %d: %s %s, want %s %s", i, c.Name, c.Type, fields[i].Name, wantTypes[i])
		}
	}
	for i := range fields {
		got := res.Rows[0][i]
		if types.Compare(got, row[i]) != 0 {
			t.Errorf("column %s: %s, want %s", fields[i].Name, types.FormatText(got, time.UTC), types.FormatText(row[i], time.UTC))
		}
		if i > 0 && !res.Rows[1][i].IsNull() {
			t.Errorf("column %s: NULL came back as %v", fields[i].Name, res.Rows[1][i])
		}
	}
	// Values computed by DuckDB come back typed, too.
	res = mustQuery(t, e, []Input{{Name: "all", Table: tb, Epoch: 1}},
		`SELECT sum(i8) AS s, count(*) AS c, 7/2 AS idiv, j->>'b' AS jb, j->'a' AS ja, n * 2 AS n2 FROM "all" WHERE k = 1 GROUP BY j, n`)
	if got, want := text(res.Rows), "9000000000|1|3|NULL|[1, 2.5, \"x\"]|-24691.356\n"; got != want {
		t.Errorf("computed: %s want %s", got, want)
	}
}

func TestInfiniteDatesAndTimestamps(t *testing.T) {
	e := newEngine(t)
	fields := []schema.Field{{Name: "k", Type: types.Int32}, {Name: "d", Type: types.Date}, {Name: "ts", Type: types.Timestamp}, {Name: "tz", Type: types.TimestampTZ}}
	tb, err := table.Create(fileio.NewMem(), "wh/dev/inf", fields, []string{"k"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := tb.NewWriter("w")
	commitEpoch(t, tb, w, 1,
		ins(types.Row{types.NewInt32(1), types.NewDate(types.DateInfinity), types.NewTimestamp(types.TimestampInfinity), types.NewTimestampTZ(types.TimestampInfinity)}),
		ins(types.Row{types.NewInt32(2), types.NewDate(types.DateNegInfinity), types.NewTimestamp(types.TimestampNegInfinity), types.NewTimestampTZ(types.TimestampNegInfinity)}))
	res := mustQuery(t, e, []Input{{Name: "inf", Table: tb, Epoch: 1}},
		"SELECT k, d, ts, tz, d > DATE '2000-01-01', ts < TIMESTAMP '2000-01-01', 'infinity'::TIMESTAMP = ts FROM inf ORDER BY k")
	want := "1|infinity|infinity|infinity|t|f|t\n2|-infinity|-infinity|-infinity|f|t|f\n"
	if got := text(res.Rows); got != want {
		t.Errorf("%s want %s", got, want)
	}
}

func TestJoinWindowCTE(t *testing.T) {
	e := newEngine(t)
	fs := fileio.NewMem()
	acc := accounts(t, fs, "wh/dev/accounts")
	orders, err := table.Create(fs, "wh/dev/orders", []schema.Field{
		{Name: "oid", Type: types.Int64},
		{Name: "account", Type: types.Int64},
		{Name: "amount", Type: types.Int32},
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := orders.NewWriter("orders")
	o := func(id, acct int64, amt int32) change {
		return ins(types.Row{i64(id), i64(acct), types.NewInt32(amt)})
	}
	commitEpoch(t, orders, w, 1, o(1, 1, 5), o(2, 1, 7), o(3, 2, 3))
	commitEpoch(t, orders, w, 2, o(4, 3, 9), o(5, 4, 1), o(6, 4, 4))
	commitEpoch(t, orders, w, 3)
	commitEpoch(t, orders, w, 4, o(7, 1, 2))
	in := func(ep base.Epoch) []Input {
		return []Input{{Name: "dev.accounts", Table: acc, Epoch: ep}, {Name: "orders", Table: orders, Epoch: ep}}
	}
	cases := []struct {
		name string
		ep   base.Epoch
		sql  string
		want string
	}{
		{"join", 2, `SELECT a.name, sum(o.amount) AS total, count(*) AS n FROM accounts a JOIN orders o ON o.account = a.id GROUP BY a.name ORDER BY a.name`,
			"alice|12|2\ncarol|9|1\ndave|5|2\n"},
		{"join at 1 sees bob", 1, `SELECT a.name, sum(o.amount) FROM dev.accounts a JOIN orders o ON o.account = a.id GROUP BY 1 ORDER BY 1`,
			"alice|12\nbob|3\n"},
		{"left join at 4", 4, `SELECT a.id, count(o.oid) FROM accounts a LEFT JOIN orders o ON o.account = a.id GROUP BY a.id ORDER BY a.id`,
			"1|3\n4|2\n"},
		{"window", 2, `SELECT oid, account, amount, rank() OVER (PARTITION BY account ORDER BY amount DESC) AS r,
			sum(amount) OVER (ORDER BY oid ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running FROM orders ORDER BY oid`,
			"1|1|5|2|5\n2|1|7|1|12\n3|2|3|1|15\n4|3|9|1|24\n5|4|1|2|25\n6|4|4|1|29\n"},
		{"cte", 4, `WITH spend AS (SELECT account, sum(amount) AS s FROM orders GROUP BY account),
			rich AS (SELECT * FROM dev.accounts WHERE balance > 20)
			SELECT r.name, r.balance, coalesce(s.s, 0) FROM rich r LEFT JOIN spend s ON s.account = r.id ORDER BY r.name`,
			"dave|41.50|5\n"},
		{"cte shadows an input", 2, `WITH orders AS (SELECT 1 AS x) SELECT * FROM orders`, "1\n"},
		{"qualified column", 2, `SELECT dev.accounts.name FROM dev.accounts WHERE dev.accounts.id = 4`, "dave\n"},
		{"division over a qualified input, window and CTE", 2, `WITH per AS (SELECT account, sum(amount) / count(*) AS avg_amt FROM orders GROUP BY account)
			SELECT dev.accounts.name, per.avg_amt, per.avg_amt * 100 / sum(per.avg_amt) OVER () AS pct, dev.accounts.id % 2 AS odd
			FROM dev.accounts JOIN per ON per.account = dev.accounts.id ORDER BY 1`,
			"alice|6|35|1\ncarol|9|52|1\ndave|2|11|0\n"},
		{"DISTINCT ON and string functions", 2, `SELECT DISTINCT ON (account) account, oid, 'x' || lower('AB') FROM orders ORDER BY account, amount DESC`,
			"1|2|xab\n2|3|xab\n3|4|xab\n4|6|xab\n"},
		{"nulls last ascending", 1, `SELECT x FROM (VALUES (2), (NULL), (1)) v(x) ORDER BY x`, "1\n2\nNULL\n"},
	}
	for _, c := range cases {
		res, err := e.Query(context.Background(), in(c.ep), c.sql, QueryOptions{})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := text(res.Rows); got != c.want {
			t.Errorf("%s at epoch %d:\n%s\nwant\n%s", c.name, c.ep, got, c.want)
		}
	}
}

func TestErrorsHaveSQLStates(t *testing.T) {
	e := newEngine(t)
	tb := accounts(t, fileio.NewMem(), "wh/dev/accounts")
	in := []Input{{Name: "accounts", Table: tb, Epoch: 1}}
	cases := []struct{ sql, code, msg string }{
		{"SELECT nope FROM accounts", sqlerr.UndefinedColumn, `"nope"`},
		{"SELECT * FROM missing", sqlerr.UndefinedTable, "missing"},
		{"SELECT FROM WHERE", sqlerr.SyntaxError, "syntax error"},
		{"SELEC 1", sqlerr.SyntaxError, "syntax error"},
		{"CREATE TABLE x (a INTEGER)", sqlerr.FeatureNotSupported, "only SELECT"},
		{"COPY accounts TO '/tmp/x.csv'", sqlerr.InsufficientPrivilege, "disabled"},
		{"DROP TABLE strata_data.s1", sqlerr.FeatureNotSupported, "only SELECT"},
		{"SELECT * FROM read_csv('/etc/passwd')", sqlerr.InsufficientPrivilege, "disabled"},
		{"SELECT 1; SELECT 2", sqlerr.FeatureNotSupported, "one statement"},
		{"SELECT nofunc(1)", sqlerr.UndefinedFunction, "nofunc"},
		{"SELECT name, count(*) FROM accounts", sqlerr.GroupingError, "GROUP BY"},
		{"SELECT 1/0", sqlerr.DivisionByZero, "division by zero"},
		{"SELECT id % (id - id) FROM accounts", sqlerr.DivisionByZero, "division by zero"},
		{"SELECT sum(balance) / count(*) FILTER (WHERE id > 100) FROM accounts", sqlerr.DivisionByZero, "division by zero"},
	}
	for _, c := range cases {
		_, err := e.Query(context.Background(), in, c.sql, QueryOptions{})
		var se *sqlerr.Error
		if !errors.As(err, &se) {
			t.Errorf("%s: %v is not a *sqlerr.Error", c.sql, err)
			continue
		}
		if se.Code != c.code || !strings.Contains(se.Message, c.msg) || strings.Contains(se.Message, "LINE 1") {
			t.Errorf("%s: %s %q, want %s containing %q", c.sql, se.Code, se.Message, c.code, c.msg)
		}
	}
	// The connection that ran a failed query is clean for the next one.
	res := mustQuery(t, e, in, "SELECT count(*) FROM accounts")
	if text(res.Rows) != "3\n" {
		t.Errorf("after errors: %s", text(res.Rows))
	}
}

func TestParameters(t *testing.T) {
	e := newEngine(t)
	tb := accounts(t, fileio.NewMem(), "wh/dev/accounts")
	in := []Input{{Name: "accounts", Table: tb, Epoch: 2}}
	for _, c := range []struct {
		params []types.Datum
		want   string
	}{
		{[]types.Datum{i64(1), num("5.5")}, "alice|11.00\n"},
		{[]types.Datum{txt("4"), txt("40")}, ""},
		{[]types.Datum{txt("4"), txt("39.99")}, "dave|40.00\n"},
		{[]types.Datum{types.Null, num("0")}, ""},
	} {
		res, err := e.Query(context.Background(), in, "SELECT name, balance FROM accounts WHERE id = $1 AND balance > $2", QueryOptions{Params: c.params})
		if err != nil {
			t.Errorf("%v: %v", c.params, err)
			continue
		}
		if got := text(res.Rows); got != c.want {
			t.Errorf("%v: %q want %q", c.params, got, c.want)
		}
	}
	res, err := e.Query(context.Background(), in, "SELECT id / $1 AS q FROM accounts WHERE id = 4", QueryOptions{Params: []types.Datum{i64(2)}})
	if err != nil || text(res.Rows) != "2\n" || res.Columns[0].Name != "q" {
		t.Errorf("id / $1: %v %v", res, err)
	}
	_, err = e.Query(context.Background(), in, "SELECT id / $1 FROM accounts", QueryOptions{Params: []types.Datum{i64(0)}})
	if sqlerr.Code(err) != sqlerr.DivisionByZero {
		t.Errorf("id / $1 with $1 = 0: %v", err)
	}
	_, err = e.Query(context.Background(), in, "SELECT $1 + $2", QueryOptions{Params: []types.Datum{i64(1)}})
	if sqlerr.Code(err) != sqlerr.ProtocolViolation {
		t.Errorf("missing parameter: %v", err)
	}
}

func TestDescribeMatchesQuery(t *testing.T) {
	e := newEngine(t)
	fs := fileio.NewMem()
	tb := accounts(t, fs, "wh/dev/accounts")
	in := []Input{{Name: "accounts", Table: tb, Epoch: 2}}
	q := `SELECT id, name, balance, sum(balance) OVER () AS total, count(*) OVER () AS n, array_agg(id) OVER () AS ids,
		'{"a":1}'::JSON AS j, now()::DATE - DATE '2020-01-01' AS days FROM accounts WHERE id > $1 AND name <> $2`
	cols, params, err := e.Describe(context.Background(), in, q)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Query(context.Background(), in, q, QueryOptions{Params: []types.Datum{i64(0), txt("x")}})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(cols) != fmt.Sprint(res.Columns) {
		t.Errorf("Describe %v\nQuery    %v", cols, res.Columns)
	}
	if len(params) != 2 || params[0] != types.Int64 || params[1] != types.Text {
		t.Errorf("parameters %v", params)
	}
	if _, p, err := e.Describe(context.Background(), nil, "SELECT $1"); err != nil || len(p) != 1 || p[0] != types.Unknown {
		t.Errorf("SELECT $1: %v %v", p, err)
	}
}

func TestMaxRowsAndAddedColumns(t *testing.T) {
	e := newEngine(t)
	tb := accounts(t, fileio.NewMem(), "wh/dev/accounts")
	_, err := e.Query(context.Background(), []Input{{Name: "accounts", Table: tb, Epoch: 1}}, "SELECT * FROM accounts", QueryOptions{MaxRows: 2})
	if sqlerr.Code(err) != sqlerr.ProgramLimitExceeded {
		t.Errorf("3 rows with MaxRows 2: %v", err)
	}
	// A column added after epoch 4 reads as NULL at older epochs, and a
	// new snapshot with the new schema shows its values.
	if _, err := tb.AddColumn("note", types.Text); err != nil {
		t.Fatal(err)
	}
	w, _ := tb.NewWriter("job/sink2")
	commitEpoch(t, tb, w, 5, upd(types.Row{i64(4), txt("dave"), num("41.50"), txt("vip")}))
	for ep, want := range map[base.Epoch]string{1: "1|NULL\n2|NULL\n3|NULL\n", 5: "1|NULL\n4|vip\n"} {
		res := mustQuery(t, e, []Input{{Name: "accounts", Table: tb, Epoch: ep}}, "SELECT id, note FROM accounts ORDER BY id")
		if got := text(res.Rows); got != want {
			t.Errorf("epoch %d: %q want %q", ep, got, want)
		}
	}
}

func TestListsComeBackAsArrayText(t *testing.T) {
	e := newEngine(t)
	tb := accounts(t, fileio.NewMem(), "wh/dev/accounts")
	res := mustQuery(t, e, []Input{{Name: "accounts", Table: tb, Epoch: 1}},
		`SELECT array_agg(id ORDER BY id), array_agg(name ORDER BY id), [[1, NULL], [3]], ['a b', '', 'x"y', NULL] FROM accounts`)
	want := `{1,2,3}|{alice,bob,carol}|{{1,NULL},{3}}|{"a b","","x\"y",NULL}` + "\n"
	if got := text(res.Rows); got != want || res.Columns[0].Type != types.Text {
		t.Errorf("%s want %s (%v)", got, want, res.Columns)
	}
}

func TestDivisionKeepsPrecedenceAndValues(t *testing.T) {
	e := newEngine(t)
	tb := accounts(t, fileio.NewMem(), "wh/dev/accounts")
	res := mustQuery(t, e, []Input{{Name: "accounts", Table: tb, Epoch: 1}},
		`SELECT 2 * 3 / 4, 2 * (3 / 4), 7 / 2, -7 / 2, 7.0 / 2, 17 % 5 * 2, 1 + 8 / 2 / 2, '1/0' AS "a/b", NULL::INTEGER / 0,
			sum(balance) / count(*), id / 1 FROM accounts WHERE id / 2 = 0 GROUP BY id`)
	if got, want := text(res.Rows), "1|0|3|-3|3.5|4|3|1/0|NULL|10.5|1\n"; got != want {
		t.Errorf("%s want %s", got, want)
	}
	var names []string
	for _, c := range res.Columns {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "?column?,?column?,?column?,?column?,?column?,?column?,?column?,a/b,?column?,?column?,?column?" {
		t.Errorf("names %s", got)
	}
}

func TestColumnNamesFollowPostgres(t *testing.T) {
	e := newEngine(t)
	tb := accounts(t, fileio.NewMem(), "wh/dev/accounts")
	res := mustQuery(t, e, []Input{{Name: "accounts", Table: tb, Epoch: 1}},
		`SELECT count(*), sum(balance), id + 1, id, name AS who, "Mixed Case", max(id) AS m, accounts.name, id::TEXT, 1::INTEGER,
			CASE WHEN id > 1 THEN 1 END, coalesce(name, 'x'), EXISTS (SELECT 1), (SELECT max(id) FROM accounts), [id][1], name ~ 'a',
			row_number() OVER (), lower(name) || 'x' AS "a+b", 'lit', -id
			FROM accounts, (SELECT 1 AS "Mixed Case") x GROUP BY id, name, "Mixed Case" LIMIT 1`)
	var names []string
	for _, c := range res.Columns {
		names = append(names, c.Name)
	}
	want := "count,sum,?column?,id,who,Mixed Case,m,name,id,int4,case,coalesce,exists,max,array,?column?,row_number,a+b,?column?,?column?"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("names\n got %s\nwant %s", got, want)
	}
	cols, _, err := e.Describe(context.Background(), []Input{{Name: "accounts", Table: tb, Epoch: 1}}, "SELECT count(*), 1 + 1 AS two, id::TEXT FROM accounts GROUP BY id")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(cols); got != "[{count BIGINT} {two INTEGER} {id TEXT}]" {
		t.Errorf("Describe names %s", got)
	}
}

func TestMapError(t *testing.T) {
	// DuckDB's / gives NULL or Infinity for a zero divisor rather than an
	// error (doc.go); its own errors map by kind and message.
	cases := []struct {
		typ  duck.ErrorType
		msg  string
		code string
		out  string
	}{
		{duck.ErrorTypeDivideByZero, "Divide by Zero Error: division by zero", sqlerr.DivisionByZero, "division by zero"},
		{duck.ErrorTypeBinder, "Binder Error: Referenced column \"x\" not found in FROM clause!\n\nLINE 1: select x\n       ^", sqlerr.UndefinedColumn, "column \"x\" does not exist"},
		{duck.ErrorTypeCatalog, "Catalog Error: Table with name t does not exist!", sqlerr.UndefinedTable, "relation \"t\" does not exist"},
		{duck.ErrorTypeParser, "Parser Error: syntax error at or near \"x\"", sqlerr.SyntaxError, "syntax error at or near \"x\""},
		{duck.ErrorTypeInterrupt, "INTERRUPT Error: Interrupted!", sqlerr.QueryCanceled, "Interrupted"},
		{duck.ErrorTypeExecutor, "Executor Error: boom", sqlerr.InternalError, "boom"},
	}
	for _, c := range cases {
		err := mapError(fmt.Errorf("ctx: %w", &duck.Error{Type: c.typ, Msg: c.msg}))
		var se *sqlerr.Error
		if !errors.As(err, &se) || se.Code != c.code || se.Message != c.out {
			t.Errorf("%q: %v", c.msg, err)
		}
	}
}

func TestInputsAreScopedToTheQuery(t *testing.T) {
	e, err := Open(Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.db.SetMaxOpenConns(1) // every query reuses one connection
	tb := accounts(t, fileio.NewMem(), "wh/dev/accounts")
	for _, c := range []struct {
		ep   base.Epoch
		want string
	}{{1, "3\n"}, {1, "3\n"}, {4, "2\n"}, {1, "3\n"}} {
		res := mustQuery(t, e, []Input{{Name: "accounts", Table: tb, Epoch: c.ep}}, "SELECT count(*) FROM accounts")
		if got := text(res.Rows); got != c.want {
			t.Errorf("epoch %d on a reused connection: %s, want %s", c.ep, got, c.want)
		}
	}
	res := mustQuery(t, e, []Input{{Name: "renamed", Table: tb, Epoch: 4}}, "SELECT count(*) FROM renamed")
	if got := text(res.Rows); got != "2\n" {
		t.Errorf("renamed: %s", got)
	}
	_, err = e.Query(context.Background(), nil, "SELECT * FROM accounts", QueryOptions{})
	if sqlerr.Code(err) != sqlerr.UndefinedTable {
		t.Errorf("a name from an earlier query resolves: %v", err)
	}
	_, err = e.Query(context.Background(), nil, "SELECT * FROM renamed", QueryOptions{})
	if sqlerr.Code(err) != sqlerr.UndefinedTable {
		t.Errorf("a name from an earlier query resolves: %v", err)
	}
}

func TestCancelStopsTheQuery(t *testing.T) {
	e := newEngine(t)
	tb := accounts(t, fileio.NewMem(), "wh/dev/accounts")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(200 * time.Millisecond)
		cancel()
	}()
	start := time.Now()
	_, err := e.Query(ctx, []Input{{Name: "accounts", Table: tb, Epoch: 1}},
		"SELECT count(*) FROM range(1000000000) a, range(1000000000) b, accounts", QueryOptions{})
	if sqlerr.Code(err) != sqlerr.QueryCanceled {
		t.Fatalf("cancelled query: %v (%s)", err, sqlerr.Code(err))
	}
	t.Logf("cancelled after %v", time.Since(start))
	res := mustQuery(t, e, []Input{{Name: "accounts", Table: tb, Epoch: 1}}, "SELECT count(*) FROM accounts")
	if text(res.Rows) != "3\n" {
		t.Errorf("after cancel: %s", text(res.Rows))
	}
}

func TestCancelAtAnyStepIsQueryCanceled(t *testing.T) {
	e := newEngine(t)
	for _, d := range []time.Duration{0, 50 * time.Microsecond, 200 * time.Microsecond, time.Millisecond, 3 * time.Millisecond} {
		tb := accounts(t, fileio.NewMem(), "wh/dev/accounts") // a new table: the load is part of the query
		ctx, cancel := context.WithTimeout(context.Background(), d)
		_, err := e.Query(ctx, []Input{{Name: "accounts", Table: tb, Epoch: 1}}, "SELECT count(*) FROM range(1000000000) a, range(1000000000) b, accounts", QueryOptions{})
		cancel()
		if sqlerr.Code(err) != sqlerr.QueryCanceled {
			t.Errorf("cancelled after %v: %v (%s)", d, err, sqlerr.Code(err))
		}
	}
}

func TestConcurrentQueriesAtDifferentEpochs(t *testing.T) {
	e := newEngine(t)
	tb := accounts(t, fileio.NewMem(), "wh/dev/accounts")
	want := map[base.Epoch]string{1: "3|60.75\n", 2: "3|81.25\n", 3: "3|81.25\n", 4: "2|52.50\n"}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				ep := base.Epoch(1 + (g+i)%4)
				res, err := e.Query(context.Background(), []Input{{Name: "accounts", Table: tb, Epoch: ep}},
					"SELECT count(*), sum(balance) FROM accounts", QueryOptions{})
				if err != nil {
					errs <- err
					return
				}
				if got := text(res.Rows); got != want[ep] {
					errs <- fmt.Errorf("epoch %d: %q want %q", ep, got, want[ep])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestParallelLoadKeepsEveryRow(t *testing.T) {
	e, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	sc, err := schema.New([]schema.Field{{Name: "k", Type: types.Int64}, {Name: "s", Type: types.Text, Nullable: true}}, []string{"k"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3*loadPartRows + 17
	rows := make([]types.Row, n)
	for i := range rows {
		rows[i] = types.Row{i64(int64(i)), txt(fmt.Sprint(i % 7))}
	}
	if _, err := e.load(context.Background(), "big", "ptest", sc, rows); err != nil {
		t.Fatal(err)
	}
	var count, sum, distinct int64
	if err := e.db.QueryRow("SELECT count(*), sum(k), count(DISTINCT k) FROM "+dataSchema+".ptest").Scan(&count, &sum, &distinct); err != nil {
		t.Fatal(err)
	}
	if count != n || distinct != n || sum != int64(n)*(n-1)/2 {
		t.Errorf("loaded %d rows, %d distinct, sum %d; want %d rows", count, distinct, sum, n)
	}
}

func TestCorruptDataFileIsReported(t *testing.T) {
	e := newEngine(t)
	fs := fileio.NewMem()
	tb := accounts(t, fs, "wh/dev/accounts")
	dirs, err := fs.ListDirs("wh/dev/accounts")
	if err != nil {
		t.Fatal(err)
	}
	flipped := 0
	for _, d := range dirs {
		if !strings.HasPrefix(d, "bucket-") {
			continue
		}
		files, _ := fs.List("wh/dev/accounts/" + d)
		for _, f := range files {
			p := "wh/dev/accounts/" + d + "/" + f.Name
			b, _ := fs.ReadFile(p)
			b[len(b)/2] ^= 0xff
			if err := fs.WriteFile(p, b); err != nil {
				t.Fatal(err)
			}
			flipped++
		}
	}
	if flipped == 0 {
		t.Fatal("no data files found")
	}
	tb, err = table.Open(fs, "wh/dev/accounts") // a handle without decoded files cached
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Query(context.Background(), []Input{{Name: "accounts", Table: tb, Epoch: 4}}, "SELECT * FROM accounts", QueryOptions{})
	if sqlerr.Code(err) != sqlerr.DataCorrupted || !errors.Is(err, base.ErrCorruption) || !strings.Contains(err.Error(), "table accounts") {
		t.Errorf("corrupt file: %v (%s)", err, sqlerr.Code(err))
	}
}

func TestQueryOnLocalFiles(t *testing.T) {
	e := newEngine(t)
	fs, err := fileio.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	accounts(t, fs, "wh/dev/accounts")
	// A second handle on the same files, as another session would open.
	tb, err := table.Open(fs, "wh/dev/accounts")
	if err != nil {
		t.Fatal(err)
	}
	for ep, want := range map[base.Epoch]string{1: "3|60.75\n", 4: "2|52.50\n"} {
		res := mustQuery(t, e, []Input{{Name: "a", Table: tb, Epoch: ep}}, "SELECT count(*), sum(balance) FROM a")
		if got := text(res.Rows); got != want {
			t.Errorf("epoch %d: %s want %s", ep, got, want)
		}
	}
}

// TestNamesBindAsPostgresFoldsThem runs the session's path, ReferencedTables
// then Query with its names as inputs: quoted names are exact, bare names
// fold ASCII letters only, and names DuckDB compares as equal ("MixedCase"
// and mixedcase) still reach their own tables.
func TestNamesBindAsPostgresFoldsThem(t *testing.T) {
	e := newEngine(t)
	fs := fileio.NewMem()
	tb := accounts(t, fs, "wh/dev/a")
	other := accounts(t, fs, "wh/dev/b")
	epochs := map[string]base.Epoch{"Ünïcødé_表": 1, "Вид": 4, "ÄB": 1, "MixedCase": 1, "mixedcase": 4}
	tables := map[string]*table.Table{"mixedcase": other}
	for _, c := range []struct{ q, want string }{
		{`SELECT count(*) FROM "Ünïcødé_表"`, "3\n"},
		{`SELECT count(*) FROM Вид`, "2\n"},
		{`SELECT count(*) FROM "Вид"`, "2\n"},
		{`SELECT count(*) FROM "ÄB" x WHERE x.id = 1`, "1\n"},
		{`SELECT (SELECT count(*) FROM "MixedCase"), (SELECT count(*) FROM mixedcase)`, "3|2\n"},
		{`SELECT count(*) FROM "MixedCase" m, MIXEDCASE n WHERE m.id = n.id`, "1\n"},
	} {
		names, err := e.ReferencedTables(context.Background(), c.q)
		if err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		var in []Input
		for _, n := range names {
			ep, ok := epochs[n]
			if !ok {
				t.Fatalf("%s: referenced table %q is not one of the tables", c.q, n)
			}
			tt := tables[n]
			if tt == nil {
				tt = tb
			}
			in = append(in, Input{Name: n, Table: tt, Epoch: ep})
		}
		if got := text(mustQuery(t, e, in, c.q).Rows); got != c.want {
			t.Errorf("%s: %s, want %s", c.q, got, c.want)
		}
	}
}

// TestPgTypeofNamesPostgresTypes checks that pg_typeof names types as
// PostgreSQL does, for columns of a loaded table and for expressions.
func TestPgTypeofNamesPostgresTypes(t *testing.T) {
	e := newEngine(t)
	tb := accounts(t, fileio.NewMem(), "wh/dev/accounts")
	res := mustQuery(t, e, []Input{{Name: "accounts", Table: tb, Epoch: 1}}, `SELECT pg_typeof(id), pg_typeof(name), pg_typeof(balance),
		pg_typeof(id::INTEGER), pg_typeof(sum(id)), pg_typeof(1.5::DOUBLE PRECISION), pg_typeof(now()),
		pg_typeof(now()::TIMESTAMP), pg_typeof(current_date), pg_typeof(array[id]), pg_typeof(NULL), pg_typeof(true)
		FROM accounts GROUP BY id, name, balance LIMIT 1`)
	want := "bigint|text|numeric|integer|numeric|double precision|timestamp with time zone|" +
		"timestamp without time zone|date|bigint[]|unknown|boolean\n"
	if got := text(res.Rows); got != want {
		t.Errorf("pg_typeof:\n got %s\nwant %s", got, want)
	}
	if res.Columns[0].Name != "pg_typeof" {
		t.Errorf("column name %q, want pg_typeof", res.Columns[0].Name)
	}
}

// TestValueFunctionsOnDuckDB checks the names PostgreSQL gives SQL value
// functions (FigureColnameInternal) and the schema DuckDB reports.
func TestValueFunctionsOnDuckDB(t *testing.T) {
	e := newEngine(t)
	tb := accounts(t, fileio.NewMem(), "wh/dev/accounts")
	res := mustQuery(t, e, []Input{{Name: "accounts", Table: tb, Epoch: 1}}, `SELECT current_user, session_user, user,
		current_role, current_date, current_timestamp, localtime, localtimestamp, current_catalog, current_schema FROM accounts LIMIT 1`)
	var got []string
	for _, c := range res.Columns {
		got = append(got, c.Name+":"+c.Type.String())
	}
	want := "current_user:TEXT session_user:TEXT user:TEXT current_role:TEXT current_date:DATE current_timestamp:TIMESTAMPTZ " +
		"localtime:TIME localtimestamp:TIMESTAMP current_catalog:TEXT current_schema:TEXT"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("columns\n got %s\nwant %s", g, want)
	}
	if s := types.FormatText(res.Rows[0][9], nil); s != "public" {
		t.Errorf("current_schema %q, want public", s)
	}
}

// TestPostgresStringFunctionsOnDuckDB checks format, btrim and initcap
// over a table, as PostgreSQL gives them (the view's evaluator gives the
// same): format's %s takes any type and NULL as the empty string.
func TestPostgresStringFunctionsOnDuckDB(t *testing.T) {
	e := newEngine(t)
	tb := accounts(t, fileio.NewMem(), "wh/dev/accounts")
	res := mustQuery(t, e, []Input{{Name: "accounts", Table: tb, Epoch: 1}}, `SELECT format('%s-%s: %s%%', id, name, balance),
		format('[%s]', NULL::TEXT), format('none'), btrim('  ' || name || ' '), btrim('xx' || name || 'x', 'x'),
		initcap('hello wORLD-foo_bar 2nd ' || name)
		FROM accounts WHERE id = 1`)
	want := "1-alice: 10.50%|[]|none|alice|alice|Hello World-Foo_Bar 2nd Alice\n"
	if got := text(res.Rows); got != want {
		t.Errorf("string functions:\n got %s\nwant %s", got, want)
	}
}
