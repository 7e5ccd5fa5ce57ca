package engine

import (
	"slices"
	"strings"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/table/schema"
)

// relations answers the binder's name lookups from one catalog version:
// "t" and "dev.t" name table t of the default database, "db.t" a table of
// another database.
type relations struct {
	cat *catalog.Catalog
	db  string
	// seen records the objects looked up, in order: a view's inputs.
	seen []catalog.ObjectName
	// system records the system tables looked up (strata_catalog.*).
	system []string
	// streams lets the query read sources directly (a view's or sink's
	// job runs their readers: source.go); a one-shot query cannot.
	streams bool
}

func (r *relations) objectName(name string) catalog.ObjectName {
	if db, n, ok := strings.Cut(name, "."); ok && db != "public" {
		return catalog.Name(db, n)
	} else if ok {
		// PostgreSQL's public schema is the session's database here, as
		// psql's \d shows it.
		return catalog.Name(r.db, n)
	}
	return catalog.Name(r.db, name)
}

// Relation implements binder.Catalog.
func (r *relations) Relation(name string) (*plan.Relation, error) {
	if rel, ok := systemRelation(name); ok {
		if !slices.Contains(r.system, name) {
			r.system = append(r.system, name)
		}
		return rel, nil
	}
	on := r.objectName(name)
	t, err := r.cat.Table(on)
	if err != nil {
		if src, serr := r.cat.Source(on); serr == nil {
			if !r.streams {
				return nil, sourceNotStored(name)
			}
			rel, err := sourceRelation(src)
			if err != nil {
				return nil, err
			}
			if !slices.Contains(r.seen, on) {
				r.seen = append(r.seen, on)
			}
			rel.Name = name
			return rel, nil
		}
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
	}
	if !slices.Contains(r.seen, on) {
		r.seen = append(r.seen, on)
	}
	rel := relationOf(t)
	rel.Name = name
	return rel, nil
}

// relationOf describes a catalog table to the binder, named db.name.
func relationOf(t catalog.Table) *plan.Relation {
	rel := &plan.Relation{Name: t.Name.String()}
	for _, c := range t.Columns {
		rel.Columns = append(rel.Columns, plan.Column{Name: c.Name, Type: c.Type, NotNull: c.NotNull})
	}
	for _, k := range t.PrimaryKey {
		for i, c := range t.Columns {
			if c.Name == k {
				rel.PrimaryKey = append(rel.PrimaryKey, i)
			}
		}
	}
	// A keyed table whose changelog repeats what its writers wrote
	// (changelog-producer 'input') may carry +U without -U (a Debezium
	// update without its before image): the view normalizes it
	// (planner's doc, "Changelog modes").
	if len(rel.PrimaryKey) > 0 && t.Options["changelog-producer"] == string(schema.ChangelogInput) {
		rel.Upsert = true
	}
	rel.Multiset = multisetColumn(t) != ""
	if col := t.Options[OptionWatermarkColumn]; col != "" {
		d, _ := time.ParseDuration(t.Options[OptionWatermarkDelay])
		for i, c := range t.Columns {
			if c.Name == col {
				rel.Watermark = &plan.Watermark{Column: i, Delay: types.IntervalValue{Micros: d.Microseconds()}}
			}
		}
	}
	return rel
}

