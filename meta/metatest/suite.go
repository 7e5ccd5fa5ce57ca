package metatest

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/lineage"
	"github.com/stratadb/strata/meta/version"
)

// Harness is one implementation under test.
type Harness struct {
	// Service is a fresh service on an empty store.
	Service meta.Service
	// Restart stops Service and returns a new one on the same store; nil
	// when the implementation cannot restart.
	Restart func(t *testing.T) meta.Service
}

// Run runs every case, each on a fresh harness from open. open registers
// its own cleanup with t.
func Run(t *testing.T, open func(t *testing.T) *Harness) {
	for _, c := range []struct {
		name string
		f    func(t *testing.T, h *Harness)
	}{
		{"Catalog", testCatalog},
		{"Lineage", testLineage},
		{"Epochs", testEpochs},
		{"CommittedEpochs", testCommittedEpochs},
		{"ConsistentVersions", testConsistentVersions},
		{"StrongWaitsForLaggard", testStrongWaits},
		{"Pins", testPins},
		{"Jobs", testJobs},
		{"Freshness", testFreshness},
		{"Restart", testRestart},
		{"ChangeAtomic", testChangeAtomic},
	} {
		t.Run(c.name, func(t *testing.T) { c.f(t, open(t)) })
	}
}

func name(s string) catalog.ObjectName { return catalog.Name("shop", s) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, err error, marker error, says ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want %v", marker)
	}
	if !errors.Is(err, marker) {
		t.Fatalf("error %q does not match %v", err, marker)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("error %q does not say %q", err, s)
		}
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func table(n string, kind catalog.TableKind) catalog.Table {
	t := catalog.Table{Name: name(n), Kind: kind,
		Columns:    []catalog.Column{{Name: "id", Type: types.Int64, NotNull: true}, {Name: "v", Type: types.Text}},
		PrimaryKey: []string{"id"}}
	if kind == catalog.KindView {
		t.Query = "SELECT id, v FROM shop.x"
	}
	return t
}

// diamond creates source s, table t1 (ingest from s), views t2, t3 (from
// t1) and t4 (from t2 and t3), and an unrelated pair s9 -> u.
func diamond(t *testing.T, s meta.Service) {
	ctx := ctxT(t)
	must(t, s.CreateDatabase(ctx, catalog.Database{Name: "shop"}))
	must(t, s.CreateSource(ctx, catalog.Source{Name: name("s"), Connector: "postgrescdc"}))
	must(t, s.CreateSource(ctx, catalog.Source{Name: name("s9"), Connector: "kafka"}))
	must(t, s.CreateTable(ctx, table("t1", catalog.KindTable)))
	must(t, s.CreateTable(ctx, table("u", catalog.KindTable)))
	for _, v := range []string{"t2", "t3", "t4"} {
		must(t, s.CreateTable(ctx, table(v, catalog.KindView)))
	}
	jobs := []catalog.Job{
		{Name: "ingest", Kind: catalog.JobIngest, Reads: []catalog.ObjectName{name("s")}, Writes: []catalog.ObjectName{name("t1")}},
		{Name: "v2", Kind: catalog.JobView, Reads: []catalog.ObjectName{name("t1")}, Writes: []catalog.ObjectName{name("t2")}},
		{Name: "v3", Kind: catalog.JobView, Reads: []catalog.ObjectName{name("t1")}, Writes: []catalog.ObjectName{name("t3")}},
		{Name: "v4", Kind: catalog.JobView, Reads: []catalog.ObjectName{name("t2"), name("t3")}, Writes: []catalog.ObjectName{name("t4")}},
		{Name: "ingest_u", Kind: catalog.JobIngest, Reads: []catalog.ObjectName{name("s9")}, Writes: []catalog.ObjectName{name("u")}},
	}
	for _, j := range jobs {
		must(t, s.RegisterJob(ctx, j))
	}
}

// reach waits until epoch e is open.
func reach(t *testing.T, s meta.Service, e base.Epoch) {
	t.Helper()
	ctx := ctxT(t)
	for {
		cur, err := s.CurrentEpoch(ctx)
		must(t, err)
		if cur.Epoch >= e {
			return
		}
		if _, err := s.WaitEpoch(ctx, cur.Epoch); err != nil {
			t.Fatal(err)
		}
	}
}

