//go:build cgo

package expr

import "testing"

// Results where glibc's libm and Go's math package differ in the last
// bit: with cgo Strata calls libm as Postgres does and prints the same
// digits. Expected values are what Postgres 15 prints.
func TestMathLibmExact(t *testing.T) {
	runCases(t, &Context{}, []fcase{
		{"cbrt", []any{27.0}, "3.0000000000000004", ""},
		{"cbrt", []any{-27.0}, "-3.0000000000000004", ""},
		{"cbrt", []any{2.0}, "1.2599210498948734", ""},
		{"log", []any{3.0}, "0.47712125471966244", ""},
		{"sin", []any{2.0}, "0.9092974268256817", ""},
		{"sin", []any{1e300}, "-0.8178819121159085", ""},
		{"tan", []any{1.0}, "1.5574077246549023", ""},
		{"cot", []any{1.0}, "0.6420926159343306", ""},
		{"acos", []any{0.5}, "1.0471975511965979", ""},
		{"acos", []any{0.3}, "1.2661036727794992", ""},
	})
}
