package engine

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/connector/ingest"
	gen "github.com/stratadb/strata/connector/nexmark"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/sqlerr"
)

// bidColumns are the columns of Nexmark's bid, as a CREATE names them.
func bidColumns() []catalog.Column {
	var cols []catalog.Column
	for _, c := range gen.Bid.Schema().Columns {
		cols = append(cols, catalog.Column{Name: c.Name, Type: c.Type})
	}
	return cols
}

func nexmarkOptions(events, seed uint64, more ...string) map[string]string {
	o := map[string]string{"nexmark.table": "bid", "events": fmt.Sprint(events), "seed": fmt.Sprint(seed)}
	for i := 0; i+1 < len(more); i += 2 {
		o[more[i]] = more[i+1]
	}
	return o
}

// waitSourceConsumed waits until view's reader of source src has closed
// an epoch past the last event and the view has committed it; it returns
// that epoch.
func waitSourceConsumed(t *testing.T, e *Engine, view, src catalog.ObjectName, rd *gen.Reader) base.Epoch {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	for {
		p := e.SourcePosition(view, src)
		if p.Epoch > 0 && rd.Exhausted(p.Position) {
			if err := e.WaitCommitted(ctx, view, p.Epoch); err != nil {
				t.Fatal(err)
			}
			return p.Epoch
		}
		select {
		case <-ctx.Done():
			t.Fatalf("view %s: source %s not consumed (at %+v): %v", view.Name, src.Name, p, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// generatedBids returns every bid of the generator's configuration, read
// here straight from connector/nexmark: the input a view over the source
// must have seen, once each.
func generatedBids(t *testing.T, cfg gen.Config) []types.Row {
	t.Helper()
	rd, err := gen.NewReader(gen.Bid, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var rows []types.Row
	for pos := uint64(0); !rd.Exhausted(pos); {
		c, next, err := rd.Next(pos)
		if err != nil {
			t.Fatal(err)
		}
		if c == nil {
			t.Fatalf("generator gave nothing at %d before its end", pos)
		}
		for i := range c.Len() {
			rows = append(rows, c.Row(i))
		}
		pos = next
	}
	return rows
}

// TestSourceViewEqualsTableView runs the same two views, a projection
// with a filter and an aggregate, over a Nexmark source and over a
// Nexmark table of the same seed and bounded events: each pair must hold
// the same rows, the projection also equal to the generator's bids
// filtered here. It checks that the source shows in strata_catalog and
// pg_catalog, that its scan is append-only, and that nothing of it is
// stored.
func TestSourceViewEqualsTableView(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := openTest(t, dir)
	defer e.Close()
	const events, seed = 6000, 11
	src := catalog.Name(DefaultDatabase, "bid_src")
	tbl := catalog.Name(DefaultDatabase, "bid_tbl")
	if err := e.CreateSource(ctx, catalog.Source{Name: src, Connector: "nexmark", Columns: bidColumns(), Options: nexmarkOptions(events, seed)}, false); err != nil {
		t.Fatal(err)
	}
	opts := nexmarkOptions(events, seed)
	opts["connector"] = "nexmark"
	if err := e.CreateTable(ctx, catalog.Table{Name: tbl, Columns: bidColumns(), Options: opts}, false); err != nil {
		t.Fatal(err)
	}
	explain, err := e.ExplainView(ctx, DefaultDatabase, "SELECT auction, price FROM bid_src WHERE auction % 7 = 0")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(explain, "scan-bid_src (parallelism 1, append-only)") {
		t.Errorf("explain of a view over a source: want an append-only scan:\n%s", explain)
	}
	const (
		project = "SELECT auction, bidder, price, date_time FROM %s WHERE auction %% 7 = 0"
		agg     = "SELECT auction %% 10 AS g, count(*) AS n, sum(price) AS s, max(date_time) AS last FROM %s GROUP BY auction %% 10"
		// Two scans of one source: each reads it with readers of its own.
		union = "SELECT auction, price FROM %[1]s WHERE auction %% 11 = 0 UNION ALL SELECT auction, price FROM %[1]s WHERE bidder %% 13 = 0"
	)
	views := map[string]string{"p_src": fmt.Sprintf(project, "bid_src"), "p_tbl": fmt.Sprintf(project, "bid_tbl"),
		"a_src": fmt.Sprintf(agg, "bid_src"), "a_tbl": fmt.Sprintf(agg, "bid_tbl"),
		"u_src": fmt.Sprintf(union, "bid_src"), "u_tbl": fmt.Sprintf(union, "bid_tbl")}
	for _, n := range []string{"p_src", "p_tbl", "a_src", "a_tbl", "u_src", "u_tbl"} {
		if err := e.CreateView(ctx, catalog.Name(DefaultDatabase, n), views[n], nil, false); err != nil {
			t.Fatalf("view %s: %v", n, err)
		}
	}
	rd, err := gen.NewReader(gen.Bid, gen.Config{Events: events, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	tblEpoch := waitIngested(t, e, tbl, rd.Exhausted)
	read := func(name string, ep base.Epoch) []types.Row {
		t.Helper()
		_, rows, _, err := e.ReadAt(ctx, catalog.Name(DefaultDatabase, name), ep)
		if err != nil {
			t.Fatalf("read %s at %d: %v", name, ep, err)
		}
		return rows
	}
	for _, pair := range [][2]string{{"p_src", "p_tbl"}, {"a_src", "a_tbl"}, {"u_src", "u_tbl"}} {
		vs, vt := catalog.Name(DefaultDatabase, pair[0]), catalog.Name(DefaultDatabase, pair[1])
		srcEpoch := waitSourceConsumed(t, e, vs, src, rd)
		// A view created after the table took every event holds them
		// from its first epoch on (the backfill).
		at := max(tblEpoch, e.ViewStartEpoch(ctx, vt))
		if err := e.WaitCommitted(ctx, vt, at); err != nil {
			t.Fatal(err)
		}
		got, want := read(pair[0], srcEpoch), read(pair[1], at)
		if len(got) == 0 || sorted(got) != sorted(want) {
			t.Fatalf("view %s over the source (%d rows at %d) differs from %s over the table (%d rows at %d)",
				pair[0], len(got), srcEpoch, pair[1], len(want), at)
		}
	}
	var want []types.Row
	for _, r := range generatedBids(t, gen.Config{Events: events, Seed: seed}) {
		if r[0].Int64()%7 == 0 {
			want = append(want, types.Row{r[0], r[1], r[2], r[5]})
		}
	}
	if got := read("p_src", base.NoEpoch); sorted(got) != sorted(want) {
		t.Fatalf("p_src: %d rows, want the generator's %d bids with auction %% 7 = 0", len(got), len(want))
	}

	// The catalog shows the source; nothing of it is stored.
	rows, err := systemTables["tables"].rows(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, r := range rows {
		kinds[r[0].Str()] = r[1].Str()
	}
	if kinds["bid_src"] != "source" || kinds["bid_tbl"] != "table" || kinds["p_src"] != "view" {
		t.Errorf("strata_catalog.tables kinds: %v", kinds)
	}
	objs, err := e.CatalogObjects(ctx, DefaultDatabase)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, o := range objs {
		if o.Name == "bid_src" {
			found = len(o.Columns) == len(bidColumns()) && strings.Contains(o.ViewDef, "nexmark")
		}
	}
	if !found {
		t.Errorf("pg_catalog objects lack source bid_src with its %d columns", len(bidColumns()))
	}
	if _, err := e.Table(src); err == nil {
		t.Error("source bid_src has a table in the warehouse")
	}
}

// flakyNexmark is the nexmark connector whose readers panic once, the
// first time a read starts at or past panicAt while armed is set.
func flakyNexmark(armed *atomic.Bool, panicAt uint64) Connector {
	return func(t catalog.Table, opts map[string]string) ([]ingest.Reader, error) {
		r, err := gen.Open(opts)
		if err != nil {
			return nil, err
		}
		return []ingest.Reader{flakyReader{r: r, armed: armed, at: panicAt}}, nil
	}
}

type flakyReader struct {
	r     ingest.Reader
	armed *atomic.Bool
	at    uint64
}

func (f flakyReader) Next(pos uint64) (*types.Chunk, uint64, error) {
	if pos >= f.at && f.armed.CompareAndSwap(true, false) {
		panic(fmt.Sprintf("injected failure at position %d", pos))
	}
	return f.r.Next(pos)
}

// TestSourceViewRecovers reads a paced Nexmark source in a view whose
// reader panics once halfway, then restarts the whole engine on the same
// data directory while the view is still reading: the view must end with
// every generated bid it selects exactly once, as a failure-free run
// gives, the source positions having been restored from the view job's
// checkpoints.
func TestSourceViewRecovers(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const events, seed = 30000, 5
	var armed atomic.Bool
	armed.Store(true)
	open := func() *Engine {
		e, err := Open(ctx, Options{Dir: dir, EpochInterval: 20 * time.Millisecond, CheckpointInterval: 20 * time.Millisecond,
			Connectors: map[string]Connector{"flaky-nexmark": flakyNexmark(&armed, events/3)}})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := open()
	src := catalog.Name(DefaultDatabase, "bid")
	view := catalog.Name(DefaultDatabase, "sel")
	if err := e.CreateSource(ctx, catalog.Source{Name: src, Connector: "flaky-nexmark", Columns: bidColumns(),
		Options: nexmarkOptions(events, seed, "rate", "15000")}, false); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateView(ctx, view, "SELECT auction, bidder, price, extra FROM bid WHERE bidder % 3 = 1", nil, false); err != nil {
		t.Fatal(err)
	}
	// The panic happens, the job restarts from its checkpoint, and the
	// engine goes down before the source is exhausted.
	deadline := time.Now().Add(30 * time.Second)
	for restarted := false; !restarted; {
		for _, j := range e.Jobs() {
			restarted = restarted || j.Name == viewJobName(view) && j.Restarts > 0
		}
		if time.Now().After(deadline) {
			t.Fatal("the injected failure did not restart the view's job")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if armed.Load() {
		t.Fatal("the failure was not injected")
	}
	rd, err := gen.NewReader(gen.Bid, gen.Config{Events: events, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	if p := e.SourcePosition(view, src); rd.Exhausted(p.Position) {
		t.Fatalf("source exhausted (%+v) before the engine restart; the test needs it mid-stream", p)
	}
	// Rows committed before the restart must not come again after it.
	if _, before, _, err := e.ReadAt(ctx, view, base.NoEpoch); err != nil || len(before) == 0 {
		t.Fatalf("view before the restart: %d rows (%v); the test needs some committed", len(before), err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = open()
	defer e.Close()
	ep := waitSourceConsumed(t, e, view, src, rd)
	_, got, _, err := e.ReadAt(ctx, view, ep)
	if err != nil {
		t.Fatal(err)
	}
	var want []types.Row
	for _, r := range generatedBids(t, gen.Config{Events: events, Seed: seed}) {
		if r[1].Int64()%3 == 1 {
			want = append(want, types.Row{r[0], r[1], r[2], r[6]})
		}
	}
	if len(got) != len(want) || sorted(got) != sorted(want) {
		t.Fatalf("view after a failure and a restart: %d rows, want %d (each selected bid once)", len(got), len(want))
	}
}

// TestSourceRefusals checks the statements a source refuses, with their
// SQLSTATEs and messages: a primary key, a format that carries updates,
// no columns, a table store option, a plain SELECT, a LOOKUP, verify of a
// view reading it, and DROP SOURCE while a view reads it.
func TestSourceRefusals(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	name := catalog.Name(DefaultDatabase, "bids")
	check := func(what string, err error, code string, parts ...string) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error", what)
		}
		if got := sqlerr.Code(err); got != code {
			t.Errorf("%s: SQLSTATE %s, want %s (%v)", what, got, code, err)
		}
		for _, p := range parts {
			if !strings.Contains(err.Error(), p) {
				t.Errorf("%s: error %q does not say %q", what, err, p)
			}
		}
	}
	cols := bidColumns()
	cols[0].NotNull = true
	err := e.CreateSource(ctx, catalog.Source{Name: name, Connector: "nexmark", Columns: cols, PrimaryKey: []string{"auction"},
		Options: nexmarkOptions(100, 1)}, false)
	check("primary key", err, sqlerr.InvalidObjectDefinition, "CREATE SOURCE bids", "cannot have a PRIMARY KEY", "inserts only", "CREATE TABLE bids")
	err = e.CreateSource(ctx, catalog.Source{Name: name, Connector: "kafka", Columns: bidColumns(),
		Options: map[string]string{"topic": "t", "properties.bootstrap.server": "127.0.0.1:1", "format": "debezium-json"}}, false)
	check("debezium", err, sqlerr.InvalidObjectDefinition, "CREATE SOURCE bids", "debezium-json", "updates and deletes")
	err = e.CreateSource(ctx, catalog.Source{Name: name, Connector: "nexmark", Options: nexmarkOptions(100, 1)}, false)
	check("no columns", err, sqlerr.InvalidObjectDefinition, "needs its columns")
	err = e.CreateSource(ctx, catalog.Source{Name: name, Connector: "nexmark", Columns: bidColumns(), Options: nexmarkOptions(100, 1, "bucket", "4")}, false)
	check("store option", err, sqlerr.InvalidParameterValue, `option "bucket"`, "stores nothing")
	err = e.CreateSource(ctx, catalog.Source{Name: name, Connector: "nexmark", Columns: bidColumns()[:2], Options: nexmarkOptions(100, 1)}, false)
	check("columns unlike the connector's", err, sqlerr.InvalidParameterValue, "source bids", "nexmark")
	err = e.CreateSource(ctx, catalog.Source{Name: name, Connector: "nexmark", Columns: bidColumns(), Options: nexmarkOptions(100, 1, "colour", "red")}, false)
	check("unknown option", err, sqlerr.InvalidParameterValue, "colour")
	if cat, err := e.Catalog(ctx); err != nil || cat.IsSource(name) {
		t.Fatalf("a refused CREATE SOURCE left source %s (%v)", name.Name, err)
	}

	if err := e.CreateSource(ctx, catalog.Source{Name: name, Connector: "nexmark", Columns: bidColumns(), Options: nexmarkOptions(100, 1)}, false); err != nil {
		t.Fatal(err)
	}
	const sel = "SELECT * FROM bids"
	_, _, err = e.PlanOLAP(ctx, DefaultDatabase, sel)
	check("SELECT (DuckDB)", err, sqlerr.WrongObjectType, `source "bids" stores nothing`, "create a table", "materialized view")
	st, err := parser.ParseOne(sel)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Bind(ctx, DefaultDatabase, st.Node, sel, nil, nil)
	check("SELECT (batch)", err, sqlerr.WrongObjectType, `source "bids" stores nothing`)

	err = e.CreateExternalSink(ctx, catalog.Name(DefaultDatabase, "out"), name, map[string]string{"connector": "file", "path": t.TempDir(), "format": "csv"}, false)
	check("CREATE SINK FROM a source", err, sqlerr.WrongObjectType, "source bids stores nothing", "CREATE MATERIALIZED VIEW")
	view := catalog.Name(DefaultDatabase, "big")
	if err := e.CreateView(ctx, view, "SELECT auction, price FROM bids WHERE price > 1000", nil, false); err != nil {
		t.Fatal(err)
	}
	err = e.CreateView(ctx, catalog.Name(DefaultDatabase, "lk"), "SELECT b.auction FROM big AS b JOIN LOOKUP(bids) AS l ON b.auction = l.auction", nil, false)
	check("LOOKUP", err, sqlerr.FeatureNotSupported, "LOOKUP(bids)")
	rd, err := gen.NewReader(gen.Bid, gen.Config{Events: 100, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	waitSourceConsumed(t, e, view, name, rd)
	_, err = e.Verify(ctx, view, 0)
	check("verify", err, sqlerr.ObjectNotInPrerequisiteState, "cannot be recomputed", "source bids", "stores nothing", "says nothing against the view")
	_, err = e.DropSource(ctx, name, false)
	check("DROP SOURCE", err, sqlerr.DependentObjectsStillExist, "cannot drop source bids", "materialized view big reads it")
	if err := e.Drop(ctx, "view", view, false, false); err != nil {
		t.Fatal(err)
	}
	if p := e.SourcePosition(view, name); p != (ingest.Pair{}) {
		t.Errorf("position of a dropped view's reader: %+v", p)
	}
	if _, err := e.DropSource(ctx, name, false); err != nil {
		t.Fatalf("DROP SOURCE once no view reads it: %v", err)
	}
}

// TestSourceSink writes a source's selected rows into a table with CREATE
// SINK ... INTO ... AS SELECT: the table gets every selected bid once, and
// DROP SOURCE names the sink while it runs.
func TestSourceSink(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	const events, seed = 3000, 2
	src := catalog.Name(DefaultDatabase, "bids")
	if err := e.CreateSource(ctx, catalog.Source{Name: src, Connector: "nexmark", Columns: bidColumns(), Options: nexmarkOptions(events, seed)}, false); err != nil {
		t.Fatal(err)
	}
	into := catalog.Name(DefaultDatabase, "dear")
	if err := e.CreateTable(ctx, catalog.Table{Name: into, Columns: []catalog.Column{{Name: "auction", Type: types.Int64}, {Name: "price", Type: types.Int64}}}, false); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateSink(ctx, catalog.Name(DefaultDatabase, "s"), into, "SELECT auction, price FROM bids WHERE price > 5000", false); err != nil {
		t.Fatal(err)
	}
	var want []types.Row
	for _, r := range generatedBids(t, gen.Config{Events: events, Seed: seed}) {
		if r[2].Int64() > 5000 {
			want = append(want, types.Row{r[0], r[2]})
		}
	}
	var got []types.Row
	for deadline := time.Now().Add(30 * time.Second); len(got) < len(want) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		var err error
		if _, got, _, err = e.ReadAt(ctx, into, base.NoEpoch); err != nil {
			t.Fatal(err)
		}
	}
	if len(want) == 0 || sorted(got) != sorted(want) {
		t.Fatalf("sink target: %d rows, want the generator's %d bids with price > 5000", len(got), len(want))
	}
	_, err := e.DropSource(ctx, src, false)
	if err == nil || sqlerr.Code(err) != sqlerr.DependentObjectsStillExist || !strings.Contains(err.Error(), "sink s reads it") {
		t.Fatalf("DROP SOURCE read by a sink: %v", err)
	}
}

// TestSourceJoinsTable joins a Nexmark bid source with a Nexmark auction
// table in one view, whose job then closes epochs on a source subtask
// and a table source alike: it must equal the same join over two tables.
func TestSourceJoinsTable(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	const events, seed = 8000, 4
	bidSrc := catalog.Name(DefaultDatabase, "bid_src")
	if err := e.CreateSource(ctx, catalog.Source{Name: bidSrc, Connector: "nexmark", Columns: bidColumns(), Options: nexmarkOptions(events, seed)}, false); err != nil {
		t.Fatal(err)
	}
	bidOpts := nexmarkOptions(events, seed)
	bidOpts["connector"] = "nexmark"
	if err := e.CreateTable(ctx, catalog.Table{Name: catalog.Name(DefaultDatabase, "bid_tbl"), Columns: bidColumns(), Options: bidOpts}, false); err != nil {
		t.Fatal(err)
	}
	var auctionCols []catalog.Column
	for _, c := range gen.Auction.Schema().Columns {
		auctionCols = append(auctionCols, catalog.Column{Name: c.Name, Type: c.Type, NotNull: c.Name == "id"})
	}
	auction := catalog.Name(DefaultDatabase, "auction")
	if err := e.CreateTable(ctx, catalog.Table{Name: auction, Columns: auctionCols, PrimaryKey: []string{"id"},
		Options: map[string]string{"connector": "nexmark", "nexmark.table": "auction", "events": fmt.Sprint(events), "seed": fmt.Sprint(seed)}}, false); err != nil {
		t.Fatal(err)
	}
	const join = "SELECT b.auction, b.bidder, b.price, a.category FROM %s AS b JOIN auction AS a ON b.auction = a.id"
	vs, vt := catalog.Name(DefaultDatabase, "j_src"), catalog.Name(DefaultDatabase, "j_tbl")
	if err := e.CreateView(ctx, vs, fmt.Sprintf(join, "bid_src"), nil, false); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateView(ctx, vt, fmt.Sprintf(join, "bid_tbl"), nil, false); err != nil {
		t.Fatal(err)
	}
	rdAuction, err := gen.NewReader(gen.Auction, gen.Config{Events: events, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	rdBid, err := gen.NewReader(gen.Bid, gen.Config{Events: events, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	at := max(waitIngested(t, e, auction, rdAuction.Exhausted), waitIngested(t, e, catalog.Name(DefaultDatabase, "bid_tbl"), rdBid.Exhausted))
	at = max(at, waitSourceConsumed(t, e, vs, bidSrc, rdBid), e.ViewStartEpoch(ctx, vt))
	for _, v := range []catalog.ObjectName{vs, vt} {
		if err := e.WaitCommitted(ctx, v, at); err != nil {
			t.Fatal(err)
		}
	}
	_, got, _, err := e.ReadAt(ctx, vs, at)
	if err != nil {
		t.Fatal(err)
	}
	_, want, _, err := e.ReadAt(ctx, vt, at)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || sorted(got) != sorted(want) {
		t.Fatalf("join of the bid source with table auction: %d rows at epoch %d, the join of two tables %d", len(got), at, len(want))
	}
}