// base epoch for commits: the current epoch at the start of a case, so that
// the cases work whatever epoch a restored store starts at.
func current(t *testing.T, s meta.Service) base.Epoch {
	t.Helper()
	cur, err := s.CurrentEpoch(ctxT(t))
	must(t, err)
	return cur.Epoch
}

func commit(t *testing.T, s meta.Service, tb string, e base.Epoch) {
	t.Helper()
	reach(t, s, e)
	must(t, s.CommitEpoch(ctxT(t), name(tb), e))
}

func testCatalog(t *testing.T, h *Harness) {
	s, ctx := h.Service, ctxT(t)
	must(t, s.CreateDatabase(ctx, catalog.Database{Name: "shop", Options: map[string]string{"owner": "ops"}}))
	wantErr(t, s.CreateDatabase(ctx, catalog.Database{Name: "shop"}), base.ErrConflict, `"shop"`)
	wantErr(t, s.CreateDatabase(ctx, catalog.Database{Name: "../etc"}), base.ErrInvalidArgument, "holds a dot")
	dec, _ := types.NumericType(12, 2)
	tb := table("orders", catalog.KindTable)
	tb.Columns = append(tb.Columns, catalog.Column{Name: "amount", Type: dec})
	tb.Options = map[string]string{"bucket": "2"}
	must(t, s.CreateTable(ctx, tb))
	wantErr(t, s.CreateTable(ctx, tb), base.ErrConflict, "shop.orders")
	v := table("big", catalog.KindView)
	v.Query = "SELECT * FROM shop.orders WHERE amount > 100"
	must(t, s.CreateTable(ctx, v))
	must(t, s.CreateSource(ctx, catalog.Source{Name: name("cdc"), Connector: "postgrescdc", Options: map[string]string{"slot": "s1"}}))
	c, err := s.Catalog(ctx)
	must(t, err)
	got, err := c.Table(name("orders"))
	must(t, err)
	if got.Columns[2].Type != dec || got.Options["bucket"] != "2" || got.Version != 2 {
		t.Fatalf("table read back = %+v", got)
	}
	gv, err := c.Table(name("big"))
	must(t, err)
	if gv.Kind != catalog.KindView || gv.Query != v.Query {
		t.Fatalf("view read back = %+v", gv)
	}
	if c.Version() != 4 || len(c.Sources()) != 1 {
		t.Fatalf("catalog version %d, %d sources", c.Version(), len(c.Sources()))
	}
	must(t, s.RegisterJob(ctx, catalog.Job{Name: "ingest", Kind: catalog.JobIngest, Reads: []catalog.ObjectName{name("cdc")}, Writes: []catalog.ObjectName{name("orders")}}))
	wantErr(t, s.DropTable(ctx, name("orders")), base.ErrConflict, `job "ingest"`)
	wantErr(t, s.DropDatabase(ctx, "shop"), base.ErrConflict)
	wantErr(t, s.DropTable(ctx, name("nope")), base.ErrNotFound, "shop.nope")
	must(t, s.DropJob(ctx, "ingest"))
	must(t, s.DropTable(ctx, name("orders")))
	must(t, s.DropTable(ctx, name("big")))
	must(t, s.DropSource(ctx, name("cdc")))
	must(t, s.DropDatabase(ctx, "shop"))
	c, err = s.Catalog(ctx)
	must(t, err)
	if len(c.Databases()) != 0 || len(c.Tables()) != 0 || len(c.Jobs()) != 0 {
		t.Fatalf("catalog not empty after drops: %+v", c.Tables())
	}
}

