package planner

import (
	"fmt"
	"reflect"

	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
)

// Column pruning (projection pushdown), as Flink's ProjectPushDown rules
// and RisingWave's column pruning do it: Build first rewrites the plan so
// that every operator keeping rows in state, and every exchange before
// it, receives only the columns something above it reads. The rewrite
// walks the plan from the root down with the set of output columns each
// node must still produce (the root: all of them):
//
//   - Filter needs its predicate's columns besides; Project keeps only
//     the expressions asked of it; Aggregate needs its keys', arguments',
//     FILTERs' and ORDER BYs' columns (its pre-aggregation Map already
//     narrows before the exchange, so nothing is inserted there); a
//     window TVF needs its time and partition columns.
//   - Joins (regular, interval, nested-loop, lookup: the other side of a
//     LOOKUP table), Top-N (and ORDER BY ... LIMIT), UNION ALL branches,
//     SESSION windows and Repeat get their input exactly as narrow as
//     needed: a Project of the needed columns is put below them when the
//     input would bring more. The join's ON, the Top-N's partition and
//     order, a window's time column and a Repeat's count are needed.
//   - Scans and Values produce every column: a source always delivers its
//     relation's whole rows (Endpoints.Source). The narrowing Project
//     lands below the first operator that needs exact input, and the
//     builder fuses a Project of plain columns under a join or a Top-N
//     into its key Map (joinSide), so no vertex is added.
//   - Except the scan of an upsert relation: its Normalize keeps each
//     key's last row in state right after the source, so the scan itself
//     is narrowed (plan.Scan.Narrow) to the needed columns plus the
//     primary key, and the builder cuts the source's rows with a Map
//     before the Normalize's exchange (narrowScan in planner.go).
//
// Every node keeps its output columns in their order, minus the ones no
// one reads; positions in the expressions above are remapped. The root
// produces all of its columns, so the job's output, and thus a view's
// key (derived by the engine from the plan before the rewrite) and
// a multiset view's all-column key, do not change. Row kinds and
// changelog modes do not change either: a Project keeps its input's row
// kinds, and a retraction still carries the exact row (of fewer columns)
// that it retracts; a -U/+U pair that differs only in dropped columns
// cancels out in the Map (stream.Map's quiet-projection), which is the
// net change of the narrower rows. Watermarks are untouched: the
// LateFilter follows the source, before any projection, and the event
// time columns that interval joins, window TVFs and expiring groups
// follow are read by their ON, TVF and keys, so they are kept, and
// eventTime and orderedTime find them through the Project.
//
// Where it deliberately does not apply:
//
//   - Other scans are not narrowed: nothing between them and the first
//     stateful step keeps rows (a multiset relation's Repeat and a
//     watermark's LateFilter are stateless), so a Map there would be one
//     more copy for nothing. Sources still read whole rows: reading a
//     subset of columns from the store would need Endpoints to take one.
//   - Non-SESSION window TVFs, whose expansion is stateless and fuses an
//     aggregate's projection already, get no Project of their own.
//   - A LOOKUP table's rows are whole rows: stream.LookupJoin reads them
//     by key from the store and keeps none of them in state.
//   - An Aggregate's outputs are all kept (an unused aggregate call still
//     runs), so that its group keys never move.
//   - Nodes of kinds this file does not know are left as they are, with
//     their subtrees.
//
// One visible difference: a Top-N ranks rows whose order keys tie by
// their encoding (stream.TopN), and its rows now have fewer columns, so
// among rows that tie on every order key it may keep other ones than
// before (still deterministic, and SQL leaves ties unordered). A query
// that needs a given winner orders by enough columns, as Nexmark's q9
// does.
//
// Sub-plan reuse (reuse.go) shares the stage of subtrees that are deeply
// equal. A subtree the plan holds twice may be asked for different
// columns by its two consumers; pruning each copy to its own need would
// make the copies differ and be built twice. So the rewrite first finds,
// for every class of deeply equal subtrees, the union of the columns all
// of its consumers need (repeating the walk until no class's need grows),
// and prunes every copy to that union: the copies stay equal.
//
// Invariant prune-same-output: the pruned plan's root has the same
// columns (names, types, order) as the plan's root, and every pruned
// node's output is a subsequence of its original node's output that
// contains every column its consumers read.

