package pglex

import (
	"errors"
	"strings"
	"testing"
)

func TestScanQuoted(t *testing.T) {
	for _, tc := range []struct {
		in      string // starts with the opening quote (after an E prefix)
		q       byte
		escapes bool
		end     int
		value   string
		err     string
	}{
		{`'abc' x`, '\'', false, 5, "abc", ""},
		{`'it''s'`, '\'', false, 7, "it's", ""},
		{`'a\'`, '\'', false, 4, `a\`, ""},
		{`'a\'b'`, '\'', true, 6, "a'b", ""},
		{`'\n\101\x41\u00e9'`, '\'', true, 18, "\nAAé", ""},
		{`'\q'`, '\'', true, 4, "q", ""},
		{`'open`, '\'', false, 5, "open", "unterminated string constant"},
		{`'\u12'`, '\'', true, 1, "", "invalid Unicode escape"},
		{`"a""b" c`, '"', false, 6, `a"b`, ""},
	} {
		var b strings.Builder
		end, err := ScanQuoted(tc.in, 1, tc.q, tc.escapes, &b)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err || end != tc.end {
				t.Errorf("ScanQuoted(%q) = %d, %v; want %d, %s", tc.in, end, err, tc.end, tc.err)
			}
			continue
		}
		if err != nil || end != tc.end || b.String() != tc.value {
			t.Errorf("ScanQuoted(%q) = %d, %q, %v; want %d, %q", tc.in, end, b.String(), err, tc.end, tc.value)
		}
		// Skipping without a builder finds the same end.
		if skip, _ := ScanQuoted(tc.in, 1, tc.q, tc.escapes, nil); skip != end {
			t.Errorf("ScanQuoted(%q) without a builder ends at %d, with one at %d", tc.in, skip, end)
		}
	}
	if _, err := ScanQuoted(`'x`, 1, '\'', false, nil); !errors.Is(err, ErrUnterminated) {
		t.Errorf("unterminated: %v", err)
	}
}

func TestDollarQuoted(t *testing.T) {
	for _, tc := range []struct {
		in  string
		tag string
		end int
		ok  bool
	}{
		{"$$a'b$$ rest", "$$", 7, true},
		{"$fn$ x $$ y $fn$;", "$fn$", 16, true},
		{"$x$open", "$x$", 7, false},
		{"$1 + 2", "", 0, false},
		{"$a b$", "", 0, false},
		{"plain", "", 0, false},
	} {
		tag, end, ok := DollarQuoted(tc.in)
		if tag != tc.tag || end != tc.end || ok != tc.ok {
			t.Errorf("DollarQuoted(%q) = %q, %d, %v; want %q, %d, %v", tc.in, tag, end, ok, tc.tag, tc.end, tc.ok)
		}
	}
}

func TestIdentifiers(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Orders", "orders"},
		{"ÄBC_x1", "Äbc_x1"},
		{"lower", "lower"},
	} {
		if got := FoldIdent(tc.in); got != tc.want {
			t.Errorf("FoldIdent(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{`"My ""T"""`, `My "T"`},
		{`"open`, "open"},
		{`""`, ""},
	} {
		if got := UnquoteIdent(tc.in); got != tc.want {
			t.Errorf("UnquoteIdent(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
