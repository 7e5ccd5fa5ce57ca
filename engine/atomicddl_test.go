package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/store"
	"github.com/stratadb/strata/meta/version"
)

// dyingStore is a meta store whose process dies at the first write that
// registers job (a batch putting its record, FORMAT.md "job/"), or that
// removes job dropJob when set, or when kill is called: that write and
// every later one fail, as nothing reaches the store after a kill -9.
// Reopening its Memory afterwards is the restart.
type dyingStore struct {
	*store.Memory
	job     string
	dropJob string

	mu   sync.Mutex
	dead bool // guarded by mu
}

var errDied = errors.New("process died")

// kill makes the process die now: no later write reaches the store.
func (d *dyingStore) kill() {
	d.mu.Lock()
	d.dead = true
	d.mu.Unlock()
}

func (d *dyingStore) Apply(ctx context.Context, b store.Batch) error {
	d.mu.Lock()
	if _, ok := b.Puts["job/"+d.job]; ok && d.job != "" {
		d.dead = true
	}
	if d.dropJob != "" && slices.Contains(b.Deletes, "job/"+d.dropJob) {
		d.dead = true
	}
	dead := d.dead
	d.mu.Unlock()
	if dead {
		return errDied
	}
	return d.Memory.Apply(ctx, b)
}

func openOnStore(t *testing.T, dir string, st store.Store) *Engine {
	t.Helper()
	e, err := Open(context.Background(), Options{Dir: dir, EpochInterval: 20 * time.Millisecond, CheckpointInterval: 20 * time.Millisecond, MetaStore: st})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// objectsOf says whether the catalog holds table n and job j.
func objectsOf(t *testing.T, e *Engine, n catalog.ObjectName, j string) (table, job bool) {
	t.Helper()
	cat, err := e.Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, terr := cat.Table(n)
	_, jerr := cat.Job(j)
	return terr == nil, jerr == nil
}

func insertKV(t *testing.T, e *Engine, n catalog.ObjectName, kvs ...int64) base.Epoch {
	t.Helper()
	c := types.NewChunk([]types.Type{types.Int64, types.Int64}, len(kvs)/2)
	for i := 0; i < len(kvs); i += 2 {
		c.Append(types.Insert, types.Row{types.NewInt64(kvs[i]), types.NewInt64(kvs[i+1])})
	}
	ep, err := e.Apply(context.Background(), n, c)
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// readView waits until view n has committed epoch ep and returns its rows.
func readView(t *testing.T, e *Engine, n catalog.ObjectName, ep base.Epoch) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.WaitCommitted(ctx, n, ep); err != nil {
		t.Fatal(err)
	}
	r, err := e.ReadConsistent(ctx, []catalog.ObjectName{n}, version.Weak, "test")
	if err != nil {
		t.Fatal(err)
	}
	return sorted(r.Rows[n])
}

// TestCreateViewThenReopen: a view and its job are in the catalog after
// the engine reopens, and the job keeps the view up to date.
func TestCreateViewThenReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := openTest(t, dir)
	cols := []catalog.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}}
	if err := e.CreateTable(ctx, catalog.Table{Name: tName, Columns: cols, PrimaryKey: []string{"k"}}, false); err != nil {
		t.Fatal(err)
	}
	insertKV(t, e, tName, 1, 10, 2, 20)
	if err := e.CreateView(ctx, v1Name, v1Query, nil, false); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openTest(t, dir)
	defer e.Close()
	if tb, j := objectsOf(t, e, v1Name, viewJobName(v1Name)); !tb || !j {
		t.Fatalf("after reopening: view %v, job %v; want both", tb, j)
	}
	ep := insertKV(t, e, tName, 3, 30)
	if got, want := readView(t, e, v1Name, max(ep, e.ViewStartEpoch(ctx, v1Name))), "(0, 30, 1)\n(1, 10, 1)\n(2, 20, 1)"; got != want {
		t.Fatalf("view after reopening:\n%s\nwant\n%s", got, want)
	}
}