func testLineage(t *testing.T, h *Harness) {
	s, ctx := h.Service, ctxT(t)
	diamond(t, s)
	// A second writer to t3 and a cycle back into t1's upstream are refused,
	// naming both sides.
	wantErr(t, s.RegisterJob(ctx, catalog.Job{Name: "dup", Kind: catalog.JobView, Reads: []catalog.ObjectName{name("t2")}, Writes: []catalog.ObjectName{name("t3")}}),
		lineage.ErrSecondWriter, `job "dup"`, `job "v3"`, "shop.t3")
	must(t, s.CreateTable(ctx, table("t5", catalog.KindView)))
	must(t, s.RegisterJob(ctx, catalog.Job{Name: "v5", Kind: catalog.JobView, Reads: []catalog.ObjectName{name("t4")}, Writes: []catalog.ObjectName{name("t5")}}))
	// Without v2, t2 has no writer; writing it from t5 would close
	// t2 -> v4 -> t4 -> v5 -> t5 -> back -> t2.
	must(t, s.DropJob(ctx, "v2"))
	wantErr(t, s.RegisterJob(ctx, catalog.Job{Name: "back", Kind: catalog.JobView, Reads: []catalog.ObjectName{name("t5")}, Writes: []catalog.ObjectName{name("t2")}}),
		lineage.ErrCycle, `job "back"`, `job "v4"`, `job "v5"`, "shop.t2", "shop.t5")
	if _, err := s.Job(ctx, "back"); !errors.Is(err, base.ErrNotFound) {
		t.Fatalf("refused job was registered: %v", err)
	}
	must(t, s.RegisterJob(ctx, catalog.Job{Name: "v2", Kind: catalog.JobView, Reads: []catalog.ObjectName{name("t1")}, Writes: []catalog.ObjectName{name("t2")}}))

	l, err := s.Lineage(ctx, meta.LineageQuery{Node: ptr(name("t4"))})
	must(t, err)
	want := meta.Lineage{
		Upstream:   lineage.Set{Nodes: []catalog.ObjectName{name("s"), name("t1"), name("t2"), name("t3")}, Jobs: []string{"ingest", "v2", "v3", "v4"}},
		Downstream: lineage.Set{Nodes: []catalog.ObjectName{name("t5")}, Jobs: []string{"v5"}},
	}
	if !reflect.DeepEqual(l, want) {
		t.Fatalf("Lineage(t4) = %+v\nwant %+v", l, want)
	}
	l, err = s.Lineage(ctx, meta.LineageQuery{Job: "v3"})
	must(t, err)
	want = meta.Lineage{
		Upstream:   lineage.Set{Nodes: []catalog.ObjectName{name("s"), name("t1")}, Jobs: []string{"ingest"}},
		Downstream: lineage.Set{Nodes: []catalog.ObjectName{name("t3"), name("t4"), name("t5")}, Jobs: []string{"v4", "v5"}},
	}
	if !reflect.DeepEqual(l, want) {
		t.Fatalf("Lineage(job v3) = %+v\nwant %+v", l, want)
	}
	_, err = s.Lineage(ctx, meta.LineageQuery{Node: ptr(name("nope"))})
	wantErr(t, err, base.ErrNotFound)
	_, err = s.Lineage(ctx, meta.LineageQuery{})
	wantErr(t, err, base.ErrInvalidArgument)
}

func ptr[T any](v T) *T { return &v }

func testEpochs(t *testing.T, h *Harness) {
	s, ctx := h.Service, ctxT(t)
	first, err := s.CurrentEpoch(ctx)
	must(t, err)
	if first.Epoch == base.NoEpoch || first.Start.IsZero() {
		t.Fatalf("CurrentEpoch = %+v", first)
	}
	prev := first
	for range 5 {
		next, err := s.WaitEpoch(ctx, prev.Epoch)
		must(t, err)
		if next.Epoch <= prev.Epoch || next.Start.Before(prev.Start) {
			t.Fatalf("WaitEpoch(%d) = %+v after %+v", prev.Epoch, next, prev)
		}
		prev = next
	}
	// Waiting far ahead runs out of time with the context's error.
	short, cancel := context.WithTimeout(ctx, 30*time.Millisecond)
	defer cancel()
	_, err = s.WaitEpoch(short, prev.Epoch+1_000_000)
	wantErr(t, err, context.DeadlineExceeded)
}

