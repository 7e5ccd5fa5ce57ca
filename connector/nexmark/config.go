package nexmark

import (
	"fmt"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// Defaults of Config, those of the reference generators (Beam's
// NexmarkConfiguration and the Flink Nexmark benchmark's) where they have
// one.
const (
	// DefaultEventRate is the event-time rate (events per second) when
	// neither EventRate nor Rate is set: the reference's firstEventRate.
	DefaultEventRate = 10_000
	// DefaultHotAuctionRatio: a bid is for a hot auction with probability
	// 1 - 1/2.
	DefaultHotAuctionRatio = 2
	// DefaultHotSellersRatio: an auction is by a hot seller with
	// probability 1 - 1/4.
	DefaultHotSellersRatio = 4
	// DefaultHotBiddersRatio: a bid is by a hot bidder with probability
	// 1 - 1/4.
	DefaultHotBiddersRatio = 4
	// DefaultActivePeople is how many of the most recent people a random
	// seller or bidder is drawn from.
	DefaultActivePeople = 1000
	// DefaultInFlightAuctions is how many of the most recent auctions a
	// random bid's auction is drawn from; it also sets the average auction
	// length (see doc.go).
	DefaultInFlightAuctions = 100
	// DefaultPersonSize, DefaultAuctionSize and DefaultBidSize are the
	// average record sizes in bytes that the extra column pads to.
	DefaultPersonSize  = 200
	DefaultAuctionSize = 500
	DefaultBidSize     = 100
)

// DefaultBaseTime is the event time of event 0 when Config.BaseTime is
// zero: 2015-07-15 00:00:00 UTC, the base time RisingWave's Nexmark source
// uses. A fixed default keeps event timestamps the same across restarts.
var DefaultBaseTime = time.Date(2015, 7, 15, 0, 0, 0, 0, time.UTC)

// Config describes one Nexmark event sequence and how fast to produce it.
// The zero Config is valid: seed 0, unbounded, as fast as possible, event
// time advancing at DefaultEventRate from DefaultBaseTime. Readers of the
// three tables built from equal Configs see one event sequence.
//
// Seed, Events, EventRate, BaseTime and the model fields decide the
// content of every event (invariant event-purity); Rate and ChunkRows
// decide the transaction boundaries (invariant transaction-purity), so all
// of them must stay the same when a job restarts from a checkpoint.
type Config struct {
	// Seed selects the random sequence; equal seeds give equal events.
	Seed uint64
	// Events is the number of events (all three tables together),
	// numbered 0 to Events-1; 0 means unbounded.
	Events uint64
	// Rate is the wall-clock rate in events per second at which Readers
	// release events; 0 releases them as fast as they are read.
	Rate uint64
	// EventRate is the event-time rate in events per second: event n's
	// date_time is BaseTime + n/EventRate seconds (truncated to the
	// millisecond). 0 means Rate, or DefaultEventRate when Rate is 0.
	EventRate uint64
	// BaseTime is event 0's date_time; zero means DefaultBaseTime. It is
	// truncated to the millisecond and read as a zone-less timestamp in
	// UTC.
	BaseTime time.Time
	// ChunkRows is the most rows one transaction (chunk) holds; 0 means
	// types.DefaultChunkSize.
	ChunkRows int

	// The model's knobs; 0 means the default of the same name.
	HotAuctionRatio  int
	HotSellersRatio  int
	HotBiddersRatio  int
	ActivePeople     int
	InFlightAuctions int
	PersonSize       int
	AuctionSize      int
	BidSize          int

	// Now is the wall clock that rate limiting reads; nil means time.Now.
	// Tests inject a fake one.
	Now func() time.Time
}

// withDefaults returns c with every zero field set to its default, or an
// error wrapping base.ErrInvalidArgument naming a field out of range.
func (c Config) withDefaults() (Config, error) {
	if c.EventRate == 0 {
		c.EventRate = c.Rate
		if c.EventRate == 0 {
			c.EventRate = DefaultEventRate
		}
	}
	if c.BaseTime.IsZero() {
		c.BaseTime = DefaultBaseTime
	}
	if c.ChunkRows == 0 {
		c.ChunkRows = types.DefaultChunkSize
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	defaults := []struct {
		name string
		v    *int
		def  int
	}{
		{"HotAuctionRatio", &c.HotAuctionRatio, DefaultHotAuctionRatio},
		{"HotSellersRatio", &c.HotSellersRatio, DefaultHotSellersRatio},
		{"HotBiddersRatio", &c.HotBiddersRatio, DefaultHotBiddersRatio},
		{"ActivePeople", &c.ActivePeople, DefaultActivePeople},
		{"InFlightAuctions", &c.InFlightAuctions, DefaultInFlightAuctions},
		{"PersonSize", &c.PersonSize, DefaultPersonSize},
		{"AuctionSize", &c.AuctionSize, DefaultAuctionSize},
		{"BidSize", &c.BidSize, DefaultBidSize},
		{"ChunkRows", &c.ChunkRows, types.DefaultChunkSize},
	}
	for _, d := range defaults {
		if *d.v == 0 {
			*d.v = d.def
		}
		if *d.v < 0 {
			return Config{}, fmt.Errorf("nexmark: config %s is %d, must not be negative: %w", d.name, *d.v, base.ErrInvalidArgument)
		}
	}
	if c.Events > maxEvents {
		return Config{}, fmt.Errorf("nexmark: config Events is %d, at most %d: %w", c.Events, uint64(maxEvents), base.ErrInvalidArgument)
	}
	if ms := c.BaseTime.UnixMilli(); ms < types.MinTimestamp/1000 || ms > types.MaxTimestamp/1000 {
		return Config{}, fmt.Errorf("nexmark: config BaseTime %s is out of the TIMESTAMP range: %w", c.BaseTime, base.ErrInvalidArgument)
	}
	return c, nil
}

// maxEvents bounds event numbers so that every id and timestamp formula
// stays far from overflowing an int64.
const maxEvents = 1 << 60
