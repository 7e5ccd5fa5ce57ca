package server

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/olap"
)

// Explaining a difference of verify. The engine's notes cover inputs
// with a watermark; three more kinds of view can differ from a
// recomputation of their query without a fault:
//
//   - A view calling string_agg, array_agg, json_agg or jsonb_agg
//     without ORDER BY inside the call: the order of the elements is
//     not defined. Verify notes it beside the difference.
//
//   - A lookup join (JOIN LOOKUP(t)) joins each row with t as it was at
//     the row's epoch, and later changes of t do not revise earlier rows
//     (README, "Lookup joins"), while the recomputation joins t as it is
//     at the verified epoch. Verify notes it beside the difference, which
//     stays a difference (exit status 1), as for a watermark.
//   - A top-N view (ORDER BY keys LIMIT n) whose rows tie on the keys at
//     the cut-off: any of the tied rows is a valid last row, and the view
//     and the recomputation may keep different ones. When the rows
//     missing and extra all carry the same keys, as many of each, and
//     those keys are the view's last (the view's rows ordered by the
//     query's ORDER BY, the n-th one), the view is a valid answer: verify
//     accepts it with a note naming the rows. When the ORDER BY keys are
//     not output columns, it cannot tell, and notes the possibility.
//     A per-partition top-N (ROW_NUMBER() ... <= N) is engine.Verify's
//     own ([verify-topn-ties], engine/verify_topn.go): it reads the view's
//     partitions, and its Verification comes OK with a note, or with a
//     note that a tie may explain the difference.

// lookupNote explains a difference of a view with a lookup join.
const lookupNote = "the view joins a table through LOOKUP(...): each row was joined with the looked-up row as it was at that row's epoch, and later changes of the looked-up table do not revise rows joined before them, while the recomputation joins the table as it is at the verified epoch; rows whose looked-up row changed since they were joined show here as differences"

// unorderedNote explains a difference of a view that calls
// order-sensitive aggregates (string_agg, ...) without ORDER BY.
func unorderedNote(aggs []string) string {
	return fmt.Sprintf("the view calls %s without ORDER BY inside the call: the order of the elements is not defined (as in PostgreSQL), and the view and the recomputation may list the same elements in different orders; add ORDER BY inside the call, as in string_agg(x, ',' ORDER BY x), for one answer",
		strings.Join(aggs, ", "))
}

// explainDifference adds notes to out, a difference of view t at out.Epoch
// (engine.Verification's rows missing and extra), and accepts a top-N
// view whose difference is only among rows tied at its cut-off (out.OK
// set, its rows moved to a note).
func explainDifference(ctx context.Context, e *engine.Engine, t catalog.Table, v engine.Verification, out *VerifyResponse) {
	if olap.HasLookupJoin(t.Query) {
		out.Notes = append(out.Notes, lookupNote)
	}
	if aggs := olap.UnorderedAggregates(t.Query); len(aggs) > 0 {
		out.Notes = append(out.Notes, unorderedNote(aggs))
	}
	topN, ok := topNOf(t)
	if !ok {
		return
	}
	if topN.keys == nil {
		out.Notes = append(out.Notes, "the view is a top-N (ORDER BY ... LIMIT "+strconv.FormatInt(topN.limit, 10)+"): when rows tie on its ORDER BY keys at the cut-off, the view and the recomputation may keep different ones of them, both valid answers; verify cannot tell from the view's query, whose ORDER BY keys are not columns of the view")
		return
	}
	key, ok := tiedKey(v.Missing, v.Extra, topN.keys)
	if !ok || int64(v.Rows) != topN.limit {
		// Fewer rows than the LIMIT: every row belongs in the view,
		// and none is a choice among tied ones.
		return
	}
	last, err := lastKey(ctx, e, t, topN, v)
	if err != nil || last == nil || !sameKey(last, key, topN.keys) {
		return
	}
	var tie []string
	for _, i := range topN.keys {
		tie = append(tie, t.Columns[i].Name+" = "+key[i].String())
	}
	rows := func(rs []types.Row) string {
		s := make([]string, len(rs))
		for i, r := range rs {
			s[i] = r.String()
		}
		return strings.Join(s, ", ")
	}
	out.Notes = append(out.Notes, fmt.Sprintf("the view is a top-N (ORDER BY ... LIMIT %d) whose last rows tie on its ORDER BY keys (%s): the view keeps %s where the recomputation keeps %s, another valid choice among the tied rows, so the view is verified",
		topN.limit, strings.Join(tie, ", "), rows(v.Extra), rows(v.Missing)))
	out.OK, out.Missing, out.Extra = true, nil, nil
}

