package engine

import (
	"fmt"
	"strings"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/binder"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/plan"
)

// Ties of a per-partition top-N [verify-topn-ties]. A view
//
//	SELECT ... FROM (SELECT ..., ROW_NUMBER() OVER (PARTITION BY p ORDER BY o) AS rn FROM ...) s WHERE rn <= N
//
// (plan.TopN) keeps, in each partition, N rows in the order of o. Rows
// that tie on o are numbered in an unspecified order, in PostgreSQL as in
// DuckDB and in the view's job, so when rows tie at rank N the view and
// the recomputation may keep different ones of them: both are answers of
// the query. Verify accepts such a view when every difference is of that
// kind:
//
//   - the rows missing and extra fall in groups of equal partition and
//     order keys, each group with as many rows missing as extra (so each
//     partition keeps its count and its multiset of order keys);
//   - in each such partition the view holds exactly N rows (with fewer,
//     every row of the partition belongs in it and none is a choice), and
//     the group's order keys are those of the partition's last row, rank
//     N.
//
// A wrong order key (a wrong score), a partition missing or extra, or a
// partition with a row too many or too few stays a difference. The check
// needs the partition and order keys as columns of the view, traced
// through the projections above the TopN; when one is an expression, or
// a filter sits above the TopN (rn > 1, a predicate on other columns,
// which may keep a different count of the tied rows), verify only notes
// that a tie may explain the difference. RANK() and DENSE_RANK() give
// tied rows the same rank and keep them all, so they cannot differ among
// ties; the binder refuses them anyway (only ROW_NUMBER() is a top-N).
//
// Left as is: the other columns of the rows the view keeps among the tied
// ones are not checked against the input (a row of the tie with a stale
// non-key column passes), as for the ORDER BY ... LIMIT tie the server
// accepts.

// rankKey is an ORDER BY key of a per-partition top-N: a column of the
// view, its direction and NULLS placement.
type rankKey struct {
	col              int
	desc, nullsFirst bool
}

// partitionTop is a view's ROW_NUMBER() top-N over the view's columns.
type partitionTop struct {
	n int64
	// partition and order are the view's columns the window partitions
	// and orders by; mapped is false when one of them (or a filter above
	// the TopN) keeps verify from telling a tie from a fault.
	partition []int
	order     []rankKey
	mapped    bool
	// window is the OVER clause for notes, "PARTITION BY grp ORDER BY
	// score DESC", in the query's own expressions.
	window string
}

// partitionTopOf finds the plan.TopN of a bound view query p reached from
// its root through projections (and filters, which leave it unmapped),
// with its keys traced to the root's output columns. ok is false when p
// has no such TopN (another operator above it, or none).
func partitionTopOf(p plan.Node) (partitionTop, bool) {
	// cols[i] is the root output column the current node's column i is,
	// -1 for none.
	cols := make([]int, len(p.Schema()))
	for i := range cols {
		cols[i] = i
	}
	mapped := true
	for {
		switch n := p.(type) {
		case *plan.Project:
			in := make([]int, len(n.Input.Schema()))
			for i := range in {
				in[i] = -1
			}
			for i, ex := range n.Exprs {
				if cr, ok := ex.(*expr.ColumnRef); ok && cols[i] >= 0 && cr.Index < len(in) && in[cr.Index] < 0 {
					in[cr.Index] = cols[i]
				}
			}
			cols, p = in, n.Input
		case *plan.Filter:
			mapped = false
			p = n.Input
		case *plan.TopN:
			return topOfNode(n, cols, mapped), true
		default:
			return partitionTop{}, false
		}
	}
}

// topOfNode describes t with its input columns cols (root output columns,
// -1 for none).
func topOfNode(t *plan.TopN, cols []int, mapped bool) partitionTop {
	out := partitionTop{n: t.N, mapped: mapped}
	col := func(ex expr.Expr) int {
		if cr, ok := ex.(*expr.ColumnRef); ok && cr.Index < len(cols) {
			return cols[cr.Index]
		}
		return -1
	}
	var part, ord []string
	for _, ex := range t.Partition {
		part = append(part, ex.String())
		c := col(ex)
		out.mapped = out.mapped && c >= 0
		out.partition = append(out.partition, c)
	}
	for _, k := range t.Order {
		ord = append(ord, k.String())
		c := col(k.Expr)
		out.mapped = out.mapped && c >= 0
		out.order = append(out.order, rankKey{col: c, desc: k.Desc, nullsFirst: k.NullsFirst})
	}
	if len(part) > 0 {
		out.window = "PARTITION BY " + strings.Join(part, ", ") + " "
	}
	out.window += "ORDER BY " + strings.Join(ord, ", ")
	return out
}

// tieGroup is a partition's rows tied at its cut-off that the view and
// the recomputation keep differently.
type tieGroup struct {
	key            types.Row // a row with the group's partition and order keys
	missing, extra []types.Row
}

