package olap

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

// viewCall evaluates name(args...) as a view does: the overload the
// binder's lookup picks, each argument cast to its parameter's type.
// ts are the arguments' types.
func viewCall(t *testing.T, ctx *expr.Context, name string, ts []types.Type, args ...types.Datum) (types.Datum, error) {
	t.Helper()
	fn, params, err := expr.Builtins.Lookup(name, ts)
	if err != nil {
		t.Fatalf("%s%v: %v", name, ts, err)
	}
	cargs := make([]expr.Expr, len(args))
	for i, a := range args {
		cargs[i] = &expr.Const{Value: a, Typ: ts[i]}
		if params[i].Kind != ts[i].Kind {
			cargs[i] = &expr.Cast{Arg: cargs[i], To: params[i]}
		}
	}
	if fn.Check != nil {
		if err := fn.Check(cargs); err != nil {
			return types.Null, err
		}
	}
	return expr.NewCall(fn, cargs...).Eval(ctx, nil)
}

func showDatum(d types.Datum, err error) string {
	switch {
	case err != nil:
		return "ERR:" + sqlerr.Code(err)
	case d.IsNull():
		return "NULL"
	}
	return types.FormatText(d, nil)
}

func mustTime(t *testing.T, layout, s string, loc *time.Location) time.Time {
	t.Helper()
	v, err := time.ParseInLocation(layout, s, loc)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestToCharAgreesWithViews runs to_char over columns of every type it
// takes in DuckDB, with constant templates and with a template column,
// in three session time zones, and compares each value with what a view
// computes for the same datum.
func TestToCharAgreesWithViews(t *testing.T) {
	e := newEngine(t)
	numeric := func(s string) types.Datum { return num(s) }
	cols := []Column{
		{Name: "ts", Type: types.Type{Kind: types.KindTimestamp, Precision: 6}},
		{Name: "tz", Type: types.Type{Kind: types.KindTimestampTZ, Precision: 6}},
		{Name: "d", Type: types.Date},
		{Name: "i", Type: types.Int32},
		{Name: "b", Type: types.Int64},
		{Name: "s", Type: types.Int16},
		{Name: "n", Type: types.Type{Kind: types.KindNumeric, Precision: 20, Scale: 6}},
		{Name: "f", Type: types.Float64},
		{Name: "r", Type: types.Float32},
	}
	stamps := []string{"2020-03-05 14:07:09.123456", "2021-01-01 00:00:00", "1999-12-31 23:59:59.999999",
		"2000-02-29 00:30:00.5", "2008-12-29 08:00:00", "2023-10-29 01:30:00", "0044-03-15 12:00:00", "1970-01-01 00:00:00"}
	nums := []string{"0", "0.5", "-0.5", "1.005", "-148.5", "1234.5678", "99.995", "-0.001", "12345678.25", "7", "-21"}
	var rows []types.Row
	for i := 0; i < max(len(stamps), len(nums)); i++ {
		s, n := stamps[i%len(stamps)], nums[i%len(nums)]
		w := mustTime(t, "2006-01-02 15:04:05", s, time.UTC)
		if i == 6 {
			w = w.AddDate(-87, 0, 0) // 44 BC: year -43
		}
		nd := numeric(n)
		f, _ := nd.Decimal().Float64()
		iv, _ := nd.Decimal().Int64()
		rows = append(rows, types.Row{
			types.NewTimestamp(w.UnixMicro()), types.NewTimestampTZ(w.UnixMicro()), types.NewDate(int32(w.Unix() / 86400)),
			types.NewInt32(int32(iv * 37)), types.NewInt64(iv * 1234567), types.NewInt16(int16(iv)),
			nd, types.NewFloat64(f), types.NewFloat32(float32(f)),
		})
	}
	rows = append(rows, types.Row{types.Null, types.Null, types.Null, types.Null, types.Null, types.Null, types.Null, types.Null, types.Null})
	dt := []string{"YYYY-MM-DD HH24:MI:SS.US", "FMDay, FMDD Month YYYY HH12:MI AM", "Dy Mon DD YY TZ OF", "IYYY-IW-ID DDD D WW Q J CC BC",
		`"Q"Q RM FMRM DDth MS FF3 SSSS "lit\"x"`, "day dy month mon TZH:TZM tz"}
	nt := []string{"9999.99", "FM9999.99", "0000.00", "9,999,999.999", "S9999", "999MI", "99.99PR", "FM999th", "SG9.9", "L9G999D9"}
	zones := []string{"UTC", "Europe/Paris", "Asia/Kolkata"}
	var sel []string
	type cell struct {
		col  int
		tmpl string
	}
	var cells []cell
	for c := range cols {
		tmpls := nt
		if c < 3 {
			tmpls = dt
		}
		for _, tm := range tmpls {
			sel = append(sel, fmt.Sprintf("to_char(%s, '%s')", cols[c].Name, strings.ReplaceAll(tm, "'", "''")))
			cells = append(cells, cell{c, tm})
		}
	}
	for _, zone := range zones {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.QueryRelations(context.Background(), []Relation{{Name: "v", Columns: cols, Rows: rows}},
			"SELECT "+strings.Join(sel, ", ")+" FROM v", QueryOptions{Location: loc})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != len(rows) {
			t.Fatalf("%d rows", len(res.Rows))
		}
		ctx := &expr.Context{Loc: loc}
		bad := 0
		for r := range rows {
			for k, c := range cells {
				want := showDatum(viewCall(t, ctx, "to_char", []types.Type{cols[c.col].Type, types.Text}, rows[r][c.col], types.NewText(c.tmpl)))
				got := showDatum(res.Rows[r][k], nil)
				if got != want && bad < 20 {
					bad++
					t.Errorf("%s: to_char(%s %s, %q) = %q in DuckDB, %q in a view", zone, cols[c.col].Name,
						showDatum(rows[r][c.col], nil), c.tmpl, got, want)
				}
			}
		}
	}
	// A template from a column.
	tmplRows := []types.Row{
		{types.NewTimestamp(mustTime(t, "2006-01-02", "2020-03-05", time.UTC).UnixMicro()), txt("FMMonth FMDDth, YYYY"), num("1234.5"), txt("FM9,999.00")},
		{types.NewTimestamp(mustTime(t, "2006-01-02", "2021-11-22", time.UTC).UnixMicro()), txt("YYYY/MM/DD"), num("-3"), txt("S000")},
		{types.NewTimestamp(0), types.Null, num("1"), types.Null},
	}
	res, err := e.QueryRelations(context.Background(), []Relation{{Name: "t", Columns: []Column{
		{Name: "ts", Type: types.Type{Kind: types.KindTimestamp, Precision: 6}}, {Name: "f", Type: types.Text},
		{Name: "n", Type: types.Type{Kind: types.KindNumeric, Precision: 10, Scale: 2}}, {Name: "g", Type: types.Text},
	}, Rows: tmplRows}}, "SELECT to_char(ts, f), to_char(n, g) FROM t", QueryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := text(res.Rows), "March 5th, 2020|1,234.50\n2021/11/22|-003\nNULL|NULL\n"; got != want {
		t.Errorf("templates from a column:\n got %s\nwant %s", got, want)
	}
}

// TestToCharErrorsOnDuckDB: a constant template with a pattern Strata
// lacks fails before the query runs, with the view's code and message;
// one from a column fails on the row that has it.
func TestToCharErrorsOnDuckDB(t *testing.T) {
	e := newEngine(t)
	for _, c := range []struct{ q, code, msg string }{
		{"SELECT to_char(1.5, '9.99EEEE')", sqlerr.FeatureNotSupported, `to_char pattern "EEEE" is not supported`},
		{"SELECT to_char(x, 'RN') FROM range(0) r(x)", sqlerr.FeatureNotSupported, `to_char pattern "RN" is not supported`},
		{"SELECT to_char(1, '9.9.9')", sqlerr.SyntaxError, "multiple decimal points"},
		{"SELECT to_char(x::INTEGER, CASE WHEN x = 1 THEN '9V9' ELSE '9' END) FROM range(2) r(x)", sqlerr.FeatureNotSupported, `to_char pattern "V" is not supported`},
	} {
		_, err := e.Query(context.Background(), nil, c.q, QueryOptions{})
		if sqlerr.Code(err) != c.code || err == nil || err.Error() != c.msg {
			t.Errorf("%s: %v (%s), want %s %q", c.q, err, sqlerr.Code(err), c.code, c.msg)
		}
	}
	res := mustQuery(t, e, nil, `SELECT to_char(DATE '2020-03-05', 'FMDD.MM.YYYY'), to_char(NULL::TIMESTAMP, 'YYYY'), to_char(7::SMALLINT, '9.99'),
		to_char('infinity'::TIMESTAMP, 'YYYY'), to_char('-infinity'::TIMESTAMPTZ, 'YYYY'), to_char('infinity'::DATE, 'YYYY'),
		to_char(TIMESTAMP '2020-03-05 10:00:00', ''), to_char(12, ''), to_char(DATE '0010-12-31 (BC)', 'YYYY-MM-DD BC'), to_char(1e300::DOUBLE, '9.9')`)
	if got, want := text(res.Rows), "5.03.2020|NULL| 7.00|NULL|NULL|NULL|NULL||0010-12-31 BC| #.\n"; got != want {
		t.Errorf("got %s want %s", got, want)
	}
	for _, c := range res.Columns {
		if c.Name != "to_char" || c.Type.Kind != types.KindText {
			t.Errorf("column %s %s, want to_char TEXT as PostgreSQL names it", c.Name, c.Type)
		}
	}
}

// TestToCharOfAggregates: to_char takes aggregates, window functions and
// other arguments whose type DuckDB knows only once it has bound them,
// in a SELECT and in a view's query that Verify recomputes.
func TestToCharOfAggregates(t *testing.T) {
	e := newEngine(t)
	num3, _ := types.NumericType(12, 3)
	cols := []Column{
		{Name: "g", Type: types.Int64}, {Name: "ts", Type: types.Timestamp}, {Name: "tz", Type: types.TimestampTZ},
		{Name: "d", Type: types.Date}, {Name: "i", Type: types.Int32}, {Name: "b", Type: types.Int64}, {Name: "n", Type: num3},
	}
	at := func(s string) time.Time { return mustTime(t, "2006-01-02 15:04:05", s, time.UTC) }
	row := func(g int64, s string, i int32, b int64, n string) types.Row {
		w := at(s)
		return types.Row{i64(g), types.NewTimestamp(w.UnixMicro()), types.NewTimestampTZ(w.UnixMicro()),
			types.NewDate(int32(w.Unix() / 86400)), types.NewInt32(i), i64(b), num(n)}
	}
	rows := []types.Row{
		row(1, "2020-03-05 14:07:09", 7, 1234567, "1234.567"),
		row(1, "2021-11-22 08:00:00", -21, 10, "-0.500"),
		row(2, "1999-12-31 23:59:59", 4, -3, "2.250"),
	}
	rel := []Relation{{Name: "tzt", Columns: cols, Rows: rows}}
	for _, c := range []struct{ q, want string }{
		{"SELECT to_char(min(ts), 'YYYY-MM-DD HH24:MI'), to_char(max(ts), 'YYYY'), to_char(max(tz), 'YYYY-MM-DD HH24 TZ') FROM tzt",
			"1999-12-31 23:59|2021|2021-11-22 08 UTC\n"},
		{"SELECT to_char(min(d), 'FMDD Mon YYYY'), to_char(max(d), 'YYYY-MM-DD') FROM tzt", "31 Dec 1999|2021-11-22\n"},
		{"SELECT to_char(min(i), 'FM999'), to_char(max(b), 'FM9,999,999'), to_char(sum(i), 'FM999'), to_char(sum(b), 'FM9999999'), to_char(avg(i), 'FM990.00'), to_char(avg(b), 'FM9999999.00') FROM tzt",
			"-21|1,234,567|-10|1234574|-3.33|411524.67\n"},
		{"SELECT to_char(min(n), 'FM990.000'), to_char(max(n), 'FM9990.0'), to_char(sum(n), 'FM9990.000'), to_char(avg(n), 'FM990.0000') FROM tzt",
			"-0.500|1234.6|1236.317|412.1057\n"},
		{"SELECT g, to_char(max(ts), 'YYYY'), to_char(sum(n), 'S0000.0') FROM tzt GROUP BY g ORDER BY g", "1|2021|+1234.1\n2|1999|+0002.3\n"},
		{"SELECT to_char(sum(i) OVER (), 'FM999'), to_char(min(ts) OVER (PARTITION BY g), 'YYYY') FROM tzt ORDER BY b", "-10|1999\n-10|2020\n-10|2020\n"},
		{"SELECT to_char((SELECT max(d) FROM tzt), 'YYYY'), to_char(max(i) + 1, '99'), to_char(NULL::TIMESTAMP, 'YYYY'), to_char(1.5, '9.9') FROM tzt", "2021|  8|NULL| 1.5\n"},
	} {
		res, err := e.QueryRelations(context.Background(), rel, c.q, QueryOptions{})
		if err != nil {
			t.Errorf("%s: %v", c.q, err)
			continue
		}
		if got := text(res.Rows); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.q, got, c.want)
		}
	}
	// A constant template Strata refuses fails before a row is read,
	// whatever the argument.
	_, err := e.QueryRelations(context.Background(), []Relation{{Name: "tzt", Columns: cols}}, "SELECT to_char(max(i), 'RN') FROM tzt", QueryOptions{})
	if sqlerr.Code(err) != sqlerr.FeatureNotSupported || err.Error() != `to_char pattern "RN" is not supported` {
		t.Errorf("to_char(max(i), 'RN'): %v (%s)", err, sqlerr.Code(err))
	}

	// A view of to_char over aggregates, recomputed by Verify.
	fs := fileio.NewMem()
	fields := make([]schema.Field, len(cols))
	for k, c := range cols {
		fields[k] = schema.Field{Name: c.Name, Type: c.Type}
	}
	ev, err := table.Create(fs, "wh/dev/tzt", fields, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	shown, err := table.Create(fs, "wh/dev/shown", []schema.Field{
		{Name: "g", Type: types.Int64}, {Name: "first", Type: types.Text}, {Name: "last_day", Type: types.Text},
		{Name: "total", Type: types.Text}, {Name: "mean", Type: types.Text}, {Name: "amount", Type: types.Text},
	}, []string{"g"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const q = "SELECT g, to_char(min(ts), 'YYYY-MM-DD HH24:MI:SS'), to_char(max(d), 'FMDD Mon YYYY'), to_char(sum(b), 'FM9999999'), to_char(avg(i), 'FM990.00'), to_char(sum(n), 'FM9990.000') FROM tzt GROUP BY g"
	ew, _ := ev.NewWriter("ingest")
	sw, _ := shown.NewWriter("view")
	var in []change
	for _, r := range rows {
		in = append(in, ins(r))
	}
	commitEpoch(t, ev, ew, 1, in...)
	commitEpoch(t, shown, sw, 1,
		ins(types.Row{i64(1), txt("2020-03-05 14:07:09"), txt("22 Nov 2021"), txt("1234577"), txt("-7.00"), txt("1234.067")}),
		ins(types.Row{i64(2), txt("1999-12-31 23:59:59"), txt("31 Dec 1999"), txt("-3"), txt("4.00"), txt("2.250")}))
	d, err := e.VerifyIn(context.Background(), nil, q, []Input{{Name: "tzt", Table: ev, Epoch: 1}}, Input{Name: "shown", Table: shown, Epoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Empty() {
		t.Errorf("verify:\n%s", d)
	}
}

// TestFormatAgreesWithViews runs format() with %s, %I, %L, positions and
// widths in DuckDB and compares with the view's format.
func TestFormatAgreesWithViews(t *testing.T) {
	e := newEngine(t)
	cols := []Column{{Name: "s", Type: types.Text}, {Name: "i", Type: types.Int64}, {Name: "b", Type: types.Bool}}
	strs := []types.Datum{txt("plain"), txt("Mixed Case"), txt("select"), txt(`O'Re\il`), txt(`a"b`), txt(""), txt("_x1"), types.Null}
	var rows []types.Row
	for k, s := range strs {
		rows = append(rows, types.Row{s, i64(int64(k*7 - 10)), types.NewBool(k%2 == 0)})
	}
	fmts := []string{"%s|%1$I|%2$L", "%1$L %1$s %2$s", "[%-12L] [%12s]", "%L %L", "%s%%%s", "%3$s %1$I"}
	var sel []string
	for _, f := range fmts {
		sel = append(sel, fmt.Sprintf("format('%s', coalesce(s, 'x'), s, i, b)", f))
	}
	res, err := e.QueryRelations(context.Background(), []Relation{{Name: "v", Columns: cols, Rows: rows}},
		"SELECT "+strings.Join(sel, ", ")+" FROM v", QueryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for r, row := range rows {
		for k, f := range fmts {
			want := showDatum(viewCall(t, &expr.Context{}, "format", []types.Type{types.Text, types.Text, types.Text, types.Int64, types.Bool}, txt(f), nonNull(row[0]), row[0], row[1], row[2]))
			if got := showDatum(res.Rows[r][k], nil); got != want {
				t.Errorf("format(%q, %s) = %q in DuckDB, %q in a view", f, showDatum(row[0], nil), got, want)
			}
		}
	}
	res = mustQuery(t, e, nil, `SELECT format('%I.%I = %L', 'public', 'My Table', E'it''s a \\ b'), format('%L', NULL), format('%*s|', 4, 'ab'), format('%s %s', true, 7),
		format('%L|%s|%I|%-6L|%5I|%L', true, false, 'é', 'a', 'ab', 1.50::DECIMAL(10,2)), format('%I', '')`)
	// The last two as PostgreSQL 15 prints them.
	if got, want := text(res.Rows), `public."My Table" = E'it''s a \\ b'|NULL|  ab||t 7|'t'|f|"é"|'a'   |   ab|'1.50'|""`+"\n"; got != want {
		t.Errorf("got %s want %s", got, want)
	}
	for _, c := range []struct{ q, code, msg string }{
		{"SELECT format('%I', NULL)", sqlerr.NullValueNotAllowed, "null values cannot be formatted as an SQL identifier"},
		{"SELECT format('%s %s', 'a')", sqlerr.InvalidParameterValue, "too few arguments for format()"},
		{"SELECT format('%x', 'a')", sqlerr.InvalidParameterValue, `unrecognized format() type specifier "x"`},
	} {
		_, err := e.Query(context.Background(), nil, c.q, QueryOptions{})
		if sqlerr.Code(err) != c.code || err == nil || err.Error() != c.msg {
			t.Errorf("%s: %v (%s), want %s %q", c.q, err, sqlerr.Code(err), c.code, c.msg)
		}
	}
}

func nonNull(d types.Datum) types.Datum {
	if d.IsNull() {
		return txt("x")
	}
	return d
}

// TestVerifyToCharView: a view table holding what the view evaluator's
// to_char gives in Europe/Paris verifies equal when recomputed in that
// zone, and differs when recomputed in UTC.
func TestVerifyToCharView(t *testing.T) {
	e := newEngine(t)
	fs := fileio.NewMem()
	num3, _ := types.NumericType(12, 3)
	ev, err := table.Create(fs, "wh/dev/ev", []schema.Field{
		{Name: "id", Type: types.Int64}, {Name: "ts", Type: types.TimestampTZ}, {Name: "n", Type: num3},
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	shown, err := table.Create(fs, "wh/dev/shown", []schema.Field{
		{Name: "id", Type: types.Int64}, {Name: "day", Type: types.Text}, {Name: "amount", Type: types.Text},
	}, []string{"id"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	const q = "SELECT id, to_char(ts, 'FMDay DD Mon YYYY HH24:MI TZ'), to_char(n, 'FM999,990.000PR') FROM ev"
	ew, _ := ev.NewWriter("ingest")
	sw, _ := shown.NewWriter("view")
	var in, out []change
	for i, s := range []string{"2023-03-26 00:30:00", "2023-03-26 01:30:00", "2023-10-29 00:59:59", "2024-02-29 23:00:00"} {
		ts := types.NewTimestampTZ(mustTime(t, "2006-01-02 15:04:05", s, time.UTC).UnixMicro())
		n := num(fmt.Sprintf("%d.%03d", (i-2)*1234, i*111))
		in = append(in, ins(types.Row{i64(int64(i)), ts, n}))
		ctx := &expr.Context{Loc: paris}
		day, _, err := expr.ToChar(ctx, ts, "FMDay DD Mon YYYY HH24:MI TZ")
		if err != nil {
			t.Fatal(err)
		}
		amount, _, err := expr.ToChar(ctx, n, "FM999,990.000PR")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ins(types.Row{i64(int64(i)), txt(day), txt(amount)}))
	}
	commitEpoch(t, ev, ew, 1, in...)
	commitEpoch(t, shown, sw, 1, out...)
	inputs := []Input{{Name: "ev", Table: ev, Epoch: 1}}
	d, err := e.VerifyIn(context.Background(), paris, q, inputs, Input{Name: "shown", Table: shown, Epoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Empty() {
		t.Errorf("in Europe/Paris:\n%s", d)
	}
	d, err = e.VerifyIn(context.Background(), nil, q, inputs, Input{Name: "shown", Table: shown, Epoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	if d.Empty() || len(d.Missing) != 4 {
		t.Errorf("in UTC the recomputation should differ on every row:\n%s", d)
	}
}

// TestToCharOnDuckDBAgainstPostgres runs the rows of sql/expr's
// PostgreSQL 15 golden files that have a value (not an error) through
// DuckDB, the template taken from a column, one query per argument type
// and time zone, and compares with PostgreSQL's text. NUMERIC NaN and
// infinities, which DuckDB cannot hold, are left out.
func TestToCharOnDuckDBAgainstPostgres(t *testing.T) {
	e := newEngine(t)
	kinds := map[string]types.Type{
		"timestamp": {Kind: types.KindTimestamp, Precision: 6}, "timestamptz": {Kind: types.KindTimestampTZ, Precision: 6},
		"date": types.Date, "integer": types.Int32, "bigint": types.Int64, "numeric": types.Numeric,
		"real": types.Float32, "double precision": types.Float64,
	}
	type group struct{ kind, zone string }
	rels := map[group]*Relation{}
	wants := map[group][]string{}
	for _, path := range []string{"../expr/testdata/tochar_pg15.csv", "../expr/testdata/tochar_random_pg15.csv"} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			kind, val, tmpl, zone, want := r[0], r[1], r[2], r[3], r[4]
			if strings.HasPrefix(want, "ERR:") || (kind == "numeric" && strings.ContainsAny(val, "Nn")) || strings.Contains(strings.ToUpper(tmpl), "EEEE") ||
				strings.Contains(strings.ToUpper(tmpl), "RN") || strings.Contains(strings.ToUpper(tmpl), "V") {
				continue
			}
			loc, err := time.LoadLocation(zone)
			if err != nil {
				t.Fatal(err)
			}
			v, err := types.ParseText(kinds[kind], val, loc)
			if err != nil {
				t.Fatalf("%s %q: %v", kind, val, err)
			}
			g := group{kind, zone}
			if rels[g] == nil {
				rels[g] = &Relation{Name: "g", Columns: []Column{{Name: "i", Type: types.Int32}, {Name: "v", Type: kinds[kind]}, {Name: "f", Type: types.Text}}}
			}
			rels[g].Rows = append(rels[g].Rows, types.Row{types.NewInt32(int32(len(rels[g].Rows))), v, txt(tmpl)})
			wants[g] = append(wants[g], want)
		}
	}
	n := 0
	for g, rel := range rels {
		loc, _ := time.LoadLocation(g.zone)
		res, err := e.QueryRelations(context.Background(), []Relation{*rel}, "SELECT i, to_char(v, f) FROM g ORDER BY i", QueryOptions{Location: loc})
		if err != nil {
			t.Fatalf("%s in %s: %v", g.kind, g.zone, err)
		}
		bad := 0
		for i, row := range res.Rows {
			n++
			if got := showDatum(row[1], nil); got != wants[g][i] && bad < 10 {
				bad++
				t.Errorf("to_char(%s %s, %q) in %s = %q in DuckDB, PostgreSQL %q", g.kind, showDatum(rel.Rows[i][1], nil),
					rel.Rows[i][2].Str(), g.zone, got, wants[g][i])
			}
		}
	}
	if n < 15000 {
		t.Errorf("only %d rows compared", n)
	}
}
