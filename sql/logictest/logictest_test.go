package logictest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/types"
)

var parFlag = flag.String("parallelism", "1,2", "comma-separated job parallelisms every query runs with")

var rewrite = flag.Bool("rewrite", false, "rewrite the expected rows (\"----\" blocks) of testdata/*.slt from the views' final rows")

// TestCorpus runs every testdata/*.slt script: each query as a streaming
// job at parallelism 1 and 2, compared at every epoch with DuckDB and at
// the end with the expected rows. With -short, only the first of the
// -parallelism list runs.
func TestCorpus(t *testing.T) {
	files, err := filepath.Glob("testdata/*.slt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts under testdata: %v", err)
	}
	db, err := OpenOracle()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r := &Runner{Oracle: db}
	for _, p := range strings.Split(*parFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 {
			t.Fatalf("-parallelism %q: want positive integers", *parFlag)
		}
		r.Parallelisms = append(r.Parallelisms, n)
	}
	if testing.Short() {
		r.Parallelisms = r.Parallelisms[:1]
	}
	total, compared, skipped := 0, 0, 0
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ParseScript(f, string(text))
		if err != nil {
			t.Fatal(err)
		}
		if *rewrite {
			if err := rewriteScript(r, f, string(text), s); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Run(strings.TrimSuffix(filepath.Base(f), ".slt"), func(t *testing.T) {
			for _, o := range r.RunScript(context.Background(), s) {
				total++
				switch o.Status {
				case Failed:
					t.Error(o.Detail)
				case Skipped:
					skipped++
					t.Logf("%s: %s", o.Where, o.Detail)
				case Passed:
					compared++
				}
			}
		})
	}
	t.Logf("%d queries: %d compared and equal, %d skipped", total, compared, skipped)
}

// rewriteScript replaces the expected rows of every query that has a
// "----" block and is not skipped with the view's final rows.
func rewriteScript(r *Runner, path, text string, s *Script) error {
	lines := strings.Split(text, "\n")
	byLine := map[int]*Query{}
	for _, q := range s.Queries {
		byLine[q.Line] = q
	}
	var out []string
	for i := 0; i < len(lines); i++ {
		out = append(out, lines[i])
		q := byLine[i+1]
		if q == nil || !q.HasExpected || q.Skip != "" {
			// A skipped query's rows are Postgres's, not the view's.
			continue
		}
		for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "----" {
			i++
			out = append(out, lines[i])
		}
		i++
		out = append(out, "----")
		rows, err := r.FinalRows(context.Background(), q)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Where(q), err)
		}
		out = append(out, rows...)
		for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" {
			i++
		}
	}
	return os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644)
}