func testCommittedEpochs(t *testing.T, h *Harness) {
	s, ctx := h.Service, ctxT(t)
	diamond(t, s)
	c, err := s.CommittedEpoch(ctx, name("t1"))
	must(t, err)
	if c.Epoch != 0 {
		t.Fatalf("fresh table committed %d", c.Epoch)
	}
	e := current(t, s) + 2
	commit(t, s, "t1", e)
	commit(t, s, "t1", e) // a repeat is fine
	c, err = s.CommittedEpoch(ctx, name("t1"))
	must(t, err)
	if c.Epoch != e || c.Start.IsZero() || c.Reported.IsZero() {
		t.Fatalf("committed = %+v, want epoch %d with times", c, e)
	}
	wantErr(t, s.CommitEpoch(ctx, name("t1"), e-1), version.ErrEpochBackwards, "shop.t1")
	wantErr(t, s.CommitEpoch(ctx, name("t1"), e-1), base.ErrConflict)
	wantErr(t, s.CommitEpoch(ctx, name("t1"), e+1_000_000), base.ErrInvalidArgument, "has not opened")
	wantErr(t, s.CommitEpoch(ctx, name("nope"), e), base.ErrNotFound, "shop.nope")
	c, _ = s.CommittedEpoch(ctx, name("t1"))
	if c.Epoch != e {
		t.Fatalf("refused reports moved the committed epoch to %d", c.Epoch)
	}
}

func acquire(t *testing.T, s meta.Service, mode version.Mode, tables ...string) meta.Version {
	t.Helper()
	var names []catalog.ObjectName
	for _, tb := range tables {
		names = append(names, name(tb))
	}
	v, err := s.AcquireVersion(ctxT(t), meta.VersionRequest{Tables: names, Mode: mode, Holder: "session-1"})
	must(t, err)
	return v
}

func epochs(v meta.Version) map[string]base.Epoch {
	out := map[string]base.Epoch{}
	for n, e := range v.Epochs {
		out[n.Name] = e
	}
	return out
}

func testConsistentVersions(t *testing.T, h *Harness) {
	s := h.Service
	diamond(t, s)
	e := current(t, s)
	commit(t, s, "t1", e+5)
	commit(t, s, "t2", e+4)
	commit(t, s, "t3", e+3)
	commit(t, s, "t4", e+2)
	commit(t, s, "u", e+9)
	for _, mode := range []version.Mode{version.Weak, version.Strong} {
		v := acquire(t, s, mode, "t1", "t2", "t3", "t4", "u")
		want := map[string]base.Epoch{"t1": e + 2, "t2": e + 2, "t3": e + 2, "t4": e + 2, "u": e + 9}
		if got := epochs(v); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s read = %v, want %v", mode, got, want)
		}
		if len(v.Groups) != 2 || len(v.Groups[0]) != 4 || v.Pin == 0 || v.Expires.IsZero() {
			t.Fatalf("%s read groups %v pin %d expires %v", mode, v.Groups, v.Pin, v.Expires)
		}
	}
	// A read of t1 and t3 alone is consistent at t3's epoch.
	if got := epochs(acquire(t, s, version.Weak, "t1", "t3")); got["t1"] != e+3 || got["t3"] != e+3 {
		t.Fatalf("read of t1, t3 = %v", got)
	}
	_, err := s.AcquireVersion(ctxT(t), meta.VersionRequest{Tables: []catalog.ObjectName{name("s")}, Mode: version.Weak, Holder: "x"})
	wantErr(t, err, base.ErrNotFound, "shop.s")
	_, err = s.AcquireVersion(ctxT(t), meta.VersionRequest{Tables: []catalog.ObjectName{name("t1")}, Mode: "eventual", Holder: "x"})
	wantErr(t, err, base.ErrInvalidArgument, "eventual")
}

