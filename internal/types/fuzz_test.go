package types

import (
	"testing"

	"github.com/cockroachdb/apd/v3"
)

// Decoders face bytes from disk and the network: whatever they accept must
// be usable (formatted, compared, encoded) without a panic, and they must
// not allocate without bound. Seeds run in every `go test`; run
// `go test -fuzz FuzzDecodeRow ./internal/types` to search further.

var fuzzTypes = []Type{Bool, Int16, Int32, Int64, Float32, Float64, Numeric, {Kind: KindChar, Length: 3}, Varchar, Text,
	UUID, Bytea, Date, Time, Timestamp, TimestampTZ, Interval, JSONB}

func useDatum(d Datum, t Type) {
	_ = FormatText(d, nil)
	_ = Compare(d, d)
	_ = AppendKey(nil, d, t)
}

func FuzzDecodeRow(f *testing.F) {
	row := Row{NewBool(true), NewInt16(-2), NewInt32(3), NewInt64(-4), NewFloat32(1.5), NewFloat64(-2.5),
		NewNumeric(apd.New(12345, -2)), NewChar("ab "), NewVarchar("v"), NewText("t\x00"), NewUUID([16]byte{1}),
		NewBytea([]byte{0, 255}), NewDate(-1), NewTime(5), NewTimestamp(-7), NewTimestampTZ(8),
		NewInterval(IntervalValue{Months: -1, Days: 2, Micros: -3}), Null}
	f.Add(AppendRow(nil, row, fuzzTypes))
	f.Add([]byte{1, 1, 0, 1, 'x'})
	f.Fuzz(func(t *testing.T, b []byte) {
		got, _, err := DecodeRow(b, fuzzTypes)
		if err != nil {
			return
		}
		for i, d := range got {
			useDatum(d, fuzzTypes[i])
		}
	})
}

func FuzzDecodeKey(f *testing.F) {
	for i, t := range fuzzTypes {
		f.Add(uint8(i), AppendKey(nil, genSeed(t), t))
	}
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		ty := fuzzTypes[int(which)%len(fuzzTypes)]
		d, _, err := DecodeKey(b, ty)
		if err != nil {
			return
		}
		useDatum(d, ty)
	})
}

func FuzzDecodeChunk(f *testing.F) {
	c := NewChunk([]Type{Int64, Text, JSONB}, 2)
	js, _ := NewJSONB(`{"a": [1, 2.5]}`)
	c.Append(Insert, Row{NewInt64(1), NewText("x"), js})
	c.Append(Delete, Row{Null, NewText(""), Null})
	f.Add(AppendChunk(nil, c))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, _, err := DecodeChunk(b)
		if err != nil {
			return
		}
		for i := range got.Len() {
			for j, d := range got.Row(i) {
				useDatum(d, got.Cols[j].Type)
			}
		}
	})
}

func genSeed(t Type) Datum {
	switch t.Kind {
	case KindJSONB:
		d, _ := NewJSONB(`[1, {"k": null}]`)
		return d
	case KindNumeric:
		return NewNumeric(apd.New(-5, 3))
	}
	return Null
}
