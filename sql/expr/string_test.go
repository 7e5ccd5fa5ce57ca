package expr

import (
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Expected values are what Postgres 15 prints (UTF-8 database).
func TestStringFunctions(t *testing.T) {
	runCases(t, &Context{}, []fcase{
		{"||", []any{"ab", "cd"}, "abcd", ""},
		{"||", []any{"ab", nullOf(types.KindText)}, "NULL", ""},
		{"||", []any{"", ""}, "", ""},
		{"length", []any{"héllo"}, "5", ""},
		{"length", []any{""}, "0", ""},
		{"length", []any{nullOf(types.KindText)}, "NULL", ""},
		{"char_length", []any{"日本語"}, "3", ""},
		{"character_length", []any{"abc"}, "3", ""},
		{"octet_length", []any{"日本語"}, "9", ""},
		{"bit_length", []any{"é"}, "16", ""},
		{"lower", []any{"HeLLo ÀÉ"}, "hello àé", ""},
		{"upper", []any{"hello àé"}, "HELLO ÀÉ", ""},
		{"initcap", []any{"hi THOMAS o'neil 3rd-party éCOLE"}, "Hi Thomas O'Neil 3rd-Party École", ""},
		{"substr", []any{"hello", 2}, "ello", ""},
		{"substr", []any{"hello", 2, 3}, "ell", ""},
		{"substr", []any{"hello", 0, 2}, "h", ""},
		{"substr", []any{"hello", -5, 10}, "hell", ""},
		{"substr", []any{"hello", 10}, "", ""},
		{"substr", []any{"hello", -3}, "hello", ""},
		{"substr", []any{"héllo", 2, 2}, "él", ""},
		{"substr", []any{"hello", 1, -1}, "negative substring length not allowed", codeSubstringError},
		{"substr", []any{"hello", 2147483647, 5}, "", ""},
		{"substring", []any{"hello", 3}, "llo", ""},
		{"substring", []any{"hello", 1, 2147483647}, "hello", ""},
		{"substring", []any{"hello", nullOf(types.KindInt32), 2}, "NULL", ""},
		{"strpos", []any{"high", "ig"}, "2", ""},
		{"strpos", []any{"high", "x"}, "0", ""},
		{"strpos", []any{"high", ""}, "1", ""},
		{"strpos", []any{"日本語", "語"}, "3", ""},
		{"position", []any{"Thomas", "om"}, "3", ""},
		{"left", []any{"hello", 2}, "he", ""},
		{"left", []any{"hello", -2}, "hel", ""},
		{"left", []any{"hello", -10}, "", ""},
		{"left", []any{"hello", 10}, "hello", ""},
		{"right", []any{"hello", 2}, "lo", ""},
		{"right", []any{"hello", -2}, "llo", ""},
		{"right", []any{"hello", -10}, "", ""},
		{"right", []any{"héllo", 4}, "éllo", ""},
		{"lpad", []any{"hi", 5, "xy"}, "xyxhi", ""},
		{"lpad", []any{"hello", 10, ""}, "hello", ""},
		{"lpad", []any{"hello", 3}, "hel", ""},
		{"lpad", []any{"hi", 4}, "  hi", ""},
		{"lpad", []any{"hi", -1}, "", ""},
		{"rpad", []any{"hello", 3}, "hel", ""},
		{"rpad", []any{"hi", 5, "é"}, "hiééé", ""},
		{"ltrim", []any{"  hi  "}, "hi  ", ""},
		{"rtrim", []any{"  hi  "}, "  hi", ""},
		{"btrim", []any{"  hi  "}, "hi", ""},
		{"btrim", []any{"xyxtrimyyx", "xy"}, "trim", ""},
		{"ltrim", []any{"zzzytest", "xyz"}, "test", ""},
		{"rtrim", []any{"testxxzx", "xyz"}, "test", ""},
		{"btrim", []any{"abc", ""}, "abc", ""},
		{"replace", []any{"abcdefabcdef", "cd", "XX"}, "abXXefabXXef", ""},
		{"replace", []any{"abc", "", "X"}, "abc", ""},
		{"replace", []any{"abc", "b", ""}, "ac", ""},
		{"split_part", []any{"abc~@~def~@~ghi", "~@~", 2}, "def", ""},
		{"split_part", []any{"a,b,c", ",", -1}, "c", ""},
		{"split_part", []any{"a,b,c", ",", -3}, "a", ""},
		{"split_part", []any{"a,b,c", ",", 4}, "", ""},
		{"split_part", []any{"a,b,c", ",", -4}, "", ""},
		{"split_part", []any{"abc", "", 1}, "abc", ""},
		{"split_part", []any{"abc", "", 2}, "", ""},
		{"split_part", []any{"", ",", 1}, "", ""},
		{"split_part", []any{"a,b", ",", 0}, "field position must not be zero", sqlerr.InvalidParameterValue},
		{"repeat", []any{"Pg", 4}, "PgPgPgPg", ""},
		{"repeat", []any{"Pg", -1}, "", ""},
		{"repeat", []any{"ab", 1000000000}, "requested length too large", sqlerr.ProgramLimitExceeded},
		{"reverse", []any{"abcé"}, "écba", ""},
		{"to_hex", []any{255}, "ff", ""},
		{"to_hex", []any{-1}, "ffffffff", ""},
		{"to_hex", []any{int64(-1)}, "ffffffffffffffff", ""},
		{"to_hex", []any{int64(9223372036854775807)}, "7fffffffffffffff", ""},
		{"translate", []any{"12345", "143", "ax"}, "a2x5", ""},
		{"translate", []any{"héllo", "él", "EL"}, "hELLo", ""},
		{"starts_with", []any{"alphabet", "alph"}, "t", ""},
		{"starts_with", []any{"alphabet", "beta"}, "f", ""},
		{"^@", []any{"alphabet", ""}, "t", ""},
		{"md5", []any{"abc"}, "900150983cd24fb0d6963f7d28e17f72", ""},
		{"md5", []any{""}, "d41d8cd98f00b204e9800998ecf8427e", ""},
		{"ascii", []any{"x"}, "120", ""},
		{"ascii", []any{"é"}, "233", ""},
		{"ascii", []any{""}, "0", ""},
		{"chr", []any{65}, "A", ""},
		{"chr", []any{233}, "é", ""},
		{"chr", []any{0}, "null character not permitted", sqlerr.ProgramLimitExceeded},
		{"chr", []any{-1}, "character number must be positive", sqlerr.InvalidParameterValue},
		{"chr", []any{1114112}, "requested character too large for encoding: 1114112", sqlerr.ProgramLimitExceeded},
		{"chr", []any{55296}, "requested character not valid for encoding: 55296", sqlerr.ProgramLimitExceeded},
		{"concat", []any{"a", nil, numS("1.50"), true}, "a1.50t", ""},
		{"concat", []any{nil, nil}, "", ""},
		{"concat", []any{"abcde", 2, nil, 22}, "abcde222", ""},
		{"concat_ws", []any{",", "a", nil, "b"}, "a,b", ""},
		{"concat_ws", []any{nil, "a", "b"}, "NULL", ""},
		{"concat_ws", []any{",", nil}, "", ""},
		{"concat_ws", []any{"-", dateS("2024-02-29"), 7}, "2024-02-29-7", ""},
	})
}

// TestConcatOfChars checks that bpchar || bpchar resolves as in
// PostgreSQL 15 (text || text, not one of the "any" overloads, which tie)
// and that the padding goes in the casts to text: 'a'::char(3) ||
// 'b'::char(3) is 'ab'.
func TestConcatOfChars(t *testing.T) {
	c3 := types.Type{Kind: types.KindChar, Length: 3}
	fn, params, err := Builtins.Lookup("||", []types.Type{c3, c3})
	if err != nil {
		t.Fatal(err)
	}
	if params[0].Kind != types.KindText || params[1].Kind != types.KindText {
		t.Fatalf("char(3) || char(3) resolved to %v || %v, want text || text", params[0], params[1])
	}
	var args []Expr
	for _, s := range []string{"a  ", "b  "} {
		v, err := types.Cast(types.NewChar(s), types.Text, types.CastContext{})
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, &Const{Value: v, Typ: types.Text})
	}
	got, err := NewCall(fn, args...).Eval(&Context{}, nil)
	if err != nil || got.Str() != "ab" {
		t.Fatalf("'a'::char(3) || 'b'::char(3) = %q, %v; want \"ab\"", got.Str(), err)
	}
	// A CHAR beside TEXT still takes the (text, any) overload's neighbour
	// exactly as before: one cast, no ambiguity.
	if _, _, err := Builtins.Lookup("||", []types.Type{c3, types.Text}); err != nil {
		t.Fatal(err)
	}
}
