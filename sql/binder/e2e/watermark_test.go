package e2e

import (
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/plan"
)

// A view bound from SQL over a relation whose catalog entry has a
// watermark drops and counts the rows later than the watermark: the
// binder hands the relation, watermark included, to the planner.
func TestWatermarkFromCatalog(t *testing.T) {
	ev := &plan.Relation{Name: "ev", Columns: []plan.Column{
		{Name: "id", Type: types.Int64}, {Name: "ts", Type: types.Timestamp},
	}, Watermark: &plan.Watermark{Column: 1, Delay: types.IntervalValue{Micros: 5_000_000}}}
	sec := func(id, s int64) change {
		return change{kind: types.Insert, row: types.Row{types.NewInt64(id), types.NewTimestamp(s * 1_000_000)}}
	}
	log := []change{
		sec(1, 100), sec(2, 200), {epoch: 1},
		// The watermark is 195 s: 190 s is late, 197 s is not.
		sec(3, 190), sec(4, 197), {epoch: 2},
	}
	got, job := runViewOver(t, catalog{"ev": ev},
		"SELECT window_start, count(*) FROM TUMBLE(ev, ts, INTERVAL '1' MINUTE) GROUP BY 1", log, 1)
	want := []string{"1970-01-01 00:01:00|1", "1970-01-01 00:03:00|2"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("view %v, want %v\n%s", got, want, job.Explain)
	}
	if c := job.Late["ev"]; c == nil || c.Load() != 1 {
		t.Fatalf("late rows counted: %v\n%s", c, job.Explain)
	}
}
