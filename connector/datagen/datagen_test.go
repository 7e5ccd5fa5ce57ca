package datagen

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

func mustType(t *testing.T, s string) types.Type {
	t.Helper()
	ty, err := types.ParseType(s)
	if err != nil {
		t.Fatal(err)
	}
	return ty
}

// allColumns is a relation with a column of every supported type.
func allColumns(t *testing.T) []catalog.Column {
	cols := []catalog.Column{}
	for _, c := range []struct{ name, typ string }{
		{"id", "bigint"}, {"v", "integer"}, {"s", "smallint"}, {"name", "varchar(10)"}, {"price", "numeric(10,2)"},
		{"ts", "timestamp(3)"}, {"tz", "timestamptz"}, {"d", "date"}, {"tm", "time(0)"}, {"f", "double precision"},
		{"r", "real"}, {"b", "boolean"}, {"u", "uuid"}, {"raw", "bytea"}, {"ch", "char(5)"}, {"txt", "text"},
		{"code", "varchar(6)"}, {"amount", "numeric"},
	} {
		cols = append(cols, catalog.Column{Name: c.name, Type: mustType(t, c.typ), NotNull: c.name == "id"})
	}
	return cols
}

var allOptions = map[string]string{
	"connector":       "datagen",
	"rows-per-second": "0",
	"seed":            "7",
	"fields.id.kind":  "sequence", "fields.id.start": "1", "fields.id.end": "2000",
	"fields.v.min": "10", "fields.v.max": "20",
	"fields.name.length": "5",
	"fields.price.min":   "1.50", "fields.price.max": "2.50",
	"fields.ts.min": "2024-01-01 00:00:00", "fields.ts.max": "2024-01-01 00:00:10",
	"fields.d.kind": "sequence", "fields.d.start": "2024-01-30",
	"fields.f.min": "-1", "fields.f.max": "1",
	"fields.raw.length":    "4",
	"fields.ch.length":     "3",
	"fields.txt.length":    "2",
	"fields.txt.null-rate": "0.5",
	"fields.code.kind":     "sequence", "fields.code.start": "99990",
	"fields.amount.min": "0.001", "fields.amount.max": "0.009",
}

func col(cols []catalog.Column, name string) int {
	for i, c := range cols {
		if c.Name == name {
			return i
		}
	}
	panic(name)
}

func readAll(t *testing.T, r *Reader, from uint64) []types.Row {
	t.Helper()
	var rows []types.Row
	for pos := from; ; {
		c, next, err := r.Next(pos)
		if err != nil {
			t.Fatal(err)
		}
		if c == nil {
			if next != pos {
				t.Fatalf("nil chunk moved the position from %d to %d", pos, next)
			}
			return rows
		}
		if next != pos+uint64(c.Len()) || c.Len() == 0 {
			t.Fatalf("Next(%d) = %d rows, next %d", pos, c.Len(), next)
		}
		for i := range c.Len() {
			rows = append(rows, c.Row(i))
		}
		pos = next
	}
}

