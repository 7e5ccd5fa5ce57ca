package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/agg"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/sql/stream"
)

// Endpoints supplies a job's sources and its sink.
type Endpoints interface {
	// Source returns subtask i of a source reading rel's changelog, rows of
	// rel's columns.
	Source(rel *plan.Relation, subtask int) operator.Source
	// SourceParallelism is the number of subtasks of rel's source.
	SourceParallelism(rel *plan.Relation) int
	// Sink returns subtask i of the vertex that receives the job's output
	// changelog.
	Sink(subtask int) operator.Operator
	// SinkParallelism is the sink's number of subtasks; 0 means the
	// parallelism of the job's last step.
	SinkParallelism() int
}

// Mode is a changelog mode.
type Mode uint8

// Changelog modes.
const (
	AppendOnly Mode = iota + 1 // +I only
	Retract                    // +I, -U/+U pairs, -D
	Upsert                     // +I/+U replace a key's row, -D deletes a key
)

func (m Mode) String() string {
	switch m {
	case AppendOnly:
		return "append-only"
	case Upsert:
		return "upsert"
	}
	return "retract"
}

// Options configure Build.
type Options struct {
	// Parallelism of the stateful vertices (default 1).
	Parallelism int
	// Eval is the evaluation context of the view's expressions.
	Eval *expr.Context
	// Wrap, when set, wraps every operator the planner makes (kind is
	// "filter", "project", "aggregate", "join", ...): for metrics, tracing
	// and failure injection in tests.
	Wrap func(kind string, op operator.Operator) operator.Operator
}

// Job is a built streaming job.
type Job struct {
	Graph *graph.Job
	// Types and Mode describe the changelog the sink receives.
	Types []types.Type
	Mode  Mode
	// Explain lists the vertices, sources first, with their parallelism
	// and output changelog mode.
	Explain string
	// Plan is the plan the job was built from: the given plan after
	// column pruning (prune.go), with the same output columns.
	Plan plan.Node
	// Late counts, per relation with a watermark, the late rows its
	// sources' LateFilters dropped (absent without a watermark).
	Late map[string]*stream.LateCounter
}

type stage struct {
	vertex string
	types  []types.Type
	mode   Mode
	par    int
}

type builder struct {
	name    string
	ep      Endpoints
	opts    Options
	job     *graph.Job
	explain []string
	n       int
	// scans counts the plan's scans: a job without one closes no epoch.
	scans int
	late  map[string]*stream.LateCounter
	// built are the plan nodes built so far with their stages, so that a
	// subtree the plan holds twice is built once (reuse.go).
	built []builtNode
}

// Build compiles the logical plan p of a view into job name.
func Build(name string, p plan.Node, ep Endpoints, opts Options) (*Job, error) {
	if opts.Parallelism < 1 {
		opts.Parallelism = 1
	}
	if opts.Eval == nil {
		opts.Eval = &expr.Context{}
	}
	b := &builder{name: name, ep: ep, opts: opts, job: &graph.Job{Name: name}}
	// Stateful operators and exchanges get only the columns used above
	// them (prune.go).
	p = prunePlan(p)
	out, err := b.node(p)
	if err != nil {
		return nil, err
	}
	if b.scans == 0 {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "a streaming job needs at least one table or source to read: epochs come from its inputs")
	}
	sink := b.vertexName("sink")
	sinkPar := ep.SinkParallelism()
	if sinkPar < 1 {
		sinkPar = out.par
	}
	b.job.Vertices = append(b.job.Vertices, graph.Vertex{Name: sink, Parallelism: sinkPar,
		NewOperator: func(i int) operator.Operator { return ep.Sink(i) }})
	edge := graph.Edge{From: out.vertex, To: sink, Partitioning: graph.Forward}
	if sinkPar != out.par {
		// Gather into one sink subtask: each key's changes come from one
		// upstream subtask (the exchange before a stateful step is by key)
		// and keep their order on the way. Spreading over several sink
		// subtasks would need the sink's key, which the plan does not know.
		if sinkPar != 1 {
			return nil, fmt.Errorf("planner: a sink of parallelism %d after a step of parallelism %d is not supported: %w", sinkPar, out.par, base.ErrInvalidArgument)
		}
		edge.Partitioning = graph.Hash
		for i, t := range out.types {
			edge.KeyColumns = append(edge.KeyColumns, i)
			edge.KeyTypes = append(edge.KeyTypes, t)
		}
	}
	b.job.Edges = append(b.job.Edges, edge)
	b.explain = append(b.explain, fmt.Sprintf("%s (parallelism %d)", sink, sinkPar))
	if err := b.job.Validate(); err != nil {
		return nil, err
	}
	return &Job{Graph: b.job, Types: out.types, Mode: out.mode, Explain: strings.Join(b.explain, "\n") + "\n", Plan: p, Late: b.late}, nil
}

