package olap

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

// TestRandomHistoriesReadAtEveryEpoch writes seeded random histories of
// inserts, updates and deletes (some epochs empty; small write buffers, so
// the writer's own compactions run) and checks that a query at every epoch, in random order and repeated, gives
// exactly the model's state at that epoch.
func TestRandomHistoriesReadAtEveryEpoch(t *testing.T) {
	e := newEngine(t)
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			tb, err := table.Create(fileio.NewMem(), fmt.Sprintf("wh/dev/h%d", seed), []schema.Field{
				{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64, Nullable: true}, {Name: "s", Type: types.Text, Nullable: true},
			}, []string{"k"}, map[string]string{"bucket": fmt.Sprint(1 + r.IntN(4)), "write-buffer-rows": fmt.Sprint(5 + r.IntN(50))})
			if err != nil {
				t.Fatal(err)
			}
			w, _ := tb.NewWriter("h")
			model := map[int64][2]string{}
			states := map[base.Epoch]string{0: ""}
			const epochs = 12
			for ep := base.Epoch(1); ep <= epochs; ep++ {
				var changes []change
				if r.IntN(5) > 0 { // some epochs change nothing
					for range 1 + r.IntN(60) {
						k := int64(r.IntN(80))
						v := r.Int64N(1000) - 500
						s := fmt.Sprintf("s%d", r.IntN(10))
						switch _, ok := model[k]; {
						case ok && r.IntN(3) == 0:
							changes = append(changes, del(types.Row{i64(k), types.Null, types.Null}))
							delete(model, k)
						case ok:
							changes = append(changes, upd(types.Row{i64(k), i64(v), txt(s)}))
							model[k] = [2]string{fmt.Sprint(v), s}
						default:
							changes = append(changes, ins(types.Row{i64(k), i64(v), txt(s)}))
							model[k] = [2]string{fmt.Sprint(v), s}
						}
					}
				}
				commitEpoch(t, tb, w, ep, changes...)
				states[ep] = render(model)
			}
			order := r.Perm(2 * (epochs + 1))
			for _, i := range order {
				ep := base.Epoch(i % (epochs + 1))
				res := mustQuery(t, e, []Input{{Name: "h", Table: tb, Epoch: ep}}, "SELECT k, v, s FROM h ORDER BY k")
				if got := text(res.Rows); got != states[ep] {
					t.Fatalf("epoch %d:\n%s\nwant\n%s", ep, got, states[ep])
				}
			}
		})
	}
}

func render(model map[int64][2]string) string {
	keys := make([]int64, 0, len(model))
	for k := range model {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%d|%s|%s\n", k, model[k][0], model[k][1])
	}
	return b.String()
}

