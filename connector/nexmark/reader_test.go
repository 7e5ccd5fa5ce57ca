package nexmark

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// TestResume checks invariant event-purity through the Reader: reading
// from any position gives exactly the rows of a straight run at or after
// that position, and from a position a straight run returned, the same
// transactions.
func TestResume(t *testing.T) {
	cfg := testConfig(5, 30_000)
	cfg.ChunkRows = 500
	for _, tb := range []Table{Person, Auction, Bid} {
		straight := readAll(t, tb, cfg)
		r, err := NewReader(tb, cfg)
		if err != nil {
			t.Fatal(err)
		}
		// The transaction boundaries of a straight run.
		var bounds []uint64
		var chunks []string
		for pos := uint64(0); ; {
			c, next, _ := r.Next(pos)
			if c == nil {
				break
			}
			bounds = append(bounds, pos)
			chunks = append(chunks, c.String())
			pos = next
		}
		for _, from := range []uint64{1, 4, 49, 50, 51, 12_345, 29_999, 30_000, 40_000} {
			r2, err := NewReader(tb, cfg)
			if err != nil {
				t.Fatal(err)
			}
			var got []types.Row
			for pos := from; ; {
				c, next, _ := r2.Next(pos)
				if c == nil {
					break
				}
				for i := range c.Len() {
					got = append(got, c.Row(i))
				}
				pos = next
			}
			var want []types.Row
			for _, row := range straight {
				if eventOf(tb, row) >= from {
					want = append(want, row)
				}
			}
			if !rowsEqual(got, want) {
				t.Fatalf("%s from %d: %d rows, straight run has %d after it (or they differ)", tb, from, len(got), len(want))
			}
		}
		// Replaying from a recorded boundary repeats the same transactions.
		for i := len(bounds) / 2; i < len(bounds); i++ {
			c, _, _ := r.Next(bounds[i])
			if c.String() != chunks[i] {
				t.Fatalf("%s: transaction at %d differs on replay", tb, bounds[i])
			}
		}
	}
}

