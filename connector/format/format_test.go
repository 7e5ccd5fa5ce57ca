package format_test

import (
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"

	"github.com/stratadb/strata/connector/format"
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

func cols(t *testing.T) []catalog.Column {
	return []catalog.Column{
		{Name: "id", Type: types.Int64, NotNull: true},
		{Name: "name", Type: types.Text},
		{Name: "price", Type: mustType(t, "NUMERIC(10,2)")},
		{Name: "ts", Type: mustType(t, "TIMESTAMP(3)")},
		{Name: "ok", Type: types.Bool},
		{Name: "doc", Type: types.JSONB},
	}
}

// text renders changes as "+I[1 a 2.50 ...]" lines with Postgres's text
// output, so expected values are written as a reader would.
func text(chs []format.Change) string {
	var b strings.Builder
	for _, ch := range chs {
		b.WriteString(ch.Kind.String())
		b.WriteString("[")
		for i, d := range ch.Row {
			if i > 0 {
				b.WriteString(" ")
			}
			if d.IsNull() {
				b.WriteString("NULL")
			} else {
				b.WriteString(types.FormatText(d, nil))
			}
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func TestJSON(t *testing.T) {
	d := format.NewJSON(cols(t))
	for _, tc := range []struct{ in, want, err string }{
		{in: `{"id": 1, "name": "a", "price": 0.1, "ts": "2024-01-02 03:04:05.123456", "ok": true, "doc": {"b": [1, 2]}}`,
			want: "+I[1 a 0.10 2024-01-02 03:04:05.123 t {\"b\": [1, 2]}]\n"},
		{in: `{"ID": 2, "price": "12.345", "ts": 86400000}`, want: "+I[2 NULL 12.35 1970-01-02 00:00:00 NULL NULL]\n"},
		{in: `{"id": 3, "name": 42, "price": null, "extra": 1}`, want: "+I[3 42 NULL NULL NULL NULL]\n"},
		{in: ``, want: ""},
		{in: `{"name": "x"}`, err: `field "id": missing, and the column is NOT NULL`},
		{in: `{"id": 1.5}`, err: `field "id": value "1.5": invalid input syntax for type bigint: "1.5"`},
		{in: `{"id": 1, "price": "abc"}`, err: `field "price": value "abc": invalid input syntax for type numeric: "abc"`},
		{in: `{"id": 1, "ok": 3}`, err: `field "ok": value 3: a number does not fit type BOOLEAN`},
		{in: `{"id": 1, "price": 123456789012}`, err: `field "price": value "123456789012": numeric field overflow`},
		{in: `[1, 2]`, err: `record is not a JSON object`},
		{in: `{"id": 1`, err: `record is not a JSON object`},
	} {
		got, err := d.Decode(nil, []byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.err)
			} else if !errors.Is(err, base.ErrInvalidArgument) && !errors.Is(err, base.ErrOutOfRange) {
				t.Errorf("%s: error %v wraps no marker", tc.in, err)
			}
			if len(got) != 0 {
				t.Errorf("%s: a failed decode returned %d changes", tc.in, len(got))
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if text(got) != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.in, text(got), tc.want)
		}
	}
}

func TestDebezium(t *testing.T) {
	cs := []catalog.Column{{Name: "id", Type: types.Int32, NotNull: true}, {Name: "v", Type: types.Text}, {Name: "at", Type: types.Timestamp}}
	d := format.NewDebezium(cs)
	schema := `{"type":"struct","fields":[{"type":"struct","field":"before","fields":[{"field":"at","type":"int64","name":"io.debezium.time.MicroTimestamp"}]},` +
		`{"type":"struct","field":"after","fields":[{"field":"at","type":"int64","name":"io.debezium.time.MicroTimestamp"}]}]}`
	decSchema := `{"type":"struct","fields":[{"type":"struct","field":"after","fields":[{"field":"v","type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}}]}]}`
	for _, tc := range []struct{ in, want, err string }{
		{in: `{"before": null, "after": {"id": 1, "v": "a"}, "op": "c"}`, want: "+I[1 a NULL]\n"},
		{in: `{"before": null, "after": {"id": 1, "v": "a"}, "op": "r", "source": {}}`, want: "+I[1 a NULL]\n"},
		{in: `{"before": {"id": 1, "v": "a"}, "after": {"id": 1, "v": "b"}, "op": "u"}`, want: "-U[1 a NULL]\n+U[1 b NULL]\n"},
		{in: `{"before": null, "after": {"id": 1, "v": "b"}, "op": "u"}`, want: "+U[1 b NULL]\n"},
		{in: `{"before": {"id": 1, "v": "b"}, "after": null, "op": "d"}`, want: "-D[1 b NULL]\n"},
		{in: `{"schema": ` + schema + `, "payload": {"before": null, "after": {"id": 2, "at": 1500000}, "op": "c"}}`, want: "+I[2 NULL 1970-01-01 00:00:01.5]\n"},
		{in: `{"payload": {"after": {"id": 3, "at": 1500}, "op": "c"}}`, want: "+I[3 NULL 1970-01-01 00:00:01.5]\n"},
		// A Kafka Connect Decimal of scale 2: base64 of 0x3039 = 12345, and
		// of 0xcfc7 = -12345.
		{in: `{"schema": ` + decSchema + `, "payload": {"after": {"id": 4, "v": "MDk="}, "op": "c"}}`, want: "+I[4 123.45 NULL]\n"},
		{in: `{"schema": ` + decSchema + `, "payload": {"after": {"id": 5, "v": "z8c="}, "op": "c"}}`, want: "+I[5 -123.45 NULL]\n"},
		{in: `{"schema": ` + decSchema + `, "payload": {"after": {"id": 6, "v": "!!"}, "op": "c"}}`, err: `field "v": value "!!": not the base64 bytes of a decimal`},
		{in: `{"schema": null, "payload": null}`, want: ""},
		{in: ``, want: ""},
		{in: `null`, want: ""},
		{in: `{"before": null, "after": null, "op": "t"}`, err: `field "op": value "t": not a Debezium op`},
		{in: `{"before": null, "after": null, "op": "c"}`, err: `field "after": missing or null for op "c"`},
		{in: `{"before": null, "after": {"id": "x"}, "op": "c"}`, err: `after: field "id": value "x": invalid input syntax for type integer`},
		{in: `{"after": {"id": 1}}`, err: `neither op nor payload`},
	} {
		got, err := d.Decode(nil, []byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, base.ErrInvalidArgument) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if text(got) != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.in, text(got), tc.want)
		}
	}
}

