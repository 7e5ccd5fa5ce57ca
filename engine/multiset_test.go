package engine

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/connector/filesink"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/parser"
)

var (
	bidName     = catalog.Name(DefaultDatabase, "bid")
	auctionName = catalog.Name(DefaultDatabase, "auction")
	msJoin      = catalog.Name(DefaultDatabase, "ms_join")
	msCounts    = catalog.Name(DefaultDatabase, "ms_counts")
	msHigh      = catalog.Name(DefaultDatabase, "ms_high")
)

// multisetViews are views over a keyless append table joined with a keyed
// one: ms_join and ms_high have no unique key and retract (multiset
// views), ms_counts is keyed and reads the multiset view ms_join.
var multisetViews = []struct {
	name  catalog.ObjectName
	query string
}{
	{msJoin, "SELECT b.auction, b.price, a.item FROM bid AS b JOIN auction AS a ON b.auction = a.id WHERE a.category = 1"},
	{msCounts, "SELECT item, count(*) AS n, sum(price) AS total FROM ms_join GROUP BY item"},
	{msHigh, "SELECT price, item FROM ms_join WHERE price > 2"},
}

func createMultisetViews(t *testing.T, e *Engine) {
	t.Helper()
	ctx := context.Background()
	if err := e.CreateTable(ctx, catalog.Table{Name: bidName, Columns: []catalog.Column{
		{Name: "auction", Type: types.Int64}, {Name: "price", Type: types.Int64}, {Name: "extra", Type: types.Text}}}, false); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateTable(ctx, catalog.Table{Name: auctionName, PrimaryKey: []string{"id"}, Columns: []catalog.Column{
		{Name: "id", Type: types.Int64, NotNull: true}, {Name: "category", Type: types.Int64}, {Name: "item", Type: types.Text}}}, false); err != nil {
		t.Fatal(err)
	}
	for _, v := range multisetViews {
		if err := e.CreateView(ctx, v.name, v.query, nil, false); err != nil {
			t.Fatalf("%s: %v", v.name.Name, err)
		}
	}
}

// multisetStep is a random DML statement over bid and auction: bids with
// small domains (identical rows are common, NULL auctions too), and
// auctions inserted, updated (category and item) and deleted by key,
// deleted keys coming back.
func multisetStep(r *rand.Rand, live map[int64]bool) string {
	switch x := r.Intn(10); {
	case x < 4:
		var vals []string
		for range 1 + r.Intn(4) {
			a := fmt.Sprint(r.Intn(6))
			if r.Intn(10) == 0 {
				a = "NULL"
			}
			vals = append(vals, fmt.Sprintf("(%s, %d, 'x%d')", a, r.Intn(5), r.Intn(2)))
		}
		return "INSERT INTO bid VALUES " + strings.Join(vals, ", ")
	case x < 6:
		id := int64(r.Intn(6))
		if !live[id] {
			live[id] = true
			return fmt.Sprintf("INSERT INTO auction VALUES (%d, %d, 'item%d')", id, r.Intn(2), r.Intn(3))
		}
		return fmt.Sprintf("UPDATE auction SET category = %d, item = 'item%d' WHERE id = %d", r.Intn(2), r.Intn(3), id)
	case x < 8:
		id := int64(r.Intn(6))
		delete(live, id)
		return fmt.Sprintf("DELETE FROM auction WHERE id = %d", id)
	default:
		return fmt.Sprintf("UPDATE auction SET category = 1 - category WHERE id %% 2 = %d", r.Intn(2))
	}
}

// runDML runs one INSERT, UPDATE or DELETE and returns the epoch that
// holds it.
func runDML(t *testing.T, e *Engine, text string) base.Epoch {
	t.Helper()
	ctx := context.Background()
	st, err := parser.ParseOne(text)
	if err != nil {
		t.Fatal(err)
	}
	ectx := &expr.Context{}
	var ep base.Epoch
	switch {
	case st.Node.GetInsertStmt() != nil:
		_, ep, err = e.Insert(ctx, DefaultDatabase, st.Node.GetInsertStmt(), text, ectx, nil)
	case st.Node.GetUpdateStmt() != nil:
		_, ep, err = e.Update(ctx, DefaultDatabase, st.Node.GetUpdateStmt(), text, ectx, nil)
	case st.Node.GetDeleteStmt() != nil:
		_, ep, err = e.Delete(ctx, DefaultDatabase, st.Node.GetDeleteStmt(), text, ectx, nil)
	default:
		t.Fatalf("not DML: %s", text)
	}
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return ep
}

