package schema

import (
	"errors"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
)

// TestRetainedSnapshotBounds: snapshot.num-retained.min above max, or
// either below 1, is refused naming the options, as Paimon refuses it;
// min <= max is taken.
func TestRetainedSnapshotBounds(t *testing.T) {
	for _, c := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"snapshot.num-retained.max": "3"}, `"snapshot.num-retained.min" (10) is more than "snapshot.num-retained.max" (3)`},
		{map[string]string{"snapshot.num-retained.min": "5", "snapshot.num-retained.max": "3"}, `(5) is more than`},
		{map[string]string{"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "0"}, `"snapshot.num-retained.max": "0" is not a whole number >= 1`},
		{map[string]string{"snapshot.num-retained.min": "2", "snapshot.num-retained.max": "3"}, ""},
	} {
		s := &Schema{Options: c.opts}
		o, err := ParseOptions(s)
		if c.want == "" {
			if err != nil || o.RetainMin != 2 || o.RetainMax != 3 {
				t.Fatalf("%v: %+v, %v; want min 2, max 3", c.opts, o, err)
			}
			continue
		}
		if !errors.Is(err, base.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%v: %v; want an error saying %s", c.opts, err, c.want)
		}
	}
}
