package ha

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/api"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/service"
	"github.com/stratadb/strata/meta/store/etcdstore"
	"github.com/stratadb/strata/meta/store/etcdstore/etcdtest"
	"github.com/stratadb/strata/meta/version"
)

var quiet = slog.New(slog.DiscardHandler)

func serviceOptions() service.Options {
	return service.Options{EpochInterval: 10 * time.Millisecond, EpochReserveWindow: 100 * time.Millisecond, Logger: quiet}
}

func startNode(t *testing.T, srv *etcdtest.Server, name string) (*Node, *httptest.Server) {
	t.Helper()
	n, err := Start(Config{Client: srv.Client(t), Name: name, SessionTTL: time.Second, Service: serviceOptions(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(n)
	t.Cleanup(func() { hs.Close(); n.Stop() })
	return n, hs
}

func tn(s string) catalog.ObjectName { return catalog.Name("d", s) }

func setupTopology(t *testing.T, c meta.Service) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cols := []catalog.Column{{Name: "a", Type: types.Int64}}
	for _, err := range []error{
		c.CreateDatabase(ctx, catalog.Database{Name: "d"}),
		c.CreateSource(ctx, catalog.Source{Name: tn("s"), Connector: "kafka"}),
		c.CreateTable(ctx, catalog.Table{Name: tn("t1"), Kind: catalog.KindTable, Columns: cols}),
		c.CreateTable(ctx, catalog.Table{Name: tn("t2"), Kind: catalog.KindView, Columns: cols, Query: "SELECT a FROM d.t1"}),
		c.RegisterJob(ctx, catalog.Job{Name: "ingest", Kind: catalog.JobIngest, Reads: []catalog.ObjectName{tn("s")}, Writes: []catalog.ObjectName{tn("t1")}}),
		c.RegisterJob(ctx, catalog.Job{Name: "v2", Kind: catalog.JobView, Reads: []catalog.ObjectName{tn("t1")}, Writes: []catalog.ObjectName{tn("t2")}}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// observed is what a client saw, in order.
type observed struct {
	mu           sync.Mutex
	epochs       []base.Epoch // CurrentEpoch answers
	strongT1     []base.Epoch // strong reads of t1 alone
	strongT1T2   []base.Epoch // strong reads of t1 with t2
	failedCalls  int
	lastFailover time.Time
}

// TestFailoverNeverGoesBack runs two nodes, a writer committing epochs and
// a reader taking strong reads and the current epoch through a failover
// client, kills the leader mid-stream, and checks that the follower took
// over and that no epoch and no strong read ever went back.
func TestFailoverNeverGoesBack(t *testing.T) {
	srv := etcdtest.Start(t)
	a, ha := startNode(t, srv, "node-a")
	b, hb := startNode(t, srv, "node-b")
	c := api.NewFailoverClient([]string{ha.URL, hb.URL}, nil)
	setupTopology(t, c)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	obs := &observed{}
	// Writer: t1 commits the epoch before the current one, t2 follows t1.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			call, done := context.WithTimeout(ctx, time.Second)
			cur, err := c.CurrentEpoch(call)
			if err == nil && cur.Epoch > 2 {
				_ = c.CommitEpoch(call, tn("t1"), cur.Epoch-1)
				if t1, err := c.CommittedEpoch(call, tn("t1")); err == nil {
					_ = c.CommitEpoch(call, tn("t2"), t1.Epoch)
				}
			}
			done()
			time.Sleep(3 * time.Millisecond)
		}
	}()
	// Reader.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			call, done := context.WithTimeout(ctx, 2*time.Second)
			cur, err1 := c.CurrentEpoch(call)
			v1, err2 := c.AcquireVersion(call, meta.VersionRequest{Tables: []catalog.ObjectName{tn("t1")}, Mode: version.Strong, Holder: "reader", TTL: time.Second})
			v2, err3 := c.AcquireVersion(call, meta.VersionRequest{Tables: []catalog.ObjectName{tn("t1"), tn("t2")}, Mode: version.Strong, Holder: "reader", TTL: time.Second})
			done()
			obs.mu.Lock()
			if err1 == nil {
				obs.epochs = append(obs.epochs, cur.Epoch)
			}
			if err2 == nil {
				obs.strongT1 = append(obs.strongT1, v1.Epochs[tn("t1")])
			}
			if err3 == nil {
				if v2.Epochs[tn("t1")] != v2.Epochs[tn("t2")] {
					t.Errorf("related tables read apart: %v", v2.Epochs)
				}
				obs.strongT1T2 = append(obs.strongT1T2, v2.Epochs[tn("t1")])
			}
			for _, err := range []error{err1, err2, err3} {
				if err != nil {
					obs.failedCalls++
				}
			}
			obs.mu.Unlock()
		}
	}()

	time.Sleep(400 * time.Millisecond)
	leader, follower, leaderHTTP := a, b, ha
	if _, ok := b.Service(); ok {
		leader, follower, leaderHTTP = b, a, hb
	}
	obs.mu.Lock()
	before := len(obs.epochs)
	beforeStrong := len(obs.strongT1T2)
	obs.mu.Unlock()
	if before == 0 || beforeStrong == 0 {
		t.Fatalf("nothing observed before the failover: %d epochs, %d strong reads", before, beforeStrong)
	}
	// Kill the leader: it stops serving without resigning, as a killed
	// process would; its lease must expire before the follower leads.
	leaderHTTP.Close()
	leader.Crash()
	killed := time.Now()
	wctx, wcancel := context.WithTimeout(ctx, 15*time.Second)
	defer wcancel()
	if _, err := follower.WaitLeader(wctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("follower took over %v after the kill", time.Since(killed).Round(time.Millisecond))
	time.Sleep(400 * time.Millisecond)
	cancel()
	wg.Wait()

	obs.mu.Lock()
	defer obs.mu.Unlock()
	for name, seq := range map[string][]base.Epoch{"current epoch": obs.epochs, "strong read of t1": obs.strongT1, "strong read of t1, t2": obs.strongT1T2} {
		for i := 1; i < len(seq); i++ {
			if seq[i] < seq[i-1] {
				t.Fatalf("%s went back from %d to %d (answer %d of %d)", name, seq[i-1], seq[i], i, len(seq))
			}
		}
	}
	if len(obs.epochs) <= before || len(obs.strongT1T2) <= beforeStrong {
		t.Fatalf("nothing observed after the failover: epochs %d -> %d, strong reads %d -> %d", before, len(obs.epochs), beforeStrong, len(obs.strongT1T2))
	}
	if last, first := obs.strongT1T2[len(obs.strongT1T2)-1], obs.strongT1T2[0]; last <= first {
		t.Fatalf("strong reads did not advance across the run: %d -> %d", first, last)
	}
	t.Logf("observed %d epochs, %d+%d strong reads, %d failed calls during the failover",
		len(obs.epochs), len(obs.strongT1), len(obs.strongT1T2), obs.failedCalls)
}

// TestDeposedLeaderCannotWrite fences a service on an election key, lets
// another node win, and checks that every write of the deposed service is
// refused and invisible.
func TestDeposedLeaderCannotWrite(t *testing.T) {
	ctx := context.Background()
	srv := etcdtest.Start(t)
	cli := srv.Client(t)
	st := etcdstore.New(cli, "")
	sess, err := concurrency.NewSession(cli, concurrency.WithTTL(5))
	if err != nil {
		t.Fatal(err)
	}
	el := concurrency.NewElection(sess, st.ElectionPrefix())
	if err := el.Campaign(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	opts := serviceOptions()
	opts.Store = st.Fenced(el.Key(), el.Rev())
	old, err := service.Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	setupTopology(t, old)
	if err := old.CommitEpoch(ctx, tn("t1"), 1); err != nil {
		t.Fatal(err)
	}
	if _, err := old.WaitEpoch(ctx, 1); err != nil {
		t.Fatal(err)
	}
	// The old leader's lease is revoked (it was partitioned away, say).
	if _, err := cli.Revoke(ctx, sess.Lease()); err != nil {
		t.Fatal(err)
	}
	n, _ := startNode(t, srv, "new")
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	cur, err := n.WaitLeader(wctx)
	if err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"commit": old.CommitEpoch(ctx, tn("t1"), 2),
		"ddl":    old.CreateDatabase(ctx, catalog.Database{Name: "late"}),
	} {
		if !errors.Is(err, etcdstore.ErrFenced) {
			t.Errorf("deposed leader's %s = %v, want ErrFenced", what, err)
		}
	}
	_, err = old.AcquireVersion(ctx, meta.VersionRequest{Tables: []catalog.ObjectName{tn("t1")}, Mode: version.Strong, Holder: "q"})
	if !errors.Is(err, etcdstore.ErrFenced) {
		t.Errorf("deposed leader's read = %v, want ErrFenced", err)
	}
	if c, err := cur.CommittedEpoch(ctx, tn("t1")); err != nil || c.Epoch != 1 {
		t.Fatalf("new leader sees committed epoch %d, %v; want 1", c.Epoch, err)
	}
	cat, _ := cur.Catalog(ctx)
	if _, err := cat.Database("late"); !errors.Is(err, base.ErrNotFound) {
		t.Fatal("deposed leader's DDL is visible")
	}
	oldEpoch, _ := old.CurrentEpoch(ctx)
	newEpoch, _ := cur.CurrentEpoch(ctx)
	if newEpoch.Epoch <= oldEpoch.Epoch {
		t.Fatalf("new leader's epoch %d is not above the old one's %d", newEpoch.Epoch, oldEpoch.Epoch)
	}
	if leader, err := n.Leader(ctx); err != nil || leader != "new" {
		t.Fatalf("Leader = %q, %v", leader, err)
	}
}
