package planner

import (
	"fmt"

	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/sql/stream"
)

// union builds UNION ALL: one Consolidate vertex whose inputs are the
// union's inputs and which passes every row on, consolidated per epoch (a
// row one branch retracts and another adds in one epoch emits nothing). When every input has the
// same parallelism the edges are forward and keep it; otherwise each input
// is hashed on all its columns to the job's parallelism, so that every
// copy of a row (its +I and its later -D) takes the same channel and keeps
// its order. The output is retract if any input is.
func (b *builder) union(n *plan.Union) (stage, error) {
	ins := make([]stage, len(n.Ins))
	for i, c := range n.Ins {
		s, err := b.node(c)
		if err != nil {
			return stage{}, err
		}
		ins[i] = s
	}
	outT := schemaTypes(n)
	par, same, mode := ins[0].par, true, AppendOnly
	for i, s := range ins {
		if len(s.types) != len(outT) {
			return stage{}, sqlerr.New(sqlerr.DatatypeMismatch, "UNION input %d has %d columns, not %d", i+1, len(s.types), len(outT))
		}
		for j, t := range s.types {
			if t != outT[j] {
				return stage{}, sqlerr.New(sqlerr.DatatypeMismatch, "UNION input %d column %d has type %s, not %s", i+1, j+1, t, outT[j])
			}
		}
		if s.par != par {
			same = false
		}
		if s.mode == Retract {
			mode = Retract
		}
	}
	if !same {
		if len(outT) == 0 {
			return stage{}, sqlerr.New(sqlerr.FeatureNotSupported, "UNION ALL of rows without columns from inputs of different parallelism is not supported")
		}
		par = b.opts.Parallelism
	}
	name := b.vertexName("union")
	b.job.Vertices = append(b.job.Vertices, graph.Vertex{Name: name, Parallelism: par,
		NewOperator: b.wrap("union", func(int) operator.Operator { return &stream.Consolidate{Types: outT} })})
	for i, s := range ins {
		e := graph.Edge{From: s.vertex, To: name, Input: i, Partitioning: graph.Forward}
		if !same {
			e.Partitioning = graph.Hash
			for c, t := range outT {
				e.KeyColumns = append(e.KeyColumns, c)
				e.KeyTypes = append(e.KeyTypes, t)
			}
		}
		b.job.Edges = append(b.job.Edges, e)
	}
	how := ""
	if !same {
		how = ", hashed on all columns"
	}
	b.explain = append(b.explain, fmt.Sprintf("%s UNION ALL of %d inputs%s (parallelism %d, %s)", name, len(ins), how, par, mode))
	return stage{vertex: name, types: outT, mode: mode, par: par}, nil
}

// values builds a bounded ValuesSource of the constant rows, evaluated
// now in the view's evaluation context.
func (b *builder) values(n *plan.Values) (stage, error) {
	ts := schemaTypes(n)
	rows := make([]types.Row, len(n.Rows))
	for i, r := range n.Rows {
		row := make(types.Row, len(r))
		for j, e := range r {
			v, err := e.Eval(b.opts.Eval, nil)
			if err != nil {
				return stage{}, err
			}
			row[j] = v
		}
		rows[i] = row
	}
	name := b.vertexName("values")
	b.job.Vertices = append(b.job.Vertices, graph.Vertex{Name: name, Parallelism: 1,
		NewSource: func(int) operator.Source { return &stream.ValuesSource{Types: ts, Rows: rows} }})
	b.explain = append(b.explain, fmt.Sprintf("%s %d rows, bounded (parallelism 1, %s)", name, len(rows), AppendOnly))
	return stage{vertex: name, types: ts, mode: AppendOnly, par: 1}, nil
}

// more builds the plan nodes beyond the basic ones of node.
func (b *builder) more(n plan.Node) (stage, bool, error) {
	var s stage
	var err error
	switch n := n.(type) {
	case *plan.WindowTVF:
		s, err = b.windowTVF(n)
	case *plan.TopN:
		s, err = b.topN(n.Input, n.Partition, n.Order, n.N, 0, n.RankCol)
	case *plan.Limit:
		s, err = b.limit(n)
	case *plan.Union:
		s, err = b.union(n)
	case *plan.Values:
		s, err = b.values(n)
	case *plan.Repeat:
		var in stage
		if in, err = b.node(n.Input); err == nil {
			ts := schemaTypes(n)
			s = b.addOperator("repeat", in.par, in, graph.Forward, nil, nil, ts, in.mode,
				func(int) operator.Operator { return &stream.Repeat{Types: ts} }, "each row by its count")
		}
	default:
		return stage{}, false, nil
	}
	return s, true, err
}
