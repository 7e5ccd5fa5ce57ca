package expr

import (
	"testing"

	"github.com/stratadb/strata/sql/sqlerr"
)

// Expected values are what Postgres 15 prints.
func TestFormat(t *testing.T) {
	runCases(t, &Context{}, []fcase{
		{"format", []any{"Hello %s, %1$s %I %L %L %%", "World", "Foo bar", `O'Re\il`, nil}, `Hello World, World "Foo bar" E'O''Re\\il' NULL %`, ""},
		{"format", []any{"|%10s|%-10s|%*s|", "a", "b", 3, "c"}, "|         a|b         |  c|", ""},
		{"format", []any{"%s", nil}, "", ""},
		{"format", []any{"%2$s %s", "a", "b", "c"}, "b c", ""},
		{"format", []any{"%s %s", numS("1.5"), true}, "1.5 t", ""},
		{"format", []any{"plain"}, "plain", ""},
		{"format", []any{nil, "a"}, "NULL", ""},
		{"format", []any{"%s %s", "a"}, "too few arguments for format()", sqlerr.InvalidParameterValue},
		{"format", []any{"%x", "a"}, `unrecognized format() type specifier "x"`, sqlerr.InvalidParameterValue},
		{"format", []any{"%I", nil}, "null values cannot be formatted as an SQL identifier", sqlerr.NullValueNotAllowed},
		{"format", []any{"abc %"}, "unterminated format() type specifier", sqlerr.InvalidParameterValue},
		{"quote_ident", []any{"select"}, `"select"`, ""},
		{"quote_ident", []any{"abc"}, "abc", ""},
		{"quote_ident", []any{"aBc"}, `"aBc"`, ""},
		{"quote_ident", []any{"_a1"}, "_a1", ""},
		{"quote_ident", []any{"1a"}, `"1a"`, ""},
		{"quote_ident", []any{`a"b`}, `"a""b"`, ""},
		{"quote_literal", []any{`a\b'c`}, `E'a\\b''c'`, ""},
		{"quote_literal", []any{"it's"}, `'it''s'`, ""},
		{"quote_nullable", []any{nil}, "NULL", ""},
		{"quote_nullable", []any{"x"}, "'x'", ""},
	})
}