// prunePlan returns p with its columns pruned (see above).
func prunePlan(p plan.Node) plan.Node {
	pr := &pruner{}
	width := len(p.Schema())
	for {
		pr.grew = false
		out, m := pr.prune(p, allColumns(width))
		if pr.grew {
			continue
		}
		if len(out.Schema()) != width || !isIdentity(m) {
			panic(fmt.Sprintf("planner: prune-same-output: the pruned plan has %d columns, the plan %d", len(out.Schema()), width))
		}
		return out
	}
}

// pruner holds the columns asked of each class of deeply equal subtrees.
type pruner struct {
	classes []pruneClass
	// grew says a class's need grew during the current walk.
	grew bool
}

type pruneClass struct {
	n    plan.Node
	need []bool
}

// classNeed merges need into the need of n's class and returns the
// class's need.
func (pr *pruner) classNeed(n plan.Node, need []bool) []bool {
	for i := range pr.classes {
		c := &pr.classes[i]
		if c.n == n || (reflect.TypeOf(c.n) == reflect.TypeOf(n) && reflect.DeepEqual(c.n, n)) {
			for j, x := range need {
				if x && !c.need[j] {
					c.need[j] = true
					pr.grew = true
				}
			}
			return c.need
		}
	}
	pr.classes = append(pr.classes, pruneClass{n: n, need: append([]bool(nil), need...)})
	pr.grew = true
	return need
}

func allColumns(n int) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = true
	}
	return out
}

func isIdentity(m []int) bool {
	for i, x := range m {
		if x != i {
			return false
		}
	}
	return true
}

// identityMap maps n columns to themselves.
func identityMap(n int) []int {
	m := make([]int, n)
	for i := range m {
		m[i] = i
	}
	return m
}

// markColumns marks in need the columns e reads, shifted by -off and
// only those in [off, off+len(need)).
func markColumns(need []bool, e expr.Expr, off int) {
	if e == nil {
		return
	}
	expr.Walk(e, func(x expr.Expr) bool {
		if c, ok := x.(*expr.ColumnRef); ok && c.Index-off >= 0 && c.Index-off < len(need) {
			need[c.Index-off] = true
		}
		return true
	})
}

// remap rewrites e's column references through m (old position to new).
// A reference to a column m dropped breaks invariant prune-same-output.
func remap(e expr.Expr, m []int) expr.Expr {
	if e == nil {
		return nil
	}
	out, _ := expr.Transform(e, func(x expr.Expr) (expr.Expr, error) {
		if c, ok := x.(*expr.ColumnRef); ok {
			if c.Index >= len(m) || m[c.Index] < 0 {
				panic(fmt.Sprintf("planner: prune-same-output: column %d (%s) was pruned but %s reads it", c.Index, c.Name, e))
			}
			cp := *c
			cp.Index = m[c.Index]
			return &cp, nil
		}
		return x, nil
	})
	return out
}

func remapKeys(keys []plan.SortKey, m []int) []plan.SortKey {
	out := make([]plan.SortKey, len(keys))
	for i, k := range keys {
		k.Expr = remap(k.Expr, m)
		out[i] = k
	}
	return out
}

func remapAll(es []expr.Expr, m []int) []expr.Expr {
	if es == nil {
		return nil
	}
	out := make([]expr.Expr, len(es))
	for i, e := range es {
		out[i] = remap(e, m)
	}
	return out
}

// kept lists, in order, the original columns that the pruned node's
// output holds (the inverse of m).
func kept(m []int, width int) []int {
	out := make([]int, width)
	for i, x := range m {
		if x >= 0 {
			out[x] = i
		}
	}
	return out
}