// openAt opens opts for cols with a clock that stays at at.
func openAt(t *testing.T, cols []catalog.Column, opts map[string]string, at time.Time) *Reader {
	t.Helper()
	cfg, err := ParseOptions(cols, opts)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Now = func() time.Time { return at }
	r, err := NewReader(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestValues(t *testing.T) {
	cols := allColumns(t)
	before := time.Now().UnixMicro()
	r, err := Open(cols, allOptions)
	if err != nil {
		t.Fatal(err)
	}
	// code is a sequence from 99990 in a VARCHAR(6): it ends at 999999,
	// but id ends sooner, at 2000 rows.
	if r.Limit() != 2000 {
		t.Fatalf("limit %d, want 2000", r.Limit())
	}
	rows := readAll(t, r, 0)
	after := time.Now().UnixMicro()
	if len(rows) != 2000 {
		t.Fatalf("%d rows", len(rows))
	}
	at := func(row types.Row, name string) types.Datum { return row[col(cols, name)] }
	seenV, seenB := map[int64]bool{}, map[bool]int{}
	nulls := 0
	tsLo := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
	d0 := int32(time.Date(2024, 1, 30, 0, 0, 0, 0, time.UTC).Unix() / 86400)
	var fsum float64
	for i, row := range rows {
		if id := at(row, "id").Int64(); id != int64(i)+1 {
			t.Fatalf("row %d: id %d", i, id)
		}
		v := at(row, "v").Int64()
		if v < 10 || v > 20 {
			t.Fatalf("v %d", v)
		}
		seenV[v] = true
		s := at(row, "s").Int64()
		if s < math.MinInt16 || s > math.MaxInt16 {
			t.Fatalf("smallint %d", s)
		}
		if name := at(row, "name").Str(); len(name) != 5 || strings.Trim(name, "abcdefghijklmnopqrstuvwxyz") != "" {
			t.Fatalf("name %q", name)
		}
		p := at(row, "price").Decimal()
		if p.Exponent != -2 || p.Cmp(apd.New(150, -2)) < 0 || p.Cmp(apd.New(250, -2)) > 0 {
			t.Fatalf("price %s", p)
		}
		ts := at(row, "ts").Micros()
		if ts < tsLo || ts > tsLo+10_000_000 || ts%1000 != 0 {
			t.Fatalf("ts %d", ts)
		}
		// A time column without a rate: every row's time is the
		// start time, read from the clock between before and after.
		if tz := at(row, "tz").Micros(); tz < before || tz > after || tz != at(rows[0], "tz").Micros() {
			t.Fatalf("row %d: tz %d, want row 0's, between %d and %d", i, tz, before, after)
		}
		if d := at(row, "d").Date(); d != d0+int32(i) {
			t.Fatalf("row %d: date %d, want %d", i, d, d0+int32(i))
		}
		if tm := at(row, "tm").Micros(); tm < 0 || tm >= 86_400_000_000 || tm%1_000_000 != 0 {
			t.Fatalf("time(0) %d", tm)
		}
		f := at(row, "f").Float64()
		if f < -1 || f >= 1 {
			t.Fatalf("f %v", f)
		}
		fsum += f
		if rf := at(row, "r").Float64(); rf < 0 || rf > 1 || float64(float32(rf)) != rf {
			t.Fatalf("real %v", rf)
		}
		seenB[at(row, "b").Bool()]++
		if u := at(row, "u").UUID(); u[6]>>4 != 4 || u[8]>>6 != 2 {
			t.Fatalf("uuid %x", u)
		}
		if raw := at(row, "raw").Bytes(); len(raw) != 4 {
			t.Fatalf("bytea %x", raw)
		}
		if ch := at(row, "ch").Str(); len(ch) != 5 || ch[3:] != "  " {
			t.Fatalf("char(5) %q", ch)
		}
		if txt := at(row, "txt"); txt.IsNull() {
			nulls++
		} else if len(txt.Str()) != 2 {
			t.Fatalf("txt %q", txt.Str())
		}
		if code := at(row, "code").Str(); code != types.NewInt64(99990+int64(i)).String() {
			t.Fatalf("row %d: code %q", i, code)
		}
		if a := at(row, "amount").Decimal(); a.Exponent != -3 || a.Cmp(apd.New(1, -3)) < 0 || a.Cmp(apd.New(9, -3)) > 0 {
			t.Fatalf("amount %s", a)
		}
	}
	if len(seenV) != 11 {
		t.Fatalf("v took %d of 11 values", len(seenV))
	}
	if seenB[true] < 900 || seenB[false] < 900 {
		t.Fatalf("booleans %v", seenB)
	}
	if nulls < 900 || nulls > 1100 {
		t.Fatalf("%d NULLs of 2000 at null-rate 0.5", nulls)
	}
	if mean := fsum / 2000; math.Abs(mean) > 0.05 {
		t.Fatalf("mean of uniform [-1, 1) is %.3f", mean)
	}
	// Every value matches its column's type: the rows encode and decode.
	ts := r.c.types
	for _, row := range rows[:50] {
		back, _, err := types.DecodeRow(types.AppendRow(nil, row, ts), ts)
		if err != nil || len(back) != len(row) {
			t.Fatalf("row codec: %v", err)
		}
	}
}

func TestDefaults(t *testing.T) {
	cols := []catalog.Column{{Name: "a", Type: types.Int16}, {Name: "s", Type: mustType(t, "varchar(20)")},
		{Name: "n", Type: mustType(t, "numeric(4,1)")}, {Name: "t", Type: types.Text}}
	r, err := NewReader(Config{Columns: cols, Rows: 5000})
	if err != nil {
		t.Fatal(err)
	}
	rows := readAll(t, r, 0)
	if len(rows) != 5000 {
		t.Fatalf("%d rows", len(rows))
	}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, row := range rows {
		lo, hi = min(lo, row[0].Int64()), max(hi, row[0].Int64())
		if len(row[1].Str()) != 20 || len(row[3].Str()) != DefaultLength {
			t.Fatalf("string lengths %d, %d", len(row[1].Str()), len(row[3].Str()))
		}
		if n := row[2].Decimal(); n.Sign() < 0 || n.Cmp(apd.New(9999, -1)) > 0 || n.Exponent != -1 {
			t.Fatalf("numeric(4,1) %s", n)
		}
	}
	// The whole SMALLINT range is drawn from.
	if lo > math.MinInt16+100 || hi < math.MaxInt16-100 {
		t.Fatalf("smallint range [%d, %d]", lo, hi)
	}
	if c, next, _ := r.Next(5000); c != nil || next != 5000 {
		t.Fatal("rows past Rows")
	}
}

func TestDeterminismAndResume(t *testing.T) {
	cols := allColumns(t)
	// One clock for all: tz is a time column, whose values follow the
	// start time (TestReplay checks them apart).
	clock := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	a := openAt(t, cols, allOptions, clock)
	b := openAt(t, cols, allOptions, clock)
	ra, rb := readAll(t, a, 0), readAll(t, b, 0)
	if !rowsEqual(ra, rb) {
		t.Fatal("two readers of one config differ")
	}
	opts := map[string]string{}
	for k, v := range allOptions {
		opts[k] = v
	}
	opts["seed"] = "8"
	c := openAt(t, cols, opts, clock)
	rc := readAll(t, c, 0)
	differ := 0
	for i := range ra {
		if !rowsEqual(ra[i:i+1], rc[i:i+1]) {
			differ++
		}
	}
	if differ != len(ra) {
		t.Fatalf("seeds 7 and 8 agree on %d rows", len(ra)-differ)
	}
	// Resuming anywhere gives the straight run's rows from there.
	for _, from := range []uint64{1, 999, 1024, 1999, 2000} {
		r := openAt(t, cols, allOptions, clock)
		if err := r.RestoreState(mustState(t, a)); err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, r, from); !rowsEqual(got, ra[from:]) {
			t.Fatalf("from %d: %d rows, or they differ from the straight run", from, len(got))
		}
		if from < 2000 && !rowsEqual([]types.Row{r.Row(from)}, ra[from:from+1]) {
			t.Fatalf("Row(%d) differs", from)
		}
	}
	// A column's values do not depend on the other columns' options.
	opts = map[string]string{}
	for k, v := range allOptions {
		opts[k] = v
	}
	opts["fields.v.max"] = "30"
	opts["fields.name.length"] = "7"
	d := openAt(t, cols, opts, clock)
	rd := readAll(t, d, 0)
	for _, name := range []string{"price", "ts", "u", "txt"} {
		i := col(cols, name)
		for n := range ra {
			if !types.Equal(ra[n][i], rd[n][i]) {
				t.Fatalf("column %s row %d changed with other columns' options", name, n)
			}
		}
	}
}

func mustState(t *testing.T, r *Reader) []byte {
	t.Helper()
	b, err := r.SnapshotState()
	if err != nil || b == nil {
		t.Fatalf("state %x, %v", b, err)
	}
	return b
}

func rowsEqual(a, b []types.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		for j := range a[i] {
			if a[i][j].IsNull() != b[i][j].IsNull() || !types.Equal(a[i][j], b[i][j]) {
				return false
			}
		}
	}
	return true
}