func testStrongWaits(t *testing.T, h *Harness) {
	s := h.Service
	diamond(t, s)
	e := current(t, s)
	commit(t, s, "t1", e+6)
	commit(t, s, "t2", e+3)
	// A strong read of t1 alone hands out e+6 ...
	if got := epochs(acquire(t, s, version.Strong, "t1")); got["t1"] != e+6 {
		t.Fatalf("strong t1 = %v", got)
	}
	// ... so a strong read of t1 with t2 (at e+3) must wait for t2.
	short, cancel := context.WithTimeout(ctxT(t), time.Second) // long enough for a loaded machine to reach the wait
	defer cancel()
	_, err := s.AcquireVersion(short, meta.VersionRequest{Tables: []catalog.ObjectName{name("t1"), name("t2")}, Mode: version.Strong, Holder: "q"})
	wantErr(t, err, context.DeadlineExceeded, "shop.t2", "shop.t1")
	// Weak reads do not wait and go back to e+3.
	if got := epochs(acquire(t, s, version.Weak, "t1", "t2")); got["t1"] != e+3 {
		t.Fatalf("weak t1, t2 = %v", got)
	}
	// Once t2 commits e+7 the strong read completes at e+6 (t1's epoch).
	done := make(chan meta.Version, 1)
	errc := make(chan error, 1)
	go func() {
		v, err := s.AcquireVersion(ctxT(t), meta.VersionRequest{Tables: []catalog.ObjectName{name("t1"), name("t2")}, Mode: version.Strong, Holder: "q"})
		if err != nil {
			errc <- err
			return
		}
		done <- v
	}()
	commit(t, s, "t2", e+7)
	select {
	case v := <-done:
		if got := epochs(v); got["t1"] != e+6 || got["t2"] != e+6 {
			t.Fatalf("strong t1, t2 after catch-up = %v", got)
		}
	case err := <-errc:
		t.Fatal(err)
	}
}

func testPins(t *testing.T, h *Harness) {
	s, ctx := h.Service, ctxT(t)
	diamond(t, s)
	e := current(t, s)
	commit(t, s, "t1", e+1)
	commit(t, s, "t2", e+1)
	if _, ok, err := s.PinnedEpoch(ctx, name("t1")); err != nil || ok {
		t.Fatalf("PinnedEpoch before any read = %v, %v", ok, err)
	}
	v1 := acquire(t, s, version.Weak, "t1", "t2")
	commit(t, s, "t1", e+4)
	commit(t, s, "t2", e+4)
	v2 := acquire(t, s, version.Weak, "t1")
	if v1.Pin == v2.Pin {
		t.Fatalf("two reads share pin %d", v1.Pin)
	}
	if p, ok, err := s.PinnedEpoch(ctx, name("t1")); err != nil || !ok || p != e+1 {
		t.Fatalf("PinnedEpoch(t1) = %d, %v, %v; want %d", p, ok, err, e+1)
	}
	exp, err := s.RenewPin(ctx, v1.Pin, time.Hour)
	must(t, err)
	if !exp.After(v1.Expires) {
		t.Fatalf("renewed expiry %v not after %v", exp, v1.Expires)
	}
	must(t, s.ReleasePin(ctx, v1.Pin))
	wantErr(t, s.ReleasePin(ctx, v1.Pin), base.ErrNotFound)
	_, err = s.RenewPin(ctx, v1.Pin, time.Hour)
	wantErr(t, err, base.ErrNotFound)
	if p, ok, _ := s.PinnedEpoch(ctx, name("t1")); !ok || p != e+4 {
		t.Fatalf("PinnedEpoch(t1) after release = %d, %v; want %d", p, ok, e+4)
	}
	if _, ok, _ := s.PinnedEpoch(ctx, name("t2")); ok {
		t.Fatal("t2 still pinned after its only pin was released")
	}
	// A pin with a tiny TTL lapses on its own.
	short, err := s.AcquireVersion(ctx, meta.VersionRequest{Tables: []catalog.ObjectName{name("t3")}, Mode: version.Weak, Holder: "q", TTL: time.Millisecond})
	must(t, err)
	time.Sleep(5 * time.Millisecond)
	if _, ok, _ := s.PinnedEpoch(ctx, name("t3")); ok {
		t.Fatal("expired pin still counts")
	}
	wantErr(t, s.ReleasePin(ctx, short.Pin), base.ErrNotFound)
}