// prune rewrites n so that it produces at least the columns need marks,
// in their order, and returns the new node with m: m[i] is the new
// position of n's column i, -1 when dropped.
func (pr *pruner) prune(n plan.Node, need []bool) (plan.Node, []int) {
	need = pr.classNeed(n, need)
	if len(need) > 0 && !anyTrue(need) {
		// Some column must flow for rows to be told apart from no rows;
		// the first one is as good as any.
		need = append([]bool(nil), need...)
		need[0] = true
	}
	switch n := n.(type) {
	case *plan.Filter:
		in := append([]bool(nil), need...)
		markColumns(in, n.Pred, 0)
		c, m := pr.prune(n.Input, in)
		return &plan.Filter{Input: c, Pred: remap(n.Pred, m)}, m
	case *plan.Project:
		in := make([]bool, len(n.Input.Schema()))
		var exprs []expr.Expr
		var cols []plan.Column
		m := make([]int, len(n.Exprs))
		for i, e := range n.Exprs {
			m[i] = -1
			if need[i] {
				m[i] = len(exprs)
				exprs = append(exprs, e)
				cols = append(cols, n.Cols[i])
				markColumns(in, e, 0)
			}
		}
		c, cm := pr.prune(n.Input, in)
		return &plan.Project{Input: c, Exprs: remapAll(exprs, cm), Cols: cols}, m
	case *plan.Aggregate:
		in := make([]bool, len(n.Input.Schema()))
		for _, g := range n.GroupBy {
			markColumns(in, g, 0)
		}
		for _, a := range n.Aggs {
			for _, e := range a.Args {
				markColumns(in, e, 0)
			}
			markColumns(in, a.Filter, 0)
			for _, k := range a.Order {
				markColumns(in, k.Expr, 0)
			}
		}
		c, cm := pr.prune(n.Input, in)
		aggs := make([]plan.AggCall, len(n.Aggs))
		for i, a := range n.Aggs {
			a.Args = remapAll(a.Args, cm)
			a.Filter = remap(a.Filter, cm)
			if a.Order != nil {
				a.Order = remapKeys(a.Order, cm)
			}
			aggs[i] = a
		}
		return &plan.Aggregate{Input: c, GroupBy: remapAll(n.GroupBy, cm), Aggs: aggs, Cols: n.Cols}, identityMap(len(n.Cols))
	case *plan.Join:
		return pr.pruneJoin(n, need)
	case *plan.WindowTVF:
		w := len(n.Input.Schema())
		in := append([]bool(nil), need[:w]...)
		in[n.TimeCol] = true
		for _, p := range n.Partition {
			in[p] = true
		}
		c, cm := pr.prune(n.Input, in)
		if n.Kind == plan.Session {
			c, cm = exact(c, cm)(in)
		}
		cw := len(c.Schema())
		cols := make([]plan.Column, 0, cw+2)
		for _, i := range kept(cm, cw) {
			cols = append(cols, n.Cols[i])
		}
		cols = append(cols, n.Cols[w:]...)
		part := make([]int, 0, len(n.Partition))
		for _, p := range n.Partition {
			part = append(part, cm[p])
		}
		if n.Partition == nil {
			part = nil
		}
		out := *n
		out.Input, out.TimeCol, out.Partition, out.Cols = c, cm[n.TimeCol], part, cols
		m := append(append([]int(nil), cm...), cw, cw+1)
		return &out, m
	case *plan.TopN:
		w := len(n.Input.Schema())
		in := append([]bool(nil), need[:w]...)
		for _, p := range n.Partition {
			markColumns(in, p, 0)
		}
		for _, k := range n.Order {
			markColumns(in, k.Expr, 0)
		}
		c, cm := exact(pr.prune(n.Input, in))(in)
		cw := len(c.Schema())
		cols := make([]plan.Column, 0, cw+1)
		for _, i := range kept(cm, cw) {
			cols = append(cols, n.Cols[i])
		}
		m := append([]int(nil), cm...)
		if n.RankCol {
			cols = append(cols, n.Cols[w])
			m = append(m, cw)
		}
		out := *n
		out.Input, out.Partition, out.Order, out.Cols = c, remapAll(n.Partition, cm), remapKeys(n.Order, cm), cols
		return &out, m
	case *plan.Limit:
		c, m := pr.prune(n.Input, need)
		return &plan.Limit{Input: c, Count: n.Count, Offset: n.Offset}, m
	case *plan.Sort:
		in := append([]bool(nil), need...)
		for _, k := range n.Keys {
			markColumns(in, k.Expr, 0)
		}
		c, cm := exact(pr.prune(n.Input, in))(in)
		return &plan.Sort{Input: c, Keys: remapKeys(n.Keys, cm)}, cm
	case *plan.Union:
		ins := make([]plan.Node, len(n.Ins))
		for i, b := range n.Ins {
			ins[i], _ = exact(pr.prune(b, need))(need)
		}
		m := make([]int, len(n.Cols))
		var cols []plan.Column
		for i, c := range n.Cols {
			m[i] = -1
			if need[i] {
				m[i] = len(cols)
				cols = append(cols, c)
			}
		}
		return &plan.Union{Ins: ins, Cols: cols}, m
	case *plan.Repeat:
		w := len(n.Input.Schema())
		in := append(append([]bool(nil), need...), true) // the count, last
		c, cm := exact(pr.prune(n.Input, in))(in)
		cols := make([]plan.Column, 0, len(n.Cols))
		for i, col := range n.Cols {
			if need[i] {
				cols = append(cols, col)
			}
		}
		return &plan.Repeat{Input: c, Cols: cols}, cm[:w-1]
	case *plan.Scan:
		return narrowScan(n, need)
	}
	// Values produce every column; unknown kinds are kept.
	return n, identityMap(len(n.Schema()))
}

