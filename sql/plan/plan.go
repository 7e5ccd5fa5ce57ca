package plan

import (
	"fmt"
	"strings"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
)

// Column is one output column of a plan node.
type Column struct {
	Name string
	Type types.Type
	// Table is the name (or alias) of the relation the column comes from,
	// for qualified references; empty for computed columns.
	Table string
	// NotNull is true when the column can never be NULL.
	NotNull bool
}

// Node is a logical plan operator.
type Node interface {
	// Schema returns the output columns.
	Schema() []Column
	// Inputs returns the child nodes, left to right.
	Inputs() []Node
	// describe renders this node alone (without children) for Explain.
	describe() string
}

// Relation describes a stored table, view or source that a Scan reads.
type Relation struct {
	Name    string
	Columns []Column
	// PrimaryKey holds column positions; empty for append tables and
	// sources without a key.
	PrimaryKey []int
	// IsSource is true for an external stream that is not stored.
	IsSource bool
	// Watermark, when set, is the event-time column's position and the
	// delay expression (WATERMARK FOR col AS col - INTERVAL ...).
	Watermark *Watermark
	// Upsert says the relation's changelog is an upsert changelog by its
	// primary key (Flink's upsert mode, upsert-kafka's): a +I or +U
	// replaces its key's row with no -U before it, and a -D deletes its
	// key whatever its other columns say. Without it a keyed changelog
	// is a retract one: -U and -D carry the exact row they retract.
	Upsert bool
	// Multiset says the relation is a view stored as a multiset (a view
	// without a unique key whose changelog retracts): it has no key, two
	// of its rows may be equal, and its changelog is a retract one
	// carrying the exact rows. A source of it (the planner's Endpoints)
	// delivers each stored row with its multiplicity as one more, last,
	// BIGINT column, which the planner expands with a Repeat.
	Multiset bool
}

// Watermark is a relation's event-time declaration.
type Watermark struct {
	Column int
	// Delay is subtracted from the largest event time seen.
	Delay types.IntervalValue
}

// Scan reads a relation. Its schema is the relation's columns, renamed to
// the alias when one is given.
type Scan struct {
	Rel   *Relation
	Alias string
	// Lookup marks LOOKUP(rel): in a view, the right side of a lookup
	// join, read by primary key at the epoch being processed instead of
	// as a changelog (planner's doc, "Lookup joins"). A one-shot query
	// reads it as rel itself, at the query's version.
	Lookup bool
	// Columns, when not nil, are the positions of Rel's columns that the
	// scan produces, ascending (the streaming planner's column pruning
	// narrows an upsert relation's scan before its normalization); nil
	// produces every column. Made by Narrow.
	Columns []int
	cols    []Column
}

// Narrow returns a copy of s that produces only the relation's columns at
// positions cols (ascending, each in range), in that order.
func (s *Scan) Narrow(cols []int) *Scan {
	out := *s
	out.Columns = append([]int(nil), cols...)
	out.cols = make([]Column, len(cols))
	for i, p := range cols {
		c := s.Rel.Columns[p]
		c.Table = s.Alias
		out.cols[i] = c
	}
	return &out
}

// NewScan returns a scan of rel under alias (rel.Name when empty).
func NewScan(rel *Relation, alias string) *Scan {
	if alias == "" {
		alias = rel.Name
	}
	cols := make([]Column, len(rel.Columns))
	for i, c := range rel.Columns {
		c.Table = alias
		cols[i] = c
	}
	return &Scan{Rel: rel, Alias: alias, cols: cols}
}

// Schema returns the output columns.
func (s *Scan) Schema() []Column { return s.cols }

// Inputs returns the child nodes.
func (s *Scan) Inputs() []Node { return nil }
func (s *Scan) describe() string {
	d := "Scan " + s.Rel.Name
	if s.Lookup {
		d = "Scan LOOKUP(" + s.Rel.Name + ")"
	}
	if s.Alias != s.Rel.Name {
		d += " AS " + s.Alias
	}
	if s.Columns != nil {
		names := make([]string, len(s.cols))
		for i, c := range s.cols {
			names[i] = c.Name
		}
		d += fmt.Sprintf(" columns (%s) of %d", strings.Join(names, ", "), len(s.Rel.Columns))
	}
	return d
}

