package nexmark

import (
	"fmt"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// Table names one of the three Nexmark tables; its value is the table's
// name and the value of the nexmark.table option.
type Table string

// The three Nexmark tables.
const (
	Person  Table = "person"
	Auction Table = "auction"
	Bid     Table = "bid"
)

// ParseTable returns the table named s ("person", "auction" or "bid").
// Other names give an error wrapping base.ErrInvalidArgument.
func ParseTable(s string) (Table, error) {
	switch t := Table(s); t {
	case Person, Auction, Bid:
		return t, nil
	}
	return "", fmt.Errorf("nexmark: table %q is not one of person, auction, bid: %w", s, base.ErrInvalidArgument)
}

// Schema returns the table's schema.
func (t Table) Schema() Schema {
	switch t {
	case Person:
		return PersonSchema
	case Auction:
		return AuctionSchema
	case Bid:
		return BidSchema
	}
	panic("nexmark: Schema of unknown table " + string(t))
}

// Schema is the shape of one Nexmark table: its columns in order and its
// primary key (empty for an append table).
type Schema struct {
	Table      Table
	Columns    []catalog.Column
	PrimaryKey []string
}

// Types returns the column types in order, the types of the chunks a
// Reader of the table returns.
func (s Schema) Types() []types.Type {
	ts := make([]types.Type, len(s.Columns))
	for i, c := range s.Columns {
		ts[i] = c.Type
	}
	return ts
}

// Check compares declared columns, as a CREATE statement gives them, with
// the schema: none (the schema is taken as is) or the same names and types
// in the same order. The error wraps base.ErrInvalidArgument and names the
// first column that differs.
func (s Schema) Check(declared []catalog.Column) error {
	if len(declared) == 0 {
		return nil
	}
	for i, c := range s.Columns {
		if i >= len(declared) {
			return fmt.Errorf("nexmark table %s: column %q (%s) is missing: %w", s.Table, c.Name, c.Type, base.ErrInvalidArgument)
		}
		d := declared[i]
		if d.Name != c.Name || d.Type != c.Type {
			return fmt.Errorf("nexmark table %s: column %d is %q %s, want %q %s: %w", s.Table, i+1, d.Name, d.Type, c.Name, c.Type, base.ErrInvalidArgument)
		}
	}
	if len(declared) > len(s.Columns) {
		return fmt.Errorf("nexmark table %s: column %q is not one of the table's: %w", s.Table, declared[len(s.Columns)].Name, base.ErrInvalidArgument)
	}
	return nil
}

// Timestamp3 is TIMESTAMP(3) without time zone, the type of the tables'
// date_time and expires columns (Flink's Nexmark DDL uses TIMESTAMP(3)).
var Timestamp3 = types.Type{Kind: types.KindTimestamp, Precision: 3}

// The schemas follow the DDL of the Flink Nexmark benchmark
// (github.com/nexmark/nexmark, nexmark-flink ddl), with column names in
// snake_case as RisingWave spells them: BIGINT is types.Int64, VARCHAR is
// unbounded types.Varchar, TIMESTAMP(3) is Timestamp3. person and auction
// are keyed by id; bid has no key (an append table). Only key columns are
// NOT NULL; the generator never produces NULL.
var (
	PersonSchema = Schema{
		Table: Person,
		Columns: []catalog.Column{
			{Name: "id", Type: types.Int64, NotNull: true},
			{Name: "name", Type: types.Varchar},
			{Name: "email_address", Type: types.Varchar},
			{Name: "credit_card", Type: types.Varchar},
			{Name: "city", Type: types.Varchar},
			{Name: "state", Type: types.Varchar},
			{Name: "date_time", Type: Timestamp3},
			{Name: "extra", Type: types.Varchar},
		},
		PrimaryKey: []string{"id"},
	}
	AuctionSchema = Schema{
		Table: Auction,
		Columns: []catalog.Column{
			{Name: "id", Type: types.Int64, NotNull: true},
			{Name: "item_name", Type: types.Varchar},
			{Name: "description", Type: types.Varchar},
			{Name: "initial_bid", Type: types.Int64},
			{Name: "reserve", Type: types.Int64},
			{Name: "date_time", Type: Timestamp3},
			{Name: "expires", Type: Timestamp3},
			{Name: "seller", Type: types.Int64},
			{Name: "category", Type: types.Int64},
			{Name: "extra", Type: types.Varchar},
		},
		PrimaryKey: []string{"id"},
	}
	BidSchema = Schema{
		Table: Bid,
		Columns: []catalog.Column{
			{Name: "auction", Type: types.Int64},
			{Name: "bidder", Type: types.Int64},
			{Name: "price", Type: types.Int64},
			{Name: "channel", Type: types.Varchar},
			{Name: "url", Type: types.Varchar},
			{Name: "date_time", Type: Timestamp3},
			{Name: "extra", Type: types.Varchar},
		},
	}
)

// Column positions, in schema order.
const (
	personID = iota
	personName
	personEmail
	personCreditCard
	personCity
	personState
	personDateTime
	personExtra
)

const (
	auctionID = iota
	auctionItemName
	auctionDescription
	auctionInitialBid
	auctionReserve
	auctionDateTime
	auctionExpires
	auctionSeller
	auctionCategory
	auctionExtra
)

const (
	bidAuction = iota
	bidBidder
	bidPrice
	bidChannel
	bidURL
	bidDateTime
	bidExtra
)
