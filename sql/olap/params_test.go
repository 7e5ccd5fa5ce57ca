package olap

import (
	"testing"

	"github.com/stratadb/strata/internal/types"
)

func TestCastParams(t *testing.T) {
	num := types.Type{Kind: types.KindNumeric}
	for _, c := range []struct {
		in   string
		ts   []types.Type
		want string
	}{
		{"SELECT id FROM pt WHERE id = $1 + 1", []types.Type{types.Int32}, "SELECT id FROM pt WHERE id = CAST($1 AS INTEGER) + 1"},
		{"SELECT * FROM pt WHERE s = $1 OR $1 IS NULL", []types.Type{types.Text}, "SELECT * FROM pt WHERE s = CAST($1 AS VARCHAR) OR CAST($1 AS VARCHAR) IS NULL"},
		// $2 beyond ts, $3 NUMERIC (cast to its value's scale when bound),
		// $4 unknown: untouched.
		{"SELECT $1, $2, $3, $4", []types.Type{types.Date, types.Unknown, num}, "SELECT CAST($1 AS DATE), $2, $3, $4"},
		// not in strings, comments or quoted names; $10 is not $1
		{"SELECT '$1', \"$1\", $10 -- $1\n, $1", []types.Type{types.Bool}, "SELECT '$1', \"$1\", $10 -- $1\n, CAST($1 AS BOOLEAN)"},
		{"SELECT $1", nil, "SELECT $1"},
	} {
		if got := CastParams(c.in, c.ts); got != c.want {
			t.Errorf("CastParams(%q, %v):\n got %q\nwant %q", c.in, c.ts, got, c.want)
		}
	}
}
