package nexmark

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/suggest"
	"github.com/stratadb/strata/internal/types"
)

// ConnectorName is the value of the connector option that selects this
// package.
const ConnectorName = "nexmark"

// Option names, as a SQL WITH clause gives them (see doc.go, Options).
const (
	OptConnector        = "connector"
	OptTable            = "nexmark.table"
	OptEvents           = "events"
	OptRate             = "rate"
	OptEventRate        = "event.rate"
	OptSeed             = "seed"
	OptBaseTime         = "base.time"
	OptChunkRows        = "chunk.rows"
	OptHotAuctionRatio  = "hot.auction.ratio"
	OptHotSellerRatio   = "hot.seller.ratio"
	OptHotBidderRatio   = "hot.bidder.ratio"
	OptActivePeople     = "active.people"
	OptInFlightAuctions = "in.flight.auctions"
	OptPersonSize       = "person.size"
	OptAuctionSize      = "auction.size"
	OptBidSize          = "bid.size"
)

// Options is what a WITH clause configures: the table to read and the
// event sequence.
type Options struct {
	Table  Table
	Config Config
}

// ParseOptions reads the options of a nexmark source, as a SQL
// WITH (connector='nexmark', nexmark.table='bid', events='1000000',
// rate='100000', seed='42') clause gives them. nexmark.table is required;
// every other option has the default of the Config field it sets. An
// unknown option, a bad value or a connector other than nexmark gives an
// error wrapping base.ErrInvalidArgument that names the option.
func ParseOptions(opts map[string]string) (Options, error) {
	var o Options
	uints := map[string]*uint64{
		OptEvents:    &o.Config.Events,
		OptRate:      &o.Config.Rate,
		OptEventRate: &o.Config.EventRate,
		OptSeed:      &o.Config.Seed,
	}
	// Positive integers; 0 would silently mean the default.
	ints := map[string]*int{
		OptChunkRows:        &o.Config.ChunkRows,
		OptHotAuctionRatio:  &o.Config.HotAuctionRatio,
		OptHotSellerRatio:   &o.Config.HotSellersRatio,
		OptHotBidderRatio:   &o.Config.HotBiddersRatio,
		OptActivePeople:     &o.Config.ActivePeople,
		OptInFlightAuctions: &o.Config.InFlightAuctions,
		OptPersonSize:       &o.Config.PersonSize,
		OptAuctionSize:      &o.Config.AuctionSize,
		OptBidSize:          &o.Config.BidSize,
	}
	bad := func(k, v, why string) error {
		return fmt.Errorf("nexmark option %q: %q %s: %w", k, v, why, base.ErrInvalidArgument)
	}
	// Sorted, so that the first error reported does not depend on map
	// order.
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		v := opts[k]
		if p, ok := uints[k]; ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return Options{}, bad(k, v, "is not a whole number >= 0")
			}
			*p = n
			continue
		}
		if p, ok := ints[k]; ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
			if err != nil || n <= 0 {
				return Options{}, bad(k, v, "is not a whole number >= 1")
			}
			*p = int(n)
			continue
		}
		switch k {
		case OptConnector:
			if v != ConnectorName {
				return Options{}, bad(k, v, "is not "+ConnectorName)
			}
		case OptTable:
			t, err := ParseTable(strings.ToLower(strings.TrimSpace(v)))
			if err != nil {
				return Options{}, bad(k, v, "is not one of person, auction, bid")
			}
			o.Table = t
		case OptBaseTime:
			t, err := parseBaseTime(v)
			if ms := t.UnixMilli(); err == nil && (ms < types.MinTimestamp/1000 || ms > types.MaxTimestamp/1000) {
				return Options{}, bad(k, v, "is out of the TIMESTAMP range")
			}
			if err != nil {
				return Options{}, bad(k, v, "is not a time (2015-07-15 00:00:00, RFC 3339, or milliseconds since 1970)")
			}
			o.Config.BaseTime = t
		default:
			return Options{}, suggest.UnknownOption("nexmark: ", k, knownOptions())
		}
	}
	if o.Table == "" {
		return Options{}, fmt.Errorf("nexmark: option %q is required (person, auction or bid): %w", OptTable, base.ErrInvalidArgument)
	}
	if o.Config.Events > maxEvents {
		return Options{}, bad(OptEvents, opts[OptEvents], fmt.Sprintf("is above the limit %d", uint64(maxEvents)))
	}
	if _, err := o.Config.withDefaults(); err != nil {
		return Options{}, err
	}
	return o, nil
}

// Open parses opts (ParseOptions) and returns a Reader of the table they
// name.
func Open(opts map[string]string) (*Reader, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	return NewReader(o.Table, o.Config)
}

func knownOptions() []string {
	return []string{OptConnector, OptTable, OptEvents, OptRate, OptEventRate, OptSeed, OptBaseTime, OptChunkRows,
		OptHotAuctionRatio, OptHotSellerRatio, OptHotBidderRatio, OptActivePeople, OptInFlightAuctions,
		OptPersonSize, OptAuctionSize, OptBidSize}
}

// parseBaseTime reads "2006-01-02 15:04:05[.fff]" or "2006-01-02" (UTC),
// RFC 3339, or an integer number of milliseconds since 1970.
func parseBaseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms).UTC(), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not a time")
}
