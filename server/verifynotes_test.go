package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// TestVerifyTopNTie: a top-N view whose rows differ from the
// recomputation only among rows tied on the ORDER BY keys at the cut-off
// is verified, with a note naming the rows; a difference elsewhere, or
// among tied rows that are not the last ones, stays a difference without
// that note.
func TestVerifyTopNTie(t *testing.T) {
	s, c := startConn(t)
	exec(t, c, "CREATE TABLE t (id BIGINT, n BIGINT)")
	exec(t, c, "INSERT INTO t VALUES (1, 900), (2, 850), (3, 823), (4, 823), (5, 100), (6, 900)")
	exec(t, c, "CREATE MATERIALIZED VIEW top4 AS SELECT id, n FROM t ORDER BY n DESC LIMIT 4")
	waitFor(t, 10*time.Second, func() (bool, string) {
		got := rowsText(t, c, "SELECT count(*) FROM top4")
		return got == "4", "top4 has " + got + " rows"
	})
	ctx := context.Background()
	res := Verify(ctx, s.Engine, "top4", 0)
	if !res.OK {
		t.Fatalf("verify top4: %+v", res)
	}
	// The view holds 1, 6, 2 and one of 3 and 4, both with n = 823.
	kept := int64(3)
	if rowsText(t, c, "SELECT id FROM top4 WHERE n = 823") == "4" {
		kept = 4
	}
	dropped := 7 - kept
	cat, err := s.Engine.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	view, err := cat.Table(catalog.Name(engine.DefaultDatabase, "top4"))
	if err != nil {
		t.Fatal(err)
	}
	row := func(id, n int64) types.Row { return types.Row{types.NewInt64(id), types.NewInt64(n)} }
	explain := func(missing, extra types.Row, rows int) VerifyResponse {
		v := engine.Verification{View: view.Name, Epoch: base.Epoch(res.Epoch), Rows: rows, Missing: []types.Row{missing}, Extra: []types.Row{extra}}
		out := VerifyResponse{View: "top4", Epoch: res.Epoch, Rows: rows, Missing: []string{missing.String()}, Extra: []string{extra.String()}}
		explainDifference(ctx, s.Engine, view, v, &out)
		return out
	}
	// The other tied row at the cut-off: verified, with a note.
	got := explain(row(dropped, 823), row(kept, 823), 4)
	wantNote := "the view is a top-N (ORDER BY ... LIMIT 4) whose last rows tie on its ORDER BY keys (n = 823): the view keeps " + row(kept, 823).String() + " where the recomputation keeps " + row(dropped, 823).String() + ", another valid choice among the tied rows, so the view is verified"
	if !got.OK || len(got.Missing) != 0 || len(got.Extra) != 0 || !slices.Equal(got.Notes, []string{wantNote}) {
		t.Errorf("tie at the cut-off: %+v, want OK with the note %q", got, wantNote)
	}
	// Rows that differ on the keys, tied rows that are not the last
	// ones, and fewer rows than the LIMIT stay differences.
	for _, tc := range []struct {
		missing, extra types.Row
		rows           int
	}{
		{row(dropped, 823), row(5, 100), 4},
		{row(6, 900), row(7, 900), 4},
		{row(dropped, 823), row(kept, 823), 3},
	} {
		if got := explain(tc.missing, tc.extra, tc.rows); got.OK || len(got.Notes) != 0 {
			t.Errorf("missing %s, extra %s, %d rows: %+v, want a difference without notes", tc.missing, tc.extra, tc.rows, got)
		}
	}
}

