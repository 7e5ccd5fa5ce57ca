package service

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/clock"
	"github.com/stratadb/strata/meta/metatest"
	"github.com/stratadb/strata/meta/store"
	"github.com/stratadb/strata/meta/version"
)

var quiet = slog.New(slog.DiscardHandler)

// testOptions are fast settings on the real clock for the suite.
func testOptions(s store.Store) Options {
	return Options{Store: s, EpochInterval: 5 * time.Millisecond, EpochReserveWindow: 50 * time.Millisecond, Logger: quiet}
}

func openT(t *testing.T, opts Options) *Meta {
	t.Helper()
	m, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func TestSuiteMemoryStore(t *testing.T) {
	metatest.Run(t, func(t *testing.T) *metatest.Harness {
		st := store.NewMemory()
		m := openT(t, testOptions(st))
		return &metatest.Harness{Service: m, Restart: func(t *testing.T) meta.Service {
			_ = m.Close()
			m = openT(t, testOptions(st))
			return m
		}}
	})
}

func TestSuiteBoltStore(t *testing.T) {
	metatest.Run(t, func(t *testing.T) *metatest.Harness {
		path := filepath.Join(t.TempDir(), "meta.db")
		st, err := store.OpenBolt(path)
		if err != nil {
			t.Fatal(err)
		}
		m := openT(t, testOptions(st))
		t.Cleanup(func() { _ = m.Close(); _ = st.Close() })
		return &metatest.Harness{Service: m, Restart: func(t *testing.T) meta.Service {
			// A full restart: close the service and the file, open both again.
			_ = m.Close()
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			if st, err = store.OpenBolt(path); err != nil {
				t.Fatal(err)
			}
			m = openT(t, testOptions(st))
			return m
		}}
	})
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// manualService opens a service on a manual clock with a 1 s epoch and a
// 10 s heartbeat timeout.
func manualService(t *testing.T, st store.Store) (*Meta, *clock.Manual) {
	t.Helper()
	mc := clock.NewManual(t0)
	m := openT(t, Options{Store: st, EpochInterval: time.Second, HeartbeatTimeout: 10 * time.Second, PinTTL: time.Minute, SweepInterval: time.Hour, Time: mc, Logger: quiet})
	return m, mc
}

func setup(t *testing.T, m *Meta) {
	t.Helper()
	ctx := context.Background()
	for _, err := range []error{
		m.CreateDatabase(ctx, catalog.Database{Name: "d"}),
		m.CreateSource(ctx, catalog.Source{Name: catalog.Name("d", "src"), Connector: "nexmark"}),
		m.CreateTable(ctx, catalog.Table{Name: catalog.Name("d", "t"), Kind: catalog.KindTable, Columns: []catalog.Column{{Name: "a", Type: types.Int64}}}),
		m.RegisterJob(ctx, catalog.Job{Name: "ing", Kind: catalog.JobIngest, Reads: []catalog.ObjectName{catalog.Name("d", "src")}, Writes: []catalog.ObjectName{catalog.Name("d", "t")}}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestLostJobIsMarkedAndItsPinsReleased(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	m, mc := manualService(t, st)
	setup(t, m)
	tb := catalog.Name("d", "t")
	if err := m.CommitEpoch(ctx, tb, 1); err != nil {
		t.Fatal(err)
	}
	if err := m.Heartbeat(ctx, meta.Heartbeat{Job: "ing", Status: meta.JobRunning, Checkpoint: 1}); err != nil {
		t.Fatal(err)
	}
	jobPin, err := m.AcquireVersion(ctx, meta.VersionRequest{Tables: []catalog.ObjectName{tb}, Mode: version.Weak, Holder: "ing", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	sessionPin, err := m.AcquireVersion(ctx, meta.VersionRequest{Tables: []catalog.ObjectName{tb}, Mode: version.Weak, Holder: "session-9", TTL: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	mc.Advance(9 * time.Second)
	if info, _ := m.Job(ctx, "ing"); info.Lost || info.Status != meta.JobRunning {
		t.Fatalf("job lost too early: %+v", info)
	}
	mc.Advance(2 * time.Second) // 11 s of silence
	info, _ := m.Job(ctx, "ing")
	if !info.Lost || info.Status != meta.JobFailed || !strings.Contains(info.Reason, "no heartbeat") {
		t.Fatalf("silent job = %+v", info)
	}
	// The job's pin stopped counting at once; the session's still counts.
	if e, ok, _ := m.PinnedEpoch(ctx, tb); !ok || e != 1 {
		t.Fatalf("PinnedEpoch = %d, %v", e, ok)
	}
	if err := m.ReleasePin(ctx, jobPin.Pin); !errors.Is(err, base.ErrNotFound) {
		t.Fatalf("release of a lost job's pin = %v", err)
	}
	if err := m.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.mu.pins.Get(jobPin.Pin); !errors.Is(err, base.ErrNotFound) {
		t.Fatal("sweep left the lost job's pin")
	}
	// The session pin lapses after its TTL.
	mc.Advance(20 * time.Second)
	if _, ok, _ := m.PinnedEpoch(ctx, tb); ok {
		t.Fatal("lapsed session pin still counts")
	}
	if err := m.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.mu.pins.Get(sessionPin.Pin); !errors.Is(err, base.ErrNotFound) {
		t.Fatal("sweep left the lapsed pin")
	}
	// The FAILED status is persisted: a restart still shows it, not lost.
	_ = m.Close()
	m2, _ := manualService(t, st.Reopen())
	info, _ = m2.Job(ctx, "ing")
	if info.Status != meta.JobFailed || info.Lost || info.LastCheckpoint != 1 {
		t.Fatalf("after restart = %+v", info)
	}
	// A heartbeat brings it back.
	if err := m2.Heartbeat(ctx, meta.Heartbeat{Job: "ing", Status: meta.JobRunning, Checkpoint: 2}); err != nil {
		t.Fatal(err)
	}
	if info, _ := m2.Job(ctx, "ing"); info.Status != meta.JobRunning || info.LastCheckpoint != 2 {
		t.Fatalf("after heartbeat = %+v", info)
	}
}

func TestRestartGivesJobsAFullTimeout(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	m, mc := manualService(t, st)
	setup(t, m)
	mc.Advance(time.Hour) // the job never beat: lost
	if info, _ := m.Job(ctx, "ing"); !info.Lost {
		t.Fatalf("job not lost after an hour: %+v", info)
	}
	_ = m.Close()
	m2, mc2 := manualService(t, st.Reopen())
	if info, _ := m2.Job(ctx, "ing"); info.Lost {
		t.Fatalf("job lost at once after restart: %+v", info)
	}
	mc2.Advance(11 * time.Second)
	if info, _ := m2.Job(ctx, "ing"); !info.Lost {
		t.Fatalf("job not lost 11 s after restart: %+v", info)
	}
}

func TestFailedWriteChangesNothing(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	m, _ := manualService(t, st)
	setup(t, m)
	tb := catalog.Name("d", "t")
	injected := errors.New("disk on fire")
	st.FailApply(injected)
	for what, err := range map[string]error{
		"commit": m.CommitEpoch(ctx, tb, 1),
		"table":  m.CreateTable(ctx, catalog.Table{Name: catalog.Name("d", "x"), Kind: catalog.KindTable, Columns: []catalog.Column{{Name: "a", Type: types.Int64}}}),
		"job":    m.DropJob(ctx, "ing"),
	} {
		if !errors.Is(err, injected) {
			t.Errorf("%s with a failing store = %v", what, err)
		}
	}
	_, err := m.AcquireVersion(ctx, meta.VersionRequest{Tables: []catalog.ObjectName{tb}, Mode: version.Strong, Holder: "q"})
	if !errors.Is(err, injected) {
		t.Fatalf("read with a failing store = %v", err)
	}
	st.FailApply(nil)
	if c, _ := m.CommittedEpoch(ctx, tb); c.Epoch != 0 {
		t.Fatalf("failed commit is visible: %d", c.Epoch)
	}
	cat, _ := m.Catalog(ctx)
	if _, err := cat.Table(catalog.Name("d", "x")); !errors.Is(err, base.ErrNotFound) {
		t.Fatal("failed CREATE TABLE is visible")
	}
	if _, err := cat.Job("ing"); err != nil {
		t.Fatal("failed DROP JOB is visible")
	}
	if len(m.mu.pins.All()) != 0 {
		t.Fatal("failed pin is visible")
	}
}

func TestCorruptStoreIsRefusedAtOpen(t *testing.T) {
	st := store.NewMemory()
	var b store.Batch
	b.Put("catalog", []byte(`{"format":1,"version":1,"databases":[{"name":"a/b"}]}`))
	if err := st.Apply(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	_, err := Open(context.Background(), Options{Store: st, Logger: quiet})
	if !errors.Is(err, base.ErrCorruption) || !strings.Contains(err.Error(), "path separator") {
		t.Fatalf("Open on a bad catalog = %v", err)
	}
	st2 := store.NewMemory()
	b = store.Batch{}
	b.Put("mystery/key", []byte(`{}`))
	_ = st2.Apply(context.Background(), b)
	if _, err := Open(context.Background(), Options{Store: st2, Logger: quiet}); !errors.Is(err, base.ErrCorruption) || !strings.Contains(err.Error(), "mystery/key") {
		t.Fatalf("Open with an unknown key = %v", err)
	}
}

func TestMetrics(t *testing.T) {
	ctx := context.Background()
	m, mc := manualService(t, store.NewMemory())
	setup(t, m)
	mc.Advance(time.Second) // wait until the clock opened epoch 2
	for m.clock.Current().Epoch < 2 {
		time.Sleep(time.Millisecond)
	}
	if err := m.CommitEpoch(ctx, catalog.Name("d", "t"), 1); err != nil {
		t.Fatal(err)
	}
	if err := m.CommitEpoch(ctx, catalog.Name("d", "t"), 0); err == nil {
		t.Fatal("backwards commit accepted")
	}
	if err := m.Heartbeat(ctx, meta.Heartbeat{Job: "ing", Status: meta.JobRunning, Checkpoint: 4}); err != nil {
		t.Fatal(err)
	}
	mc.Advance(500 * time.Millisecond)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(m.Collector())
	want := `
# HELP strata_meta_commit_refused_total Committed-epoch reports refused for going backwards.
# TYPE strata_meta_commit_refused_total counter
strata_meta_commit_refused_total 1
# HELP strata_meta_epoch_current Latest epoch opened by the epoch clock.
# TYPE strata_meta_epoch_current gauge
strata_meta_epoch_current 2
# HELP strata_meta_job_added_lag_seconds Freshness lag a job adds over its inputs.
# TYPE strata_meta_job_added_lag_seconds gauge
strata_meta_job_added_lag_seconds{job="ing"} 1.5
# HELP strata_meta_job_last_checkpoint Last completed checkpoint a job reported.
# TYPE strata_meta_job_last_checkpoint gauge
strata_meta_job_last_checkpoint{job="ing"} 4
# HELP strata_meta_job_status 1 for the job's current status.
# TYPE strata_meta_job_status gauge
strata_meta_job_status{job="ing",status="RUNNING"} 1
# HELP strata_meta_table_committed_epoch Committed epoch of a table.
# TYPE strata_meta_table_committed_epoch gauge
strata_meta_table_committed_epoch{table="d.t"} 1
# HELP strata_meta_table_freshness_lag_seconds Now minus the start time of the table's committed epoch.
# TYPE strata_meta_table_freshness_lag_seconds gauge
strata_meta_table_freshness_lag_seconds{table="d.t"} 1.5
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"strata_meta_commit_refused_total", "strata_meta_epoch_current", "strata_meta_job_added_lag_seconds",
		"strata_meta_job_last_checkpoint", "strata_meta_job_status", "strata_meta_table_committed_epoch",
		"strata_meta_table_freshness_lag_seconds"); err != nil {
		t.Fatal(err)
	}
}

// countingStore counts the operations of each Apply.
type countingStore struct {
	store.Store
	largest int
}

func (c *countingStore) Apply(ctx context.Context, b store.Batch) error {
	c.largest = max(c.largest, len(b.Puts)+len(b.Deletes))
	return c.Store.Apply(ctx, b)
}

func TestSweepWritesInChunks(t *testing.T) {
	ctx := context.Background()
	cs := &countingStore{Store: store.NewMemory()}
	m, mc := manualService(t, cs)
	setup(t, m)
	for range 3*sweepChunk + 5 {
		if _, err := m.AcquireVersion(ctx, meta.VersionRequest{Tables: []catalog.ObjectName{catalog.Name("d", "t")}, Mode: version.Weak, Holder: "s", TTL: time.Second}); err != nil {
			t.Fatal(err)
		}
	}
	mc.Advance(2 * time.Second)
	cs.largest = 0
	if err := m.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(m.mu.pins.All()); n != 0 {
		t.Fatalf("%d pins left after the sweep", n)
	}
	if cs.largest > sweepChunk {
		t.Fatalf("a sweep write held %d operations, more than %d", cs.largest, sweepChunk)
	}
	data, _ := cs.Load(ctx)
	for k := range data {
		if strings.HasPrefix(k, prefixPin) {
			t.Fatalf("pin %s left in the store", k)
		}
	}
}

// A pin that lapsed because its holder job was lost stays lapsed: neither
// a later heartbeat of the job nor a restart of the service brings it
// back, once anyone (snapshot expiration, through PinnedEpoch) saw it dead.
func TestLapsedPinsStayLapsed(t *testing.T) {
	ctx := context.Background()
	st := store.NewMemory()
	m, mc := manualService(t, st)
	setup(t, m)
	tb := catalog.Name("d", "t")
	if err := m.CommitEpoch(ctx, tb, 1); err != nil {
		t.Fatal(err)
	}
	if err := m.Heartbeat(ctx, meta.Heartbeat{Job: "ing", Status: meta.JobRunning}); err != nil {
		t.Fatal(err)
	}
	pin, err := m.AcquireVersion(ctx, meta.VersionRequest{Tables: []catalog.ObjectName{tb}, Mode: version.Weak, Holder: "ing", TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	mc.Advance(11 * time.Second) // past the heartbeat timeout: the job is lost
	if _, pinned, err := m.PinnedEpoch(ctx, tb); err != nil || pinned {
		t.Fatalf("PinnedEpoch of a lost job's pin: pinned %v, %v", pinned, err)
	}
	// The job comes back: its pin does not.
	if err := m.Heartbeat(ctx, meta.Heartbeat{Job: "ing", Status: meta.JobRunning}); err != nil {
		t.Fatal(err)
	}
	if _, pinned, _ := m.PinnedEpoch(ctx, tb); pinned {
		t.Fatal("the pin came back with its job's heartbeat")
	}
	if _, err := m.RenewPin(ctx, pin.Pin, time.Hour); !errors.Is(err, base.ErrNotFound) {
		t.Fatalf("RenewPin of a lapsed pin: %v", err)
	}
	// Nor after a restart.
	_ = m.Close()
	m2 := openT(t, Options{Store: st, EpochInterval: time.Second, HeartbeatTimeout: 10 * time.Second, PinTTL: time.Minute, SweepInterval: time.Hour, Time: mc, Logger: quiet})
	if _, pinned, _ := m2.PinnedEpoch(ctx, tb); pinned {
		t.Fatal("the pin came back after a restart")
	}
}
