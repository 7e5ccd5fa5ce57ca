package planner

import (
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/plan"
)

// TestIntervalJoinRecognized: joins of two append-only inputs with
// watermarks whose ON bounds the difference of their times from both
// sides plan as interval joins (append-only when inner) with the bounds
// the conditions imply; any missing piece leaves a regular join.
func TestIntervalJoinRecognized(t *testing.T) {
	bid := bidRel("bid")
	bid.Watermark = &plan.Watermark{Column: 2, Delay: types.IntervalValue{Micros: 5 * sec}}
	ask := bidRel("ask")
	ask.Watermark = &plan.Watermark{Column: 2, Delay: types.IntervalValue{Micros: sec}}
	plain := bidRel("plain")
	keyed := bidRel("keyed")
	keyed.PrimaryKey = []int{0}
	cat := relCatalog{"bid": {rel: bid}, "ask": {rel: ask}, "plain": {rel: plain}, "keyed": {rel: keyed}}
	for _, c := range []struct{ q, want string }{
		{"SELECT * FROM bid b JOIN ask a ON b.auction = a.auction AND a.date_time BETWEEN b.date_time - INTERVAL '10' SECOND AND b.date_time + INTERVAL '5' SECOND",
			"InnerIntervalJoin on ((b.auction = a.auction) AND ((a.date_time >= (b.date_time - '00:00:10'::interval)) AND (a.date_time <= (b.date_time + '00:00:05'::interval)))) (state kept for right time - left time in [-10s, 5s]) (parallelism 2, append-only)"},
		// The left time on the left of the comparisons, a strict bound,
		// and a tighter second bound.
		{"SELECT * FROM bid b JOIN ask a ON b.auction = a.auction AND b.date_time <= a.date_time + INTERVAL '1 minute' AND b.date_time > a.date_time - INTERVAL '2 minutes' AND b.date_time <= a.date_time",
			"(state kept for right time - left time in [0s, 2m0s]) (parallelism 2, append-only)"},
		// A projection and a filter in between keep the time column.
		{"SELECT * FROM (SELECT date_time AS t, auction FROM bid WHERE price > 3) b JOIN ask a ON b.auction = a.auction AND a.date_time BETWEEN b.t AND b.t + INTERVAL '1 hour'",
			"(state kept for right time - left time in [0s, 1h0m0s]) (parallelism 2, append-only)"},
		// Outer: retract output, state still bounded.
		{"SELECT * FROM bid b LEFT JOIN ask a ON b.auction = a.auction AND a.date_time BETWEEN b.date_time AND b.date_time + INTERVAL '1' SECOND",
			"LeftIntervalJoin on"},
		// Days of a TIMESTAMP are 24 hours.
		{"SELECT * FROM bid b JOIN ask a ON b.auction = a.auction AND a.date_time BETWEEN b.date_time - INTERVAL '1 day' AND b.date_time",
			"in [-24h0m0s, 0s]"},
	} {
		job, err := Build("v", bindSQL(t, cat, c.q), &anyEndpoints{cat: cat}, Options{Parallelism: 2})
		if err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		if !strings.Contains(job.Explain, c.want) {
			t.Fatalf("%s:\n%s\nwant a line with: %s", c.q, job.Explain, c.want)
		}
	}
	for _, q := range []string{
		// One bound only: rows of one side could match forever.
		"SELECT * FROM bid b JOIN ask a ON b.auction = a.auction AND a.date_time >= b.date_time",
		// No watermark on one side.
		"SELECT * FROM bid b JOIN plain a ON b.auction = a.auction AND a.date_time BETWEEN b.date_time AND b.date_time + INTERVAL '1' SECOND",
		// A changelog with updates on one side.
		"SELECT * FROM bid b JOIN keyed a ON b.auction = a.auction AND a.date_time BETWEEN b.date_time AND b.date_time + INTERVAL '1' SECOND",
		// Months have no fixed length.
		"SELECT * FROM bid b JOIN ask a ON b.auction = a.auction AND a.date_time BETWEEN b.date_time AND b.date_time + INTERVAL '1 month'",
		// A computed time is not the event time.
		"SELECT * FROM (SELECT date_time + INTERVAL '1' SECOND AS t, auction FROM bid) b JOIN ask a ON b.auction = a.auction AND a.date_time BETWEEN b.t AND b.t + INTERVAL '1' SECOND",
	} {
		job, err := Build("v", bindSQL(t, cat, q), &anyEndpoints{cat: cat}, Options{Parallelism: 2})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if strings.Contains(job.Explain, "IntervalJoin") || !strings.Contains(job.Explain, "Join on") {
			t.Fatalf("%s: want a regular join:\n%s", q, job.Explain)
		}
	}
}