// Values is a constant relation (VALUES (...), (...) or a SELECT without
// FROM, which is one row of no columns before projection).
type Values struct {
	Rows [][]expr.Expr
	Cols []Column
}

// Schema returns the output columns.
func (v *Values) Schema() []Column { return v.Cols }

// Inputs returns the child nodes.
func (v *Values) Inputs() []Node   { return nil }
func (v *Values) describe() string { return fmt.Sprintf("Values %d rows", len(v.Rows)) }

// Project computes Exprs over each input row.
type Project struct {
	Input Node
	Exprs []expr.Expr
	Cols  []Column
}

// Schema returns the output columns.
func (p *Project) Schema() []Column { return p.Cols }

// Inputs returns the child nodes.
func (p *Project) Inputs() []Node { return []Node{p.Input} }
func (p *Project) describe() string {
	parts := make([]string, len(p.Exprs))
	for i, e := range p.Exprs {
		parts[i] = e.String()
		if n := p.Cols[i].Name; n != "" && n != e.String() {
			parts[i] += " AS " + n
		}
	}
	return "Project " + strings.Join(parts, ", ")
}

// Filter keeps the rows for which Pred is TRUE.
type Filter struct {
	Input Node
	Pred  expr.Expr
}

// Schema returns the output columns.
func (f *Filter) Schema() []Column { return f.Input.Schema() }

// Inputs returns the child nodes.
func (f *Filter) Inputs() []Node   { return []Node{f.Input} }
func (f *Filter) describe() string { return "Filter " + f.Pred.String() }

// AggCall is one aggregate function call of an Aggregate.
type AggCall struct {
	// Func is the aggregate's name: count, sum, avg, min, max, bool_and,
	// bool_or, string_agg, ...; count(*) is "count" with no Args.
	Func     string
	Args     []expr.Expr
	Distinct bool
	// Filter is the FILTER (WHERE ...) predicate, nil when absent.
	Filter expr.Expr
	// Order is the ORDER BY inside the call (string_agg only; the order
	// of other aggregates' input does not change their result).
	Order []SortKey
	Type  types.Type
}