// TestCreateDiesBeforeJobIsRegistered checks invariant meta-change-atomic
// through the engine: the process dies at the write that registers the
// job of CREATE MATERIALIZED VIEW, CREATE TABLE and CREATE SINK ... INTO.
// After a restart the object and its job are both there or both absent
// (a view without its job would never fill; a table whose DML job gave
// way to a sink that never came would have no writer), and the same
// CREATE then works.
func TestCreateDiesBeforeJobIsRegistered(t *testing.T) {
	ctx := context.Background()
	cols := []catalog.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}}
	sinkName := catalog.Name(DefaultDatabase, "k1")
	for _, tc := range []struct {
		name   string
		job    string
		create func(e *Engine) error
		// check says what is wrong after the restart ("" when nothing).
		check func(e *Engine) string
	}{
		{"view", viewJobName(v1Name), func(e *Engine) error { return e.CreateView(ctx, v1Name, v1Query, nil, false) },
			func(e *Engine) string {
				if tb, j := objectsOf(t, e, v1Name, viewJobName(v1Name)); tb || j {
					return "view or its job survived a CREATE that died"
				}
				return ""
			}},
		{"table", dmlJobName(v2Name), func(e *Engine) error {
			return e.CreateTable(ctx, catalog.Table{Name: v2Name, Columns: cols, PrimaryKey: []string{"k"}}, false)
		}, func(e *Engine) string {
			if tb, j := objectsOf(t, e, v2Name, dmlJobName(v2Name)); tb || j {
				return "table or its job survived a CREATE that died"
			}
			return ""
		}},
		{"sink into", sinkJobName(sinkName), func(e *Engine) error {
			return e.CreateSink(ctx, sinkName, tName, "SELECT k + 100 AS k, v FROM u", false)
		}, func(e *Engine) string {
			_, dml := objectsOf(t, e, tName, dmlJobName(tName))
			_, sink := objectsOf(t, e, tName, sinkJobName(sinkName))
			if dml == sink {
				return "table t has " + map[bool]string{true: "two writers", false: "no writer"}[dml]
			}
			return ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mem := store.NewMemory()
			e := openOnStore(t, dir, &dyingStore{Memory: mem, job: tc.job})
			defer func() { _ = e.Close() }()
			for _, n := range []string{"t", "u"} {
				if err := e.CreateTable(ctx, catalog.Table{Name: catalog.Name(DefaultDatabase, n), Columns: cols, PrimaryKey: []string{"k"}}, false); err != nil {
					t.Fatal(err)
				}
			}
			ep := insertKV(t, e, tName, 1, 10, 2, 20)
			if err := e.WaitCommitted(ctx, tName, ep); err != nil {
				t.Fatal(err)
			}
			if err := tc.create(e); !errors.Is(err, errDied) {
				t.Fatalf("CREATE on a store that dies = %v", err)
			}
			_ = e.Close() // the store is dead: closing can fail
			e = openOnStore(t, dir, mem.Reopen())
			if msg := tc.check(e); msg != "" {
				t.Fatal(msg)
			}
			if err := tc.create(e); err != nil {
				t.Fatalf("CREATE again after the restart: %v", err)
			}
		})
	}
}

// TestCreateClearsOrphanFiles: files of a name the catalog does not hold
// (a DROP that died after its catalog change and before it removed the
// files; a CREATE that died after making its storage) are cleared by the
// next CREATE of that name ([orphans-cleared-by-create]): the view starts
// empty, with no checkpoint of the dropped job of the same name, and
// holds exactly what its new query gives.
func TestCreateClearsOrphanFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := openTest(t, dir)
	cols := []catalog.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}}
	if err := e.CreateTable(ctx, catalog.Table{Name: tName, Columns: cols, PrimaryKey: []string{"k"}}, false); err != nil {
		t.Fatal(err)
	}
	ep := insertKV(t, e, tName, 1, 10, 2, 20, 4, 40)
	const old = "SELECT k % 3 AS g, sum(v) AS s, count(*) AS n FROM t WHERE k > 1 GROUP BY k % 3"
	if err := e.CreateView(ctx, v1Name, old, nil, false); err != nil {
		t.Fatal(err)
	}
	if got := readView(t, e, v1Name, max(ep, e.ViewStartEpoch(ctx, v1Name))); got != "(1, 40, 1)\n(2, 20, 1)" {
		t.Fatalf("first view: %s", got)
	}
	job := viewJobName(v1Name)
	waitCheckpoint(t, e, job)
	// A DROP that dies after its catalog change: the files stay.
	e.ddl.Lock()
	e.stopJob(job)
	err := e.meta.ApplyChange(ctx, meta.Change{DropJobs: []string{job}, DropTables: []catalog.ObjectName{v1Name}})
	e.ddl.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "checkpoints", job)); err != nil {
		t.Fatalf("no checkpoint left to test with: %v", err)
	}
	// A CREATE of table v2 that died after making its storage, with an
	// old DML log.
	if err := os.WriteFile(dmlPath(dir, v2Name), []byte("left by a process that died"), 0o644); err != nil {
		t.Fatal(err)
	}
	e = openTest(t, dir) // the start-up ignores them: nothing names them
	defer e.Close()
	if err := e.CreateView(ctx, v1Name, v1Query, nil, false); err != nil {
		t.Fatal(err)
	}
	ep = insertKV(t, e, tName, 5, 50)
	if got, want := readView(t, e, v1Name, max(ep, e.ViewStartEpoch(ctx, v1Name))), "(1, 50, 2)\n(2, 70, 2)"; got != want {
		t.Fatalf("view created over orphan files:\n%s\nwant\n%s", got, want)
	}
	if err := e.CreateTable(ctx, catalog.Table{Name: v2Name, Columns: cols, PrimaryKey: []string{"k"}}, false); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(dmlPath(dir, v2Name)); err == nil && strings.Contains(string(b), "died") {
		t.Fatal("the DML log of a dropped table was kept for a new one")
	}
}

// waitCheckpoint waits until job has completed a checkpoint.
func waitCheckpoint(t *testing.T, e *Engine, job string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, j := range e.Jobs() {
			if j.Name == job && j.LastCheckpoint.ID > 0 {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("job %s completed no checkpoint", job)
}
