package logictest

import (
	"context"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/duckdb"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/planner"
)

// TestRunnerDetects checks that the runner fails what it must: a view
// that differs from the oracle at some epoch, final rows that differ
// from the expected ones, a statement that should fail and does not, a
// view that retracts a row it does not hold, and -U x, +U x noise in a
// quiet query.
func TestRunnerDetects(t *testing.T) {
	db, err := OpenOracle()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r := &Runner{Oracle: db}
	s, err := ParseScript("detect.slt", `
table t (id INT, v INT, PRIMARY KEY (id))

input t
+I 1, 10
epoch
+I 2, 20
epoch

query
SELECT id, v FROM t
duckdb
SELECT id, v + (id = 2)::int FROM t

query
SELECT id FROM t
----
1
3

query error 22012
SELECT id FROM t

query
SELECT id, v FROM t
`)
	if err != nil {
		t.Fatal(err)
	}
	out := r.RunScript(context.Background(), s)
	for i, want := range []string{"epoch 2: the view differs from DuckDB", "final rows differ from the expected rows", "the statement succeeded; want error 22012", ""} {
		o := out[i]
		if want == "" {
			if o.Status != Passed {
				t.Errorf("%s: %s", o.Where, o.Detail)
			}
			continue
		}
		if o.Status != Failed || !strings.Contains(o.Detail, want) {
			t.Errorf("%s: status %d, detail %q; want a failure saying %q", o.Where, o.Status, o.Detail, want)
		}
	}

	row := func(id int64) types.Row { return types.Row{types.NewInt64(id)} }
	job := &planner.Job{Types: []types.Type{types.Int64}}
	cols := []duckdb.Column{{Name: "id", Type: types.Int64}}
	answers := []oracleAnswer{{cols: cols, rows: []types.Row{row(1)}}, {cols: cols, rows: []types.Row{row(1)}}}
	ep := &endpoints{}
	ep.mu.out = []epochChanges{{epoch: 1, changes: []Change{{Kind: types.Insert, Row: row(1)}}},
		{epoch: 2, changes: []Change{{Kind: types.Delete, Row: row(2)}}}}
	if err := compareEpochs(&Query{}, job, ep, answers); err == nil || !strings.Contains(err.Error(), "epoch 2: the view retracted a row it did not hold") {
		t.Errorf("retraction of a row not held: %v", err)
	}
	ep.mu.out = []epochChanges{{epoch: base.Epoch(1), changes: []Change{{Kind: types.Insert, Row: row(1)}, {Kind: types.UpdateBefore, Row: row(1)}, {Kind: types.UpdateAfter, Row: row(1)}}}}
	if err := compareEpochs(&Query{Quiet: true}, job, ep, answers); err == nil || !strings.Contains(err.Error(), "retracts and adds the same row") {
		t.Errorf("noise in a quiet query: %v", err)
	}
}
