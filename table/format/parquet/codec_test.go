package parquet

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"reflect"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"
	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/record"
	"github.com/stratadb/strata/table/schema"
)

func TestRoundTripAllTypes(t *testing.T) {
	fields := []schema.Field{
		{Name: "id", Type: types.Int64},
		{Name: "b", Type: types.Bool, Nullable: true},
		{Name: "i16", Type: types.Int16, Nullable: true},
		{Name: "i32", Type: types.Int32, Nullable: true},
		{Name: "f32", Type: types.Float32, Nullable: true},
		{Name: "f64", Type: types.Float64, Nullable: true},
		{Name: "num", Type: types.Numeric, Nullable: true},
		{Name: "s", Type: types.Text, Nullable: true},
		{Name: "vc", Type: types.Varchar, Nullable: true},
		{Name: "u", Type: types.UUID, Nullable: true},
		{Name: "by", Type: types.Bytea, Nullable: true},
		{Name: "d", Type: types.Date, Nullable: true},
		{Name: "tm", Type: types.Time, Nullable: true},
		{Name: "ts", Type: types.Timestamp, Nullable: true},
		{Name: "tz", Type: types.TimestampTZ, Nullable: true},
		{Name: "iv", Type: types.Interval, Nullable: true},
		{Name: "j", Type: types.JSONB, Nullable: true},
	}
	s, err := schema.New(fields, []string{"id"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dec, _, _ := apd.NewFromString("-12.3400")
	js, _ := types.NewJSONB(`{"a":[1,2]}`)
	full := types.Row{types.NewInt64(1), types.NewBool(true), types.NewInt16(-3), types.NewInt32(7),
		types.NewFloat32(1.5), types.NewFloat64(-2.25), types.NewNumeric(dec), types.NewText("héllo"),
		types.NewVarchar("v"), types.NewUUID([16]byte{1, 2, 3}), types.NewBytea([]byte{0, 255}),
		types.NewDate(-5), types.NewTime(3_600_000_000), types.NewTimestamp(1_700_000_000_000_000),
		types.NewTimestampTZ(-1), types.NewInterval(types.IntervalValue{Months: 1, Days: -2, Micros: 3}), js}
	nulls := make(types.Row, len(fields))
	nulls[0] = types.NewInt64(2)
	kvs := []record.KV{{Seq: 10, Kind: types.Insert, Row: full}, {Seq: 11, Kind: types.Delete, Row: nulls}}
	b, err := Encode(s, kvs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode("f", b, s, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Seq != 10 || got[1].Kind != types.Delete {
		t.Fatalf("got %+v", got)
	}
	for r := range kvs {
		for i := range fields {
			a, b := kvs[r].Row[i], got[r].Row[i]
			if a.IsNull() != b.IsNull() || (!a.IsNull() && types.Compare(a, b) != 0) {
				t.Errorf("row %d column %s: %v != %v", r, fields[i].Name, a, b)
			}
		}
	}
	if got[0].Row[6].Decimal().Text('f') != "-12.3400" {
		t.Errorf("NUMERIC lost its scale: %s", got[0].Row[6].Decimal().Text('f'))
	}
	if want := types.EncodeKey(nil, full, []int{0}, []types.Type{types.Int64}); !reflect.DeepEqual(got[0].Key, want) {
		t.Errorf("key %x, want %x", got[0].Key, want)
	}
	if _, err := Decode("f", b[:len(b)/2], s, s); !errors.Is(err, base.ErrCorruption) {
		t.Errorf("truncated file: %v", err)
	}
}

func TestReadAfterAddColumn(t *testing.T) {
	s0, _ := schema.New([]schema.Field{{Name: "k", Type: types.Int32}, {Name: "v", Type: types.Text, Nullable: true}}, []string{"k"}, nil)
	s1, err := s0.AddColumn("w", types.Int64)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Encode(s0, []record.KV{{Seq: 1, Row: types.Row{types.NewInt32(5), types.NewText("x")}}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode("f", b, s0, s1)
	if err != nil {
		t.Fatal(err)
	}
	if len(got[0].Row) != 3 || got[0].Row[1].Str() != "x" || !got[0].Row[2].IsNull() {
		t.Fatalf("row = %v", got[0].Row)
	}
}

// A file of many pages, with NULLs scattered in every optional column,
// decodes to exactly what was encoded.
func TestRoundTripManyPages(t *testing.T) {
	s, err := schema.New([]schema.Field{
		{Name: "k", Type: types.Int64}, {Name: "i", Type: types.Int32, Nullable: true},
		{Name: "t", Type: types.Text, Nullable: true}, {Name: "f", Type: types.Float64, Nullable: true},
		{Name: "ts", Type: types.Timestamp, Nullable: true}, {Name: "d", Type: types.Date, Nullable: true},
	}, []string{"k"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 60_000
	kvs := make([]record.KV, n)
	for i := range kvs {
		row := types.Row{types.NewInt64(int64(i)), types.NewInt32(int32(i * 3)), types.NewText(strings.Repeat("x", i%17) + fmt.Sprint(i)),
			types.NewFloat64(float64(i) / 7), types.NewTimestamp(int64(i) * 1000), types.NewDate(int32(i % 5000))}
		for c := 1; c < len(row); c++ {
			if (i*7+c*13)%5 == 0 {
				row[c] = types.Null
			}
		}
		kvs[i] = record.KV{Seq: base.SeqNum(i + 1), Kind: types.RowKind(i % 4), Row: row}
	}
	b, err := Encode(s, kvs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode("f", b, s, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d rows", len(got))
	}
	for i := range kvs {
		if got[i].Seq != kvs[i].Seq || got[i].Kind != kvs[i].Kind || got[i].Row.String() != kvs[i].Row.String() {
			t.Fatalf("row %d: %v %d %s, want %v %d %s", i, got[i].Row, got[i].Seq, got[i].Kind, kvs[i].Row, kvs[i].Seq, kvs[i].Kind)
		}
	}
}

// TestEncodeKeysInline: the inline encoding of a lone BIGINT key equals
// types.EncodeKey's, at the edges of the range too, and a NULL key value
// (a table with primary-key.nullable) falls back to the general encoder.
func TestEncodeKeysInline(t *testing.T) {
	cols, ts := []int{1}, []types.Type{types.Int64}
	vals := []int64{0, 1, -1, 255, 256, -256, 1 << 40, math.MaxInt64, math.MinInt64}
	for _, withNull := range []bool{false, true} {
		rows := make([]types.Row, len(vals))
		for i, v := range vals {
			rows[i] = types.Row{types.NewText("x"), types.NewInt64(v)}
		}
		if withNull {
			rows[3][1] = types.Null
		}
		out := record.NewBlockLen([]types.Type{types.Text, types.Int64}, true, len(rows))
		for i, r := range rows {
			for c, d := range r {
				out.Set(c, i, d)
			}
		}
		encodeKeys(out, cols, ts)
		for i, r := range rows {
			want := types.EncodeKey(nil, r, cols, ts)
			if !bytes.Equal(out.Key(i), want) {
				t.Fatalf("null=%v row %d: key %x, want %x", withNull, i, out.Key(i), want)
			}
		}
	}
}

// TestChunkStatistics: a data file's column chunks carry min/max
// statistics and null counts (readers prune row groups with them), and
// the file has a column index per chunk, though the data page headers
// carry no statistics.
func TestChunkStatistics(t *testing.T) {
	s, err := schema.New([]schema.Field{
		{Name: "k", Type: types.Int64}, {Name: "s", Type: types.Text, Nullable: true},
	}, []string{"k"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var kvs []record.KV
	for i, v := range []string{"m", "", "z", "a"} {
		row := types.Row{types.NewInt64(int64(10 + i)), types.NewText(v)}
		if v == "" {
			row[1] = types.Null
		}
		kvs = append(kvs, record.KV{Key: types.EncodeKey(nil, row, []int{0}, []types.Type{types.Int64}), Seq: base.SeqNum(i + 1), Row: row})
	}
	data, err := Encode(s, kvs)
	if err != nil {
		t.Fatal(err)
	}
	f, err := pq.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.ColumnIndexes()); n != len(f.Metadata().RowGroups[0].Columns) {
		t.Errorf("%d column indexes, want one per column chunk", n)
	}
	md := f.Metadata()
	got := map[string]string{}
	for _, cc := range md.RowGroups[0].Columns {
		st := cc.MetaData.Statistics
		got[cc.MetaData.PathInSchema[0]] = fmt.Sprintf("%x..%x nulls=%d", st.MinValue, st.MaxValue, st.NullCount)
	}
	want := map[string]string{
		"k": "0a00000000000000..0d00000000000000 nulls=0",
		"s": "61..7a nulls=1",
	}
	for col, w := range want {
		if got[col] != w {
			t.Errorf("column %s statistics %q, want %q", col, got[col], w)
		}
	}
}

// TestEncodings: integer columns are delta bit-packed and uncompressed,
// text columns Snappy-compressed; and a file whose integer
// columns are plain and Snappy-compressed (as files were written before)
// decodes to the same records.
func TestEncodings(t *testing.T) {
	s, err := schema.New([]schema.Field{
		{Name: "k", Type: types.Int64}, {Name: "d", Type: types.Date, Nullable: true}, {Name: "s", Type: types.Text, Nullable: true},
	}, []string{"k"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var kvs []record.KV
	for i := range 3000 {
		row := types.Row{types.NewInt64(int64(i * 3)), types.NewDate(int32(i % 7)), types.NewText(fmt.Sprint("v", i%11))}
		if i%5 == 0 {
			row[1], row[2] = types.Null, types.Null
		}
		kvs = append(kvs, record.KV{Key: types.EncodeKey(nil, row, []int{0}, []types.Type{types.Int64}), Seq: base.SeqNum(i + 1), Kind: types.RowKind(i % 4), Row: row})
	}
	data, err := Encode(s, kvs)
	if err != nil {
		t.Fatal(err)
	}
	f, err := pq.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, cc := range f.Metadata().RowGroups[0].Columns {
		got[cc.MetaData.PathInSchema[0]] = fmt.Sprint(cc.MetaData.Encoding, " ", cc.MetaData.Codec)
	}
	// Optional columns also list RLE, the encoding of their levels.
	for _, col := range []string{"k", "d", SeqColumn, KindColumn} {
		if !strings.Contains(got[col], format.DeltaBinaryPacked.String()) || !strings.HasSuffix(got[col], format.Uncompressed.String()) {
			t.Errorf("column %s: %s, want delta bit-packed, uncompressed", col, got[col])
		}
	}
	if !strings.HasSuffix(got["s"], format.Snappy.String()) || strings.Contains(got["s"], format.DeltaBinaryPacked.String()) {
		t.Errorf("column s: %s, want Snappy, not delta bit-packed", got["s"])
	}

	// The same records written with plain Snappy integer columns.
	g := pq.Group{SeqColumn: pq.Compressed(pq.Int(64), fastSnappy{}), KindColumn: pq.Compressed(pq.Int(8), fastSnappy{}),
		"k": pq.Compressed(pq.Int(64), fastSnappy{}), "d": pq.Optional(pq.Compressed(pq.Date(), fastSnappy{})),
		"s": pq.Optional(pq.Compressed(pq.String(), fastSnappy{}))}
	var buf bytes.Buffer
	w := pq.NewWriter(&buf, pq.NewSchema("strata", g), pq.KeyValueMetadata("strata.format.version", "1"))
	type old struct {
		Seq  int64   `parquet:"_SEQUENCE_NUMBER"`
		Kind int8    `parquet:"_VALUE_KIND"`
		K    int64   `parquet:"k"`
		D    *int32  `parquet:"d,date,optional"`
		S    *string `parquet:"s,optional"`
	}
	for _, kv := range kvs {
		r := old{Seq: int64(kv.Seq), Kind: int8(kv.Kind), K: kv.Row[0].Int64()}
		if !kv.Row[1].IsNull() {
			d, str := kv.Row[1].Date(), kv.Row[2].Str()
			r.D, r.S = &d, &str
		}
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, file := range [][]byte{data, buf.Bytes()} {
		back, err := Decode("f", file, s, s)
		if err != nil {
			t.Fatal(err)
		}
		if len(back) != len(kvs) {
			t.Fatalf("%d records, want %d", len(back), len(kvs))
		}
		for i := range kvs {
			if string(back[i].Key) != string(kvs[i].Key) || back[i].Seq != kvs[i].Seq || back[i].Kind != kvs[i].Kind || back[i].Row.String() != kvs[i].Row.String() {
				t.Fatalf("record %d: %x %d %s %s, want %x %d %s %s", i, back[i].Key, back[i].Seq, back[i].Kind, back[i].Row, kvs[i].Key, kvs[i].Seq, kvs[i].Kind, kvs[i].Row)
			}
		}
	}
}

// NUMERIC values keep their exact text (sign, scale, special values)
// through a file of several write batches, with NULLs among them.
func TestRoundTripNumerics(t *testing.T) {
	s, err := schema.New([]schema.Field{{Name: "k", Type: types.Int64}, {Name: "n", Type: types.Numeric, Nullable: true}}, []string{"k"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"0", "-0", "0.000", "1.5", "-12.3400", "123456789012345678901234567890.123456789",
		"1E+5", "-7E-12", "NaN", "Infinity", "-Infinity", "18446744073709551615", "0.908"}
	const n = 5000
	kvs := make([]record.KV, n)
	want := make([]string, n)
	for i := range kvs {
		v := types.Null
		if i%7 != 3 {
			text := texts[i%len(texts)]
			if i%len(texts) == 3 {
				text = fmt.Sprintf("%d.%03d", i*977, i%1000)
			}
			d, _, err := apd.NewFromString(text)
			if err != nil {
				t.Fatal(err)
			}
			v, want[i] = types.NewNumeric(d), d.Text('f')
		}
		kvs[i] = record.KV{Seq: base.SeqNum(i + 1), Kind: types.Insert, Row: types.Row{types.NewInt64(int64(i)), v}}
	}
	data, err := EncodeBlock(s, record.BlockOf(s.Types(), s.HasPrimaryKey(), kvs))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode("f", data, s, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d rows, want %d", len(got), n)
	}
	for i, kv := range got {
		d := kv.Row[1]
		switch {
		case want[i] == "" && !d.IsNull():
			t.Fatalf("row %d: %v, want NULL", i, d)
		case want[i] != "" && (d.IsNull() || d.Decimal().Text('f') != want[i]):
			t.Fatalf("row %d: %v, want %s", i, d, want[i])
		}
	}
}

// appendDecimalText writes what apd's Text('f') writes, for decimals on
// both sides of its 64-bit fast path.
func TestDecimalText(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	check := func(d *apd.Decimal) {
		t.Helper()
		if got, want := string(appendDecimalText([]byte("x"), d)), "x"+d.Text('f'); got != want {
			t.Fatalf("coefficient %s exponent %d negative %v: %q, want %q", d.Coeff.String(), d.Exponent, d.Negative, got, want)
		}
	}
	for _, s := range []string{"0", "-0", "0.0", "-0.000", "1", "-1", "0.908", "10", "1E+3", "-5E-7", "NaN", "Infinity", "-Infinity",
		"18446744073709551615", "18446744073709551616", "-1844674407370955161.5", "123456789012345678901234567890E-40"} {
		d, _, err := apd.NewFromString(s)
		if err != nil {
			t.Fatal(err)
		}
		check(d)
	}
	for range 20000 {
		var d apd.Decimal
		d.Coeff.SetUint64(r.Uint64() >> r.Intn(64))
		d.Exponent = int32(r.Intn(50) - 30)
		d.Negative = r.Intn(2) == 0
		check(&d)
	}
}
