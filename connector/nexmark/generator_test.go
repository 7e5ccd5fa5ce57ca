package nexmark

import (
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
)

// testConfig makes event n's date_time n milliseconds after 1970, so that
// a row's date_time tells its event number.
func testConfig(seed, events uint64) Config {
	return Config{Seed: seed, Events: events, EventRate: 1000, BaseTime: time.UnixMilli(0).UTC()}
}

// eventOf returns the event number of a row read under testConfig.
func eventOf(t Table, row types.Row) uint64 {
	col := map[Table]int{Person: personDateTime, Auction: auctionDateTime, Bid: bidDateTime}[t]
	return uint64(row[col].Micros() / 1000)
}

// readAll reads table t from pos 0 until Next returns nil, checking the
// chunk shapes, and returns every row.
func readAll(t *testing.T, tb Table, cfg Config) []types.Row {
	t.Helper()
	r, err := NewReader(tb, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var rows []types.Row
	var pos uint64
	for {
		c, next, err := r.Next(pos)
		if err != nil {
			t.Fatal(err)
		}
		if c == nil {
			if next != pos {
				t.Fatalf("nil chunk at %d moved the position to %d", pos, next)
			}
			return rows
		}
		if next <= pos || c.Len() == 0 || c.Len() > r.Config().ChunkRows {
			t.Fatalf("Next(%d) gave %d rows and position %d", pos, c.Len(), next)
		}
		if got := c.Types(); !slices.Equal(got, tb.Schema().Types()) {
			t.Fatalf("chunk types %v, want %v", got, tb.Schema().Types())
		}
		for i := range c.Len() {
			if c.Kind(i) != types.Insert {
				t.Fatalf("row kind %v", c.Kind(i))
			}
			row := c.Row(i)
			if n := eventOf(tb, row); n < pos || n >= next {
				t.Fatalf("Next(%d) -> %d returned event %d", pos, next, n)
			}
			rows = append(rows, row)
		}
		pos = next
	}
}

func TestInterleavingAndProportions(t *testing.T) {
	// Event numbering alone: 1 person, 3 auctions, 46 bids per 50, in
	// that order.
	for n := range uint64(5000) {
		want := Bid
		switch n % 50 {
		case 0:
			want = Person
		case 1, 2, 3:
			want = Auction
		}
		if got := TableOf(n); got != want {
			t.Fatalf("TableOf(%d) = %s, want %s", n, got, want)
		}
		for _, tb := range []Table{Person, Auction, Bid} {
			m := nextOf(tb, n)
			if m < n || TableOf(m) != tb {
				t.Fatalf("nextOf(%s, %d) = %d (a %s)", tb, n, m, TableOf(m))
			}
			for k := n; k < m; k++ {
				if TableOf(k) == tb {
					t.Fatalf("nextOf(%s, %d) = %d skips %d", tb, n, m, k)
				}
			}
		}
	}
	// Through the Readers: 10,000 events give exactly 200, 600 and 9,200
	// rows, each at the event numbers of its table, every number once.
	const events = 10_000
	cfg := testConfig(7, events)
	cfg.ChunkRows = 333
	seen := make([]Table, events)
	want := map[Table]int{Person: 200, Auction: 600, Bid: 9200}
	for _, tb := range []Table{Person, Auction, Bid} {
		rows := readAll(t, tb, cfg)
		if len(rows) != want[tb] {
			t.Fatalf("%s: %d rows, want %d", tb, len(rows), want[tb])
		}
		for _, row := range rows {
			n := eventOf(tb, row)
			if seen[n] != "" || TableOf(n) != tb {
				t.Fatalf("%s row at event %d (seen as %q, belongs to %s)", tb, n, seen[n], TableOf(n))
			}
			seen[n] = tb
		}
	}
	for n, tb := range seen {
		if tb == "" {
			t.Fatalf("event %d read by no table", n)
		}
	}
}

func TestIDsAndReferences(t *testing.T) {
	const events = 200_000
	cfg := testConfig(3, events)
	people := readAll(t, Person, cfg)
	auctions := readAll(t, Auction, cfg)
	bids := readAll(t, Bid, cfg)

	// Person and auction ids count up by one from 1000 in event order.
	for i, p := range people {
		if id := p[personID].Int64(); id != FirstPersonID+int64(i) {
			t.Fatalf("person %d has id %d", i, id)
		}
	}
	for i, a := range auctions {
		if id := a[auctionID].Int64(); id != FirstAuctionID+int64(i) {
			t.Fatalf("auction %d has id %d", i, id)
		}
	}
	// lastPerson/lastAuction: the highest id generated at or before an
	// event, from the rows themselves.
	lastPerson := func(n uint64) int64 { return FirstPersonID + int64(n/50) }
	lastAuction := func(n uint64) int64 { return FirstAuctionID + int64(n/50)*3 + int64(min(n%50, 3)) - 1 }
	if lastAuction(4) != auctions[2][auctionID].Int64() || lastPerson(120) != people[2][personID].Int64() {
		t.Fatal("lastPerson/lastAuction disagree with the rows")
	}

	hotSeller, categories := 0, map[int64]int{}
	var lengthSum float64
	for _, a := range auctions {
		n := eventOf(Auction, a)
		seller := a[auctionSeller].Int64()
		// A seller is an existing person, or one at most 10 ids ahead
		// (the reference's PERSON_ID_LEAD), among the 1000 most recent.
		if seller < FirstPersonID || seller > lastPerson(n)+personIDLead || seller < lastPerson(n)-DefaultActivePeople-1 {
			t.Fatalf("auction at event %d: seller %d, last person %d", n, seller, lastPerson(n))
		}
		if (seller-FirstPersonID)%hotBatch == 0 {
			hotSeller++
		}
		cat := a[auctionCategory].Int64()
		categories[cat]++
		initial, reserve := a[auctionInitialBid].Int64(), a[auctionReserve].Int64()
		if initial < 100 || reserve <= initial {
			t.Fatalf("auction at event %d: initial bid %d, reserve %d", n, initial, reserve)
		}
		dt, exp := a[auctionDateTime].Micros(), a[auctionExpires].Micros()
		if exp <= dt {
			t.Fatalf("auction at event %d expires at %d, before its time %d", n, exp, dt)
		}
		lengthSum += float64(exp-dt) / 1000
	}
	if len(categories) != numCategories {
		t.Fatalf("categories %v", categories)
	}
	for c, k := range categories {
		if c < FirstCategoryID || c >= FirstCategoryID+numCategories || math.Abs(float64(k)/float64(len(auctions))-0.2) > 0.02 {
			t.Fatalf("category %d: %d of %d auctions", c, k, len(auctions))
		}
	}
	// Hot sellers: 3/4 of auctions, plus the random ones that happen to
	// be first of a batch of 100.
	if f := float64(hotSeller) / float64(len(auctions)); f < 0.74 || f > 0.77 {
		t.Fatalf("hot-seller share %.3f, want about 0.75", f)
	}
	// An auction lasts on average as long as 100 more auctions take to
	// come: 1666 events, 1.666 s at 1000 events/s.
	if mean := lengthSum / float64(len(auctions)); math.Abs(mean-1666)/1666 > 0.03 {
		t.Fatalf("mean auction length %.0f ms, want about 1666", mean)
	}

	hotAuction, hotBidder, hotChannel := 0, 0, 0
	channels := map[string]string{}
	var logPrices []float64
	for _, b := range bids {
		n := eventOf(Bid, b)
		auction, bidder := b[bidAuction].Int64(), b[bidBidder].Int64()
		la := lastAuction(n)
		if auction < FirstAuctionID || auction > la+auctionIDLead || auction < la-DefaultInFlightAuctions-hotBatch {
			t.Fatalf("bid at event %d: auction %d, last auction %d", n, auction, la)
		}
		if bidder < FirstPersonID || bidder > lastPerson(n)+personIDLead || bidder < lastPerson(n)-DefaultActivePeople-1 {
			t.Fatalf("bid at event %d: bidder %d, last person %d", n, bidder, lastPerson(n))
		}
		if (auction-FirstAuctionID)%hotBatch == 0 {
			hotAuction++
		}
		if (bidder-FirstPersonID)%hotBatch == 1 {
			hotBidder++
		}
		price := b[bidPrice].Int64()
		if price < 100 || price > 100_000_000 {
			t.Fatalf("bid at event %d: price %d", n, price)
		}
		logPrices = append(logPrices, math.Log10(float64(price)/100))
		ch, url := b[bidChannel].Str(), b[bidURL].Str()
		if slices.Contains(hotChannels[:], ch) {
			hotChannel++
		}
		if prev, ok := channels[ch]; ok && prev != url {
			t.Fatalf("channel %s has urls %s and %s", ch, prev, url)
		}
		channels[ch] = url
		if len(url) < len("https://www.nexmark.com/a/b/c/item.htm?query=1") {
			t.Fatalf("url %q", url)
		}
	}
	nb := float64(len(bids))
	if f := float64(hotAuction) / nb; f < 0.49 || f > 0.53 {
		t.Fatalf("hot-auction share %.3f, want about 0.5", f)
	}
	if f := float64(hotBidder) / nb; f < 0.74 || f > 0.77 {
		t.Fatalf("hot-bidder share %.3f, want about 0.75", f)
	}
	if f := float64(hotChannel) / nb; f < 0.49 || f > 0.51 {
		t.Fatalf("hot-channel share %.3f, want about 0.5", f)
	}
	if len(channels) < 5000 {
		t.Fatalf("only %d channels", len(channels))
	}
	// Prices are log-uniform over 1.00 to 1,000,000.00: log10(price/100)
	// is uniform on [0, 6): each decade holds a sixth, the median is 1000.
	sort.Float64s(logPrices)
	if med := logPrices[len(logPrices)/2]; math.Abs(med-3) > 0.05 {
		t.Fatalf("median log price %.3f, want about 3", med)
	}
	for d := range 6 {
		lo := sort.SearchFloat64s(logPrices, float64(d))
		hi := sort.SearchFloat64s(logPrices, float64(d+1))
		if f := float64(hi-lo) / nb; math.Abs(f-1.0/6) > 0.01 {
			t.Fatalf("decade %d holds %.3f of prices", d, f)
		}
	}
}

// TestRecordSizes checks the padding: with the reference's measure of a
// record (8 bytes per number, the length of each string; bids count only
// their numbers and extra), records average 200, 500 and 100 bytes.
func TestRecordSizes(t *testing.T) {
	cfg := testConfig(11, 100_000)
	size := map[Table]func(types.Row) int{
		Person: func(r types.Row) int {
			return 8 + len(r[personName].Str()) + len(r[personEmail].Str()) + len(r[personCreditCard].Str()) +
				len(r[personCity].Str()) + len(r[personState].Str()) + len(r[personExtra].Str())
		},
		Auction: func(r types.Row) int {
			return 8 + len(r[auctionItemName].Str()) + len(r[auctionDescription].Str()) + 5*8 + len(r[auctionExtra].Str())
		},
		Bid: func(r types.Row) int { return 4*8 + len(r[bidExtra].Str()) },
	}
	want := map[Table]float64{Person: DefaultPersonSize, Auction: DefaultAuctionSize, Bid: DefaultBidSize}
	for _, tb := range []Table{Person, Auction, Bid} {
		rows := readAll(t, tb, cfg)
		total := 0
		for _, r := range rows {
			total += size[tb](r)
		}
		avg := float64(total) / float64(len(rows))
		t.Logf("%s: %d rows, average size %.1f bytes", tb, len(rows), avg)
		if math.Abs(avg-want[tb])/want[tb] > 0.02 {
			t.Errorf("%s: average size %.1f, want %v within 2%%", tb, avg, want[tb])
		}
	}
	// The strings look like the reference's.
	_, p := mustGen(t, cfg).Row(50)
	if email := p[personEmail].Str(); !strings.HasSuffix(email, ".com") || !strings.Contains(email, "@") {
		t.Errorf("email %q", email)
	}
	if cc := p[personCreditCard].Str(); len(cc) != 19 || cc[4] != ' ' || cc[9] != ' ' || cc[14] != ' ' {
		t.Errorf("credit card %q", cc)
	}
	for _, r := range readAll(t, Person, testConfig(0, 5000)) {
		for _, s := range []string{r[personEmail].Str(), r[personName].Str(), r[personCity].Str()} {
			if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
				t.Fatalf("untrimmed or empty string %q", s)
			}
		}
	}
}

