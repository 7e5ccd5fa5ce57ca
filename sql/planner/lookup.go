package planner

import (
	"fmt"
	"strings"

	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/sql/stream"
)

// LookupEndpoints is what Endpoints implement when their jobs can read
// stored tables by key at an epoch: a view with LOOKUP(t) needs it.
type LookupEndpoints interface {
	// Lookup returns the reader of rel's rows by primary key at an
	// epoch, shared by the job's subtasks (it must be safe for
	// concurrent use).
	Lookup(rel *plan.Relation) (stream.LookupTable, error)
}

// lookupJoin builds a lookup join: the stream (left) side, then a
// LookupJoin vertex with its parallelism over a forward edge. ON must
// equate every primary-key column of the table with an expression of the
// stream's columns (or a constant); the other conjuncts are the residual.
func (b *builder) lookupJoin(n *plan.Join, scan *plan.Scan) (stage, error) {
	rel := scan.Rel
	le, ok := b.ep.(LookupEndpoints)
	if !ok {
		return stage{}, sqlerr.New(sqlerr.FeatureNotSupported, "LOOKUP(%s): this job cannot read tables by key", rel.Name)
	}
	if n.Kind != plan.InnerJoin && n.Kind != plan.LeftJoin {
		return stage{}, sqlerr.New(sqlerr.FeatureNotSupported, "LOOKUP(%s) must be the right side of an INNER or LEFT JOIN, not of a %s join", rel.Name, strings.ToUpper(n.Kind.String()))
	}
	lw := len(n.Left.Schema())
	keys := make([]expr.Expr, len(rel.PrimaryKey))
	var residual []expr.Expr
	var on []expr.Expr
	if n.On != nil {
		on = conjuncts(n.On)
	}
	for _, c := range on {
		if call, isCall := c.(*expr.Call); isCall && call.Fn != nil && call.Fn.Name == "=" && len(call.Args) == 2 {
			placed := false
			for i := range 2 {
				col, isCol := call.Args[i].(*expr.ColumnRef)
				other := call.Args[1-i]
				if !isCol || col.Index < lw || sideOf(other, lw) > 0 {
					continue
				}
				for p, k := range rel.PrimaryKey {
					if col.Index-lw == k && keys[p] == nil {
						keys[p], placed = other, true
						break
					}
				}
				if placed {
					break
				}
			}
			if placed {
				continue
			}
		}
		residual = append(residual, c)
	}
	var missing []string
	keyTypes := make([]types.Type, len(keys))
	for p, k := range rel.PrimaryKey {
		keyTypes[p] = rel.Columns[k].Type
		if keys[p] == nil {
			missing = append(missing, rel.Columns[k].Name)
		}
	}
	if len(missing) > 0 {
		return stage{}, sqlerr.New(sqlerr.FeatureNotSupported, "a lookup join reads LOOKUP(%s) by its whole primary key: ON must equate %s with values of the other side (a column of %s on one side, its own type, the other side's columns on the other)", rel.Name, strings.Join(missing, ", "), rel.Name)
	}
	left, err := b.node(n.Left)
	if err != nil {
		return stage{}, err
	}
	if left.mode != AppendOnly {
		return stage{}, sqlerr.New(sqlerr.FeatureNotSupported, "the stream joined with LOOKUP(%s) must be append-only: a retraction would need the table as it was when its row was joined", rel.Name)
	}
	tbl, err := le.Lookup(rel)
	if err != nil {
		return stage{}, err
	}
	var res expr.Expr
	switch len(residual) {
	case 0:
	case 1:
		res = residual[0]
	default:
		res = &expr.And{Args: residual}
	}
	lt := left.types
	rt := schemaTypes(scan)
	kind, eval := n.Kind, b.opts.Eval
	outT := append(append([]types.Type(nil), lt...), rt...)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = rel.Columns[rel.PrimaryKey[i]].Name + " = " + k.String()
	}
	detail := fmt.Sprintf("%sLookupJoin %s by (%s) at the epoch", kind, rel.Name, strings.Join(parts, ", "))
	if res != nil {
		detail += " where " + res.String()
	}
	return b.addOperator("lookup-join", left.par, left, graph.Forward, nil, nil, outT, AppendOnly,
		func(int) operator.Operator {
			return &stream.LookupJoin{Kind: kind, LeftTypes: lt, RightTypes: rt, Keys: keys, KeyTypes: keyTypes,
				Residual: res, Eval: eval, Table: tbl}
		}, detail), nil
}
