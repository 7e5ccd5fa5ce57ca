package ddl

import (
	"strings"
	"testing"
)

// TestTruncationNotices: an identifier of 64 bytes or more, unquoted
// (folded first) or quoted, draws one notice per occurrence naming its
// full and its cut form; 63 bytes, a long string constant or a long
// comment draw none.
func TestTruncationNotices(t *testing.T) {
	n63, n64 := strings.Repeat("a", 63), strings.Repeat("a", 64)
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"SELECT " + n63 + " FROM t", nil},
		{"SELECT " + n64 + " FROM t", []string{`42622 identifier "` + n64 + `" will be truncated to "` + n63 + `"`}},
		{"SELECT " + strings.ToUpper(n64) + ", \"" + n64 + "B\" FROM t", []string{
			`42622 identifier "` + n64 + `" will be truncated to "` + n63 + `"`,
			`42622 identifier "` + n64 + `B" will be truncated to "` + n63 + `"`,
		}},
		{"SELECT 'x " + n64 + "' -- " + n64 + "\n", nil},
		{"SELECT \"short\"", nil},
		{"SELECT 'unterminated " + n64, nil},
	} {
		var got []string
		for _, e := range TruncationNotices(tc.text) {
			got = append(got, e.Code+" "+e.Message)
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%q:\n%q\nwant\n%q", tc.text, got, tc.want)
		}
	}
}