// verifyMultisetViews waits until every view has committed epoch ep and
// checks each against DuckDB's recomputation over its inputs at the
// view's committed epoch (engine.Verify).
func verifyMultisetViews(t *testing.T, e *Engine, ep base.Epoch, step string) {
	t.Helper()
	ctx := context.Background()
	for _, v := range multisetViews {
		if err := e.waitCommitted(ctx, v.name, ep); err != nil {
			t.Fatalf("%s: %s waiting for epoch %d: %v", step, v.name.Name, ep, err)
		}
		res, err := e.Verify(ctx, v.name, 0)
		if err != nil {
			t.Fatalf("%s: verify %s: %v", step, v.name.Name, err)
		}
		if !res.OK() || res.By != "duckdb" {
			t.Fatalf("after %s: %s (by %s)", step, res, res.By)
		}
		t.Logf("%s: %s has %d rows at epoch %d", step, v.name.Name, res.Rows, res.Epoch)
	}
}

// TestMultisetViews: views without a unique key whose changes retract
// (a keyless append table joined with a keyed table, and views over such
// a view) are stored as multisets and equal DuckDB's recomputation after
// every statement of a random history with duplicate bids, updates and
// deletes of auctions and re-inserted auction keys; SELECT sees neither
// the hidden multiplicity column nor a key, and equal rows as often as
// they occur.
func TestMultisetViews(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	createMultisetViews(t, e)
	r := rand.New(rand.NewSource(7))
	live := map[int64]bool{}
	for i := range 40 {
		text := multisetStep(r, live)
		ep := runDML(t, e, text)
		if i%4 == 3 {
			verifyMultisetViews(t, e, ep, fmt.Sprintf("step %d (%s)", i, text))
		}
	}
	// Two identical bids of an auction of category 1 are two equal rows.
	runDML(t, e, "INSERT INTO auction VALUES (100, 1, 'dup') ")
	ep := runDML(t, e, "INSERT INTO bid VALUES (100, 7, 'y'), (100, 7, 'y'), (100, 7, 'z')")
	verifyMultisetViews(t, e, ep, "duplicate bids")
	cat, err := e.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v, err := cat.Table(msJoin)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.PrimaryKey) != 0 || len(v.Columns) != 3 || multisetColumn(v) == "" {
		t.Fatalf("catalog of %s: key %v, columns %v, options %v; want no key, 3 columns, a multiset", msJoin.Name, v.PrimaryKey, v.Columns, v.Options)
	}
	if out, err := e.ExplainView(ctx, DefaultDatabase, multisetViews[0].query); err != nil || !strings.Contains(out, "stored as a multiset") {
		t.Errorf("EXPLAIN of %s: %v\n%s", msJoin.Name, err, out)
	}
	text := "SELECT * FROM ms_join WHERE auction = 100"
	q, ok, err := e.PlanOLAP(ctx, DefaultDatabase, text)
	if err != nil || !ok {
		t.Fatalf("plan %s: %v", text, err)
	}
	res, _, err := e.RunOLAP(ctx, q, text, ReadSpec{Mode: version.Strong}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range res.Columns {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "auction,price,item" {
		t.Errorf("SELECT * columns: %s, want auction,price,item", got)
	}
	if got := sorted(res.Rows); got != "(100, 7, dup)\n(100, 7, dup)\n(100, 7, dup)" {
		t.Errorf("SELECT * FROM ms_join WHERE auction = 100:\n%s\nwant three equal rows", got)
	}
	cols, rows, _, err := e.ReadAt(ctx, msHigh, base.NoEpoch)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, row := range rows {
		if row[1].String() == "dup" {
			n++
		}
	}
	if strings.Join(cols, ",") != "price,item" || n != 3 {
		t.Errorf("ReadAt %s: columns %v and %d rows of item dup; want price,item and 3", msHigh.Name, cols, n)
	}
	// Deleting the auction retracts all three; re-inserting it brings
	// them back.
	ep = runDML(t, e, "DELETE FROM auction WHERE id = 100")
	verifyMultisetViews(t, e, ep, "delete of the keyed row")
	ep = runDML(t, e, "INSERT INTO auction VALUES (100, 1, 'again')")
	verifyMultisetViews(t, e, ep, "re-insert of the keyed row")
}

// TestMultisetViewSinks: a file sink of a multiset view writes each row
// as often as the view holds it, its retractions one copy at a time, and
// no hidden column: replaying its committed files in order gives the view
// as SELECT * reads it at each file's epoch. A sink into a table from a
// query over the multiset view reads it the same way.
func TestMultisetViewSinks(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	createMultisetViews(t, e)
	dir := filepath.Join(t.TempDir(), "out")
	if err := e.CreateExternalSink(ctx, catalog.Name(DefaultDatabase, "tojson"), msJoin, map[string]string{"connector": "file", "path": dir, "format": "json"}, false); err != nil {
		t.Fatal(err)
	}
	prices := catalog.Name(DefaultDatabase, "prices")
	if err := e.CreateTable(ctx, catalog.Table{Name: prices, PrimaryKey: []string{"item"}, Columns: []catalog.Column{
		{Name: "item", Type: types.Text, NotNull: true}, {Name: "n", Type: types.Int64}}}, false); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateSink(ctx, catalog.Name(DefaultDatabase, "toprices"), prices, "SELECT coalesce(item, '?'), count(*) FROM ms_join GROUP BY coalesce(item, '?')", false); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(11))
	live := map[int64]bool{}
	var ep base.Epoch
	for range 30 {
		ep = runDML(t, e, multisetStep(r, live))
	}
	ep = max(ep, runDML(t, e, "INSERT INTO auction VALUES (100, 1, 'dup')"), runDML(t, e, "INSERT INTO bid VALUES (100, 7, 'y'), (100, 7, 'y')"))
	deadline := time.Now().Add(time.Minute)
	for !fileSinkReached(t, dir, "tojson", ep) {
		if time.Now().After(deadline) {
			t.Fatalf("the file sink did not reach epoch %d", ep)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cat, err := e.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	vt, _ := cat.Table(msJoin)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	bag := map[string]int{}
	files, dups := 0, 0
	for _, ent := range ents {
		n, ok := filesink.ParseName("tojson", ent.Name())
		if !ok || n.Temp {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, ent.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range readSinkFile(t, vt.Columns, filesink.JSON, b) {
			if len(ch.Row) != len(vt.Columns) {
				t.Fatalf("%s: a record of %d columns: %v", ent.Name(), len(ch.Row), ch.Row)
			}
			k := ch.Row.String()
			if ch.Kind.IsAdd() {
				bag[k]++
				continue
			}
			if bag[k] == 0 {
				t.Fatalf("%s: %s %s retracts a row that is not there", ent.Name(), ch.Kind, k)
			}
			bag[k]--
		}
		_, rows, _, err := e.ReadAt(ctx, msJoin, n.Epoch)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for k, c := range bag {
			for range c {
				got = append(got, k)
			}
			if c > 1 {
				dups++
			}
		}
		if g, w := sortedStrings(got), sorted(rows); g != w {
			t.Fatalf("after %s: replayed\n%s\nview at epoch %d:\n%s", ent.Name(), g, n.Epoch, w)
		}
		files++
	}
	if files == 0 || dups == 0 {
		t.Fatalf("%d files, %d rows held more than once: the test needs both", files, dups)
	}
	// The table sink counts every copy.
	if err := e.waitCommitted(ctx, prices, ep); err != nil {
		t.Fatal(err)
	}
	_, rows, at, err := e.ReadAt(ctx, prices, base.NoEpoch)
	if err != nil {
		t.Fatal(err)
	}
	_, view, _, err := e.ReadAt(ctx, msJoin, at)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for _, r := range view {
		item := "?"
		if !r[2].IsNull() {
			item = r[2].Str()
		}
		want[item]++
	}
	for _, r := range rows {
		if want[r[0].Str()] != r[1].Int64() {
			t.Errorf("prices at epoch %d: %v, the view holds %d rows of that item", at, r, want[r[0].Str()])
		}
		delete(want, r[0].Str())
	}
	if len(want) > 0 {
		t.Errorf("prices at epoch %d misses %v", at, want)
	}
}

// fileSinkReached reports whether file sink name has committed a file of
// epoch ep or later in dir.
func fileSinkReached(t *testing.T, dir, name string, ep base.Epoch) bool {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, ent := range ents {
		if n, ok := filesink.ParseName(name, ent.Name()); ok && !n.Temp && n.Epoch >= ep {
			return true
		}
	}
	return false
}
