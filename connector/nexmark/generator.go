package nexmark

import (
	"math/bits"
	"strconv"

	"github.com/stratadb/strata/internal/types"
)

// The fixed shape of the model (the reference's GeneratorConfig,
// PersonGenerator, AuctionGenerator and BidGenerator constants).
const (
	// Of every 50 consecutive events (an "epoch" in the reference's
	// words, unrelated to Strata's epochs), the first is a person, the
	// next three are auctions and the other 46 are bids.
	personProportion  = 1
	auctionProportion = 3
	bidProportion     = 46
	totalProportion   = personProportion + auctionProportion + bidProportion

	// FirstPersonID and FirstAuctionID are the ids of the first person
	// and the first auction; ids then grow by one per person or auction.
	FirstPersonID  = 1000
	FirstAuctionID = 1000
	// FirstCategoryID is the lowest category; there are numCategories.
	FirstCategoryID = 10
	numCategories   = 5

	// Random people and auctions may lie this many ids past the last one
	// generated (the reference's PERSON_ID_LEAD and AUCTION_ID_LEAD).
	personIDLead  = 10
	auctionIDLead = 10

	// Hot sellers, bidders and auctions are the first (bidders: second)
	// of each batch of this many ids.
	hotBatch = 100

	// A bid's channel is one of the hot channels with probability
	// 1 - 1/hotChannelsRatio, else one of numChannels others.
	hotChannelsRatio = 2
	numChannels      = 10_000
)

var hotChannels = [...]string{"Google", "Facebook", "Baidu", "Apple"}

var (
	usStates   = [...]string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	usCities   = [...]string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	firstNames = [...]string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames  = [...]string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	// personNames holds every "First Last" combination, so that a person's
	// name costs no allocation.
	personNames = func() []string {
		out := make([]string, 0, len(firstNames)*len(lastNames))
		for _, f := range firstNames {
			for _, l := range lastNames {
				out = append(out, f+" "+l)
			}
		}
		return out
	}()
)

// TableOf returns the table that event n belongs to: of each 50 events
// numbered 50k to 50k+49, the first is a person, the next three auctions
// and the rest bids.
func TableOf(n uint64) Table {
	switch r := n % totalProportion; {
	case r < personProportion:
		return Person
	case r < personProportion+auctionProportion:
		return Auction
	}
	return Bid
}

// nextOf returns the first event number >= n that belongs to table t.
func nextOf(t Table, n uint64) uint64 {
	r := n % totalProportion
	switch t {
	case Person:
		if r == 0 {
			return n
		}
		return n - r + totalProportion
	case Auction:
		switch {
		case r < personProportion:
			return n - r + personProportion
		case r < personProportion+auctionProportion:
			return n
		}
		return n - r + totalProportion + personProportion
	default:
		if r < personProportion+auctionProportion {
			return n - r + personProportion + auctionProportion
		}
		return n
	}
}

// lastPerson0 returns the base-0 id of the last person generated at or
// before event n (the reference's lastBase0PersonId).
func lastPerson0(n int64) int64 {
	epoch, off := n/totalProportion, n%totalProportion
	if off >= personProportion {
		off = personProportion - 1
	}
	return epoch*personProportion + off
}

// lastAuction0 returns the base-0 id of the last auction generated at or
// before event n (the reference's lastBase0AuctionId); -1 before the
// first auction.
func lastAuction0(n int64) int64 {
	epoch, off := n/totalProportion, n%totalProportion
	switch {
	case off < personProportion:
		epoch--
		off = auctionProportion - 1
	case off >= personProportion+auctionProportion:
		off = auctionProportion - 1
	default:
		off -= personProportion
	}
	return epoch*auctionProportion + off
}