func TestBoundedAndChunks(t *testing.T) {
	cfg := testConfig(1, 1000)
	cfg.ChunkRows = 100
	r, err := NewReader(Bid, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// 920 bids in chunks of at most 100; a chunk cut by ChunkRows ends
	// right after its last bid, the last one at Events.
	type step struct {
		rows       int
		pos, next  uint64
		first, end uint64
	}
	var steps []step
	pos := uint64(0)
	for {
		c, next, err := r.Next(pos)
		if err != nil {
			t.Fatal(err)
		}
		if c == nil {
			break
		}
		steps = append(steps, step{rows: c.Len(), pos: pos, next: next,
			first: eventOf(Bid, c.Row(0)), end: eventOf(Bid, c.Row(c.Len()-1)) + 1})
		pos = next
	}
	if len(steps) != 10 || pos != 1000 {
		t.Fatalf("%d chunks ending at %d: %+v", len(steps), pos, steps)
	}
	for i, s := range steps {
		if i < 9 && (s.rows != 100 || s.next != s.end) || i == 9 && (s.rows != 20 || s.next != 1000) {
			t.Fatalf("chunk %d: %+v", i, s)
		}
	}
	if steps[0].first != 4 || steps[1].first != 112 {
		t.Fatalf("first bids at %d and %d, want 4 and 112", steps[0].first, steps[1].first)
	}
	// Past the end: nil, position kept.
	if r.Exhausted(999) || !r.Exhausted(1000) {
		t.Fatal("Exhausted: wrong at the end")
	}
	people, _ := NewReader(Person, cfg)
	if !people.Exhausted(951) || people.Exhausted(950) {
		t.Fatal("Exhausted: the last person is event 950")
	}
	for _, p := range []uint64{1000, 5000} {
		if c, next, err := r.Next(p); c != nil || next != p || err != nil {
			t.Fatalf("Next(%d) past the end = %v, %d, %v", p, c, next, err)
		}
	}
}

// fakeClock is a wall clock tests move by hand.
type fakeClock struct{ now time.Time }

func (f *fakeClock) Now() time.Time { return f.now }

func TestRateLimit(t *testing.T) {
	clock := &fakeClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	t0 := clock.now
	cfg := testConfig(9, 0)
	cfg.Rate = 1000 // one event per ms; a transaction spans 10 events
	cfg.Now = clock.Now
	bids, err := NewReader(Bid, cfg)
	if err != nil {
		t.Fatal(err)
	}
	at := func(ms int) { clock.now = t0.Add(time.Duration(ms) * time.Millisecond) }
	expect := func(r *Reader, pos uint64, rows int, next uint64) {
		t.Helper()
		c, n, err := r.Next(pos)
		if err != nil {
			t.Fatal(err)
		}
		if rows == 0 {
			if c != nil || n != pos {
				t.Fatalf("at %v Next(%d) = %d rows, %d; want nothing yet", clock.now.Sub(t0), pos, c.Len(), n)
			}
			return
		}
		if c == nil || c.Len() != rows || n != next {
			t.Fatalf("at %v Next(%d) = %v, %d; want %d rows, %d", clock.now.Sub(t0), pos, c, n, rows, next)
		}
	}
	// The first call anchors event 0 at t0. The first transaction holds
	// the bids among events [4, 14), due when event 13 is: t0+13ms.
	at(0)
	expect(bids, 0, 0, 0)
	at(12)
	expect(bids, 0, 0, 0)
	at(13)
	expect(bids, 0, 10, 14)
	expect(bids, 14, 0, 0) // events [14, 24) are due at 23 ms
	at(23)
	expect(bids, 14, 10, 24)
	expect(bids, 24, 0, 0)
	// A slow consumer is never held back: at 200 ms, everything up to
	// event 200 is ready at once (the bids of [194, 204) are 194 to 199,
	// due at 199 ms).
	at(200)
	pos := uint64(24)
	for pos < 204 {
		c, next, _ := bids.Next(pos)
		if c == nil {
			t.Fatalf("nothing at %d though overdue", pos)
		}
		pos = next
	}
	if pos != 204 {
		t.Fatalf("caught up to %d, want 204", pos)
	}
	expect(bids, pos, 0, 0) // [204, 214) is due at 213 ms
	// A replay from an earlier position is overdue and served at once,
	// with the same content.
	c1, _, _ := bids.Next(14)
	clock2 := &fakeClock{now: t0}
	cfg2 := cfg
	cfg2.Now = clock2.Now
	r2, _ := NewReader(Bid, cfg2)
	r2.Next(0) // anchors r2 at its own first call
	clock2.now = t0.Add(time.Hour)
	c2, _, _ := r2.Next(14)
	if c1 == nil || c2 == nil || c1.String() != c2.String() {
		t.Fatal("paced transactions differ between readers")
	}

	// A sparse table: each person transaction spans 10 event numbers and
	// holds at most one person; the one at event 50 is due at 50 ms.
	clock.now = t0
	people, _ := NewReader(Person, cfg)
	expect(people, 0, 1, 10) // event 0 is the anchor, due at once
	expect(people, 10, 0, 0)
	at(49)
	expect(people, 10, 0, 0)
	at(50)
	expect(people, 10, 1, 60)
}

func TestOptions(t *testing.T) {
	o, err := ParseOptions(map[string]string{
		"connector": "nexmark", "nexmark.table": "Bid", "events": "1000000", "rate": "100000", "seed": "42",
		"event.rate": "5000", "base.time": "2020-01-02 03:04:05.678", "chunk.rows": "256",
		"hot.auction.ratio": "3", "hot.seller.ratio": "5", "hot.bidder.ratio": "6", "active.people": "77",
		"in.flight.auctions": "88", "person.size": "210", "auction.size": "520", "bid.size": "110",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Seed: 42, Events: 1_000_000, Rate: 100_000, EventRate: 5000,
		BaseTime: time.Date(2020, 1, 2, 3, 4, 5, 678_000_000, time.UTC), ChunkRows: 256,
		HotAuctionRatio: 3, HotSellersRatio: 5, HotBiddersRatio: 6, ActivePeople: 77, InFlightAuctions: 88,
		PersonSize: 210, AuctionSize: 520, BidSize: 110}
	if o.Table != Bid || !o.Config.BaseTime.Equal(want.BaseTime) {
		t.Fatalf("table %s, base time %v", o.Table, o.Config.BaseTime)
	}
	o.Config.BaseTime = want.BaseTime
	if !reflect.DeepEqual(o.Config, want) {
		t.Fatalf("config\n%+v\nwant\n%+v", o.Config, want)
	}
	for _, c := range []struct {
		in  string
		sec time.Time
	}{
		{"1436918400000", DefaultBaseTime},
		{"2015-07-15T00:00:00Z", DefaultBaseTime},
		{"2015-07-15", DefaultBaseTime},
		{"2015-07-15T02:00:00+02:00", DefaultBaseTime},
	} {
		o, err := ParseOptions(map[string]string{"nexmark.table": "person", "base.time": c.in})
		if err != nil || !o.Config.BaseTime.Equal(c.sec) {
			t.Errorf("base.time %q = %v, %v", c.in, o.Config.BaseTime, err)
		}
	}
	// Only the table is required.
	o, err = ParseOptions(map[string]string{"nexmark.table": "auction"})
	if err != nil || o.Table != Auction || o.Config.Events != 0 || o.Config.Rate != 0 {
		t.Fatalf("minimal options: %+v, %v", o, err)
	}

	for _, c := range []struct {
		opts map[string]string
		want string // a part of the message
	}{
		{map[string]string{"events": "10"}, `"nexmark.table" is required`},
		{map[string]string{"nexmark.table": "bids"}, `option "nexmark.table": "bids" is not one of person, auction, bid`},
		{map[string]string{"nexmark.table": "bid", "connector": "datagen"}, `option "connector": "datagen" is not nexmark`},
		{map[string]string{"nexmark.table": "bid", "ratee": "1"}, `unknown option "ratee"`},
		{map[string]string{"nexmark.table": "bid", "rate": "fast"}, `option "rate": "fast" is not a whole number`},
		{map[string]string{"nexmark.table": "bid", "events": "-1"}, `option "events": "-1" is not a whole number`},
		{map[string]string{"nexmark.table": "bid", "events": "99999999999999999999"}, `option "events"`},
		{map[string]string{"nexmark.table": "bid", "events": "2305843009213693953"}, `option "events": "2305843009213693953" is above the limit`},
		{map[string]string{"nexmark.table": "bid", "seed": "1.5"}, `option "seed"`},
		{map[string]string{"nexmark.table": "bid", "chunk.rows": "0"}, `option "chunk.rows": "0" is not a whole number >= 1`},
		{map[string]string{"nexmark.table": "bid", "hot.auction.ratio": "-2"}, `option "hot.auction.ratio"`},
		{map[string]string{"nexmark.table": "bid", "base.time": "yesterday"}, `option "base.time": "yesterday" is not a time`},
		{map[string]string{"nexmark.table": "bid", "base.time": "99999999999999999"}, `option "base.time": "99999999999999999" is out of the TIMESTAMP range`},
	} {
		_, err := ParseOptions(c.opts)
		if err == nil || !errors.Is(err, base.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseOptions(%v) = %v, want an invalid-argument error with %q", c.opts, err, c.want)
		}
	}

	r, err := Open(map[string]string{"connector": "nexmark", "nexmark.table": "person", "events": "100"})
	if err != nil || r.Table() != Person || r.Config().Events != 100 {
		t.Fatalf("Open: %v", err)
	}
	if _, err := NewReader("people", Config{}); !errors.Is(err, base.ErrInvalidArgument) {
		t.Fatalf("NewReader of an unknown table: %v", err)
	}
	if _, err := NewReader(Bid, Config{ActivePeople: -1}); !errors.Is(err, base.ErrInvalidArgument) || !strings.Contains(err.Error(), "ActivePeople") {
		t.Fatalf("NewReader with a negative field: %v", err)
	}
}

func TestSchemas(t *testing.T) {
	names := func(s Schema) string {
		var out []string
		for _, c := range s.Columns {
			out = append(out, c.Name+" "+c.Type.String())
		}
		return strings.Join(out, ", ")
	}
	for _, c := range []struct {
		s    Schema
		cols string
		pk   string
	}{
		{PersonSchema, "id BIGINT, name VARCHAR, email_address VARCHAR, credit_card VARCHAR, city VARCHAR, state VARCHAR, date_time TIMESTAMP(3), extra VARCHAR", "id"},
		{AuctionSchema, "id BIGINT, item_name VARCHAR, description VARCHAR, initial_bid BIGINT, reserve BIGINT, date_time TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra VARCHAR", "id"},
		{BidSchema, "auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, date_time TIMESTAMP(3), extra VARCHAR", ""},
	} {
		if got := names(c.s); got != c.cols {
			t.Errorf("%s columns: %s", c.s.Table, got)
		}
		if got := strings.Join(c.s.PrimaryKey, ","); got != c.pk {
			t.Errorf("%s key: %q", c.s.Table, got)
		}
		if c.s.Table.Schema().Table != c.s.Table {
			t.Errorf("%s: Schema() mismatch", c.s.Table)
		}
		if err := c.s.Check(nil); err != nil {
			t.Errorf("%s: Check(nil): %v", c.s.Table, err)
		}
		if err := c.s.Check(c.s.Columns); err != nil {
			t.Errorf("%s: Check(own columns): %v", c.s.Table, err)
		}
	}
	cols := append([]catalog.Column(nil), BidSchema.Columns...)
	cols[2].Type = types.Int32
	for _, c := range []struct {
		cols []catalog.Column
		want string
	}{
		{cols, `nexmark table bid: column 3 is "price" INTEGER, want "price" BIGINT`},
		{BidSchema.Columns[:6], `nexmark table bid: column "extra" (VARCHAR) is missing`},
		{append(append([]catalog.Column(nil), BidSchema.Columns...), catalog.Column{Name: "x", Type: types.Int64}), `column "x" is not one of the table's`},
	} {
		if err := BidSchema.Check(c.cols); !errors.Is(err, base.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check: %v, want %q", err, c.want)
		}
	}
}
