package planner

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/duckdb"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

// disorderedBids is an append-only stream of bids whose event times rise
// by 0.3 s a row with up to 3 s of disorder, some NULL.
func disorderedBids(rel *plan.Relation, seed uint64) *input {
	rng := rand.New(rand.NewPCG(seed, 9))
	in := &input{rel: rel}
	i := int64(0)
	for e := 1; e <= 30; e++ {
		for range rng.IntN(10) {
			tm := types.NewTimestamp(i*300_000 - int64(rng.IntN(31))*100_000)
			if rng.IntN(15) == 0 {
				tm = types.Null
			}
			i++
			r := types.Row{types.NewInt64(int64(rng.IntN(3))), types.NewInt64(int64(rng.IntN(50))), tm}
			in.evs = append(in.evs, event{kind: types.Insert, row: r})
			in.live = append(in.live, r)
		}
		in.evs = append(in.evs, event{epoch: base.Epoch(e)})
	}
	return in
}

// TestLateDataDroppedAndCounted runs a tumbling-window view over a stream
// with a watermark of 1 s delay; DuckDB computes, from the arrival order,
// which rows were late (time below the largest time before them minus the
// delay), and the view must equal the windows over the other rows, and
// the job's late counter the number of late rows.
func TestLateDataDroppedAndCounted(t *testing.T) {
	db, err := duckdb.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const delay = 1_000_000
	view := "SELECT window_start, window_end, auction, count(*), sum(price) FROM TUMBLE(bidw, date_time, INTERVAL '2' SECOND) GROUP BY 1, 2, 3"
	marked := `(SELECT *, us < mx - ` + strconv.Itoa(delay) + ` AS late, us < mx AS disordered FROM
		(SELECT *, epoch_us(date_time) AS us, max(epoch_us(date_time)) OVER (ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS mx FROM bidw))`
	oracle := fmt.Sprintf(`SELECT make_timestamp(%[1]s), make_timestamp(%[1]s + 2000000), auction, count(*), sum(price)
		FROM %[2]s WHERE date_time IS NOT NULL AND late IS NOT TRUE GROUP BY 1, 2, 3`, ws("epoch_us(date_time)", 2*sec), marked)
	totalLate, totalWithin := 0, 0
	for seed := range uint64(4) {
		rel := bidRel("bidw")
		rel.Watermark = &plan.Watermark{Column: 2, Delay: types.IntervalValue{Micros: delay}}
		cat := relCatalog{"bidw": disorderedBids(rel, seed)}
		loadDuck(t, db, cat)
		got, job := runPlan(t, cat, bindSQL(t, cat, view), 2)
		sameRows(t, fmt.Sprintf("seed %d", seed), got, duckRows(t, db, oracle), job.Explain)
		want := duckRows(t, db, "SELECT count(*) FROM "+marked+" WHERE late")
		if n := job.Late["bidw"].Load(); fmt.Sprint(n) != want[0] {
			t.Fatalf("seed %d: %d late rows counted, DuckDB finds %s", seed, n, want[0])
		}
		// Rows within the delay were kept: some arrived out of order
		// without being late.
		within := duckRows(t, db, "SELECT count(*) FROM "+marked+" WHERE disordered AND NOT late")
		n, _ := strconv.Atoi(want[0])
		w, _ := strconv.Atoi(within[0])
		totalLate += n
		totalWithin += w
	}
	t.Logf("%d late rows dropped, %d disordered rows within the delay kept", totalLate, totalWithin)
	if totalLate == 0 || totalWithin == 0 {
		t.Fatalf("%d late rows and %d disordered rows within the delay: the input does not exercise both", totalLate, totalWithin)
	}
}

// TestLateDataEdges: with a 2 s delay after an event at 10 s, an event at
// 8 s (exactly the watermark) and one at 9 s are kept, one at 7.9 s is
// dropped and counted; a NULL time passes.
func TestLateDataEdges(t *testing.T) {
	rel := bidRel("bidw")
	rel.Watermark = &plan.Watermark{Column: 2, Delay: types.IntervalValue{Micros: 2 * sec}}
	in := &input{rel: rel}
	for i, ms := range []int64{10_000, 9_000, 8_000, 7_900, -1, 12_000, 9_999, 10_000} {
		tm := types.NewTimestamp(ms * 1000)
		if ms < 0 {
			tm = types.Null
		}
		in.evs = append(in.evs, event{kind: types.Insert, row: types.Row{types.NewInt64(int64(i)), types.NewInt64(1), tm}})
	}
	in.evs = append(in.evs, event{epoch: 1})
	cat := relCatalog{"bidw": in}
	got, job := runPlan(t, cat, bindSQL(t, cat, "SELECT auction, date_time FROM bidw"), 1)
	want := []string{"0|1970-01-01 00:00:10", "1|1970-01-01 00:00:09", "2|1970-01-01 00:00:08", "4|NULL",
		"5|1970-01-01 00:00:12", "7|1970-01-01 00:00:10"}
	sameRows(t, "late edges", got, want, job.Explain)
	if n := job.Late["bidw"].Load(); n != 2 {
		t.Fatalf("late rows counted: %d, want 2 (7.9 s, then 9.999 s after 12 s)", n)
	}
	// A watermark on a changelog with updates is refused.
	wr := *tsRel
	wr.Watermark = &plan.Watermark{Column: 3}
	cat = relCatalog{"tr": {rel: &wr}}
	if _, err := Build("v", bindSQL(t, cat, "SELECT id FROM tr"), &anyEndpoints{cat: cat}, Options{}); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Fatalf("watermark on a retract changelog: %v", err)
	}
}