// narrowScan narrows the scan of an upsert relation to the needed columns
// and its primary key, so that its Normalize keeps only those; other
// scans produce every column (see above).
func narrowScan(n *plan.Scan, need []bool) (plan.Node, []int) {
	rel := n.Rel
	if !rel.Upsert || len(rel.PrimaryKey) == 0 || n.Lookup || rel.Watermark != nil || rel.Multiset || n.Columns != nil {
		return n, identityMap(len(n.Schema()))
	}
	need = append([]bool(nil), need...)
	for _, k := range rel.PrimaryKey {
		need[k] = true
	}
	var cols []int
	m := make([]int, len(need))
	for i, x := range need {
		m[i] = -1
		if x {
			m[i] = len(cols)
			cols = append(cols, i)
		}
	}
	if len(cols) == len(need) {
		return n, m
	}
	return n.Narrow(cols), m
}

func anyTrue(b []bool) bool {
	for _, x := range b {
		if x {
			return true
		}
	}
	return false
}

// pruneJoin prunes a join's sides to the columns its consumers and its ON
// read, each exactly (a Project below the join when a side brings more).
// A LOOKUP table on the right is read whole (stream.LookupJoin).
func (pr *pruner) pruneJoin(n *plan.Join, need []bool) (plan.Node, []int) {
	lw, rw := len(n.Left.Schema()), len(n.Right.Schema())
	needL := append([]bool(nil), need[:lw]...)
	needR := append([]bool(nil), need[lw:]...)
	markColumns(needL, n.On, 0)
	markColumns(needR, n.On, lw)
	l, ml := exact(pr.prune(n.Left, needL))(needL)
	var r plan.Node
	var mr []int
	if s, ok := n.Right.(*plan.Scan); ok && s.Lookup {
		r, mr = s, identityMap(rw)
	} else {
		r, mr = exact(pr.prune(n.Right, needR))(needR)
	}
	lw2 := len(l.Schema())
	m := make([]int, lw+rw)
	copy(m, ml)
	for i, x := range mr {
		m[lw+i] = -1
		if x >= 0 {
			m[lw+i] = lw2 + x
		}
	}
	return plan.NewJoin(n.Kind, l, r, remap(n.On, m)), m
}

// exact takes a pruned node and its map and returns a function that
// narrows it to exactly the columns need marks: a Project of those
// columns when the node brings more (a Project's subset of expressions
// when the node is a Project), the node itself otherwise.
func exact(n plan.Node, m []int) func(need []bool) (plan.Node, []int) {
	return func(need []bool) (plan.Node, []int) {
		count := 0
		for _, x := range need {
			if x {
				count++
			}
		}
		if count == 0 && len(need) > 0 {
			// As in prune: the first column flows.
			need = append([]bool(nil), need...)
			need[0] = true
			count = 1
		}
		sch := n.Schema()
		if count == len(sch) {
			return n, m
		}
		m2 := make([]int, len(m))
		var exprs []expr.Expr
		var cols []plan.Column
		inner, isProject := n.(*plan.Project)
		for i, x := range m {
			m2[i] = -1
			if !need[i] {
				continue
			}
			m2[i] = len(exprs)
			if isProject {
				exprs = append(exprs, inner.Exprs[x])
				cols = append(cols, inner.Cols[x])
				continue
			}
			name := sch[x].Name
			if sch[x].Table != "" {
				name = sch[x].Table + "." + name
			}
			exprs = append(exprs, &expr.ColumnRef{Index: x, Typ: sch[x].Type, Name: name})
			cols = append(cols, sch[x])
		}
		if isProject {
			return &plan.Project{Input: inner.Input, Exprs: exprs, Cols: cols}, m2
		}
		return &plan.Project{Input: n, Exprs: exprs, Cols: cols}, m2
	}
}
