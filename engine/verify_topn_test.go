package engine

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/binder"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/parser"
)

// scRow is a row (id, grp, score) of the view top1 over sc.
func scRow(id int64, grp string, score int32) types.Row {
	g := types.Null
	if grp != "" {
		g = types.NewText(grp)
	}
	return types.Row{types.NewInt64(id), g, types.NewInt32(score)}
}

// TestTiesAtCutOff: differences of a per-partition top-N (PARTITION BY
// grp ORDER BY score DESC) only among rows tied at rank N are accepted;
// a wrong score, a missing partition, a wrong count, ties above the
// cut-off or a partition short of N rows are not.
func TestTiesAtCutOff(t *testing.T) {
	top := func(n int64) partitionTop {
		return partitionTop{n: n, partition: []int{1}, order: []rankKey{{col: 2, desc: true, nullsFirst: true}}, mapped: true}
	}
	r := scRow
	// The view's rows (N = 2): a keeps 1 and 2 of 1, 2, 3 (score 10);
	// b keeps 5 (9) and 6 of 6, 7 (7); c has one row only.
	view := []types.Row{r(1, "a", 10), r(2, "a", 10), r(5, "b", 9), r(6, "b", 7), r(8, "c", 4)}
	for _, tc := range []struct {
		name           string
		n              int64
		missing, extra []types.Row
		view           []types.Row
		ok             bool
		groups         int
	}{
		{"tie at rank 2", 2, []types.Row{r(7, "b", 7)}, []types.Row{r(6, "b", 7)}, view, true, 1},
		{"tie spanning ranks 1 and 2", 2, []types.Row{r(3, "a", 10)}, []types.Row{r(2, "a", 10)}, view, true, 1},
		{"two partitions", 2, []types.Row{r(3, "a", 10), r(7, "b", 7)}, []types.Row{r(1, "a", 10), r(6, "b", 7)}, view, true, 2},
		{"two rows of one tie", 2, []types.Row{r(3, "a", 10), r(4, "a", 10)}, []types.Row{r(1, "a", 10), r(2, "a", 10)}, view, true, 1},
		{"wrong score", 2, []types.Row{r(6, "b", 8)}, []types.Row{r(6, "b", 7)}, view, false, 0},
		{"another score in the partition", 2, []types.Row{r(7, "b", 7)}, []types.Row{r(6, "b", 6)}, view, false, 0},
		{"tie in another partition", 2, []types.Row{r(7, "b", 7)}, []types.Row{r(9, "d", 7)}, view, false, 0},
		{"missing partition", 2, []types.Row{r(9, "d", 3)}, nil, view, false, 0},
		{"counts moved between partitions", 2, []types.Row{r(3, "a", 10), r(7, "b", 7)}, []types.Row{r(1, "a", 10), r(2, "a", 10)}, view, false, 0},
		{"a row too many", 2, []types.Row{r(7, "b", 7)}, []types.Row{r(6, "b", 7), r(9, "b", 7)}, view, false, 0},
		{"tied rows above the cut-off", 2, []types.Row{r(4, "b", 9)}, []types.Row{r(5, "b", 9)}, view, false, 0},
		{"partition short of N rows", 2, []types.Row{r(9, "c", 4)}, []types.Row{r(8, "c", 4)}, view, false, 0},
		{"N = 1", 1, []types.Row{r(2, "a", 10)}, []types.Row{r(1, "a", 10)}, []types.Row{r(1, "a", 10), r(6, "b", 7)}, true, 1},
		{"NULL partition and score", 1, []types.Row{r(2, "", 0)}, []types.Row{r(1, "", 0)}, []types.Row{r(1, "", 0)}, true, 1},
		{"no difference", 2, nil, nil, view, false, 0},
	} {
		if tc.name == "NULL partition and score" {
			for _, rs := range [][]types.Row{tc.missing, tc.extra, tc.view} {
				rs[0][2] = types.Null
			}
		}
		groups, ok := tiesAtCutOff(top(tc.n), tc.missing, tc.extra, tc.view)
		if ok != tc.ok || len(groups) != tc.groups {
			t.Errorf("%s: ok %v with %d groups, want %v with %d", tc.name, ok, len(groups), tc.ok, tc.groups)
		}
	}
	// A score of another kind (a float the recomputation rounded to
	// NUMERIC) is not compared.
	m := types.Row{types.NewInt64(2), types.NewText("a"), types.NewFloat64(10)}
	if _, ok := tiesAtCutOff(top(1), []types.Row{m}, []types.Row{r(1, "a", 10)}, []types.Row{r(1, "a", 10)}); ok {
		t.Error("scores of two kinds: accepted")
	}
	// Unmapped keys are never accepted.
	un := top(1)
	un.mapped = false
	if _, ok := tiesAtCutOff(un, []types.Row{r(2, "a", 10)}, []types.Row{r(1, "a", 10)}, []types.Row{r(1, "a", 10)}); ok {
		t.Error("unmapped keys: accepted")
	}
}