func (b *builder) vertexName(kind string) string {
	b.n++
	return fmt.Sprintf("%d-%s", b.n, kind)
}

func (b *builder) wrap(kind string, newOp func(int) operator.Operator) func(int) operator.Operator {
	if b.opts.Wrap == nil {
		return newOp
	}
	return func(i int) operator.Operator { return b.opts.Wrap(kind, newOp(i)) }
}

func (b *builder) addOperator(kind string, par int, from stage, part graph.Partitioning, keys []int, keyTypes []types.Type, outTypes []types.Type, mode Mode, newOp func(int) operator.Operator, detail string) stage {
	name := b.vertexName(kind)
	newOp = b.wrap(kind, newOp)
	b.job.Vertices = append(b.job.Vertices, graph.Vertex{Name: name, Parallelism: par, NewOperator: newOp})
	b.job.Edges = append(b.job.Edges, graph.Edge{From: from.vertex, To: name, Partitioning: part, KeyColumns: keys, KeyTypes: keyTypes})
	b.explain = append(b.explain, fmt.Sprintf("%s %s (parallelism %d, %s)", name, detail, par, mode))
	return stage{vertex: name, types: outTypes, mode: mode, par: par}
}

func schemaTypes(n plan.Node) []types.Type {
	s := n.Schema()
	out := make([]types.Type, len(s))
	for i, c := range s {
		out[i] = c.Type
	}
	return out
}

func (b *builder) node(n plan.Node) (stage, error) {
	if s, ok := b.reuse(n); ok {
		return s, nil
	}
	s, err := b.build(n)
	if err == nil {
		b.remember(n, s)
	}
	return s, err
}

// build adds the vertices of n and returns its output stage.
func (b *builder) build(n plan.Node) (stage, error) {
	switch n := n.(type) {
	case *plan.Scan:
		if n.Lookup {
			return stage{}, sqlerr.New(sqlerr.FeatureNotSupported, "LOOKUP(%s) is read by key: it may only be the right side of an INNER or LEFT JOIN", n.Rel.Name)
		}
		name := b.vertexName("scan-" + n.Rel.Name)
		par := max(b.ep.SourceParallelism(n.Rel), 1)
		rel := n.Rel
		b.job.Vertices = append(b.job.Vertices, graph.Vertex{Name: name, Parallelism: par,
			NewSource: func(i int) operator.Source { return b.ep.Source(rel, i) }})
		mode := AppendOnly
		switch {
		case rel.Upsert && len(rel.PrimaryKey) > 0:
			mode = Upsert
		case len(rel.PrimaryKey) > 0 || rel.Multiset:
			mode = Retract
		}
		b.explain = append(b.explain, fmt.Sprintf("%s (parallelism %d, %s)", name, par, mode))
		b.scans++
		relTypes := make([]types.Type, len(rel.Columns))
		for i, c := range rel.Columns {
			relTypes[i] = c.Type
		}
		src := stage{vertex: name, types: relTypes, mode: mode, par: par}
		if rel.Multiset {
			// The source gives each stored row with its multiplicity
			// (plan.Relation.Multiset): one copy per count, see the
			// package doc, "Multiset views".
			ts := src.types
			src.types = append(slices.Clone(ts), types.Int64)
			src = b.addOperator("repeat", par, src, graph.Forward, nil, nil, ts, Retract,
				func(int) operator.Operator { return &stream.Repeat{Types: ts} }, "each row by its multiplicity")
		}
		keys := rel.PrimaryKey
		if n.Columns != nil {
			// Column pruning narrowed the scan (prune.go): the source's
			// rows are cut to the columns used above before anything
			// keeps them.
			src, keys = b.narrowScan(n, src)
		}
		if rel.Upsert && len(rel.PrimaryKey) > 0 {
			src = b.normalize(rel, keys, src)
		}
		return b.watermark(rel, src)
	case *plan.Filter:
		in, err := b.node(n.Input)
		if err != nil {
			return stage{}, err
		}
		pred, eval := n.Pred, b.opts.Eval
		return b.addOperator("filter", in.par, in, graph.Forward, nil, nil, in.types, in.mode,
			func(int) operator.Operator { return &stream.Map{Filter: pred, Eval: eval} }, pred.String()), nil
	case *plan.Project:
		in, err := b.node(n.Input)
		if err != nil {
			return stage{}, err
		}
		exprs, eval := n.Exprs, b.opts.Eval
		parts := make([]string, len(exprs))
		for i, e := range exprs {
			parts[i] = e.String()
		}
		return b.addOperator("project", in.par, in, graph.Forward, nil, nil, schemaTypes(n), in.mode,
			func(int) operator.Operator { return &stream.Map{Exprs: exprs, Eval: eval} }, strings.Join(parts, ", ")), nil
	case *plan.Aggregate:
		return b.aggregate(n)
	case *plan.Join:
		return b.join(n)
	}
	if s, ok, err := b.more(n); ok {
		return s, err
	}
	return stage{}, sqlerr.New(sqlerr.FeatureNotSupported, "%s is not supported in a streaming job yet", strings.TrimPrefix(fmt.Sprintf("%T", n), "*plan."))
}