func testJobs(t *testing.T, h *Harness) {
	s, ctx := h.Service, ctxT(t)
	diamond(t, s)
	info, err := s.Job(ctx, "v4")
	must(t, err)
	if info.Status != meta.JobCreated || info.Lost || info.Job.Kind != catalog.JobView || len(info.Job.Reads) != 2 {
		t.Fatalf("new job = %+v", info)
	}
	must(t, s.Heartbeat(ctx, meta.Heartbeat{Job: "v4", Status: meta.JobRunning, Checkpoint: 3}))
	must(t, s.Heartbeat(ctx, meta.Heartbeat{Job: "v4", Status: meta.JobRestarting, Checkpoint: 3}))
	wantErr(t, s.Heartbeat(ctx, meta.Heartbeat{Job: "v4", Status: meta.JobRunning, Checkpoint: 2}), base.ErrConflict, "checkpoint 2")
	wantErr(t, s.Heartbeat(ctx, meta.Heartbeat{Job: "nope", Status: meta.JobRunning}), base.ErrNotFound, `"nope"`)
	wantErr(t, s.Heartbeat(ctx, meta.Heartbeat{Job: "v4", Status: "DANCING"}), base.ErrInvalidArgument, "DANCING")
	must(t, s.Heartbeat(ctx, meta.Heartbeat{Job: "v4", Status: meta.JobFailed, Checkpoint: 5, Reason: "division by zero"}))
	info, err = s.Job(ctx, "v4")
	must(t, err)
	if info.Status != meta.JobFailed || info.LastCheckpoint != 5 || info.Reason != "division by zero" || info.LastHeartbeat.IsZero() {
		t.Fatalf("job after heartbeats = %+v", info)
	}
	all, err := s.Jobs(ctx)
	must(t, err)
	var names []string
	for _, j := range all {
		names = append(names, j.Job.Name)
	}
	if !reflect.DeepEqual(names, []string{"ingest", "ingest_u", "v2", "v3", "v4"}) {
		t.Fatalf("Jobs = %v", names)
	}
}

func testFreshness(t *testing.T, h *Harness) {
	s, ctx := h.Service, ctxT(t)
	diamond(t, s)
	e := current(t, s)
	commit(t, s, "t1", e+2)
	commit(t, s, "t2", e+1)
	f, err := s.Freshness(ctx)
	must(t, err)
	lags := map[string]meta.TableFreshness{}
	for _, tf := range f.Tables {
		lags[tf.Table.Name] = tf
	}
	t1, t2, t3 := lags["t1"], lags["t2"], lags["t3"]
	if !t1.Known || !t2.Known || t3.Known || t1.Committed != e+2 || t2.Committed != e+1 {
		t.Fatalf("table freshness = %+v", f.Tables)
	}
	// t2 committed an older epoch than t1, so it lags more.
	if t2.Lag <= t1.Lag || t1.Lag < 0 {
		t.Fatalf("lags t1 %v, t2 %v", t1.Lag, t2.Lag)
	}
	jobs := map[string]meta.JobFreshness{}
	for _, jf := range f.Jobs {
		jobs[jf.Job] = jf
	}
	if j := jobs["ingest"]; !j.Known || j.AddedLag != t1.Lag {
		t.Fatalf("ingest added lag = %+v, want %v (sources have no lag)", j, t1.Lag)
	}
	if j := jobs["v2"]; !j.Known || j.AddedLag != t2.Lag-t1.Lag {
		t.Fatalf("v2 added lag = %+v, want %v", j, t2.Lag-t1.Lag)
	}
	if j := jobs["v3"]; j.Known {
		t.Fatalf("v3 added lag known without a commit: %+v", j)
	}
}