// uniqueKey infers a set of output columns of n that no two rows of n
// share (see the package doc, "Keys of views"); nil when none is known.
// A plan that always yields at most one row (a global aggregate) has the
// empty key, reported as ok with no columns.
func uniqueKey(n plan.Node) (key []int, ok bool) {
	switch n := n.(type) {
	case *plan.Scan:
		if len(n.Rel.PrimaryKey) == 0 {
			return nil, false
		}
		return slices.Clone(n.Rel.PrimaryKey), true
	case *plan.Filter:
		return uniqueKey(n.Input)
	case *plan.Sort:
		return uniqueKey(n.Input)
	case *plan.Limit:
		return uniqueKey(n.Input)
	case *plan.Project:
		in, ok := uniqueKey(n.Input)
		if !ok {
			return nil, false
		}
		out := make([]int, 0, len(in))
		for _, k := range in {
			found := -1
			for j, e := range n.Exprs {
				if c, isCol := injectiveColumn(e); isCol && c == k {
					found = j
					break
				}
			}
			if found < 0 {
				return nil, false
			}
			out = append(out, found)
		}
		return out, true
	case *plan.Aggregate:
		// A group column that holds one value for every row (the marker
		// of a decorrelated EXISTS, a literal) tells no groups apart.
		in := constants(n.Input)
		key := make([]int, 0, len(n.GroupBy))
		for i, g := range n.GroupBy {
			if _, ok := constantOf(g, in); !ok {
				key = append(key, i)
			}
		}
		return key, true
	case *plan.Union:
		return unionKey(n)
	case *plan.Join:
		left, lok := uniqueKey(n.Left)
		right, rok := uniqueKey(n.Right)
		nl := len(n.Left.Schema())
		shifted := make([]int, len(right))
		for i, k := range right {
			shifted[i] = k + nl
		}
		fixed := equated(n.On, nl)
		switch n.Kind {
		case plan.InnerJoin, plan.CrossJoin:
			if !lok || !rok {
				return nil, false
			}
			// A side whose key the condition equates to the other side's
			// columns adds nothing.
			if allIn(shifted, fixed) {
				return left, true
			}
			if allIn(left, fixed) {
				return shifted, true
			}
			return append(left, shifted...), true
		case plan.LeftJoin:
			if lok && rok && allIn(shifted, fixed) {
				return left, true
			}
		case plan.RightJoin:
			if lok && rok && allIn(left, fixed) {
				return shifted, true
			}
		}
		// Otherwise both keys together: a padded side's key is NULL, one
		// value of the key encoding, and each unmatched row appears once.
		if lok && rok && n.Kind != plan.CrossJoin {
			return append(left, shifted...), true
		}
		return nil, false
	case *plan.TopN:
		// Deduplication (N = 1) keeps one row a partition: the partition
		// columns are a key. Otherwise Top-N keeps a subset of its input's
		// rows, so the input's key holds; without one, a partition's rows
		// are told apart by their row number.
		var part []int
		partOK := true
		for _, e := range n.Partition {
			c, ok := e.(*expr.ColumnRef)
			if !ok {
				partOK = false
				break
			}
			part = append(part, c.Index)
		}
		if n.N == 1 && partOK && len(part) > 0 {
			return part, true
		}
		if in, ok := uniqueKey(n.Input); ok {
			return in, true
		}
		if n.RankCol && partOK {
			return append(part, len(n.Cols)-1), true
		}
		return nil, false
	case *plan.WindowTVF:
		return nil, false
	}
	return nil, false
}

// equated returns the columns of the join row that the condition's
// conjuncts col = expr tie to the other side: col on one side, expr
// reading only columns of the other side (so the other side's row fixes
// col's value).
func equated(on expr.Expr, nl int) []int {
	var out []int
	side := func(e expr.Expr) (left, right bool) {
		expr.Walk(e, func(x expr.Expr) bool {
			if c, ok := x.(*expr.ColumnRef); ok {
				if c.Index < nl {
					left = true
				} else {
					right = true
				}
			}
			return true
		})
		return left, right
	}
	var walk func(e expr.Expr)
	walk = func(e expr.Expr) {
		switch e := e.(type) {
		case *expr.And:
			for _, a := range e.Args {
				walk(a)
			}
		case *expr.Call:
			if e.Fn == nil || e.Fn.Name != "=" || len(e.Args) != 2 {
				return
			}
			for i, a := range e.Args {
				c, ok := a.(*expr.ColumnRef)
				if !ok {
					continue
				}
				l, r := side(e.Args[1-i])
				if c.Index < nl && r && !l || c.Index >= nl && l && !r {
					out = append(out, c.Index)
				}
			}
		}
	}
	if on != nil {
		walk(on)
	}
	return out
}

func allIn(cols, set []int) bool {
	if len(cols) == 0 {
		return false
	}
	for _, c := range cols {
		if !slices.Contains(set, c) {
			return false
		}
	}
	return true
}

// constants returns the output columns of n that hold one value for
// every row, with that value: literals projected, and columns that carry
// them through filters, sorts, limits, projections and groups.
func constants(n plan.Node) map[int]types.Datum {
	switch n := n.(type) {
	case *plan.Filter:
		return constants(n.Input)
	case *plan.Sort:
		return constants(n.Input)
	case *plan.Limit:
		return constants(n.Input)
	case *plan.Project:
		in := constants(n.Input)
		out := map[int]types.Datum{}
		for i, e := range n.Exprs {
			if v, ok := constantOf(e, in); ok {
				out[i] = v
			}
		}
		return out
	case *plan.Aggregate:
		in := constants(n.Input)
		out := map[int]types.Datum{}
		for i, g := range n.GroupBy {
			if v, ok := constantOf(g, in); ok {
				out[i] = v
			}
		}
		return out
	}
	return nil
}

// constantOf returns e's value when e is a literal, a cast of one, or a
// column of in.
func constantOf(e expr.Expr, in map[int]types.Datum) (types.Datum, bool) {
	switch e := e.(type) {
	case *expr.Const:
		return e.Value, true
	case *expr.ColumnRef:
		v, ok := in[e.Index]
		return v, ok
	case *expr.Cast:
		if _, ok := constantOf(e.Arg, in); !ok {
			return types.Null, false
		}
		v, err := e.Eval(&expr.Context{}, constRow(in))
		return v, err == nil
	}
	return types.Null, false
}