func (a AggCall) String() string {
	var b strings.Builder
	b.WriteString(a.Func + "(")
	if a.Distinct {
		b.WriteString("DISTINCT ")
	}
	if len(a.Args) == 0 && a.Func == "count" {
		b.WriteString("*")
	}
	for i, e := range a.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.String())
	}
	for i, k := range a.Order {
		if i == 0 {
			b.WriteString(" ORDER BY ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(k.String())
	}
	b.WriteString(")")
	if a.Filter != nil {
		b.WriteString(" FILTER (WHERE " + a.Filter.String() + ")")
	}
	return b.String()
}

// Aggregate groups its input by GroupBy (expressions over the input) and
// computes Aggs per group. Its output is the group keys, then the
// aggregates. With no GroupBy it yields exactly one row (a global
// aggregate), also over empty input.
type Aggregate struct {
	Input   Node
	GroupBy []expr.Expr
	Aggs    []AggCall
	Cols    []Column
}

// Schema returns the output columns.
func (a *Aggregate) Schema() []Column { return a.Cols }

// Inputs returns the child nodes.
func (a *Aggregate) Inputs() []Node { return []Node{a.Input} }
func (a *Aggregate) describe() string {
	keys := make([]string, len(a.GroupBy))
	for i, e := range a.GroupBy {
		keys[i] = e.String()
	}
	aggs := make([]string, len(a.Aggs))
	for i, c := range a.Aggs {
		aggs[i] = c.String()
	}
	return "Aggregate group=[" + strings.Join(keys, ", ") + "] aggs=[" + strings.Join(aggs, ", ") + "]"
}

// JoinKind is the kind of a join.
type JoinKind uint8

// Join kinds.
const (
	InnerJoin JoinKind = iota
	LeftJoin
	RightJoin
	FullJoin
	CrossJoin
)

func (k JoinKind) String() string {
	return [...]string{"Inner", "Left", "Right", "Full", "Cross"}[k]
}

// Join combines Left and Right rows for which On is TRUE (every pair for a
// cross join); outer kinds pad the unmatched side with NULLs. Output: the
// left columns, then the right columns; On refers to that combined row.
type Join struct {
	Kind        JoinKind
	Left, Right Node
	On          expr.Expr // nil for a cross join
	cols        []Column
}

// NewJoin returns a join and computes its schema (outer joins make the
// padded side's columns nullable).
func NewJoin(kind JoinKind, left, right Node, on expr.Expr) *Join {
	var cols []Column
	for _, c := range left.Schema() {
		if kind == RightJoin || kind == FullJoin {
			c.NotNull = false
		}
		cols = append(cols, c)
	}
	for _, c := range right.Schema() {
		if kind == LeftJoin || kind == FullJoin {
			c.NotNull = false
		}
		cols = append(cols, c)
	}
	return &Join{Kind: kind, Left: left, Right: right, On: on, cols: cols}
}

// Schema returns the output columns.
func (j *Join) Schema() []Column { return j.cols }

// Inputs returns the child nodes.
func (j *Join) Inputs() []Node { return []Node{j.Left, j.Right} }
func (j *Join) describe() string {
	if j.On == nil {
		return j.Kind.String() + "Join"
	}
	return j.Kind.String() + "Join on " + j.On.String()
}

// Union is UNION ALL of inputs with the same column types; the output
// columns take the first input's names.
type Union struct {
	Ins  []Node
	Cols []Column
}

// Schema returns the output columns.
func (u *Union) Schema() []Column { return u.Cols }

// Inputs returns the child nodes.
func (u *Union) Inputs() []Node   { return u.Ins }
func (u *Union) describe() string { return "UnionAll" }

// SortKey is one ORDER BY key over the input's columns.
type SortKey struct {
	Expr       expr.Expr
	Desc       bool
	NullsFirst bool // Postgres's default: NULLS LAST for ASC, FIRST for DESC
}

func (k SortKey) String() string {
	s := k.Expr.String()
	if k.Desc {
		s += " DESC"
	}
	if k.NullsFirst != k.Desc {
		if k.NullsFirst {
			s += " NULLS FIRST"
		} else {
			s += " NULLS LAST"
		}
	}
	return s
}

// Sort orders its input.
type Sort struct {
	Input Node
	Keys  []SortKey
}

// Schema returns the output columns.
func (s *Sort) Schema() []Column { return s.Input.Schema() }

// Inputs returns the child nodes.
func (s *Sort) Inputs() []Node { return []Node{s.Input} }
func (s *Sort) describe() string {
	parts := make([]string, len(s.Keys))
	for i, k := range s.Keys {
		parts[i] = k.String()
	}
	return "Sort " + strings.Join(parts, ", ")
}

// Limit keeps Count rows after skipping Offset (Count < 0: no limit).
type Limit struct {
	Input         Node
	Count, Offset int64
}

// Schema returns the output columns.
func (l *Limit) Schema() []Column { return l.Input.Schema() }

// Inputs returns the child nodes.
func (l *Limit) Inputs() []Node { return []Node{l.Input} }
func (l *Limit) describe() string {
	return fmt.Sprintf("Limit %d offset %d", l.Count, l.Offset)
}

// WindowKind is the kind of a window table-valued function.
type WindowKind uint8

// Window TVFs (Flink's and RisingWave's names).
const (
	Tumble WindowKind = iota
	Hop
	Cumulate
	Session
)

func (k WindowKind) String() string {
	return [...]string{"TUMBLE", "HOP", "CUMULATE", "SESSION"}[k]
}

// WindowTVF assigns each input row to event-time windows over TimeCol and
// appends window_start and window_end (TIMESTAMP or TIMESTAMPTZ, like the
// time column) to its columns. A HOP or CUMULATE row may belong to several
// windows and is then emitted once per window.
type WindowTVF struct {
	Input   Node
	Kind    WindowKind
	TimeCol int
	// Size is the window size (TUMBLE, HOP), the max size (CUMULATE) or
	// the gap (SESSION).
	Size types.IntervalValue
	// Slide is HOP's slide or CUMULATE's step.
	Slide types.IntervalValue
	// Offset shifts window boundaries (TUMBLE's optional offset).
	Offset types.IntervalValue
	// Partition holds the positions of Input's columns that partition a
	// SESSION window (Flink's SESSION(TABLE t PARTITION BY k, ...)):
	// sessions form and merge per distinct key; empty means the whole
	// input is one partition. Always empty for the other kinds.
	Partition []int
	Cols      []Column
}

// Schema returns the output columns.
func (w *WindowTVF) Schema() []Column { return w.Cols }

// Inputs returns the child nodes.
func (w *WindowTVF) Inputs() []Node { return []Node{w.Input} }
func (w *WindowTVF) describe() string {
	in := w.Input.Schema()
	s := fmt.Sprintf("%s(%s, size=%s, slide=%s)", w.Kind, in[w.TimeCol].Name,
		types.FormatText(types.NewInterval(w.Size), nil), types.FormatText(types.NewInterval(w.Slide), nil))
	if len(w.Partition) > 0 {
		parts := make([]string, len(w.Partition))
		for i, c := range w.Partition {
			parts[i] = in[c].Name
		}
		s += " partition=[" + strings.Join(parts, ", ") + "]"
	}
	return s
}

// TopN keeps, per partition, the first N rows in Order (ROW_NUMBER() OVER
// (PARTITION BY ... ORDER BY ...) <= N, the Top-N and deduplication
// patterns). With RankCol set, the row number is appended as a BIGINT
// column (the last of Cols, named after the select-list item). A lower
// bound on the row number (rn > M) is a Filter above, not part of the
// TopN.
type TopN struct {
	Input     Node
	Partition []expr.Expr
	Order     []SortKey
	N         int64
	RankCol   bool
	Cols      []Column
}

// Schema returns the output columns.
func (t *TopN) Schema() []Column { return t.Cols }

// Inputs returns the child nodes.
func (t *TopN) Inputs() []Node { return []Node{t.Input} }
func (t *TopN) describe() string {
	parts := make([]string, len(t.Partition))
	for i, e := range t.Partition {
		parts[i] = e.String()
	}
	ord := make([]string, len(t.Order))
	for i, k := range t.Order {
		ord[i] = k.String()
	}
	s := fmt.Sprintf("TopN n=%d partition=[%s] order=[%s]", t.N, strings.Join(parts, ", "), strings.Join(ord, ", "))
	if t.RankCol && len(t.Cols) > 0 {
		s += " with row number " + t.Cols[len(t.Cols)-1].Name
	}
	return s
}

// Explain renders a plan as an indented tree, one node a line, children
// below their parent.
func Explain(n Node) string {
	var b strings.Builder
	var walk func(n Node, depth int)
	walk = func(n Node, depth int) {
		b.WriteString(strings.Repeat("  ", depth))
		b.WriteString(n.describe())
		b.WriteByte('\n')
		for _, c := range n.Inputs() {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

// Repeat emits each input row Count times, without the count column (the
// last input column, BIGINT; NULL or below one emits nothing): the
// multiplicity of INTERSECT ALL and EXCEPT ALL.
type Repeat struct {
	Input Node
	Cols  []Column
}

// Schema returns the output columns.
func (r *Repeat) Schema() []Column { return r.Cols }

// Inputs returns the child nodes.
func (r *Repeat) Inputs() []Node { return []Node{r.Input} }
func (r *Repeat) describe() string {
	return "Repeat by " + r.Input.Schema()[len(r.Input.Schema())-1].Name
}
