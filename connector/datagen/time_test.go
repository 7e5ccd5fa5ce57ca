package datagen

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

func TestParseDuration(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"5 s", 5 * time.Second, ""},
		{"5s", 5 * time.Second, ""},
		{" 1 min ", time.Minute, ""},
		{"1m", time.Minute, ""},
		{"2 MINUTES", 2 * time.Minute, ""},
		{"500", 500 * time.Millisecond, ""},
		{"0", 0, ""},
		{"3 ms", 3 * time.Millisecond, ""},
		{"3 millis", 3 * time.Millisecond, ""},
		{"7µs", 7 * time.Microsecond, ""},
		{"7 micros", 7 * time.Microsecond, ""},
		{"9 ns", 9, ""},
		{"2 h", 2 * time.Hour, ""},
		{"2 hours", 2 * time.Hour, ""},
		{"1 d", 24 * time.Hour, ""},
		{"10 days", 240 * time.Hour, ""},
		{"4 secs", 4 * time.Second, ""},
		{"4 seconds", 4 * time.Second, ""},
		{"", 0, "is empty"},
		{"  ", 0, "is empty"},
		{"s", 0, "does not start with a whole number"},
		{"-1 s", 0, "does not start with a whole number"},
		{"1.5 s", 0, `has unit ".5 s"`},
		{"5 ds", 0, `has unit "ds"`},
		{"106752 d", 0, "is longer than"},
		{"99999999999999999999", 0, "is too long a number"},
	} {
		got, err := parseDuration(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("parseDuration(%q) = %v, %v; want an error with %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

// timeCols: default TIMESTAMP(3), TIMESTAMPTZ within 2 s, DATE within 3
// days, TIMESTAMP(0) with max-past below its unit, and an explicit range.
func timeCols(t *testing.T) ([]catalog.Column, map[string]string) {
	cols := []catalog.Column{
		{Name: "id", Type: types.Int64}, {Name: "ts", Type: mustType(t, "timestamp(3)")},
		{Name: "tz", Type: types.TimestampTZ}, {Name: "d", Type: types.Date},
		{Name: "sec", Type: mustType(t, "timestamp(0)")}, {Name: "old", Type: types.Timestamp},
	}
	return cols, map[string]string{"seed": "5", "rows-per-second": "1000",
		"fields.id.kind": "sequence", "fields.id.start": "0",
		"fields.tz.max-past": "2 s", "fields.d.max-past": "3 d", "fields.sec.max-past": "100 ms",
		"fields.old.min": "2001-01-01 00:00:00", "fields.old.max": "2001-01-02 00:00:00"}
}

// emitted is a row with the clock reading at which Next handed it out.
type emitted struct {
	row types.Row
	at  int64
}

// drive reads rows [from, to) of r (to at a transaction boundary),
// moving *clock on by 1 ms whenever Next has nothing due.
func drive(t *testing.T, r *Reader, clock *time.Time, from, to uint64) []emitted {
	t.Helper()
	var out []emitted
	for pos := from; pos < to; {
		c, next, err := r.Next(pos)
		if err != nil {
			t.Fatal(err)
		}
		if c == nil {
			*clock = clock.Add(time.Millisecond)
			continue
		}
		for i := range c.Len() {
			out = append(out, emitted{c.Row(i), clock.UnixMicro()})
		}
		pos = next
	}
	if uint64(len(out)) != to-from {
		t.Fatalf("read %d rows from %d, want up to %d", len(out), from, to)
	}
	return out
}

func openClock(t *testing.T, cols []catalog.Column, opts map[string]string, clock *time.Time) *Reader {
	t.Helper()
	cfg, err := ParseOptions(cols, opts)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Now = func() time.Time { return *clock }
	r, err := NewReader(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTimeColumnBounds checks each time column against its row's
// generation time, start + n/rate: within max-past before it, at the
// column's precision, never after the clock at which the row was handed
// out; the column without max-past never decreases; the explicit range
// is kept.
func TestTimeColumnBounds(t *testing.T) {
	cols, opts := timeCols(t)
	t0 := time.Date(2026, 3, 1, 23, 59, 58, 123_456_000, time.UTC)
	clock := t0
	r := openClock(t, cols, opts, &clock)
	rows := drive(t, r, &clock, 0, 5000)
	start := t0.UnixMicro()
	var prevTS int64
	spreadTZ, days := false, map[int32]bool{}
	for n, e := range rows {
		row := e.row
		gen := start + int64(n)*1000 // 1000 rows/s: 1 ms apart
		if row[0].Int64() != int64(n) {
			t.Fatalf("row %d: id %v", n, row[0])
		}
		if gen > e.at {
			t.Fatalf("row %d generated at %d, handed out earlier, at %d", n, gen, e.at)
		}
		ts := row[1].Micros()
		if ts != gen/1000*1000 || ts < prevTS {
			t.Fatalf("row %d: ts %d, want %d (its generation time at ms precision), not below %d", n, ts, gen/1000*1000, prevTS)
		}
		prevTS = ts
		tz := row[2].Micros()
		if tz > gen || tz < gen-2_000_000 {
			t.Fatalf("row %d: tz %d not within 2 s before %d", n, tz, gen)
		}
		spreadTZ = spreadTZ || tz < gen-1_000_000
		d := row[3].Date()
		if hi := int32(gen / microsPerDay); d > hi || d < hi-3 {
			t.Fatalf("row %d: date %d not within 3 days before day %d", n, d, hi)
		}
		days[d] = true
		// TIMESTAMP(0), max-past 100 ms: a whole second in [gen-100ms,
		// gen], else gen truncated to the second.
		sec := row[4].Micros()
		if sec%1_000_000 != 0 || sec > gen || (sec < gen-100_000 && sec != gen/1_000_000*1_000_000) {
			t.Fatalf("row %d: timestamp(0) %d for generation time %d", n, sec, gen)
		}
		lo := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro()
		if old := row[5].Micros(); old < lo || old > lo+86_400_000_000 {
			t.Fatalf("row %d: old %d outside its explicit range", n, old)
		}
	}
	// Generation times on 2026-03-01 and 03-02, 3 days back: 02-26 to 03-02.
	if !spreadTZ || len(days) != 5 {
		t.Fatalf("max-past values do not spread: tz reached below 1 s: %v; %d distinct dates, want 5", spreadTZ, len(days))
	}
	// The rows crossed midnight 1.9 s after t0: 2026-03-02 is there.
	if !days[int32(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC).Unix()/86400)] {
		t.Fatalf("dates %v miss the day the generation times reached", days)
	}
}

// TestTimeColumnWallClock reads a default time column with the real
// clock: every value lies between the clock readings before and after
// the reads, and they never decrease.
func TestTimeColumnWallClock(t *testing.T) {
	cols := []catalog.Column{{Name: "ts", Type: types.Timestamp}, {Name: "d", Type: types.Date}}
	before := time.Now()
	r, err := Open(cols, map[string]string{"number-of-rows": "3000", "rows-per-second": "100000"})
	if err != nil {
		t.Fatal(err)
	}
	var rows []types.Row
	for pos := uint64(0); !r.Exhausted(pos); {
		c, next, err := r.Next(pos)
		if err != nil {
			t.Fatal(err)
		}
		if c == nil {
			time.Sleep(time.Millisecond)
			continue
		}
		for i := range c.Len() {
			rows = append(rows, c.Row(i))
		}
		pos = next
	}
	after := time.Now()
	prev := before.UnixMicro()
	for n, row := range rows {
		ts := row[0].Micros()
		if ts < prev || ts > after.UnixMicro() {
			t.Fatalf("row %d: ts %v, want from %v (or the previous row's) to %v", n, row[0], before, after)
		}
		prev = ts
		if d := row[1].Date(); d < int32(before.Unix()/86400) || d > int32(after.Unix()/86400) {
			t.Fatalf("row %d: date %v not today", n, row[1])
		}
	}
	if len(rows) != 3000 {
		t.Fatalf("%d rows", len(rows))
	}
}

// TestReplayFromCheckpoint takes a Reader's state at a position, reads
// on, and replays from that position with the state restored: in the
// same Reader and in a new one (a new process) whose clock is an hour
// later, the rows are the first run's. Without the state, the new Reader
// starts its own time.
func TestReplayFromCheckpoint(t *testing.T) {
	cols, opts := timeCols(t)
	clock := time.Date(2026, 7, 1, 8, 0, 0, 0, time.UTC)
	r := openClock(t, cols, opts, &clock)
	first := drive(t, r, &clock, 0, 1000)
	state := mustState(t, r)
	const p = 1000
	more := drive(t, r, &clock, p, 3000)
	rowsOf := func(es []emitted) []types.Row {
		out := make([]types.Row, len(es))
		for i, e := range es {
			out[i] = e.row
		}
		return out
	}

	// In the same Reader (a restart in the process).
	if err := r.RestoreState(state); err != nil {
		t.Fatal(err)
	}
	if again := drive(t, r, &clock, p, 3000); !rowsEqual(rowsOf(again), rowsOf(more)) {
		t.Fatal("replay in the same Reader differs")
	}
	// In a new Reader an hour later: the same rows (rate limiting starts
	// again from the restore, at the clock: the rows keep their times,
	// an hour behind it).
	later := clock.Add(time.Hour)
	clock2 := later
	r2 := openClock(t, cols, opts, &clock2)
	if err := r2.RestoreState(state); err != nil {
		t.Fatal(err)
	}
	again := drive(t, r2, &clock2, p, 3000)
	if !rowsEqual(rowsOf(again), rowsOf(more)) {
		t.Fatal("replay in a new Reader differs")
	}
	if got, want := r2.Row(5).String(), first[5].row.String(); got != want {
		t.Fatalf("Row(5) after restore = %s, want %s", got, want)
	}
	// Its own state is the restored one.
	if s2 := mustState(t, r2); string(s2) != string(state) {
		t.Fatalf("state after restore %x, want %x", s2, state)
	}

	// A clock behind the restored times (a machine whose clock is late)
	// holds the rows back until their generation times.
	clock4 := time.Date(2026, 7, 1, 7, 59, 59, 0, time.UTC)
	r4 := openClock(t, cols, opts, &clock4)
	if err := r4.RestoreState(state); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 7, 1, 8, 0, 0, 0, time.UTC).UnixMicro()
	for i, e := range drive(t, r4, &clock4, p, p+500) {
		if gen := start + int64(p+i)*1000; e.at < gen {
			t.Fatalf("row %d generated at %d handed out at %d", p+i, gen, e.at)
		}
	}

	// Without state: a new start time, at the new Reader's first row.
	clock3 := later
	r3 := openClock(t, cols, opts, &clock3)
	if err := r3.RestoreState(nil); err != nil {
		t.Fatal(err)
	}
	fresh := drive(t, r3, &clock3, p, p+10)
	if ts := fresh[0].row[1].Micros(); ts != later.UnixMicro()/1000*1000 {
		t.Fatalf("fresh start: ts %d, want %d", ts, later.UnixMicro()/1000*1000)
	}
	// RestoreState(nil) on the first Reader forgets its start time too.
	if err := r.RestoreState(nil); err != nil {
		t.Fatal(err)
	}
	if s, err := r.SnapshotState(); s != nil || err != nil {
		t.Fatalf("state after RestoreState(nil): %x, %v", s, err)
	}
}

func TestStateErrors(t *testing.T) {
	cols, opts := timeCols(t)
	clock := time.Date(2026, 7, 1, 8, 0, 0, 0, time.UTC)
	r := openClock(t, cols, opts, &clock)
	if s, err := r.SnapshotState(); s != nil || err != nil {
		t.Fatalf("state before any row: %x, %v", s, err)
	}
	good := mustState(t, func() *Reader { drive(t, r, &clock, 0, 10); return r }())
	for _, bad := range [][]byte{{}, {2}, {1}, {1, 0x80}, {1, 5}, append(append([]byte{}, good...), 0)} {
		if err := r.RestoreState(bad); !errors.Is(err, base.ErrCorruption) {
			t.Errorf("RestoreState(%x) = %v, want a corruption error", bad, err)
		}
	}
	// A Reader without time columns keeps and needs nothing.
	plain, err := NewReader(Config{Columns: []catalog.Column{{Name: "x", Type: types.Int64}}})
	if err != nil {
		t.Fatal(err)
	}
	plain.Next(0)
	if s, err := plain.SnapshotState(); s != nil || err != nil {
		t.Fatalf("state without time columns: %x, %v", s, err)
	}
	if err := plain.RestoreState(good); err != nil {
		t.Fatalf("a Reader without time columns refused a state: %v", err)
	}
	// max-past on a DATE sequence is refused.
	_, err = ParseOptions([]catalog.Column{{Name: "d", Type: types.Date}},
		map[string]string{"fields.d.kind": "sequence", "fields.d.start": "2024-01-01", "fields.d.max-past": "1 d"})
	if err == nil || !strings.Contains(err.Error(), "fields.d.max-past applies to random columns, not to a sequence") {
		t.Fatalf("max-past on a sequence: %v", err)
	}
}