// topN is a view query's top-level ORDER BY ... LIMIT.
type topN struct {
	limit int64
	// keys are the view's columns the ORDER BY sorts on, in order; nil
	// when a key is not a column of the view (an expression).
	keys []int
	// order is the ORDER BY over the view's columns, PostgreSQL's NULLS
	// placement written out.
	order string
}

// topNOf returns the ORDER BY ... LIMIT n of t's query; ok is false when
// it has none (or an OFFSET, or is a set operation).
func topNOf(t catalog.Table) (topN, bool) {
	res, err := pg_query.Parse(t.Query)
	if err != nil || len(res.GetStmts()) != 1 {
		return topN{}, false
	}
	sel := res.GetStmts()[0].GetStmt().GetSelectStmt()
	if sel == nil || len(sel.GetSortClause()) == 0 || sel.GetLimitCount() == nil || sel.GetLimitOffset() != nil {
		return topN{}, false
	}
	limit := int64(sel.GetLimitCount().GetAConst().GetIval().GetIval())
	if limit <= 0 {
		return topN{}, false
	}
	out := topN{limit: limit}
	var order []string
	for _, n := range sel.GetSortClause() {
		sb := n.GetSortBy()
		col := viewColumn(t, sb.GetNode())
		if col < 0 {
			return topN{limit: limit}, true
		}
		dir, nulls := "ASC", "NULLS LAST"
		if sb.GetSortbyDir() == pg_query.SortByDir_SORTBY_DESC {
			dir, nulls = "DESC", "NULLS FIRST"
		}
		switch sb.GetSortbyNulls() {
		case pg_query.SortByNulls_SORTBY_NULLS_FIRST:
			nulls = "NULLS FIRST"
		case pg_query.SortByNulls_SORTBY_NULLS_LAST:
			nulls = "NULLS LAST"
		}
		if sb.GetUseOp() != nil {
			return topN{limit: limit}, true
		}
		out.keys = append(out.keys, col)
		order = append(order, quoteIdent(t.Columns[col].Name)+" "+dir+" "+nulls)
	}
	out.order = strings.Join(order, ", ")
	return out, true
}

// viewColumn returns the index of the view's column an ORDER BY key
// names (an output column's name, or its position), -1 for another
// expression.
func viewColumn(t catalog.Table, n *pg_query.Node) int {
	if cr := n.GetColumnRef(); cr != nil && len(cr.GetFields()) == 1 {
		name := cr.GetFields()[0].GetString_().GetSval()
		for i, c := range t.Columns {
			if c.Name == name {
				return i
			}
		}
		return -1
	}
	if c := n.GetAConst(); c != nil && c.GetIval() != nil {
		if p := int(c.GetIval().GetIval()); p >= 1 && p <= len(t.Columns) {
			return p - 1
		}
	}
	return -1
}

// tiedKey returns the key (on columns keys) that every row of missing and
// extra carries, when there are as many of each; ok is false otherwise.
func tiedKey(missing, extra []types.Row, keys []int) (types.Row, bool) {
	if len(missing) == 0 || len(missing) != len(extra) {
		return nil, false
	}
	key := missing[0]
	for _, r := range append(append([]types.Row(nil), missing...), extra...) {
		if !sameKey(r, key, keys) {
			return nil, false
		}
	}
	return key, true
}

// sameKey reports whether a and b hold equal values (NULL equal to NULL)
// on columns keys.
func sameKey(a, b types.Row, keys []int) bool {
	for _, i := range keys {
		if i >= len(a) || i >= len(b) || a[i].String() != b[i].String() || a[i].IsNull() != b[i].IsNull() {
			return false
		}
	}
	return true
}

// lastKey reads the view's last row of its top-N order at the verified
// epoch (a row with the key columns filled, the others NULL), nil when
// the view has fewer rows.
func lastKey(ctx context.Context, e *engine.Engine, t catalog.Table, n topN, v engine.Verification) (types.Row, error) {
	cols := make([]string, len(n.keys))
	for i, k := range n.keys {
		cols[i] = quoteIdent(t.Columns[k].Name)
	}
	q := fmt.Sprintf("SELECT %s FROM %s.%s ORDER BY %s LIMIT 1 OFFSET %d AS OF EPOCH %d",
		strings.Join(cols, ", "), quoteIdent(t.Name.Database), quoteIdent(t.Name.Name), n.order, v.Rows-1, v.Epoch)
	s := NewSession(e, t.Name.Database)
	st, err := s.Prepare(ctx, q, nil)
	if err != nil {
		return nil, err
	}
	res, err := s.Execute(ctx, st, nil)
	if err != nil || len(res.Rows) != 1 {
		return nil, err
	}
	row := make(types.Row, len(t.Columns))
	for i, k := range n.keys {
		row[k] = res.Rows[0][i]
	}
	return row, nil
}
