package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/store"
)

// dropCrashWorld is the topology the DROP crash tests drop from: table t
// with view v1 over it and view v2 over v1, sink k writing v2 into table
// out, and table u with view w over it, which no DROP touches.
type dropCrashWorld struct {
	t, u, out, v1, v2, w, k catalog.ObjectName
}

func newDropCrashWorld() dropCrashWorld {
	n := func(s string) catalog.ObjectName { return catalog.Name(DefaultDatabase, s) }
	return dropCrashWorld{t: n("t"), u: n("u"), out: n("out"), v1: n("v1"), v2: n("v2"), w: n("w"), k: n("k")}
}

const (
	crashV2Query = "SELECT g, s + n AS x FROM v1"
	crashWQuery  = "SELECT k % 2 AS p, sum(v) AS s FROM u GROUP BY k % 2"
	crashKQuery  = "SELECT g AS k, x AS v FROM v2"
)

// build creates the world on e and waits until every view and the sink
// have committed their first epoch and every job a checkpoint, so that a
// restart resumes each from a checkpoint.
func (w dropCrashWorld) build(t *testing.T, e *Engine) {
	t.Helper()
	ctx := context.Background()
	cols := []catalog.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}}
	for _, n := range []catalog.ObjectName{w.t, w.u, w.out} {
		if err := e.CreateTable(ctx, catalog.Table{Name: n, Columns: cols, PrimaryKey: []string{"k"}}, false); err != nil {
			t.Fatal(err)
		}
	}
	insertKV(t, e, w.t, 1, 10, 2, 20, 3, 30, 4, 40)
	ep := insertKV(t, e, w.u, 1, 1, 2, 2)
	for _, v := range [][2]any{{w.v1, v1Query}, {w.v2, crashV2Query}, {w.w, crashWQuery}} {
		if err := e.CreateView(ctx, v[0].(catalog.ObjectName), v[1].(string), nil, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.CreateSink(ctx, w.k, w.out, crashKQuery, false); err != nil {
		t.Fatal(err)
	}
	if got, want := readView(t, e, w.out, max(ep, e.SinkStartEpoch(ctx, w.k))), "(0, 31)\n(1, 52)\n(2, 21)"; got != want {
		t.Fatalf("out before the DROP:\n%s\nwant\n%s", got, want)
	}
	for _, j := range []string{viewJobName(w.v1), viewJobName(w.v2), viewJobName(w.w), sinkJobName(w.k)} {
		waitCheckpoint(t, e, j)
	}
}

// present says, for each of the named tables and views, whether the
// catalog holds it, and for each of the named jobs, whether it holds it.
func present(t *testing.T, e *Engine, tables []catalog.ObjectName, jobs []string) map[string]bool {
	t.Helper()
	cat, err := e.Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, n := range tables {
		_, err := cat.Table(n)
		out[n.Name] = err == nil
	}
	for _, j := range jobs {
		_, err := cat.Job(j)
		out[j] = err == nil
	}
	return out
}

// verifyView checks view n against its query at its committed epoch.
func verifyView(t *testing.T, e *Engine, n catalog.ObjectName) {
	t.Helper()
	tb, err := e.Table(n)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := tb.CommittedEpoch()
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.Verify(context.Background(), n, ep)
	if err != nil {
		t.Fatalf("verify %s: %v", n.Name, err)
	}
	if !v.OK() {
		t.Fatalf("verify %s: %s", n.Name, v)
	}
}

// checkDropped checks that nothing is left of tables and jobs, which a
// DROP removed: no directory in the warehouse, no checkpoints, and no
// intent of the DROP left.
func checkDropped(t *testing.T, dir string, tables []catalog.ObjectName, jobs []string) {
	t.Helper()
	for _, n := range tables {
		waitGone(t, filepath.Join(dir, "warehouse", n.Database, n.Name))
	}
	for _, j := range jobs {
		if _, err := os.Stat(filepath.Join(dir, "checkpoints", j)); !os.IsNotExist(err) {
			t.Errorf("checkpoints of dropped job %s are still there (%v)", j, err)
		}
	}
	if es, err := os.ReadDir(filepath.Join(dir, "drops")); err != nil || len(es) != 0 {
		t.Errorf("drop intents left: %v %v", es, err)
	}
}

// dropCrashSteps are the steps of a DROP at which the crash tests kill
// the process, and whether the DROP is committed when it dies there.
var dropCrashSteps = []struct {
	step      string
	committed bool
}{
	{dropStepIntent, false},
	{dropStepStopped, false},
	{"the commit's write", false},
	{dropStepCommitted, true},
	{dropStepCleaning, true},
	{dropStepCleaned, true},
	{dropStepStarted, true},
}

// dieAt returns the store and engine hook of a process that dies at
// step: the commit's write itself fails for "the commit's write", which
// removes job dies.
func dieAt(t *testing.T, dir, step, dies string) (*store.Memory, *Engine) {
	t.Helper()
	mem := store.NewMemory()
	d := &dyingStore{Memory: mem}
	if step == "the commit's write" {
		d.dropJob = dies
	}
	e := openOnStore(t, dir, d)
	e.crashAt = func(s string) error {
		if s == step {
			d.kill()
			return errDied
		}
		return nil
	}
	return mem, e
}

// TestDropCascadeDiesAtEveryStep checks [drop-atomic]: DROP TABLE t
// CASCADE, which drops t, views v1 and v2 over it, sink k reading v2 and
// gives table out back to its DML job, dies at every step of the
// statement. After the restart either all of them are there, every view
// keeps up with its inputs and verifies, and the DROP then works; or
// none is, out takes INSERTs again, and nothing of what went is left in
// the warehouse or the checkpoints. View w over u, which the DROP does
// not touch, keeps up and verifies either way.
func TestDropCascadeDiesAtEveryStep(t *testing.T) {
	ctx := context.Background()
	w := newDropCrashWorld()
	gone := []catalog.ObjectName{w.t, w.v1, w.v2}
	goneJobs := []string{dmlJobName(w.t), viewJobName(w.v1), viewJobName(w.v2), sinkJobName(w.k)}
	for _, tc := range dropCrashSteps {
		t.Run(tc.step, func(t *testing.T) {
			dir := t.TempDir()
			mem, e := dieAt(t, dir, tc.step, viewJobName(w.v1))
			w.build(t, e)
			if err := e.Drop(ctx, "table", w.t, false, true); !errors.Is(err, errDied) {
				t.Fatalf("DROP TABLE t CASCADE on a process that dies = %v", err)
			}
			_ = e.Close() // the store is dead: closing can fail
			e = openOnStore(t, dir, mem.Reopen())
			defer func() { _ = e.Close() }()

			got := present(t, e, append(gone, w.out), append(goneJobs, dmlJobName(w.out)))
			for _, n := range append(gone, w.k) {
				name, kept := n.Name, got[n.Name]
				if n == w.k {
					name, kept = sinkJobName(n), got[sinkJobName(n)]
				}
				if kept == tc.committed {
					t.Errorf("%s: in the catalog %v after dying at %q (committed %v)", name, kept, tc.step, tc.committed)
				}
			}
			for _, j := range goneJobs {
				if got[j] == tc.committed {
					t.Errorf("job %s: in the catalog %v after dying at %q", j, got[j], tc.step)
				}
			}
			if !got["out"] || got[dmlJobName(w.out)] != tc.committed {
				t.Errorf("table out %v, its DML job %v; want the table, with its DML job iff the DROP committed (%v)", got["out"], got[dmlJobName(w.out)], tc.committed)
			}

			// The view the DROP does not touch keeps up.
			ep := insertKV(t, e, w.u, 3, 3)
			if got, want := readView(t, e, w.w, ep), "(0, 2)\n(1, 4)"; got != want {
				t.Fatalf("w after the restart:\n%s\nwant\n%s", got, want)
			}
			verifyView(t, e, w.w)

			if tc.committed {
				checkDropped(t, dir, gone, goneJobs)
				ep := insertKV(t, e, w.out, 9, 90)
				if got, want := readView(t, e, w.out, ep), "(0, 31)\n(1, 52)\n(2, 21)\n(9, 90)"; got != want {
					t.Fatalf("out after the restart:\n%s\nwant\n%s", got, want)
				}
				return
			}
			// Nothing went: the views and the sink resume from their
			// checkpoints and keep up.
			ep = insertKV(t, e, w.t, 5, 50)
			if got, want := readView(t, e, w.v1, ep), "(0, 30, 1)\n(1, 50, 2)\n(2, 70, 2)"; got != want {
				t.Fatalf("v1 after the restart:\n%s\nwant\n%s", got, want)
			}
			if got, want := readView(t, e, w.out, ep), "(0, 31)\n(1, 52)\n(2, 72)"; got != want {
				t.Fatalf("out after the restart:\n%s\nwant\n%s", got, want)
			}
			verifyView(t, e, w.v1)
			verifyView(t, e, w.v2)
			if err := e.Drop(ctx, "table", w.t, false, true); err != nil {
				t.Fatalf("DROP TABLE t CASCADE again after the restart: %v", err)
			}
			checkDropped(t, dir, gone, goneJobs)
			if got := present(t, e, gone, goneJobs); got["t"] || got["v1"] || got["v2"] || got[sinkJobName(w.k)] {
				t.Fatalf("after the DROP again: %v", got)
			}
		})
	}
}

// TestDropListDies: DROP MATERIALIZED VIEW v2, w, two views over
// different tables, is one change too: a process dying at its commit
// keeps both, one dying after it keeps neither.
func TestDropListDies(t *testing.T) {
	ctx := context.Background()
	w := newDropCrashWorld()
	for _, tc := range []struct {
		step      string
		committed bool
	}{{"the commit's write", false}, {dropStepCleaning, true}} {
		t.Run(tc.step, func(t *testing.T) {
			dir := t.TempDir()
			mem, e := dieAt(t, dir, tc.step, viewJobName(w.w))
			w.build(t, e)
			if err := e.DropAll(ctx, "view", []catalog.ObjectName{w.v2, w.w}, false, true); !errors.Is(err, errDied) {
				t.Fatalf("DROP MATERIALIZED VIEW v2, w on a process that dies = %v", err)
			}
			_ = e.Close()
			e = openOnStore(t, dir, mem.Reopen())
			defer func() { _ = e.Close() }()
			got := present(t, e, []catalog.ObjectName{w.v1, w.v2, w.w}, []string{viewJobName(w.v2), viewJobName(w.w), sinkJobName(w.k)})
			want := map[string]bool{"v1": true, "v2": !tc.committed, "w": !tc.committed,
				viewJobName(w.v2): !tc.committed, viewJobName(w.w): !tc.committed, sinkJobName(w.k): !tc.committed}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s in the catalog: %v, want %v", k, got[k], v)
				}
			}
			ep := insertKV(t, e, w.t, 5, 50)
			if got, want := readView(t, e, w.v1, ep), "(0, 30, 1)\n(1, 50, 2)\n(2, 70, 2)"; got != want {
				t.Fatalf("v1 after the restart:\n%s\nwant\n%s", got, want)
			}
			verifyView(t, e, w.v1)
			if tc.committed {
				checkDropped(t, dir, []catalog.ObjectName{w.v2, w.w}, []string{viewJobName(w.v2), viewJobName(w.w), sinkJobName(w.k)})
				return
			}
			verifyView(t, e, w.v2)
			verifyView(t, e, w.w)
		})
	}
}