func testRestart(t *testing.T, h *Harness) {
	if h.Restart == nil {
		t.Skip("this implementation does not restart")
	}
	s, ctx := h.Service, ctxT(t)
	diamond(t, s)
	e := current(t, s)
	commit(t, s, "t1", e+3)
	commit(t, s, "t2", e+1)
	strong := epochs(acquire(t, s, version.Strong, "t1"))
	pinned := acquire(t, s, version.Weak, "t1", "t2")
	must(t, s.Heartbeat(ctx, meta.Heartbeat{Job: "v2", Status: meta.JobRunning, Checkpoint: 7}))
	before, err := s.CurrentEpoch(ctx)
	must(t, err)

	s = h.Restart(t)
	after, err := s.CurrentEpoch(ctx)
	must(t, err)
	if after.Epoch <= before.Epoch {
		t.Fatalf("epoch went from %d to %d across a restart", before.Epoch, after.Epoch)
	}
	c, err := s.Catalog(ctx)
	must(t, err)
	if len(c.Jobs()) != 5 || len(c.Tables()) != 5 {
		t.Fatalf("catalog after restart: %d jobs, %d tables", len(c.Jobs()), len(c.Tables()))
	}
	ce, err := s.CommittedEpoch(ctx, name("t1"))
	must(t, err)
	if ce.Epoch != e+3 {
		t.Fatalf("committed epoch after restart = %d, want %d", ce.Epoch, e+3)
	}
	wantErr(t, s.CommitEpoch(ctx, name("t1"), e+2), version.ErrEpochBackwards)
	if p, ok, _ := s.PinnedEpoch(ctx, name("t2")); !ok || p != pinned.Epochs[name("t2")] {
		t.Fatalf("pin lost across restart: %d, %v", p, ok)
	}
	info, err := s.Job(ctx, "v2")
	must(t, err)
	if info.Status != meta.JobRunning || info.LastCheckpoint != 7 {
		t.Fatalf("job state after restart = %+v", info)
	}
	// The strong floor survived: reading t1 with t2 (behind) must wait.
	short, cancel := context.WithTimeout(ctx, time.Second) // long enough for a loaded machine to reach the wait
	defer cancel()
	_, err = s.AcquireVersion(short, meta.VersionRequest{Tables: []catalog.ObjectName{name("t1"), name("t2")}, Mode: version.Strong, Holder: "q"})
	wantErr(t, err, context.DeadlineExceeded, "shop.t2")
	if got := epochs(acquire(t, s, version.Strong, "t1")); got["t1"] < strong["t1"] {
		t.Fatalf("strong read went back from %d to %d across a restart", strong["t1"], got["t1"])
	}
	// Lineage survived: a second writer is still refused.
	wantErr(t, s.RegisterJob(ctx, catalog.Job{Name: "dup", Kind: catalog.JobView, Reads: []catalog.ObjectName{name("t1")}, Writes: []catalog.ObjectName{name("t4")}}), lineage.ErrSecondWriter, `job "v4"`)
}

// hasObjects reports which of table tb and job j the service's catalog
// holds.
func hasObjects(t *testing.T, s meta.Service, tb, j string) (table, job bool) {
	t.Helper()
	c, err := s.Catalog(ctxT(t))
	must(t, err)
	_, terr := c.Table(name(tb))
	_, jerr := c.Job(j)
	return terr == nil, jerr == nil
}

