package olap

import "testing"

func TestUnwrapLookup(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT * FROM s JOIN LOOKUP(t) AS c ON c.id = s.k", "SELECT * FROM s JOIN t AS c ON c.id = s.k"},
		{"SELECT * FROM s LEFT JOIN lookup ( db.\"T\" ) c ON true", "SELECT * FROM s LEFT JOIN db.\"T\" c ON true"},
		{"SELECT * FROM s, LOOKUP(t)", "SELECT * FROM s, t"},
		// Not a FROM item, or not one name: left alone.
		{"SELECT lookup(t) FROM s", "SELECT lookup(t) FROM s"},
		{"SELECT * FROM s JOIN LOOKUP('t') c ON true", "SELECT * FROM s JOIN LOOKUP('t') c ON true"},
		{"SELECT 'FROM LOOKUP(t)' FROM s", "SELECT 'FROM LOOKUP(t)' FROM s"},
	} {
		if got := unwrapLookup(c.in); got != c.want {
			t.Errorf("unwrapLookup(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
