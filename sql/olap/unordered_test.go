package olap

import (
	"slices"
	"testing"
)

func TestUnorderedAggregates(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		{"SELECT grp, string_agg(name, ',') AS s FROM t GROUP BY grp", []string{"string_agg"}},
		{"SELECT string_agg(name, ',' ORDER BY name) FROM t", nil},
		{"SELECT STRING_AGG (lower(name), ',') FROM t ORDER BY 1", []string{"string_agg"}},
		{"SELECT array_agg(x ORDER BY y), string_agg(coalesce(n, 'x'), ',') FROM t", []string{"string_agg"}},
		{"SELECT array_agg(x), array_agg(y) FROM t", []string{"array_agg"}},
		{"SELECT 'string_agg(a)' AS s, \"string_agg\" FROM t -- string_agg(x)", nil},
		{"SELECT count(*) FROM t", nil},
	} {
		if got := UnorderedAggregates(tc.sql); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.sql, got, tc.want)
		}
	}
}