// testChangeAtomic checks invariant meta-change-atomic: a change's steps
// land together (a table and the job that writes it, a writer swapped, a
// table dropped with its writer), a change refused at any step changes
// nothing, and what landed is there after a restart.
func testChangeAtomic(t *testing.T, h *Harness) {
	s, ctx := h.Service, ctxT(t)
	must(t, s.CreateDatabase(ctx, catalog.Database{Name: "shop"}))
	must(t, s.CreateSource(ctx, catalog.Source{Name: name("s"), Connector: "kafka"}))
	ingest := catalog.Job{Name: "ingest-t1", Kind: catalog.JobIngest, Reads: []catalog.ObjectName{name("s")}, Writes: []catalog.ObjectName{name("t1")}}
	must(t, s.ApplyChange(ctx, meta.Change{CreateTables: []catalog.Table{table("t1", catalog.KindTable)}, RegisterJobs: []catalog.Job{ingest}}))
	if tb, j := hasObjects(t, s, "t1", "ingest-t1"); !tb || !j {
		t.Fatalf("after the change: table %v, job %v; want both", tb, j)
	}
	info, err := s.Job(ctx, "ingest-t1")
	must(t, err)
	if info.Status != meta.JobCreated || info.Job.Kind != catalog.JobIngest || len(info.Job.Writes) != 1 || info.Job.Writes[0] != name("t1") {
		t.Fatalf("job of the change = %+v", info)
	}
	v := table("v", catalog.KindView)
	view := catalog.Job{Name: "view-v", Kind: catalog.JobView, Reads: []catalog.ObjectName{name("t1")}, Writes: []catalog.ObjectName{name("v")}}
	must(t, s.ApplyChange(ctx, meta.Change{CreateTables: []catalog.Table{v}, RegisterJobs: []catalog.Job{view}}))
	l, err := s.Lineage(ctx, meta.LineageQuery{Node: ptr(name("v"))})
	must(t, err)
	if !reflect.DeepEqual(l.Upstream.Jobs, []string{"ingest-t1", "view-v"}) {
		t.Fatalf("lineage upstream of v = %+v", l.Upstream)
	}

	// Refused at its last step (a second writer of t1, then a cycle):
	// the view created by an earlier step of the same change is not
	// there either.
	w := table("w", catalog.KindView)
	wantErr(t, s.ApplyChange(ctx, meta.Change{CreateTables: []catalog.Table{w}, RegisterJobs: []catalog.Job{
		{Name: "view-w", Kind: catalog.JobView, Reads: []catalog.ObjectName{name("t1")}, Writes: []catalog.ObjectName{name("w")}},
		{Name: "second", Kind: catalog.JobIngest, Reads: []catalog.ObjectName{name("s")}, Writes: []catalog.ObjectName{name("t1")}},
	}}), lineage.ErrSecondWriter, `job "second"`, "shop.t1")
	if tb, j := hasObjects(t, s, "w", "view-w"); tb || j {
		t.Fatalf("refused change left table %v, job %v", tb, j)
	}
	wantErr(t, s.ApplyChange(ctx, meta.Change{CreateTables: []catalog.Table{w}, RegisterJobs: []catalog.Job{
		{Name: "view-w", Kind: catalog.JobView, Reads: []catalog.ObjectName{name("v")}, Writes: []catalog.ObjectName{name("w")}},
		{Name: "back", Kind: catalog.JobIngest, Reads: []catalog.ObjectName{name("w")}, Writes: []catalog.ObjectName{name("t1")}},
	}, DropJobs: []string{"ingest-t1"}}), lineage.ErrCycle, `job "back"`)
	if tb, j := hasObjects(t, s, "w", "view-w"); tb || j {
		t.Fatalf("refused change left table %v, job %v", tb, j)
	}
	if _, j := hasObjects(t, s, "t1", "ingest-t1"); !j {
		t.Fatal("a refused change dropped the job its first step named")
	}
	// Refused at a table step, after a valid one.
	wantErr(t, s.ApplyChange(ctx, meta.Change{CreateTables: []catalog.Table{w, table("t1", catalog.KindTable)}}), base.ErrConflict, "shop.t1")
	if tb, _ := hasObjects(t, s, "w", ""); tb {
		t.Fatal("refused change left its first table")
	}
	wantErr(t, s.ApplyChange(ctx, meta.Change{}), base.ErrInvalidArgument)
	// A dropped table's steps wait for the job that still writes it.
	wantErr(t, s.ApplyChange(ctx, meta.Change{DropTables: []catalog.ObjectName{name("v")}}), base.ErrConflict, `job "view-v"`)

	// The writer of t1 swapped in one change (CREATE SINK ... INTO).
	sink := catalog.Job{Name: "sink-k", Kind: catalog.JobSink, Reads: []catalog.ObjectName{name("s")}, Writes: []catalog.ObjectName{name("t1")}}
	must(t, s.ApplyChange(ctx, meta.Change{DropJobs: []string{"ingest-t1"}, RegisterJobs: []catalog.Job{sink}}))
	if _, j := hasObjects(t, s, "t1", "ingest-t1"); j {
		t.Fatal("swapped-out writer still registered")
	}
	// A view dropped with its job.
	must(t, s.ApplyChange(ctx, meta.Change{DropJobs: []string{"view-v"}, DropTables: []catalog.ObjectName{name("v")}}))
	if tb, j := hasObjects(t, s, "v", "view-v"); tb || j {
		t.Fatalf("dropped view: table %v, job %v", tb, j)
	}
	if h.Restart == nil {
		return
	}
	s = h.Restart(t)
	c, err := s.Catalog(ctx)
	must(t, err)
	var got []string
	for _, tb := range c.Tables() {
		got = append(got, tb.Name.String())
	}
	for _, j := range c.Jobs() {
		got = append(got, "job "+j.Name+" "+string(j.Kind))
	}
	if want := []string{"shop.t1", "job sink-k sink"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after a restart the catalog holds %q, want %q", got, want)
	}
	if info, err := s.Job(ctx, "sink-k"); err != nil || info.Status != meta.JobCreated {
		t.Fatalf("swapped-in job after a restart = %+v, %v", info, err)
	}
}