// constRow is a row holding in's values at their columns, for evaluating
// a cast of a constant column.
func constRow(in map[int]types.Datum) types.Row {
	n := 0
	for i := range in {
		n = max(n, i+1)
	}
	row := make(types.Row, n)
	for i, v := range in {
		row[i] = v
	}
	return row
}

// unionKey is the key of UNION ALL when its inputs tell their rows apart:
// every input has a unique key at the same columns, and one column holds
// a different non-NULL literal in each input (SELECT id, 'order' AS kind
// FROM orders UNION ALL SELECT id, 'refund' FROM refunds). The key is
// that column and the inputs' common key.
func unionKey(n *plan.Union) ([]int, bool) {
	var common []int
	for i, in := range n.Ins {
		k, ok := uniqueKey(in)
		if !ok {
			return nil, false
		}
		k = slices.Clone(k)
		slices.Sort(k)
		if i == 0 {
			common = k
		} else if !slices.Equal(common, k) {
			return nil, false
		}
	}
	consts := make([]map[int]types.Datum, len(n.Ins))
	for i, in := range n.Ins {
		consts[i] = constants(in)
	}
	for col := range n.Cols {
		distinct := true
		for i := 0; i < len(n.Ins) && distinct; i++ {
			v, ok := consts[i][col]
			if !ok || v.IsNull() {
				distinct = false
				break
			}
			for j := 0; j < i; j++ {
				if types.Compare(v, consts[j][col]) == 0 {
					distinct = false
					break
				}
			}
		}
		if distinct {
			if slices.Contains(common, col) {
				return common, true
			}
			return append([]int{col}, common...), true
		}
	}
	return nil, false
}

// injectiveColumn returns the input column e reads when e is that column
// or a cast of it that maps distinct values to distinct values: an integer
// widened to a larger integer type or to NUMERIC (as a union's branches
// are cast to a common type), or a string to an unbounded string type. A
// key carried through such an expression stays a key.
func injectiveColumn(e expr.Expr) (int, bool) {
	switch e := e.(type) {
	case *expr.ColumnRef:
		return e.Index, true
	case *expr.Cast:
		col, ok := injectiveColumn(e.Arg)
		if !ok {
			return 0, false
		}
		from, to := e.Arg.Type().Kind, e.To.Kind
		rank := map[types.Kind]int{types.KindInt16: 1, types.KindInt32: 2, types.KindInt64: 3}
		switch {
		case from == to && e.Arg.Type() == e.To:
			return col, true
		case rank[from] > 0 && (rank[to] >= rank[from] || to == types.KindNumeric && (e.To.Precision == 0 || e.To.Precision-e.To.Scale >= 19)):
			return col, true
		case (from == types.KindVarchar || from == types.KindText) && (to == types.KindText || to == types.KindVarchar && e.To.Length == 0):
			return col, true
		}
	}
	return 0, false
}

// volatileCall returns the name of a volatile function (now(), random(),
// clock_timestamp(), ...) that plan p calls, "" if none. A view cannot
// hold one: its value would depend on when each row was processed, and
// no recomputation of the view could agree with it (RisingWave refuses
// them in views too, outside temporal filters).
func volatileCall(p plan.Node) string {
	var exprs []expr.Expr
	switch n := p.(type) {
	case *plan.Project:
		exprs = n.Exprs
	case *plan.Filter:
		exprs = []expr.Expr{n.Pred}
	case *plan.Aggregate:
		exprs = append(exprs, n.GroupBy...)
		for _, a := range n.Aggs {
			exprs = append(exprs, a.Args...)
			exprs = append(exprs, a.Filter)
		}
	case *plan.Join:
		exprs = []expr.Expr{n.On}
	case *plan.Sort:
		for _, k := range n.Keys {
			exprs = append(exprs, k.Expr)
		}
	case *plan.TopN:
		exprs = append(exprs, n.Partition...)
		for _, k := range n.Order {
			exprs = append(exprs, k.Expr)
		}
	case *plan.Values:
		for _, r := range n.Rows {
			exprs = append(exprs, r...)
		}
	}
	for _, e := range exprs {
		if e == nil {
			continue
		}
		name := ""
		expr.Walk(e, func(x expr.Expr) bool {
			if c, ok := x.(*expr.Call); ok && c.Fn.Volatile {
				name = c.Fn.Name
			}
			return name == ""
		})
		if name != "" {
			return name
		}
	}
	for _, in := range p.Inputs() {
		if name := volatileCall(in); name != "" {
			return name
		}
	}
	return ""
}
