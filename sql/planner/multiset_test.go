package planner

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/plan"
)

// msEndpoints serves relations marked Multiset with their stored rows:
// the relation's columns, then the multiplicity.
type msEndpoints struct{ anyEndpoints }

func (e *msEndpoints) Source(rel *plan.Relation, i int) operator.Source {
	src := e.anyEndpoints.Source(rel, i).(*anySource)
	if rel.Multiset {
		src.ts = append(src.ts, types.Int64)
	}
	return src
}

// TestMultisetViewPlans: Multiset keys a keyless retracting join by all
// of its columns with a count (two equal rows are one row counted twice,
// gone when both are retracted), and a scan of a relation marked
// Multiset repeats each stored row by its count: a retract input without
// a key.
func TestMultisetViewPlans(t *testing.T) {
	bids := bidScript(bidRel("bid"), 11, 12)
	trs := tsScript(12, 12)
	cat := relCatalog{"bid": bids, "tr": trs}
	q := "SELECT b.auction, tr.v FROM bid AS b JOIN tr ON b.auction = tr.k"
	p := bindSQL(t, cat, q)
	got, job := runPlan(t, cat, Multiset(p, "n"), 2)
	if job.Mode != Retract {
		t.Fatalf("mode %s, want retract\n%s", job.Mode, job.Explain)
	}
	plain, _ := runPlan(t, cat, p, 2)
	counts := map[string]int{}
	for _, r := range plain {
		counts[r]++
	}
	var want []string
	for r, n := range counts {
		want = append(want, r+"|"+strconv.Itoa(n))
	}
	sort.Strings(want)
	sameRows(t, "multiset of "+q, got, want, job.Explain)
	if len(got) >= len(plain) {
		t.Fatalf("%d multiset rows for %d view rows: the test needs equal rows", len(got), len(plain))
	}

	// The stored form read back: a Multiset relation's changelog of
	// counts, expanded.
	ms := &plan.Relation{Name: "ms", Multiset: true, Columns: []plan.Column{{Name: "item", Type: types.Text}, {Name: "price", Type: types.Int64}}}
	row := func(item string, price, n int64) types.Row {
		return types.Row{types.NewText(item), types.NewInt64(price), types.NewInt64(n)}
	}
	in := &input{rel: ms, evs: []event{
		{kind: types.Insert, row: row("a", 1, 2)}, {kind: types.Insert, row: row("b", 2, 1)}, {epoch: 1},
		{kind: types.UpdateBefore, row: row("a", 1, 2)}, {kind: types.UpdateAfter, row: row("a", 1, 3)},
		{kind: types.Delete, row: row("b", 2, 1)}, {epoch: 2},
		{kind: types.UpdateBefore, row: row("a", 1, 3)}, {kind: types.UpdateAfter, row: row("a", 1, 1)}, {epoch: 3},
	}}
	mcat := relCatalog{"ms": in}
	for _, c := range []struct{ q, want string }{
		{"SELECT item, price FROM ms", "a|1"},
		{"SELECT item FROM ms WHERE price > 0", "a"},
		{"SELECT item, count(*) AS c FROM ms GROUP BY item", "a|1"},
	} {
		ep := &msEndpoints{anyEndpoints{cat: mcat}}
		j, err := Build("view", bindSQL(t, mcat, c.q), ep, Options{Parallelism: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(j.Explain, "repeat") || j.Mode != Retract {
			t.Errorf("%s: mode %s, plan\n%s\nwant a repeat vertex, retract", c.q, j.Mode, j.Explain)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = task.Run(ctx, j.Graph, task.Options{})
		cancel()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.q, err, j.Explain)
		}
		if rows := materialize(t, ep.rows); strings.Join(rows, "\n") != c.want {
			t.Errorf("%s: %v, want %s", c.q, rows, c.want)
		}
	}
}