// normalize turns the upsert changelog of rel's source into a retract
// one: a hash exchange on the primary key and a Normalize vertex with
// the job's parallelism.
// keys are the primary key's positions in src's rows.
func (b *builder) normalize(rel *plan.Relation, keys []int, src stage) stage {
	keys = append([]int(nil), keys...)
	keyTypes := make([]types.Type, len(keys))
	names := make([]string, len(keys))
	for i, k := range keys {
		keyTypes[i] = src.types[k]
		names[i] = rel.Columns[rel.PrimaryKey[i]].Name
	}
	ts := src.types
	return b.addOperator("normalize", b.opts.Parallelism, src, graph.Hash, keys, keyTypes, ts, Retract,
		func(int) operator.Operator { return &stream.Normalize{Types: ts, KeyCols: keys, KeyTypes: keyTypes} },
		"upsert changelog by ("+strings.Join(names, ", ")+") to retract")
}

// narrowScan cuts the rows of a narrowed scan's source (plan.Scan.Columns)
// to its columns with a Map, and returns the primary key's positions in
// them (column pruning keeps a narrowed relation's key columns: prune.go).
func (b *builder) narrowScan(n *plan.Scan, src stage) (stage, []int) {
	exprs := make([]expr.Expr, len(n.Columns))
	ts := make([]types.Type, len(n.Columns))
	names := make([]string, len(n.Columns))
	at := make([]int, len(src.types))
	for i := range at {
		at[i] = -1
	}
	for i, c := range n.Columns {
		exprs[i] = &expr.ColumnRef{Index: c, Typ: src.types[c], Name: n.Rel.Columns[c].Name}
		ts[i] = src.types[c]
		names[i] = n.Rel.Columns[c].Name
		at[c] = i
	}
	keys := make([]int, len(n.Rel.PrimaryKey))
	for i, k := range n.Rel.PrimaryKey {
		if at[k] < 0 {
			panic(fmt.Sprintf("planner: the narrowed scan of %s lacks its key column %s", n.Rel.Name, n.Rel.Columns[k].Name))
		}
		keys[i] = at[k]
	}
	eval := b.opts.Eval
	st := b.addOperator("project", src.par, src, graph.Forward, nil, nil, ts, src.mode,
		func(int) operator.Operator { return &stream.Map{Exprs: exprs, Eval: eval} },
		fmt.Sprintf("columns %s (%d of %d)", strings.Join(names, ", "), len(names), len(src.types)))
	return st, keys
}

// identity reports whether exprs are the columns of ts in order, so that
// a Map computing them would copy its input unchanged (a multiset view's
// count groups by every column: planner.Multiset).
func identity(exprs []expr.Expr, ts []types.Type) bool {
	if len(exprs) != len(ts) {
		return false
	}
	for i, e := range exprs {
		c, ok := e.(*expr.ColumnRef)
		if !ok || c.Index != i || c.Typ != ts[i] {
			return false
		}
	}
	return true
}

