package types

import "testing"

// TestJSONSyntaxDetail: the DETAIL of a refused JSON text is
// PostgreSQL's (json_errdetail), and well-formed texts have none.
func TestJSONSyntaxDetail(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`bad`, `Token "bad" is invalid.`},
		{`{bad`, `Token "bad" is invalid.`},
		{`{"a": bad}`, `Token "bad" is invalid.`},
		{`{"a" 1}`, `Expected ":", but found "1".`},
		{`{"a": 1,}`, `Expected string, but found "}".`},
		{`{1: 2}`, `Expected string or "}", but found "1".`},
		{`{"a": 1 "b"`, `Expected "," or "}", but found ""b"".`},
		{`[1 2]`, `Expected "," or "]", but found "2".`},
		{`[,1]`, `Expected array element or "]", but found ",".`},
		{`[1,]`, `Expected JSON value, but found "]".`},
		{`{"a": 1`, `The input string ended unexpectedly.`},
		{``, `The input string ended unexpectedly.`},
		{`"abc`, `The input string ended unexpectedly.`},
		{`1 2`, `Expected end of input, but found "2".`},
		{`01`, `Token "01" is invalid.`},
		{`1x`, `Token "1x" is invalid.`},
		{`'a'`, `Token "'" is invalid.`},
		{`"a\qb"`, `Escape sequence "\q" is invalid.`},
		{`"\u12"`, `"\u" must be followed by four hexadecimal digits.`},
		{"\"a\tb\"", `Character with value 0x09 must be escaped.`},
		{`{"a": [1, 2.5e3, -0.1, true, false, null, "x\"y", {}]}`, ``},
		{` [] `, ``},
	} {
		if got := jsonSyntaxDetail(tc.in); got != tc.want {
			t.Errorf("jsonSyntaxDetail(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestParseJSONBDetail: ParseText's error for a malformed JSONB literal
// is PostgreSQL's, 22P02 with the token in its detail and no marker text.
func TestParseJSONBDetail(t *testing.T) {
	_, err := ParseText(JSONB, "{bad", nil)
	ve, ok := err.(*ValueError)
	if !ok || ve.Code != "22P02" || ve.Msg != "invalid input syntax for type json" || ve.Detail != `Token "bad" is invalid.` {
		t.Fatalf("ParseText(jsonb, {bad) = %#v", err)
	}
}
