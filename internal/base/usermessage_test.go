package base

import "testing"

func TestUserMessage(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`schema: option bucket="x": not a non-negative integer: strata: invalid argument`, `schema: option bucket="x": not a non-negative integer`},
		{`table g: connector kafka: option "topic" is required: strata: invalid argument; table h: strata: not found`, `table g: connector kafka: option "topic" is required; table h`},
		{`strata: invalid argument: column c`, `column c`},
		{`strata: invalid argument`, `invalid argument`},
		{`column v: 300 does not fit smallint: strata: value out of range`, `column v: 300 does not fit smallint`},
		{`table t snapshot 3: strata: corruption`, `table t snapshot 3: corrupt data`},
		{`file f: strata: checksum mismatch`, `file f: checksum mismatch`},
		{`source pg: strata: closed`, `source pg: closed`},
		{`commit of t: strata: conflict`, `commit of t`},
		{`nothing to clean`, `nothing to clean`},
	} {
		if got := UserMessage(tc.in); got != tc.want {
			t.Errorf("UserMessage(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