// TestTopNOf reads the ORDER BY ... LIMIT of a view's query: keys that
// are the view's columns (by name or position), PostgreSQL's NULLS
// placement written out, and none for an expression.
func TestTopNOf(t *testing.T) {
	view := catalog.Table{Name: catalog.Name("dev", "v"), Columns: []catalog.Column{{Name: "id"}, {Name: "n"}, {Name: "Total"}}}
	for _, tc := range []struct {
		query string
		ok    bool
		want  topN
	}{
		{"SELECT id, n, t AS \"Total\" FROM x ORDER BY n DESC, 1 LIMIT 5", true, topN{limit: 5, keys: []int{1, 0}, order: "n DESC NULLS FIRST, id ASC NULLS LAST"}},
		{"SELECT id, n, t AS \"Total\" FROM x ORDER BY \"Total\" NULLS FIRST LIMIT 2", true, topN{limit: 2, keys: []int{2}, order: "\"Total\" ASC NULLS FIRST"}},
		{"SELECT id, n, t AS \"Total\" FROM x ORDER BY n + 1 DESC LIMIT 5", true, topN{limit: 5}},
		{"SELECT id, n, t FROM x ORDER BY n LIMIT 5 OFFSET 2", false, topN{}},
		{"SELECT id, n, t FROM x ORDER BY n", false, topN{}},
		{"SELECT id, n, t FROM x LIMIT 3", false, topN{}},
	} {
		view.Query = tc.query
		got, ok := topNOf(view)
		if ok != tc.ok || got.limit != tc.want.limit || !slices.Equal(got.keys, tc.want.keys) || got.order != tc.want.order {
			t.Errorf("topNOf(%s) = %+v, %v; want %+v, %v", tc.query, got, ok, tc.want, tc.ok)
		}
	}
}

// TestVerifyLookupJoinNote: a lookup-join view whose looked-up row
// changed after its rows were joined differs from the recomputation, and
// verify says why in a note; the difference stays one.
func TestVerifyLookupJoinNote(t *testing.T) {
	s, c := startConn(t)
	exec(t, c, "CREATE TABLE customers (id BIGINT PRIMARY KEY, name TEXT)")
	exec(t, c, "CREATE TABLE orders (id BIGINT, cid BIGINT)")
	exec(t, c, "INSERT INTO customers VALUES (1, 'ann')")
	exec(t, c, "CREATE MATERIALIZED VIEW enriched AS SELECT o.id, c.name FROM orders o LEFT JOIN LOOKUP(customers) c ON c.id = o.cid")
	exec(t, c, "INSERT INTO orders VALUES (10, 1)")
	waitRows(t, c, "SELECT * FROM enriched", "10|ann", 10*time.Second)
	exec(t, c, "UPDATE customers SET name = 'bob' WHERE id = 1")
	var res VerifyResponse
	waitFor(t, 10*time.Second, func() (bool, string) {
		res = Verify(context.Background(), s.Engine, "enriched", 0)
		return !res.OK && res.Error == "", "verify enriched still equal"
	})
	if !slices.Equal(res.Missing, []string{"(10, bob)"}) || !slices.Equal(res.Extra, []string{"(10, ann)"}) || !slices.Contains(res.Notes, lookupNote) {
		t.Fatalf("verify enriched: %+v, want (10, bob) missing, (10, ann) extra and the note %q", res, lookupNote)
	}
}

// TestVerifyUnorderedAggregateNote: a difference of a view calling
// string_agg without ORDER BY carries a note saying the order of its
// elements is not defined; with ORDER BY inside the call it does not.
func TestVerifyUnorderedAggregateNote(t *testing.T) {
	for q, want := range map[string]bool{
		"SELECT grp, string_agg(name, ',') AS names FROM items GROUP BY grp":               true,
		"SELECT grp, string_agg(name, ',' ORDER BY name) AS names FROM items GROUP BY grp": false,
	} {
		out := VerifyResponse{View: "sa", Missing: []string{"(NULL, 'z,w')"}, Extra: []string{"(NULL, 'w,z')"}}
		explainDifference(context.Background(), nil, catalog.Table{Query: q}, engine.Verification{}, &out)
		has := slices.Contains(out.Notes, unorderedNote([]string{"string_agg"}))
		if has != want || out.OK {
			t.Errorf("%s: notes %q, ok %v; want the unordered note %v and still a difference", q, out.Notes, out.OK, want)
		}
	}
}
