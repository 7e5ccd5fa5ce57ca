// Package nexmark is the Nexmark benchmark's event generator as an ingest
// source: the people, auctions and bids of an online auction site, read as
// the three tables person, auction and bid.
//
// The model is the standard one of Apache Beam's Nexmark suite
// (sdks/java/testing/nexmark, generator/model) as the Flink Nexmark
// benchmark (github.com/nexmark/nexmark, nexmark-flink/generator) carries
// it on; this package re-implements it in Go from their description.
//
// # Events
//
// Events are numbered 0, 1, 2, ... (Events of them, or without end). Of
// each 50 consecutive events 50k .. 50k+49, event 50k is a person, the next
// three are auctions and the other 46 are bids: proportions 1:3:46, in
// that interleaving (TableOf). Person ids and auction ids count up by one
// from 1000 (FirstPersonID, FirstAuctionID), so the i-th person is
// 1000+i and the id of any event's "last person" or "last auction" is
// arithmetic on its number.
//
// Per event, as the reference does it:
//
//   - person: a name from 11 first and 9 last names, a random e-mail
//     address and credit card number, one of 10 cities and 6 states.
//   - auction: a random item name and description, an initial bid and a
//     reserve above it, a seller and one of 5 categories from 10. The
//     seller is, with probability 1-1/HotSellersRatio (3/4), the hot
//     seller: the first person of the last batch of 100; else a random one
//     of the ActivePeople (1000) most recent people or up to 10 ids ahead
//     of the last (people not generated yet, as in the reference). The
//     auction expires 1 ms to 2h after its date_time, h being the event
//     time InFlightAuctions (100) more auctions take to come.
//   - bid: an auction, with probability 1-1/HotAuctionRatio (1/2) the first
//     of the last batch of 100 auctions, else a random one of the
//     InFlightAuctions most recent or up to 10 ahead; a bidder, with
//     probability 1-1/HotBiddersRatio (3/4) the second person of the last
//     batch of 100 (so hot bidders are not hot sellers), else as a random
//     seller; a channel, with probability 1/2 one of four hot channels
//     (Google, Facebook, Baidu, Apple), else one of 10,000 named
//     "channel-<n>", each with its fixed url.
//   - prices (initial bids, reserves above them, bids) are log-uniform
//     cents: round(10^(6u) * 100), u uniform in [0, 1), so from 1.00 to
//     1,000,000.00.
//   - extra pads the record: with the reference's measure (8 bytes per
//     number, each string's length; a bid counts its four numbers only),
//     records average PersonSize, AuctionSize and BidSize bytes (200, 500,
//     100): extra is d ± 20% long, d being what the other fields leave.
//
// Event n's date_time is BaseTime + n/EventRate seconds, truncated to the
// millisecond; EventRate defaults to Rate, or 10,000 events/s.
//
// One deliberate difference: the Flink benchmark adds FirstPersonID to a
// bid's bidder twice (its bidders start at 2000, matching no person); this
// package adds it once, as Beam does, so bids join people.
//
// # Invariants
//
//   - event-purity: event n's values depend only on n and the Config's
//     content fields (Seed, Events, EventRate, BaseTime and the model
//     knobs), never on which events were generated before or by which
//     Reader: each event has its own pseudo-random stream, SplitMix64
//     started from a mix of the seed and n (the reference seeds a
//     java.util.Random with the event id for the same reason). Equal seeds
//     give equal events; a Reader resumes at any position without
//     replaying, and the three tables of one Config see one event
//     sequence.
//   - transaction-purity: the transaction Reader.Next returns at a position
//     depends only on the position and the Config (ChunkRows and Rate
//     included), never on the clock. The clock only decides whether it is
//     returned yet. A replay after a restore therefore meets the
//     transaction boundaries, and so the epoch positions, of the first run
//     (connector/ingest, Replay). Changing Rate or chunk.rows across a
//     restore breaks this and the ingest source reports a replay error.
//
// # Reading
//
// A Reader reads one table. Its positions are global event numbers (the
// next event to consider, whatever its table), so a bid Reader skips the
// person and auction numbers arithmetically (nextOf) and a person Reader
// touches one number in 50. A transaction holds up to ChunkRows (default
// 1024) rows. With Rate > 0 a transaction spans at most Rate/100 event
// numbers (10 ms of wall time) and Next returns nil until its last event
// is due: event n is due (n-a)/Rate seconds after the Reader's first call,
// a being that call's position. A consumer slower than Rate is never held
// back, and a replay below a is served at full speed.
//
// Chunks are filled column by column without a Row per event; the strings
// of one chunk share one allocation.
//
// # Options
//
// ParseOptions reads a WITH clause, e.g. WITH (connector='nexmark',
// nexmark.table='bid', events='1000000', rate='100000', seed='42'):
//
//	connector           nexmark (optional; another value is an error)
//	nexmark.table       person, auction or bid (required)
//	events              number of events, all tables together; 0 = unbounded (default)
//	rate                wall-clock events/s; 0 = as fast as possible (default)
//	event.rate          event-time events/s (default: rate, or 10000)
//	seed                unsigned 64-bit seed (default 0)
//	base.time           event 0's date_time: '2015-07-15 00:00:00' (UTC), RFC 3339,
//	                    or milliseconds since 1970 (default 2015-07-15 00:00:00)
//	chunk.rows          most rows per transaction (default 1024)
//	hot.auction.ratio   1/x of bids go to a random auction (default 2)
//	hot.seller.ratio    1/x of auctions have a random seller (default 4)
//	hot.bidder.ratio    1/x of bids have a random bidder (default 4)
//	active.people       people a random seller or bidder is drawn from (default 1000)
//	in.flight.auctions  auctions a random bid is drawn from (default 100)
//	person.size, auction.size, bid.size   average record sizes (200, 500, 100)
//
// Numbers are decimal; the ratios, sizes and chunk.rows must be at least 1.
// Unknown options and bad values are refused with an error wrapping
// base.ErrInvalidArgument that names the option.
//
// # Tables
//
// PersonSchema, AuctionSchema and BidSchema follow Flink's Nexmark DDL in
// snake_case: BIGINT, VARCHAR and TIMESTAMP(3) (without time zone) columns.
// person and auction have primary key id; bid is an append table.
package nexmark