func mustGen(t *testing.T, cfg Config) *Generator {
	t.Helper()
	g, err := NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestTimestamps(t *testing.T) {
	base := time.Date(2024, 1, 2, 3, 4, 5, 678_900_000, time.UTC)
	g := mustGen(t, Config{EventRate: 3, BaseTime: base})
	baseMs := base.UnixMilli()
	for _, c := range []struct {
		n    uint64
		want int64
	}{{0, 0}, {1, 333}, {2, 666}, {3, 1000}, {4, 1333}, {300, 100_000}} {
		if got := g.TimestampMillis(c.n) - baseMs; got != c.want {
			t.Errorf("event %d at +%d ms, want +%d", c.n, got, c.want)
		}
	}
	// The default event rate is 10,000 events/s from 2015-07-15.
	g = mustGen(t, Config{})
	if got, want := g.TimestampMillis(25_000), DefaultBaseTime.UnixMilli()+2500; got != want {
		t.Errorf("default: event 25000 at %d, want %d", got, want)
	}
	// Rate sets the event rate when EventRate is not given.
	g = mustGen(t, Config{Rate: 100})
	if got, want := g.TimestampMillis(7), DefaultBaseTime.UnixMilli()+70; got != want {
		t.Errorf("rate 100: event 7 at %d, want %d", got, want)
	}
	_, row := g.Row(7)
	if got := row[bidDateTime].Micros(); got != (DefaultBaseTime.UnixMilli()+70)*1000 {
		t.Errorf("bid date_time %d µs", got)
	}
}

func TestDeterminism(t *testing.T) {
	cfg := testConfig(42, 20_000)
	for _, tb := range []Table{Person, Auction, Bid} {
		a, b := readAll(t, tb, cfg), readAll(t, tb, cfg)
		if !rowsEqual(a, b) {
			t.Fatalf("%s: two runs with seed 42 differ", tb)
		}
		other := cfg
		other.Seed = 43
		c := readAll(t, tb, other)
		if len(c) != len(a) {
			t.Fatalf("%s: seed 43 gives %d rows, seed 42 %d", tb, len(c), len(a))
		}
		differ := 0
		for i := range a {
			if !rowsEqual(a[i:i+1], c[i:i+1]) {
				differ++
			}
		}
		if differ < len(a)*9/10 {
			t.Fatalf("%s: seeds 42 and 43 differ in only %d of %d rows", tb, differ, len(a))
		}
		// Generator.Row gives the same row as the Reader.
		g := mustGen(t, cfg)
		for _, i := range []int{0, 1, len(a) / 2, len(a) - 1} {
			n := eventOf(tb, a[i])
			gt, row := g.Row(n)
			if gt != tb || !rowsEqual([]types.Row{row}, a[i:i+1]) {
				t.Fatalf("%s: Row(%d) = %s %v, reader gave %v", tb, n, gt, row, a[i])
			}
		}
	}
}

func rowsEqual(a, b []types.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if !types.Equal(a[i][j], b[i][j]) {
				return false
			}
		}
	}
	return true
}