// aggregate builds the pre-aggregation Map (left out when it would copy
// its input unchanged), the hash exchange and the GroupAgg.
func (b *builder) aggregate(n *plan.Aggregate) (stage, error) {
	global := len(n.GroupBy) == 0
	// Columns of the pre-aggregation Map: [constant key, for a global
	// aggregate] group keys, then per aggregate its arguments and filter.
	var exprs []expr.Expr
	if global {
		exprs = append(exprs, &expr.Const{Value: types.NewBool(true), Typ: types.Bool})
	}
	keyCols := make([]int, 0, len(n.GroupBy))
	keyTypes := make([]types.Type, 0, len(n.GroupBy))
	for _, g := range n.GroupBy {
		keyCols = append(keyCols, len(exprs))
		keyTypes = append(keyTypes, g.Type())
		exprs = append(exprs, g)
	}
	calls := make([]stream.AggCall, len(n.Aggs))
	for i, a := range n.Aggs {
		argTypes := make([]types.Type, len(a.Args))
		call := stream.AggCall{FilterCol: -1}
		for j, e := range a.Args {
			argTypes[j] = e.Type()
			call.ArgCols = append(call.ArgCols, len(exprs))
			exprs = append(exprs, e)
		}
		var order []agg.OrderKey
		for _, k := range a.Order {
			argTypes = append(argTypes, k.Expr.Type())
			call.ArgCols = append(call.ArgCols, len(exprs))
			exprs = append(exprs, k.Expr)
			order = append(order, agg.OrderKey{Desc: k.Desc, NullsFirst: k.NullsFirst})
		}
		if a.Filter != nil {
			call.FilterCol = len(exprs)
			exprs = append(exprs, a.Filter)
		}
		call.Spec = agg.Spec{Func: a.Func, Args: argTypes, Distinct: a.Distinct, Order: order}
		calls[i] = call
	}
	preTypes := make([]types.Type, len(exprs))
	for i, e := range exprs {
		preTypes[i] = e.Type()
	}
	// Over a TUMBLE, HOP or CUMULATE window the window's expansion
	// computes the keys and arguments itself (windowTVFProject).
	var in stage
	var err error
	fused := false
	if w, ok := n.Input.(*plan.WindowTVF); ok {
		in, fused, err = b.windowTVFProject(w, exprs, "keys and arguments")
	} else {
		in, err = b.node(n.Input)
	}
	if err != nil {
		return stage{}, err
	}
	for i := range calls {
		calls[i].Spec.AppendOnly = in.mode == AppendOnly
	}
	eval := b.opts.Eval
	pre := in
	if !fused && !identity(exprs, in.types) {
		pre = b.addOperator("pre-aggregate", in.par, in, graph.Forward, nil, nil, preTypes, in.mode,
			func(int) operator.Operator { return &stream.Map{Exprs: exprs, Eval: eval} }, "keys and arguments")
	}

	exKeys, exTypes, par := keyCols, keyTypes, b.opts.Parallelism
	if global {
		exKeys, exTypes, par = []int{0}, []types.Type{types.Bool}, 1
	}
	probe := &stream.GroupAgg{KeyCols: keyCols, KeyTypes: keyTypes, Aggs: calls}
	outTypes, err := probe.OutputTypes()
	if err != nil {
		return stage{}, err
	}
	detail := make([]string, len(n.Aggs))
	for i, a := range n.Aggs {
		detail[i] = a.String()
	}
	// Distinct groups of an insert-only input (no aggregate calls) only
	// appear: a group's row never changes once emitted, so the output is
	// insert-only too (the decorrelated side of IN and EXISTS, DISTINCT).
	mode := Retract
	if len(n.Aggs) == 0 && !global && in.mode == AppendOnly {
		mode = AppendOnly
	}
	// Over a watermarked stream, a window key lets the GroupAgg free
	// closed windows' groups (expiry.go).
	exp, expWhat := b.groupExpiry(n, in)
	what := "[" + strings.Join(detail, ", ") + "]"
	if exp != nil {
		what += ", " + expWhat
	}
	return b.addOperator("aggregate", par, pre, graph.Hash, exKeys, exTypes, outTypes, mode,
		func(int) operator.Operator {
			return &stream.GroupAgg{KeyCols: keyCols, KeyTypes: keyTypes, Aggs: calls, Expiry: exp}
		}, what), nil
}