func TestParseScript(t *testing.T) {
	s, err := ParseScript("x.slt", `
table t (id BIGINT, v NUMERIC(6,2), s TEXT, PRIMARY KEY (id))

input t
+I 1, 2.5, 'it''s'
+I 2, NULL, NULL
epoch
-U 1, 2.50, 'it''s'
+U 1, 3, 'b'
epoch
-D 2, NULL, NULL

skipif bug a reason
query
SELECT id FROM t
duckdb
SELECT id FROM t
----
1

query error 42703
SELECT nope FROM t
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Queries) != 2 {
		t.Fatalf("%d queries", len(s.Queries))
	}
	q := s.Queries[0]
	if q.Skip != SkipBug || q.SkipReason != "a reason" || q.Oracle != "SELECT id FROM t" || !q.HasExpected || len(q.Expected) != 1 || q.Line != 14 {
		t.Fatalf("query 0: %+v", q)
	}
	in := q.Data.Inputs["t"]
	if len(in) != 3 || len(in[0]) != 2 || len(in[1]) != 2 || len(in[2]) != 1 {
		t.Fatalf("epochs: %v", in)
	}
	if got := FormatRow(in[1][1].Row); got != "1|3.00|b" {
		t.Fatalf("+U row: %s", got)
	}
	if got := FormatRow(in[0][0].Row); got != "1|2.50|it's" {
		t.Fatalf("+I row: %s", got)
	}
	w, err := ParseScript("w.slt", "table t (id INT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '5 minutes', PRIMARY KEY (id))\nquery\nSELECT 1 FROM t\n")
	if err != nil {
		t.Fatal(err)
	}
	if wm := w.Queries[0].Data.Tables[0].Rel.Watermark; wm == nil || wm.Column != 1 || wm.Delay.Micros != 300_000_000 {
		t.Fatalf("watermark: %+v", wm)
	}
	if s.Queries[1].ErrCode != "42703" || s.Queries[1].Skip != "" {
		t.Fatalf("query 1: %+v", s.Queries[1])
	}
	for _, bad := range []string{
		"table t (id BIGINT)\ninput t\n+I 1\n-D 1\n",
		"table t (id BIGINT, PRIMARY KEY (id))\ninput t\n+I 1\n+I 1\n",
		"table t (id BIGINT, v INT, PRIMARY KEY (id))\ninput t\n+I 1, 1\n-D 1, 2\n",
		"table t (id BIGINT, v INT, PRIMARY KEY (id))\ninput t\n+I 1, 1\n-U 1, 1\n",
		"table t (id BIGINT, PRIMARY KEY (id))\nquery\n",
		"frobnicate\n",
	} {
		if _, err := ParseScript("bad.slt", bad); err == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
}

// TestGenerate checks that generated changelogs respect the primary key,
// hold updates, deletes, NULLs and re-inserted keys, and repeat for a seed.
func TestGenerate(t *testing.T) {
	p := &scriptParser{path: "g", data: &Dataset{Inputs: map[string][][]Change{}}}
	if err := p.table(1, "t (a INT, b TEXT, v NUMERIC, f DOUBLE, j JSONB, PRIMARY KEY (a, b))"); err != nil {
		t.Fatal(err)
	}
	rel := p.data.Tables[0].Rel
	spec := GenSpec{Rows: 200, Epochs: 10, Seed: 3, Updates: 0.3, Deletes: 0.15, Nulls: 0.1, Extremes: 0.05}
	a, b := Generate(rel, spec), Generate(rel, spec)
	st := newLiveState(rel)
	kinds := map[types.RowKind]int{}
	nulls, reinserts := 0, 0
	deletedKeys := map[string]bool{}
	for e := range a {
		if len(a[e]) != len(b[e]) {
			t.Fatalf("epoch %d differs between runs of one seed", e)
		}
		for i, c := range a[e] {
			if FormatRow(c.Row) != FormatRow(b[e][i].Row) {
				t.Fatalf("epoch %d change %d differs between runs of one seed", e, i)
			}
			if err := st.apply(c); err != nil {
				t.Fatalf("epoch %d: %v", e, err)
			}
			kinds[c.Kind]++
			k := st.key(c.Row)
			if c.Kind == types.Delete {
				deletedKeys[k] = true
			}
			if c.Kind == types.Insert && deletedKeys[k] {
				reinserts++
			}
			for _, d := range c.Row {
				if d.IsNull() {
					nulls++
				}
			}
		}
	}
	if kinds[types.Insert] < 150 || kinds[types.UpdateBefore] < 40 || kinds[types.UpdateBefore] != kinds[types.UpdateAfter] || kinds[types.Delete] < 20 || nulls == 0 || reinserts == 0 {
		t.Fatalf("kinds %v, %d NULLs, %d re-inserted keys", kinds, nulls, reinserts)
	}
}

// TestCorpusAsMultisets runs every compared query of the corpus once more
// in the form a multiset view is stored and read back ("query multiset":
// grouped by all of its columns with a count, then each row repeated by
// its count), which must give the same rows as the view itself whatever
// the query: the multiset is an exact encoding of any view's bag of rows.
// The view is compared with DuckDB at every epoch; the expected rows'
// exact text is not, since equal values spelled differently (NUMERIC 1.5
// and 1.50) share one stored row and one spelling.
func TestCorpusAsMultisets(t *testing.T) {
	if testing.Short() {
		t.Skip("reruns the corpus")
	}
	files, err := filepath.Glob("testdata/*.slt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts under testdata: %v", err)
	}
	db, err := OpenOracle()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r := &Runner{Oracle: db, Parallelisms: []int{2}}
	total := 0
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ParseScript(f, string(text))
		if err != nil {
			t.Fatal(err)
		}
		kept := s.Queries[:0]
		for _, q := range s.Queries {
			if q.Skip != "" || q.ErrCode != "" || q.NoOracle {
				continue
			}
			q.Multiset, q.HasExpected, q.Expected = true, false, nil
			kept = append(kept, q)
		}
		s.Queries = kept
		t.Run(strings.TrimSuffix(filepath.Base(f), ".slt"), func(t *testing.T) {
			for _, o := range r.RunScript(context.Background(), s) {
				total++
				if o.Status != Passed {
					t.Errorf("%s: %s", o.Where, o.Detail)
				}
			}
		})
	}
	t.Logf("%d queries as multisets", total)
}