// Generator computes Nexmark events into chunks. Event n's values depend
// only on the Config's content fields and n (invariant event-purity), so a
// Generator can produce any event without producing the ones before it.
// A Generator is safe for use by one goroutine at a time.
type Generator struct {
	cfg    Config
	mixed  uint64
	baseMs int64
	// hotURLs[i] is hot channel i's url; channelNames and channelURLs
	// hold the other channels, all computed from the seed.
	hotURLs      [len(hotChannels)]string
	channelNames []string
	channelURLs  []string
	// horizonEvents is how many events pass while numInFlightAuctions
	// auctions are generated, the reference's average auction length.
	horizonEvents int64

	buf   []byte    // the strings of the chunk being filled
	spans []strSpan // where each of them goes
}

type strSpan struct {
	col, row int32
	off, end int32
}

// NewGenerator returns a generator for cfg (zero fields take their
// defaults); the error wraps base.ErrInvalidArgument and names the field.
func NewGenerator(cfg Config) (*Generator, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	g := &Generator{cfg: cfg, mixed: seedMix(cfg.Seed), baseMs: cfg.BaseTime.UnixMilli()}
	g.horizonEvents = int64(cfg.InFlightAuctions) * totalProportion / auctionProportion
	// Channel urls: a separate stream per channel, keyed far away from
	// event numbers by setting the top bit.
	var b []byte
	for i := range hotChannels {
		r := eventRNG(g.mixed, 1<<63|uint64(numChannels+i))
		b = appendBaseURL(b[:0], &r)
		g.hotURLs[i] = string(b)
	}
	g.channelNames = make([]string, numChannels)
	g.channelURLs = make([]string, numChannels)
	for i := range numChannels {
		r := eventRNG(g.mixed, 1<<63|uint64(i))
		g.channelNames[i] = "channel-" + strconv.Itoa(i)
		b = appendBaseURL(b[:0], &r)
		if r.intn(10) > 0 {
			b = append(b, "&channel_id="...)
			id := int64(int32(bits.Reverse32(uint32(i))))
			b = strconv.AppendInt(b, max(id, -id), 10)
		}
		g.channelURLs[i] = string(b)
	}
	return g, nil
}

// Config returns the generator's configuration with defaults filled in.
func (g *Generator) Config() Config { return g.cfg }

// appendBaseURL appends a random item url of the reference's shape.
func appendBaseURL(b []byte, r *rng) []byte {
	b = append(b, "https://www.nexmark.com/"...)
	b = r.appendString(b, 5, '_')
	b = append(b, '/')
	b = r.appendString(b, 5, '_')
	b = append(b, '/')
	b = r.appendString(b, 5, '_')
	return append(b, "/item.htm?query=1"...)
}

// TimestampMillis returns event n's date_time in milliseconds since
// 1970-01-01 00:00:00: BaseTime + floor(n * 1e6 / EventRate) µs, truncated
// to the millisecond.
func (g *Generator) TimestampMillis(n uint64) int64 {
	hi, lo := bits.Mul64(n, 1_000_000)
	if hi >= g.cfg.EventRate {
		return types.MaxTimestamp / 1000
	}
	us, _ := bits.Div64(hi, lo, g.cfg.EventRate)
	ms := int64(us / 1000)
	if ms > types.MaxTimestamp/1000-g.baseMs {
		return types.MaxTimestamp / 1000
	}
	return g.baseMs + ms
}

// nextPerson0 draws a random person (base 0) among the ActivePeople most
// recent ones and personIDLead future ones.
func (g *Generator) nextPerson0(n int64, r *rng) int64 {
	people := lastPerson0(n) + 1
	active := min(people, int64(g.cfg.ActivePeople))
	return people - active + int64(r.intn(uint64(active+personIDLead)))
}

// nextAuction0 draws a random auction (base 0) among the
// InFlightAuctions most recent ones and auctionIDLead future ones.
func (g *Generator) nextAuction0(n int64, r *rng) int64 {
	hi := lastAuction0(n)
	lo := max(hi-int64(g.cfg.InFlightAuctions), 0)
	return lo + int64(r.intn(uint64(hi-lo+1+auctionIDLead)))
}

