package binder

import (
	"testing"

	"github.com/stratadb/strata/sql/sqlerr"
)

// TestColumnHint: a mistyped column gets the nearest column of its scope
// as PostgreSQL suggests it, and no suggestion when none is near, more
// than half of the name differs or two are equally near.
func TestColumnHint(t *testing.T) {
	s := &scope{cols: []scopeCol{
		{table: "bid", name: "auction"}, {table: "bid", name: "price"}, {table: "bid", name: "bidder"},
		{table: "a", name: "id"}, {table: "b", name: "id", hidden: true},
		{table: "b", name: "ab"}, {table: "b", name: "ac"},
	}}
	for _, tc := range []struct{ qual, name, want string }{
		{"", "auctoin", `Perhaps you meant to reference the column "bid.auction".`},
		{"", "prise", `Perhaps you meant to reference the column "bid.price".`},
		{"bid", "bider", `Perhaps you meant to reference the column "bid.bidder".`},
		{"", "ix", `Perhaps you meant to reference the column "a.id".`}, // b.id is hidden: one id
		{"b", "ix", `Perhaps you meant to reference the column "b.id".`},
		{"", "date_time", ""}, // nothing near
		{"", "ixyz", ""},      // within 3 of id, but 3 of 4 characters differ
		{"", "ax", ""},        // ab and ac are equally near
		{"a", "auctoin", ""},  // auction is not a's
		{"", "zzzzzzz", ""},   // too far
		{"bid", "auctionx", `Perhaps you meant to reference the column "bid.auction".`},
	} {
		if got := columnHint(s, tc.qual, tc.name); got != tc.want {
			t.Errorf("columnHint(%q, %q) = %q, want %q", tc.qual, tc.name, got, tc.want)
		}
	}
	// Two relations equally near: PostgreSQL names both.
	two := &scope{cols: []scopeCol{{table: "t1", name: "unique1"}, {table: "t2", name: "unique1"}, {name: "v"}}}
	if got, want := columnHint(two, "", "uunique1"), `Perhaps you meant to reference the column "t1.unique1" or the column "t2.unique1".`; got != want {
		t.Errorf("columnHint(uunique1) = %q, want %q", got, want)
	}
	if got, want := columnHint(two, "", "vv"), `Perhaps you meant to reference the column "v".`; got != want {
		t.Errorf("columnHint(vv) = %q, want %q", got, want)
	}
}

// TestQualifiedColumnHint: a mistyped qualified column of a join gets
// PostgreSQL's hint naming the column of that relation.
func TestQualifiedColumnHint(t *testing.T) {
	for _, tc := range []struct{ sql, hint string }{
		{"SELECT p.id, a.sellr FROM person p JOIN auction a USING (id)", `Perhaps you meant to reference the column "a.seller".`},
		{"SELECT p.id FROM person p JOIN auction a ON p.id = a.sellr", `Perhaps you meant to reference the column "a.seller".`},
		{"SELECT a.id, count(*) FROM person p JOIN auction a USING (id) GROUP BY a.id HAVING max(p.nme) > ''", `Perhaps you meant to reference the column "p.name".`},
	} {
		_, err := bind(t, tc.sql)
		if e := sqlerr.From(err); e == nil || e.Code != sqlerr.UndefinedColumn || e.Hint != tc.hint {
			t.Errorf("%s: %v, want 42703 with hint %q", tc.sql, err, tc.hint)
		}
	}
}