// TestQueriesAtRisingEpochsBringTablesForward queries tables that change
// every epoch at one epoch after another, as a client following the latest
// epoch does, so that each query finds the previous epoch's loaded table
// and brings it forward by the changelog ([cache-advance]). Each answer
// must equal the model's state at its epoch; primary-key tables with the
// lookup and the input changelog and an append table are checked, with
// now and then a query at an older epoch and a compaction between.
func TestQueriesAtRisingEpochsBringTablesForward(t *testing.T) {
	e := newEngine(t)
	for _, producer := range []string{"lookup", "input", "append"} {
		t.Run(producer, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, uint64(len(producer))))
			opts := map[string]string{"write-buffer-rows": "17"}
			var pk []string
			if producer != "append" {
				opts["bucket"] = "3"
				opts["changelog-producer"] = producer
				pk = []string{"k"}
			}
			tb, err := table.Create(fileio.NewMem(), "wh/dev/rise_"+producer, []schema.Field{
				{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64, Nullable: true}, {Name: "s", Type: types.Text, Nullable: true},
			}, pk, opts)
			if err != nil {
				t.Fatal(err)
			}
			w, _ := tb.NewWriter("h")
			model := map[int64][2]string{}
			var appended []string
			states := map[base.Epoch]string{}
			before := func() int { e.cache.mu.Lock(); defer e.cache.mu.Unlock(); return e.cache.mu.advanced }()
			for ep := base.Epoch(1); ep <= 40; ep++ {
				var changes []change
				for range r.IntN(40) {
					k := int64(r.IntN(60))
					v := r.Int64N(1000)
					s := fmt.Sprintf("s%d", r.IntN(10))
					row := types.Row{i64(k), i64(v), txt(s)}
					_, ok := model[k]
					switch {
					case producer == "append":
						changes = append(changes, ins(row))
						appended = append(appended, fmt.Sprintf("%d|%d|%s", k, v, s))
						continue
					case ok && r.IntN(3) == 0:
						changes = append(changes, del(types.Row{i64(k), types.Null, types.Null}))
						delete(model, k)
						continue
					case ok && r.IntN(2) == 0:
						changes = append(changes, change{types.UpdateBefore, types.Row{i64(k), types.Null, types.Null}})
						if r.IntN(4) == 0 { // a lone -U retracts the key
							delete(model, k)
							continue
						}
						changes = append(changes, upd(row))
					case ok:
						changes = append(changes, upd(row))
					default:
						changes = append(changes, ins(row))
					}
					model[k] = [2]string{fmt.Sprint(v), s}
				}
				commitEpoch(t, tb, w, ep, changes...)
				if producer == "append" {
					sorted := append([]string(nil), appended...)
					sort.Strings(sorted)
					states[ep] = strings.Join(sorted, "\n")
				} else {
					states[ep] = strings.TrimSuffix(render(model), "\n")
				}
				q := []base.Epoch{ep}
				if ep%7 == 0 {
					q = append(q, ep-3, ep) // an older epoch, then back to the latest
				}
				for _, at := range q {
					order := "k"
					if producer == "append" {
						order = "concat(k, '|', v, '|', s)" // as sort.Strings orders them
					}
					res := mustQuery(t, e, []Input{{Name: "h", Table: tb, Epoch: at}}, "SELECT k, v, s FROM h ORDER BY "+order)
					if got := strings.TrimSuffix(text(res.Rows), "\n"); got != states[at] {
						t.Fatalf("epoch %d:\n%s\nwant\n%s", at, got, states[at])
					}
				}
			}
			after := func() int { e.cache.mu.Lock(); defer e.cache.mu.Unlock(); return e.cache.mu.advanced }()
			if after-before < 20 {
				t.Fatalf("%d of 46 queries brought a loaded table forward, want most", after-before)
			}
		})
	}
}

// TestBringingForwardDeletesRowsWithNullKeys: a table keyed by columns
// that may hold NULL (a view keyed by all its columns, an outer join's
// padded side) is brought forward through updates and deletes of keys
// with NULL parts; a cached copy must drop the old row each time, as a
// fresh load at the same epoch does.
func TestBringingForwardDeletesRowsWithNullKeys(t *testing.T) {
	e := newEngine(t)
	tb, err := table.Create(fileio.NewMem(), "wh/dev/nullkeys", []schema.Field{
		{Name: "a", Type: types.Int64, Nullable: true}, {Name: "b", Type: types.Text, Nullable: true}, {Name: "v", Type: types.Int64, Nullable: true},
	}, []string{"a", "b"}, map[string]string{schema.OptionNullableKey: "true", "changelog-producer": "lookup"})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := tb.NewWriter("h")
	null, one, x := types.Null, i64(1), txt("x")
	steps := []struct {
		changes []change
		want    string
	}{
		{[]change{ins(types.Row{null, null, i64(0)}), ins(types.Row{one, null, i64(1)}), ins(types.Row{null, x, i64(2)})},
			"NULL|NULL|0\nNULL|x|2\n1|NULL|1"},
		{[]change{upd(types.Row{null, null, i64(10)}), del(types.Row{one, null, null})},
			"NULL|NULL|10\nNULL|x|2"},
		{[]change{del(types.Row{null, null, null}), upd(types.Row{null, x, i64(20)}), ins(types.Row{one, x, i64(3)})},
			"NULL|x|20\n1|x|3"},
	}
	for i, st := range steps {
		ep := base.Epoch(i + 1)
		commitEpoch(t, tb, w, ep, st.changes...)
		res := mustQuery(t, e, []Input{{Name: "n", Table: tb, Epoch: ep}}, "SELECT a, b, v FROM n ORDER BY a NULLS FIRST, b NULLS FIRST")
		got := strings.ReplaceAll(strings.TrimSuffix(text(res.Rows), "\n"), "<nil>", "NULL")
		if got != st.want {
			t.Fatalf("epoch %d:\n%s\nwant\n%s", ep, got, st.want)
		}
	}
}