// tiesAtCutOff reports whether the rows missing (the recomputation's, not
// in the view) and extra (the view's, not in the recomputation) differ
// only among rows tied at rank top.n of their partition, view being the
// view's rows ([verify-topn-ties]); it returns the tie groups, in the
// order of their first missing row. top must be mapped.
func tiesAtCutOff(top partitionTop, missing, extra, view []types.Row) ([]tieGroup, bool) {
	if !top.mapped || len(missing) == 0 || len(missing) != len(extra) {
		return nil, false
	}
	keyCols := append([]int(nil), top.partition...)
	orderCols := make([]int, len(top.order))
	for i, k := range top.order {
		orderCols[i] = k.col
	}
	keyCols = append(keyCols, orderCols...)
	if !comparable(keyCols, missing, extra, view) {
		return nil, false
	}
	var groups []tieGroup
	find := func(r types.Row) int {
		for i, g := range groups {
			if types.CompareRows(g.key, r, keyCols) == 0 {
				return i
			}
		}
		return -1
	}
	for _, r := range missing {
		i := find(r)
		if i < 0 {
			groups = append(groups, tieGroup{key: r})
			i = len(groups) - 1
		}
		groups[i].missing = append(groups[i].missing, r)
	}
	for _, r := range extra {
		i := find(r)
		if i < 0 {
			return nil, false // a row of a key the recomputation lacks
		}
		groups[i].extra = append(groups[i].extra, r)
	}
	for _, g := range groups {
		if len(g.missing) != len(g.extra) {
			return nil, false
		}
		var rows int64
		var last types.Row
		for _, r := range view {
			if types.CompareRows(r, g.key, top.partition) != 0 {
				continue
			}
			rows++
			if last == nil || compareRank(r, last, top.order) > 0 {
				last = r
			}
		}
		if rows != top.n || types.CompareRows(last, g.key, orderCols) != 0 {
			return nil, false
		}
	}
	return groups, true
}

// comparable reports whether every non-NULL value of columns cols has one
// kind across rows (types.Compare panics on values of different
// families, as a float the recomputation rounded to NUMERIC beside the
// view's stored float would be).
func comparable(cols []int, rows ...[]types.Row) bool {
	for _, c := range cols {
		kind, seen := types.KindUnknown, false
		for _, rs := range rows {
			for _, r := range rs {
				if c >= len(r) {
					return false
				}
				if r[c].IsNull() {
					continue
				}
				if !seen {
					kind, seen = r[c].Kind(), true
				} else if r[c].Kind() != kind {
					return false
				}
			}
		}
	}
	return true
}

// compareRank orders a and b by the top-N's ORDER BY keys, NULLs placed
// as each key says.
func compareRank(a, b types.Row, keys []rankKey) int {
	for _, k := range keys {
		x, y := a[k.col], b[k.col]
		var c int
		switch {
		case x.IsNull() && y.IsNull():
			c = 0
		case x.IsNull() || y.IsNull():
			// The NULL goes first when the key says NULLS FIRST.
			c = 1
			if x.IsNull() == k.nullsFirst {
				c = -1
			}
		default:
			c = types.Compare(x, y)
			if k.desc {
				c = -c
			}
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// maxTieGroups bounds the tie groups a note names.
const maxTieGroups = 5

// tieNote explains a view accepted for ties at its cut-off.
func tieNote(t catalog.Table, top partitionTop, groups []tieGroup) string {
	name := func(c int) string {
		if c < len(t.Columns) {
			return t.Columns[c].Name
		}
		return fmt.Sprintf("column %d", c+1)
	}
	rows := func(rs []types.Row) string {
		s := make([]string, len(rs))
		for i, r := range rs {
			s[i] = r.String()
		}
		return strings.Join(s, ", ")
	}
	var parts []string
	for i, g := range groups {
		if i == maxTieGroups {
			parts = append(parts, fmt.Sprintf("and %d more tied %s", len(groups)-i, plural(int64(len(groups)-i), "group", "groups")))
			break
		}
		var keys []string
		for _, c := range top.partition {
			keys = append(keys, name(c)+" = "+g.key[c].String())
		}
		for _, k := range top.order {
			keys = append(keys, name(k.col)+" = "+g.key[k.col].String())
		}
		parts = append(parts, fmt.Sprintf("at %s the view keeps %s where the recomputation keeps %s", strings.Join(keys, ", "), rows(g.extra), rows(g.missing)))
	}
	return fmt.Sprintf("the view is a per-partition top-N (ROW_NUMBER() OVER (%s) <= %d) whose rows tie at rank %d on its ORDER BY keys: %s; which rows are kept among ties is unspecified (as in PostgreSQL), so the view is verified",
		top.window, top.n, top.n, strings.Join(parts, "; "))
}

// unmappedTieNote says that a tie may explain the difference of a
// per-partition top-N view that verify cannot check.
func unmappedTieNote(top partitionTop) string {
	return fmt.Sprintf("the view is a per-partition top-N (ROW_NUMBER() OVER (%s) <= %d): when rows tie on its ORDER BY keys at rank %d, the view and the recomputation may keep different ones of them, both valid answers; verify cannot tell, as its PARTITION BY or ORDER BY keys are not columns of the view or a filter applies above the top-N",
		top.window, top.n, top.n)
}

// explainTies accepts v, a difference of view t at v.Epoch, when it is
// only among rows tied at a per-partition top-N's cut-off
// ([verify-topn-ties]): it moves the rows into a note and clears them. It
// notes the possibility when the view is such a top-N that verify cannot
// check, and does nothing for another view.
func (e *Engine) explainTies(cat *catalog.Catalog, t catalog.Table, v *Verification, ectx *expr.Context) {
	st, err := parser.ParseOne(t.Query)
	if err != nil {
		return
	}
	p, err := binder.New(&relations{cat: cat, db: t.Name.Database}, t.Query, ectx).BindQuery(st.Node)
	if err != nil {
		return
	}
	top, ok := partitionTopOf(p)
	if !ok {
		return
	}
	if !top.mapped {
		v.Notes = append(v.Notes, unmappedTieNote(top))
		return
	}
	view, err := e.readRows(t, v.Epoch)
	if err != nil {
		return
	}
	groups, ok := tiesAtCutOff(top, v.Missing, v.Extra, view)
	if !ok {
		return
	}
	v.Notes = []string{tieNote(t, top, groups)}
	v.Missing, v.Extra = nil, nil
}