// str records that the bytes appended to g.buf since off are column col's
// value in row row; finish places them.
func (g *Generator) str(col, row, off int) {
	g.spans = append(g.spans, strSpan{col: int32(col), row: int32(row), off: int32(off), end: int32(len(g.buf))})
}

// finish copies the chunk's strings into one string and points every
// recorded value into it: one allocation per chunk instead of one per
// value. The values of a chunk thus share memory; keeping one alive keeps
// the chunk's whole string block alive. It then empties the buffers for
// the next chunk.
func (g *Generator) finish(c *types.Chunk) {
	if len(g.spans) > 0 {
		s := string(g.buf)
		for _, sp := range g.spans {
			c.Cols[sp.col].Strs[sp.row] = s[sp.off:sp.end]
		}
	}
	g.buf = g.buf[:0]
	g.spans = g.spans[:0]
}

// appendPerson appends event n, a person, to c (PersonSchema).
func (g *Generator) appendPerson(c *types.Chunk, n uint64) {
	r := eventRNG(g.mixed, n)
	row := c.Len()
	ts := g.TimestampMillis(n) * 1000
	name := personNames[r.intn(uint64(len(personNames)))]
	emailOff := len(g.buf)
	g.buf = r.appendString(g.buf, 7, ' ')
	g.buf = append(g.buf, '@')
	g.buf = r.appendString(g.buf, 5, ' ')
	g.buf = append(g.buf, ".com"...)
	g.str(personEmail, row, emailOff)
	emailLen := len(g.buf) - emailOff
	ccOff := len(g.buf)
	for i := range 4 {
		if i > 0 {
			g.buf = append(g.buf, ' ')
		}
		v := r.intn(10000)
		g.buf = append(g.buf, byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
	}
	g.str(personCreditCard, row, ccOff)
	city := usCities[r.intn(uint64(len(usCities)))]
	state := usStates[r.intn(uint64(len(usStates)))]
	size := 8 + len(name) + emailLen + (len(g.buf) - ccOff) + len(city) + len(state)
	extraOff := len(g.buf)
	g.buf = r.appendLetters(g.buf, r.extraLen(size, g.cfg.PersonSize))
	g.str(personExtra, row, extraOff)

	c.Kinds = append(c.Kinds, types.Insert)
	cols := c.Cols
	appendInt(&cols[personID], lastPerson0(int64(n))+FirstPersonID)
	appendStr(&cols[personName], name)
	appendStr(&cols[personEmail], "")
	appendStr(&cols[personCreditCard], "")
	appendStr(&cols[personCity], city)
	appendStr(&cols[personState], state)
	appendInt(&cols[personDateTime], ts)
	appendStr(&cols[personExtra], "")
}

// appendAuction appends event n, an auction, to c (AuctionSchema).
func (g *Generator) appendAuction(c *types.Chunk, n uint64) {
	r := eventRNG(g.mixed, n)
	row := c.Len()
	en := int64(n)
	tsMs := g.TimestampMillis(n)
	var seller int64
	if r.intn(uint64(g.cfg.HotSellersRatio)) > 0 {
		seller = lastPerson0(en) / hotBatch * hotBatch
	} else {
		seller = g.nextPerson0(en, &r)
	}
	category := FirstCategoryID + int64(r.intn(numCategories))
	initialBid := r.price()
	// The auction lasts on average as long as it takes to generate
	// InFlightAuctions more auctions: uniform in [1, 2*horizon].
	horizon := g.TimestampMillis(n+uint64(g.horizonEvents)) - tsMs
	expires := tsMs + 1 + int64(r.intn(uint64(max(2*horizon, 1))))
	nameOff := len(g.buf)
	g.buf = r.appendString(g.buf, 20, ' ')
	g.str(auctionItemName, row, nameOff)
	descOff := len(g.buf)
	g.buf = r.appendString(g.buf, 100, ' ')
	g.str(auctionDescription, row, descOff)
	reserve := initialBid + r.price()
	size := 8 + (len(g.buf) - nameOff) + 8 + 8 + 8 + 8 + 8
	extraOff := len(g.buf)
	g.buf = r.appendLetters(g.buf, r.extraLen(size, g.cfg.AuctionSize))
	g.str(auctionExtra, row, extraOff)

	c.Kinds = append(c.Kinds, types.Insert)
	cols := c.Cols
	appendInt(&cols[auctionID], lastAuction0(en)+FirstAuctionID)
	appendStr(&cols[auctionItemName], "")
	appendStr(&cols[auctionDescription], "")
	appendInt(&cols[auctionInitialBid], initialBid)
	appendInt(&cols[auctionReserve], reserve)
	appendInt(&cols[auctionDateTime], tsMs*1000)
	appendInt(&cols[auctionExpires], expires*1000)
	appendInt(&cols[auctionSeller], seller+FirstPersonID)
	appendInt(&cols[auctionCategory], category)
	appendStr(&cols[auctionExtra], "")
}

// appendBid appends event n, a bid, to c (BidSchema).
func (g *Generator) appendBid(c *types.Chunk, n uint64) {
	r := eventRNG(g.mixed, n)
	row := c.Len()
	en := int64(n)
	var auction int64
	if r.intn(uint64(g.cfg.HotAuctionRatio)) > 0 {
		auction = lastAuction0(en) / hotBatch * hotBatch
	} else {
		auction = g.nextAuction0(en, &r)
	}
	var bidder int64
	if r.intn(uint64(g.cfg.HotBiddersRatio)) > 0 {
		// The second of the batch, so that hot bidders are not hot
		// sellers.
		bidder = lastPerson0(en)/hotBatch*hotBatch + 1
	} else {
		bidder = g.nextPerson0(en, &r)
	}
	price := r.price()
	var channel, url string
	if r.intn(hotChannelsRatio) > 0 {
		i := r.intn(uint64(len(hotChannels)))
		channel, url = hotChannels[i], g.hotURLs[i]
	} else {
		i := r.intn(numChannels)
		channel, url = g.channelNames[i], g.channelURLs[i]
	}
	extraOff := len(g.buf)
	g.buf = r.appendLetters(g.buf, r.extraLen(8+8+8+8, g.cfg.BidSize))
	g.str(bidExtra, row, extraOff)

	c.Kinds = append(c.Kinds, types.Insert)
	cols := c.Cols
	appendInt(&cols[bidAuction], auction+FirstAuctionID)
	appendInt(&cols[bidBidder], bidder+FirstPersonID)
	appendInt(&cols[bidPrice], price)
	appendStr(&cols[bidChannel], channel)
	appendStr(&cols[bidURL], url)
	appendInt(&cols[bidDateTime], g.TimestampMillis(n)*1000)
	appendStr(&cols[bidExtra], "")
}

func appendInt(v *types.Vector, x int64) {
	v.Nulls = append(v.Nulls, false)
	v.Ints = append(v.Ints, x)
}

func appendStr(v *types.Vector, s string) {
	v.Nulls = append(v.Nulls, false)
	v.Strs = append(v.Strs, s)
}

// Row returns event n's table and its row, for tests and tools; Readers
// fill chunks without a Row per event.
func (g *Generator) Row(n uint64) (Table, types.Row) {
	t := TableOf(n)
	c := newChunk(t.Schema().Types(), 1)
	g.appendEvent(c, t, n)
	g.finish(c)
	return t, c.Row(0)
}

// appendEvent appends event n, of table t, to c. Call begin before the
// finish after the last event of a chunk.
func (g *Generator) appendEvent(c *types.Chunk, t Table, n uint64) {
	switch t {
	case Person:
		g.appendPerson(c, n)
	case Auction:
		g.appendAuction(c, n)
	default:
		g.appendBid(c, n)
	}
}