func TestCSV(t *testing.T) {
	cs := []catalog.Column{{Name: "id", Type: types.Int64, NotNull: true}, {Name: "name", Type: types.Text}, {Name: "d", Type: types.Date}}
	d := format.NewCSV(cs, ',', '"')
	for _, tc := range []struct{ in, want, err string }{
		{in: "1,alice,2024-02-03\n", want: "+I[1 alice 2024-02-03]\n"},
		{in: "2,\"b, \"\"c\"\"\nd\",\r\n", want: "+I[2 b, \"c\"\nd NULL]\n"},
		{in: "3,\"\",", want: "+I[3  NULL]\n"},
		{in: "4,x", err: "record has 2 fields, want 3"},
		{in: ",x,", err: `field "id": value (empty): NULL in NOT NULL column`},
		{in: "5,x,2024-13-01", err: `field "d": value "2024-13-01"`},
		{in: "6,\"x,", err: "unterminated quoted field"},
		{in: "7,\"x\"y,", err: "text after the closing quote"},
	} {
		got, err := d.Decode(nil, []byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if text(got) != tc.want {
			t.Errorf("%q:\n got %q\nwant %q", tc.in, text(got), tc.want)
		}
	}
	// A header maps by name; a semicolon delimiter and a quote of '.
	sc := format.NewCSV(cs, ';', '\'')
	h, err := sc.WithHeader([]byte("D;extra;ID\n"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := h.Decode(nil, []byte("2020-01-01;'a;b';9\n"))
	if err != nil || text(got) != "+I[9 NULL 2020-01-01]\n" {
		t.Fatalf("header decode: %q, %v", text(got), err)
	}
	if _, err := sc.WithHeader([]byte("name;d\n")); err == nil || !strings.Contains(err.Error(), `no field "id"`) {
		t.Fatalf("header without NOT NULL column: %v", err)
	}
	for _, tc := range []struct {
		in   string
		want int
	}{{"a,b\nc", 4}, {"\"a\nb\",c\nd", 8}, {"\"a\nb", -1}, {"abc", -1}} {
		if n := d.RecordEnd([]byte(tc.in)); n != tc.want {
			t.Errorf("RecordEnd(%q) = %d, want %d", tc.in, n, tc.want)
		}
	}
}

func TestAvro(t *testing.T) {
	schema := `{"type": "record", "name": "order", "fields": [
		{"name": "id", "type": "long"},
		{"name": "name", "type": ["null", "string"]},
		{"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
		{"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
		{"name": "day", "type": {"type": "int", "logicalType": "date"}},
		{"name": "score", "type": "double"}]}`
	cs := []catalog.Column{{Name: "id", Type: types.Int64, NotNull: true}, {Name: "name", Type: types.Varchar},
		{Name: "amount", Type: mustType(t, "NUMERIC(10,2)")}, {Name: "at", Type: types.TimestampTZ},
		{Name: "day", Type: types.Date}, {Name: "score", Type: types.Float64}, {Name: "missing", Type: types.Int32}}
	o, err := format.ParseOptions(map[string]string{"format": "avro", "avro.schema": schema, "avro.wire": "confluent"}, "")
	if err != nil {
		t.Fatal(err)
	}
	d, err := format.New(o, cs)
	if err != nil {
		t.Fatal(err)
	}
	s := avro.MustParse(schema)
	name := "widget"
	// 1234 with scale 2 is 12.34: big-endian two's complement bytes.
	b, err := avro.Marshal(s, map[string]any{"id": int64(7), "name": name, "amount": mustRat("12.34"),
		"at": time.UnixMilli(1_700_000_000_123).UTC(), "day": time.Date(2024, 2, 3, 0, 0, 0, 0, time.UTC), "score": 0.5})
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Decode(nil, append([]byte{0, 0, 0, 0, 1}, b...))
	if err != nil {
		t.Fatal(err)
	}
	if want := "+I[7 widget 12.34 2023-11-14 22:13:20.123+00 2024-02-03 0.5 NULL]\n"; text(got) != want {
		t.Fatalf("got %q\nwant %q", text(got), want)
	}
	if _, err := d.Decode(nil, b); err == nil || !strings.Contains(err.Error(), "schema registry header") {
		t.Fatalf("value without header: %v", err)
	}
	if _, err := d.Decode(nil, []byte{0, 0, 0, 0, 1, 0xff}); err == nil || !errors.Is(err, base.ErrInvalidArgument) {
		t.Fatalf("truncated value: %v", err)
	}
	if _, err := format.NewAvro(append(cs, catalog.Column{Name: "req", Type: types.Int32, NotNull: true}), schema, false); err == nil {
		t.Fatal("a NOT NULL column missing from the schema was accepted")
	}
}

func TestParseOptions(t *testing.T) {
	o, err := format.ParseOptions(map[string]string{"format": "CSV", "csv.delimiter": `\t`, "csv.header": "true", "topic": "x"}, "")
	if err != nil || o.Format != format.CSVFmt || o.CSVDelimiter != '\t' || !o.CSVHeader || o.CSVQuote != '"' {
		t.Fatalf("%+v %v", o, err)
	}
	for opts, want := range map[*map[string]string]string{
		{}:                                       `option "format" is required`,
		{"format": "xml"}:                        `"xml" is not one of`,
		{"format": "csv", "csv.delimiter": ";;"}: `is not one character`,
		{"format": "csv", "csv.quote": ","}:      `is the delimiter too`,
		{"format": "avro"}:                       `"avro.schema"`,
		{"format": "json", "csv.header": "yes please"}: `is not true or false`,
	} {
		_, err := format.ParseOptions(*opts, "")
		if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, base.ErrInvalidArgument) {
			t.Errorf("%v: %v, want %q", *opts, err, want)
		}
	}
}

func TestErrors(t *testing.T) {
	if _, err := format.NewErrors(format.DeadLetter, nil); err == nil {
		t.Fatal("dead-letter without a receiver accepted")
	}
	var got []format.BadRecord
	e, err := format.NewErrors(format.DeadLetter, func(r format.BadRecord) error { got = append(got, r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	bad := format.BadRecord{Source: "file a.csv", Where: "line 3", Raw: []byte("x"), Err: errors.New("field \"id\": bad")}
	if err := e.Handle(bad); err != nil || len(got) != 1 || e.Skipped() != 1 {
		t.Fatalf("dead letter: %v %d %d", err, len(got), e.Skipped())
	}
	f, _ := format.NewErrors(format.Fail, nil)
	if err := f.Handle(bad); err == nil || err.Error() != `file a.csv line 3: field "id": bad` {
		t.Fatalf("fail: %v", err)
	}
	if m, err := format.ParseErrorMode("Skip"); err != nil || m != format.Skip {
		t.Fatalf("%v %v", m, err)
	}
	if _, err := format.ParseErrorMode("ignore"); err == nil {
		t.Fatal("unknown mode accepted")
	}
}

func mustRat(s string) any {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	return r
}

func TestChangelogFormats(t *testing.T) {
	for v, want := range map[string]bool{"json": false, " Debezium-JSON ": true, "csv": false, "avro": false} {
		f, ok := format.ParseFormat(v)
		if !ok || f.Changelog() != want {
			t.Errorf("%q: format %q ok %v changelog %v, want %v", v, f, ok, f.Changelog(), want)
		}
	}
	if _, ok := format.ParseFormat("xml"); ok {
		t.Error("xml taken for a format")
	}
}
