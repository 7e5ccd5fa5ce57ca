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

// topN builds a Top-N: a Map that appends the partition and order keys to
// each row, a hash exchange on the partition keys (a constant key and one
// subtask without partition) and a TopN vertex. Its output is retract.
func (b *builder) topN(input plan.Node, partition []expr.Expr, order []plan.SortKey, n, offset int64, rankCol bool) (stage, error) {
	if n < 1 {
		return stage{}, sqlerr.New(sqlerr.FeatureNotSupported, "a streaming Top-N needs a positive row count, got %d", n)
	}
	if offset < 0 {
		return stage{}, sqlerr.New(sqlerr.InvalidParameterValue, "OFFSET must not be negative")
	}
	if len(order) == 0 {
		return stage{}, sqlerr.New(sqlerr.FeatureNotSupported, "a streaming Top-N needs an ORDER BY (without one its rows are not determined)")
	}
	// A narrowing Project below the Top-N (prune.go) is computed by the
	// key Map (joinSide).
	in, sel, err := b.joinSide(input)
	if err != nil {
		return stage{}, err
	}
	exprs, at, columns := keyStepColumns(in, sel)
	what := columns + "partition and order keys"
	if at != nil {
		partition = remapAll(partition, at)
		order = remapKeys(order, at)
	}
	width := len(exprs)
	global := len(partition) == 0
	var exKeys, partCols []int
	var exTypes, partTypes []types.Type
	if global {
		exKeys, exTypes = []int{len(exprs)}, []types.Type{types.Bool}
		exprs = append(exprs, &expr.Const{Value: types.NewBool(true), Typ: types.Bool})
	}
	for _, p := range partition {
		partCols = append(partCols, len(exprs))
		partTypes = append(partTypes, p.Type())
		exprs = append(exprs, p)
	}
	if !global {
		exKeys, exTypes = partCols, partTypes
	}
	ord := make([]stream.OrderCol, len(order))
	for i, k := range order {
		ord[i] = stream.OrderCol{Col: len(exprs), Type: k.Expr.Type(), Desc: k.Desc, NullsFirst: k.NullsFirst}
		exprs = append(exprs, k.Expr)
	}
	preTypes := make([]types.Type, len(exprs))
	for i, e := range exprs {
		preTypes[i] = e.Type()
	}
	eval := b.opts.Eval
	pre := b.addOperator("top-n-keys", in.par, in, graph.Forward, nil, nil, preTypes, in.mode,
		func(int) operator.Operator { return &stream.Map{Exprs: exprs, Eval: eval} }, what)
	par := b.opts.Parallelism
	if global {
		par = 1
	}
	newTopN := func() *stream.TopN {
		return &stream.TopN{InTypes: preTypes, Width: width, PartCols: partCols, PartTypes: partTypes,
			Order: ord, N: n, Offset: offset, RankCol: rankCol, AppendOnly: in.mode == AppendOnly}
	}
	parts := make([]string, len(partition))
	for i, p := range partition {
		parts[i] = p.String()
	}
	keys := make([]string, len(order))
	for i, k := range order {
		keys[i] = k.String()
	}
	detail := fmt.Sprintf("n=%d offset=%d partition=[%s] order=[%s]", n, offset, strings.Join(parts, ", "), strings.Join(keys, ", "))
	if rankCol {
		detail += " with row number"
	}
	if in.mode == AppendOnly {
		detail += ", keeps only the top"
	}
	return b.addOperator("top-n", par, pre, graph.Hash, exKeys, exTypes, newTopN().OutputTypes(), Retract,
		func(int) operator.Operator { return newTopN() }, detail), nil
}

// limit plans ORDER BY ... LIMIT n [OFFSET m] as a Top-N of one
// partition. A LIMIT without ORDER BY, an OFFSET without LIMIT and an
// ORDER BY without LIMIT are refused: a view's rows have no order, and
// without one the rows a limit keeps are not determined.
func (b *builder) limit(n *plan.Limit) (stage, error) {
	sort, ok := n.Input.(*plan.Sort)
	if !ok {
		return stage{}, sqlerr.New(sqlerr.FeatureNotSupported, "LIMIT without ORDER BY is not supported in a streaming job")
	}
	if n.Count < 0 {
		return stage{}, sqlerr.New(sqlerr.FeatureNotSupported, "OFFSET without LIMIT is not supported in a streaming job")
	}
	return b.topN(sort.Input, nil, sort.Keys, n.Count, n.Offset, false)
}