func TestRateLimit(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	r, err := NewReader(Config{Columns: []catalog.Column{{Name: "x", Type: types.Int64}}, Rate: 1000,
		Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	at := func(ms int) { now = t0.Add(time.Duration(ms) * time.Millisecond) }
	step := func(pos uint64, rows int) uint64 {
		t.Helper()
		c, next, err := r.Next(pos)
		if err != nil {
			t.Fatal(err)
		}
		if rows == 0 {
			if c != nil || next != pos {
				t.Fatalf("at %v Next(%d) returned rows before they were due", now.Sub(t0), pos)
			}
			return pos
		}
		if c == nil || c.Len() != rows || next != pos+uint64(rows) {
			t.Fatalf("at %v Next(%d) = %v, %d; want %d rows", now.Sub(t0), pos, c, next, rows)
		}
		return next
	}
	// 1000 rows/s: transactions of 10 rows; rows 0-9 are due when row 9
	// is, 9 ms after the first call.
	at(0)
	step(0, 0)
	at(8)
	step(0, 0)
	at(9)
	pos := step(0, 10)
	step(pos, 0)
	at(19)
	pos = step(pos, 10)
	// Behind schedule, everything due is served at once.
	at(1000)
	for range 98 {
		pos = step(pos, 10)
	}
	if pos != 1000 {
		t.Fatalf("caught up to %d", pos)
	}
	step(pos, 0)
}

func TestOptionErrors(t *testing.T) {
	cols := []catalog.Column{{Name: "id", Type: types.Int64, NotNull: true}, {Name: "s", Type: mustType(t, "varchar(4)")},
		{Name: "ts", Type: types.Timestamp}, {Name: "iv", Type: types.Interval}}
	for _, c := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"connector": "nexmark"}, `option "connector": "nexmark" is not datagen`},
		{map[string]string{"rows": "5"}, `unknown option "rows"`},
		{map[string]string{"rows-per-second": "-1"}, `option "rows-per-second": "-1" is not a whole number`},
		{map[string]string{"number-of-rows": "lots"}, `option "number-of-rows"`},
		{map[string]string{"seed": "x"}, `option "seed"`},
		{map[string]string{"fields.nope.kind": "random"}, `"fields.nope.kind": "random" configures column "nope", which does not exist`},
		{map[string]string{"fields.id.kind": "serial"}, `"fields.id.kind": "serial" is not random or sequence`},
		{map[string]string{"fields.id.step": "2"}, `"step" is not one of kind`},
		{map[string]string{"fields.id.length": "0"}, `"fields.id.length": "0" is not a whole number >= 1`},
		{map[string]string{"fields.id.null-rate": "1.5"}, `"fields.id.null-rate": "1.5" is not a number between 0 and 1`},
		{map[string]string{"fields.id.null-rate": "0.1"}, `fields.id.null-rate must be 0 for a NOT NULL column`},
		{map[string]string{"fields.id.kind": "sequence"}, `a sequence needs fields.id.start`},
		{map[string]string{"fields.id.kind": "sequence", "fields.id.start": "5", "fields.id.end": "1"}, `fields.id.start 5 is above fields.id.end 1`},
		{map[string]string{"fields.id.kind": "sequence", "fields.id.start": "1", "fields.id.min": "1"}, `min, max and length apply to random columns`},
		{map[string]string{"fields.id.start": "1"}, `start and end apply to sequences`},
		{map[string]string{"fields.id.min": "ten"}, `fields.id.min "ten"`},
		{map[string]string{"fields.id.min": "9", "fields.id.max": "3"}, `fields.id.min 9 is above fields.id.max 3`},
		{map[string]string{"fields.s.length": "5"}, `fields.s.length 5 is longer than VARCHAR(4) allows`},
		{map[string]string{"fields.s.min": "a"}, `min and max do not apply to strings`},
		{map[string]string{"fields.s.kind": "sequence", "fields.s.start": "1", "fields.s.end": "12345"}, `sequence values up to 12345 do not fit VARCHAR(4)`},
		{map[string]string{"fields.s.kind": "sequence", "fields.s.start": "-1000"}, `sequence values up to 9999 do not fit VARCHAR(4)`},
		{map[string]string{"fields.ts.kind": "sequence", "fields.ts.start": "2024-01-01"}, `a sequence needs an integer, NUMERIC, string or DATE column`},
		{map[string]string{"fields.ts.min": "infinity"}, `infinity is not a bound`},
		{map[string]string{"fields.ts.max-past": "-5 s"}, `"fields.ts.max-past": "-5 s" does not start with a whole number`},
		{map[string]string{"fields.ts.max-past": "5 weeks"}, `has unit "weeks"`},
		{map[string]string{"fields.ts.max-past": "99999999999 d"}, `is longer than`},
		{map[string]string{"fields.ts.max-past": "5 s", "fields.ts.min": "2024-01-01"}, `fields.ts.max-past applies to a column without min and max`},
		{map[string]string{"fields.id.max-past": "5 s"}, `fields.id.max-past applies to TIMESTAMP, TIMESTAMPTZ and DATE columns`},
	} {
		_, err := ParseOptions(cols[:3], c.opts)
		if err == nil || !errors.Is(err, base.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseOptions(%v) = %v, want an invalid-argument error with %q", c.opts, err, c.want)
		}
	}
	if _, err := ParseOptions(cols, nil); err == nil || !strings.Contains(err.Error(), `column "iv" (INTERVAL): datagen cannot generate type INTERVAL`) {
		t.Errorf("INTERVAL column: %v", err)
	}
	if _, err := NewReader(Config{}); !errors.Is(err, base.ErrInvalidArgument) {
		t.Errorf("no columns: %v", err)
	}
	if _, err := NewReader(Config{Columns: cols[:1], Fields: map[string]Field{"x": {}}}); err == nil || !strings.Contains(err.Error(), "fields.x configures no column") {
		t.Errorf("field of no column: %v", err)
	}
	cfg, err := ParseOptions(cols[:3], map[string]string{"number-of-rows": "10"})
	if err != nil || cfg.Rate != DefaultRowsPerSecond || cfg.Rows != 10 {
		t.Errorf("defaults: %+v, %v", cfg, err)
	}
}
