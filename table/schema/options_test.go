package schema

import (
	"errors"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// TestOptionErrors: a bad option value is refused naming the option, the
// value and the values the option takes.
func TestOptionErrors(t *testing.T) {
	fields := []Field{{Name: "k", Type: types.Int64}, {Name: "s", Type: types.Varchar}}
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"merge-engine": "dedup"}, `option "merge-engine": "dedup" is not one of deduplicate, partial-update, aggregation, first-row`},
		{map[string]string{"bucket": "four"}, `option "bucket": "four" is not a whole number >= 1`},
		{map[string]string{"bucket": "0"}, `option "bucket": "0" is not a whole number >= 1`},
		{map[string]string{"num-levels": "1"}, `option "num-levels": "1" is not a whole number >= 2`},
		{map[string]string{"snapshot.num-retained.min": "-1"}, `option "snapshot.num-retained.min": "-1" is not a whole number >= 1`},
		{map[string]string{"changelog-producer": "full"}, `option "changelog-producer": "full" is not one of none, input, lookup`},
		{map[string]string{"fields.s.aggregate-function": "avg"}, `option "fields.s.aggregate-function": "avg" is not one of sum, min, max, last_value, last_non_null_value`},
		{map[string]string{"fields.s.aggregate-function": "sum"}, `option "fields.s.aggregate-function": "sum" needs a numeric column, and s is`},
		{map[string]string{"fields.x.aggregate-function": "sum"}, `column "x" does not exist`},
		{map[string]string{"snapshot.time-retained": "soon"}, `option "snapshot.time-retained": "soon" is not a duration`},
	} {
		_, err := New(fields, []string{"k"}, tc.opts)
		if !errors.Is(err, base.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.opts, err, tc.want)
		}
	}
	if _, err := New(fields, []string{"k"}, map[string]string{"bucket": " 4 ", "merge-engine": "first-row"}); err != nil {
		t.Fatalf("good options: %v", err)
	}
}
