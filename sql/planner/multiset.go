package planner

import (
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
)

// Multiset returns the plan that maintains p as a multiset view (package
// doc, "Multiset views"): p grouped by all of its columns, with count(*)
// as one more, last column named countCol. Its rows are p's distinct rows
// with their multiplicities, keyed by p's columns, so a view whose rows
// have no unique key can be stored as a keyed table; a group whose count
// falls to zero is deleted. p's columns keep their names, types and
// nullability.
func Multiset(p plan.Node, countCol string) plan.Node {
	sch := p.Schema()
	a := &plan.Aggregate{Input: p,
		GroupBy: make([]expr.Expr, len(sch)),
		Aggs:    []plan.AggCall{{Func: "count", Type: types.Int64}},
		Cols:    make([]plan.Column, 0, len(sch)+1)}
	for i, c := range sch {
		a.GroupBy[i] = &expr.ColumnRef{Index: i, Typ: c.Type, Name: c.Name}
		a.Cols = append(a.Cols, plan.Column{Name: c.Name, Type: c.Type, NotNull: c.NotNull})
	}
	a.Cols = append(a.Cols, plan.Column{Name: countCol, Type: types.Int64, NotNull: true})
	return a
}
