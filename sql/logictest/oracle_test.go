package logictest

import (
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
)

func TestNormValue(t *testing.T) {
	parse := func(typ types.Type, s string) types.Datum {
		d, err := types.ParseText(typ, s, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	num62, _ := types.NumericType(6, 2)
	char3, _ := types.CharType(3)
	for _, c := range []struct {
		d       types.Datum
		want    types.Type
		inexact bool
		out     string
	}{
		{types.Null, types.Int64, false, "NULL"},
		{parse(num62, "2.50"), types.Numeric, false, "2.5"},
		{parse(types.Numeric, "2.5000"), num62, false, "2.5"},
		{parse(types.Numeric, "-0.00"), types.Numeric, false, "0"},
		{parse(types.Numeric, "1200"), types.Int64, false, "1200"},
		{types.NewInt32(7), types.Numeric, false, "7"},
		{parse(types.Numeric, "2.3333333333333333"), types.Numeric, true, "2.33333333333"},
		{types.NewFloat64(2.3333333333333335), types.Numeric, true, "2.33333333333"},
		{types.NewFloat64(-0.0), types.Float64, true, "0"},
		{parse(types.Float64, "NaN"), types.Float64, true, "NaN"},
		{parse(types.Numeric, "NaN"), types.Float64, true, "NaN"},
		{parse(types.Float64, "-Infinity"), types.Float64, true, "-Infinity"},
		{types.NewFloat32(0.1), types.Float32, true, "0.1"},
		{parse(types.Interval, "1 mon"), types.Interval, false, normValue(parse(types.Interval, "30 days"), types.Interval, false)},
		{parse(types.Interval, "1 day"), types.Interval, false, normValue(parse(types.Interval, "24:00:00"), types.Interval, false)},
		{types.NewText(`{"b":[1,2],"a":null}`), types.JSONB, false, `{"a": null, "b": [1, 2]}`},
		{parse(types.JSONB, `{"b": [1, 2], "a": null}`), types.JSONB, false, `{"a": null, "b": [1, 2]}`},
		{types.NewText("ab "), char3, false, "ab"},
		{parse(char3, "ab"), char3, false, "ab"},
		{types.NewText("2024-03-01"), types.Date, false, "2024-03-01"},
		{types.NewBool(true), types.Bool, false, "t"},
	} {
		if got := normValue(c.d, c.want, c.inexact); got != c.out {
			t.Errorf("normValue(%v, %s, %v) = %q, want %q", c.d, c.want, c.inexact, got, c.out)
		}
	}
	if a, b := normValue(parse(types.Interval, "1 day"), types.Interval, false), normValue(parse(types.Interval, "23:00:00"), types.Interval, false); a == b {
		t.Errorf("1 day and 23 hours normalize alike: %s", a)
	}
}

func TestDiff(t *testing.T) {
	if d := diff([]string{"b", "a", "a"}, []string{"a", "b", "a"}); d != "" {
		t.Fatalf("equal multisets differ: %q", d)
	}
	if d := diff([]string{"a", "a", "c"}, []string{"a", "b"}); d != "- a\n+ b\n- c" {
		t.Fatalf("diff = %q", d)
	}
}