// TestCompareRank orders by DESC NULLS FIRST and ASC NULLS LAST keys.
func TestCompareRank(t *testing.T) {
	a, b, null := types.Row{types.NewInt32(1)}, types.Row{types.NewInt32(2)}, types.Row{types.Null}
	for _, tc := range []struct {
		x, y types.Row
		key  rankKey
		want int
	}{
		{a, b, rankKey{}, -1},
		{a, b, rankKey{desc: true, nullsFirst: true}, 1},
		{null, a, rankKey{desc: true, nullsFirst: true}, -1},
		{null, a, rankKey{}, 1},
		{a, null, rankKey{}, -1},
		{null, null, rankKey{}, 0},
	} {
		if got := compareRank(tc.x, tc.y, []rankKey{tc.key}); got != tc.want {
			t.Errorf("compareRank(%s, %s, %+v) = %d, want %d", tc.x, tc.y, tc.key, got, tc.want)
		}
	}
}

// TestVerifyRowNumberTies runs the top-1 view of a user's report over sc,
// whose rows tie at rank 1 in both partitions: Verify accepts it, the view
// keeping one of the tied rows; a difference among the tied rows at the
// cut-off is accepted with a note naming them, and one with a changed
// score, a row fewer or a partition missing stays a difference.
func TestVerifyRowNumberTies(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	sc := catalog.Name(DefaultDatabase, "sc")
	cols := []catalog.Column{{Name: "id", Type: types.Int64, NotNull: true}, {Name: "grp", Type: types.Text}, {Name: "score", Type: types.Int32}}
	if err := e.CreateTable(ctx, catalog.Table{Name: sc, Columns: cols, PrimaryKey: []string{"id"}}, false); err != nil {
		t.Fatal(err)
	}
	top1 := catalog.Name(DefaultDatabase, "top1")
	query := "SELECT id, grp, score FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY grp ORDER BY score DESC) AS rn FROM sc) t WHERE rn <= 1"
	if err := e.CreateView(ctx, top1, query, nil, false); err != nil {
		t.Fatal(err)
	}
	apply := func(kind types.RowKind, rows ...types.Row) {
		t.Helper()
		c := types.NewChunk([]types.Type{types.Int64, types.Text, types.Int32}, len(rows))
		for _, r := range rows {
			c.Append(kind, r)
		}
		ep, err := e.Apply(ctx, sc, c)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.WaitCommitted(ctx, top1, ep); err != nil {
			t.Fatal(err)
		}
	}
	apply(types.Insert, scRow(1, "a", 10), scRow(2, "a", 10), scRow(3, "a", 10), scRow(4, "b", 5), scRow(5, "b", 7), scRow(6, "b", 7))
	apply(types.Insert, scRow(7, "a", 10), scRow(8, "b", 7))
	apply(types.UpdateAfter, scRow(4, "b", 7))
	v, err := e.Verify(ctx, top1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !v.OK() || v.Rows != 2 {
		t.Fatalf("verify top1: %s", v)
	}
	if len(v.Notes) == 1 && !strings.HasPrefix(v.Notes[0], "the view is a per-partition top-N (ROW_NUMBER() OVER (PARTITION BY grp ORDER BY score DESC) <= 1) whose rows tie at rank 1") {
		t.Fatalf("verify top1 accepted with the note %q", v.Notes[0])
	}
	cat, err := e.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	view, err := cat.Table(top1)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := e.readRows(view, v.Epoch)
	if err != nil {
		t.Fatal(err)
	}
	kept := map[string]types.Row{}
	for _, r := range rows {
		kept[r[1].String()] = r
	}
	if len(kept) != 2 || kept["a"][2].Int64() != 10 || kept["b"][2].Int64() != 7 {
		t.Fatalf("top1 holds %v", rows)
	}
	// other is a row of grp tied with the kept one, not in the view.
	other := func(grp string, ids ...int64) types.Row {
		for _, id := range ids {
			if id != kept[grp][0].Int64() {
				return scRow(id, grp, int32(kept[grp][2].Int64()))
			}
		}
		panic("no other tied row")
	}
	explain := func(missing, extra []types.Row) Verification {
		w := Verification{View: top1, Epoch: v.Epoch, Rows: 2, By: "duckdb", Missing: missing, Extra: extra}
		e.explainTies(cat, view, &w, &expr.Context{})
		return w
	}
	// As the user saw it: the recomputation keeps other tied rows.
	oa, ob := other("a", 1, 2, 3, 7), other("b", 4, 5, 6, 8)
	got := explain([]types.Row{oa, ob}, []types.Row{kept["a"], kept["b"]})
	want := "the view is a per-partition top-N (ROW_NUMBER() OVER (PARTITION BY grp ORDER BY score DESC) <= 1) whose rows tie at rank 1 on its ORDER BY keys: " +
		"at grp = a, score = 10 the view keeps " + kept["a"].String() + " where the recomputation keeps " + oa.String() +
		"; at grp = b, score = 7 the view keeps " + kept["b"].String() + " where the recomputation keeps " + ob.String() +
		"; which rows are kept among ties is unspecified (as in PostgreSQL), so the view is verified"
	if !got.OK() || !slices.Equal(got.Notes, []string{want}) {
		t.Errorf("ties at rank 1: %s\nwant the note %q", got, want)
	}
	// The view corrupted: a kept row's score changed, a row lost, a
	// partition missing.
	wrong := slices.Clone(kept["a"])
	wrong[2] = types.NewInt32(9)
	for name, tc := range map[string][2][]types.Row{
		"score changed":     {{kept["a"]}, {wrong}},
		"tied row's score":  {{oa}, {wrong}},
		"a row lost":        {{kept["a"]}, nil},
		"partition missing": {{kept["b"]}, nil},
		"an extra tied row": {nil, {oa}},
	} {
		if got := explain(tc[0], tc[1]); got.OK() || len(got.Notes) != 0 {
			t.Errorf("%s: %s, want a difference without notes", name, got)
		}
	}
}

// TestPartitionTopOf traces the keys of a bound ROW_NUMBER() top-N to the
// view's columns, through renames and a selected row number; an
// expression key or a filter above the TopN leaves them unmapped, and
// another view is no top-N.
func TestPartitionTopOf(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	cols := []catalog.Column{{Name: "id", Type: types.Int64}, {Name: "grp", Type: types.Text}, {Name: "score", Type: types.Int32}}
	if err := e.CreateTable(ctx, catalog.Table{Name: catalog.Name(DefaultDatabase, "sc"), Columns: cols}, false); err != nil {
		t.Fatal(err)
	}
	cat, err := e.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		query  string
		ok     bool
		want   partitionTop
		window string
	}{
		{"SELECT id, grp, score FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY grp ORDER BY score DESC) AS rn FROM sc) t WHERE rn <= 1", true,
			partitionTop{n: 1, partition: []int{1}, order: []rankKey{{2, true, true}}, mapped: true}, "PARTITION BY grp ORDER BY score DESC"},
		{"SELECT s AS pts, g, id, rn FROM (SELECT id, grp AS g, score AS s, ROW_NUMBER() OVER (PARTITION BY grp ORDER BY score, id DESC NULLS LAST) AS rn FROM sc) t WHERE rn <= 3", true,
			partitionTop{n: 3, partition: []int{1}, order: []rankKey{{0, false, false}, {2, true, false}}, mapped: true}, "PARTITION BY grp ORDER BY score, id DESC NULLS LAST"},
		{"SELECT id, score FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY score) AS rn FROM sc) t WHERE rn <= 2", true,
			partitionTop{n: 2, order: []rankKey{{1, false, false}}, mapped: true}, "ORDER BY score"},
		{"SELECT id, score FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY grp ORDER BY score) AS rn FROM sc) t WHERE rn <= 2", true,
			partitionTop{n: 2, partition: []int{-1}, order: []rankKey{{1, false, false}}}, "PARTITION BY grp ORDER BY score"},
		{"SELECT score, id, grp FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY lower(grp) ORDER BY score) AS rn FROM sc) t WHERE rn <= 2", true,
			partitionTop{n: 2, partition: []int{-1}, order: []rankKey{{0, false, false}}}, "PARTITION BY lower(grp) ORDER BY score"},
		{"SELECT id, grp, score FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY grp ORDER BY score) AS rn FROM sc) t WHERE rn <= 2 AND id > 3", true,
			partitionTop{n: 2, partition: []int{1}, order: []rankKey{{2, false, false}}}, "PARTITION BY grp ORDER BY score"},
		{"SELECT grp, count(*) AS n FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY grp ORDER BY score) AS rn FROM sc) t WHERE rn <= 2 GROUP BY grp", false, partitionTop{}, ""},
		{"SELECT id, score FROM sc ORDER BY score LIMIT 2", false, partitionTop{}, ""},
	} {
		st, err := parser.ParseOne(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		p, err := binder.New(&relations{cat: cat, db: DefaultDatabase}, tc.query, &expr.Context{}).BindQuery(st.Node)
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		got, ok := partitionTopOf(p)
		if ok != tc.ok || got.n != tc.want.n || got.mapped != tc.want.mapped || !slices.Equal(got.partition, tc.want.partition) ||
			!slices.Equal(got.order, tc.want.order) || got.window != tc.window {
			t.Errorf("%s:\n got %+v, %v\nwant %+v, %v, window %q", tc.query, got, ok, tc.want, tc.ok, tc.window)
		}
	}
}
