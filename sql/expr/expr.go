package expr

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Context is what an evaluation needs besides the row: the session's time
// zone (for TIMESTAMPTZ arithmetic, casts and formatting). The zero Context
// is valid and means UTC.
type Context struct {
	// Loc is the session time zone (SET TIME ZONE); nil means UTC.
	Loc *time.Location
	// Database and User are the session's, for current_database() and
	// current_user.
	Database, User string
	// Now is the statement's start time, which now(), current_timestamp
	// and current_date return throughout the statement (Postgres fixes
	// them per transaction; Strata's statements are their own
	// transactions). Zero means the wall clock at evaluation.
	Now time.Time
	// Setting returns the value SHOW gives for a configuration parameter
	// (lower-case name), for current_setting(); nil knows none.
	Setting func(name string) (string, bool)
	// Interrupt is the statement's context: a batch execution stops with
	// its error soon after it ends (a cancel request, statement_timeout).
	// Nil never interrupts.
	Interrupt context.Context

	// args is the argument stack of Call.Eval in a Context that one
	// goroutine owns (see Owned); nil makes every call allocate its
	// arguments.
	args *[]types.Datum
}

// Owned returns a copy of c for the use of one goroutine (an operator
// evaluating its expressions row by row): calls evaluated with it take
// their arguments from a stack the copy keeps, instead of allocating a
// slice for each call (a function value's arguments escape to the heap).
// The copy must not be shared between goroutines; c itself is unchanged
// and can be. A nil c gives an owned zero Context.
func (c *Context) Owned() *Context {
	var o Context
	if c != nil {
		o = *c
	}
	o.args = new([]types.Datum)
	return &o
}

// Interrupted returns the error of Interrupt once it has ended, else nil.
func (c *Context) Interrupted() error {
	if c == nil || c.Interrupt == nil {
		return nil
	}
	return c.Interrupt.Err()
}

// StatementTime returns Now, or the wall clock when Now is unset.
func (c *Context) StatementTime() time.Time {
	if c == nil || c.Now.IsZero() {
		return time.Now()
	}
	return c.Now
}

// Location returns the session time zone, UTC when unset.
func (c *Context) Location() *time.Location {
	if c == nil || c.Loc == nil {
		return time.UTC
	}
	return c.Loc
}

// Expr is a bound scalar expression. Type is known after binding; Eval
// computes the value for one input row (the row's columns are what
// ColumnRef indexes). Errors are *sqlerr.Error with a SQLSTATE.
type Expr interface {
	Type() types.Type
	Eval(ctx *Context, row types.Row) (types.Datum, error)
	// String renders the expression in SQL-like form for EXPLAIN and
	// error messages.
	String() string
}

// ColumnRef reads column Index of the input row.
type ColumnRef struct {
	Index int
	Typ   types.Type
	Name  string // for EXPLAIN; may be empty
}

// Type returns the column's type.
func (c *ColumnRef) Type() types.Type { return c.Typ }

// Eval returns row[Index].
func (c *ColumnRef) Eval(_ *Context, row types.Row) (types.Datum, error) { return row[c.Index], nil }

func (c *ColumnRef) String() string {
	if c.Name != "" {
		return c.Name
	}
	return fmt.Sprintf("$%d", c.Index)
}

// Const is a constant (a literal or a folded expression).
type Const struct {
	Value types.Datum
	Typ   types.Type
}

// Type returns the constant's type (types.Unknown for an untyped NULL).
func (c *Const) Type() types.Type { return c.Typ }

// Eval returns the value.
func (c *Const) Eval(*Context, types.Row) (types.Datum, error) { return c.Value, nil }

func (c *Const) String() string {
	if c.Value.IsNull() {
		return "NULL"
	}
	switch c.Typ.Kind {
	case types.KindInt16, types.KindInt32, types.KindInt64, types.KindNumeric, types.KindFloat64, types.KindFloat32, types.KindBool:
		return c.Value.String()
	}
	return "'" + strings.ReplaceAll(c.Value.String(), "'", "''") + "'::" + strings.ToLower(c.Typ.String())
}

// Call applies a function or operator overload to its arguments, whose
// types the binder has already made equal to Fn.Params (by inserting
// casts).
type Call struct {
	Fn   *Func
	Args []Expr
	Typ  types.Type
}

// NewCall returns the call of fn on args with fn's result type for them.
func NewCall(fn *Func, args ...Expr) *Call {
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	return &Call{Fn: fn, Args: args, Typ: fn.ResultType(ts)}
}

// Type returns the result type.
func (c *Call) Type() types.Type { return c.Typ }

// Eval evaluates the arguments left to right, then the function; a strict
// function returns NULL without being called when an argument is NULL.
func (c *Call) Eval(ctx *Context, row types.Row) (types.Datum, error) {
	if ctx != nil && ctx.args != nil {
		return c.evalOwned(ctx, row)
	}
	var buf [4]types.Datum
	args := buf[:0]
	for _, a := range c.Args {
		v, err := a.Eval(ctx, row)
		if err != nil {
			return types.Null, err
		}
		if v.IsNull() && c.Fn.Strict {
			return types.Null, nil
		}
		args = append(args, v)
	}
	return c.Fn.Eval(ctx, args)
}

// evalOwned is Eval with the arguments on ctx's stack: each call pushes
// its arguments above those of the calls it is nested in and pops them
// when its function returns (functions take datums, never expressions,
// so none evaluates on ctx while its arguments are in use).
func (c *Call) evalOwned(ctx *Context, row types.Row) (types.Datum, error) {
	stack := ctx.args
	base := len(*stack)
	strict := c.Fn.Strict
	for _, a := range c.Args {
		v, err := a.Eval(ctx, row)
		if err != nil || v.IsNull() && strict {
			*stack = (*stack)[:base]
			return types.Null, err
		}
		*stack = append(*stack, v)
	}
	args := (*stack)[base:]
	out, err := c.Fn.Eval(ctx, args[:len(args):len(args)])
	// The popped arguments stay in the array until the next call
	// overwrites them (clearing them cost a write barrier per pointer);
	// the stack is only as deep as the expressions nest, so what it keeps
	// alive is a few values.
	*stack = (*stack)[:base]
	return out, err
}

func (c *Call) String() string {
	if c.Fn.Infix && len(c.Args) == 2 {
		return "(" + c.Args[0].String() + " " + c.Fn.Name + " " + c.Args[1].String() + ")"
	}
	if c.Fn.Infix && len(c.Args) == 1 {
		return "(" + c.Fn.Name + c.Args[0].String() + ")"
	}
	parts := make([]string, len(c.Args))
	for i, a := range c.Args {
		parts[i] = a.String()
	}
	return c.Fn.Name + "(" + strings.Join(parts, ", ") + ")"
}

// And is SQL's AND over two or more BOOLEAN arguments: FALSE if any is
// FALSE, else NULL if any is NULL, else TRUE. Evaluation stops at the first
// FALSE, as Postgres may (so an error in a later argument is not raised).
type And struct{ Args []Expr }

// Type is BOOLEAN.
func (*And) Type() types.Type { return types.Bool }

// Eval applies three-valued AND.
func (a *And) Eval(ctx *Context, row types.Row) (types.Datum, error) {
	sawNull := false
	for _, e := range a.Args {
		v, err := e.Eval(ctx, row)
		if err != nil {
			return types.Null, err
		}
		if v.IsNull() {
			sawNull = true
			continue
		}
		if !v.Bool() {
			return types.NewBool(false), nil
		}
	}
	if sawNull {
		return types.Null, nil
	}
	return types.NewBool(true), nil
}

func (a *And) String() string { return joinExprs(a.Args, " AND ") }

// Or is SQL's OR: TRUE if any argument is TRUE, else NULL if any is NULL,
// else FALSE.
type Or struct{ Args []Expr }

// Type is BOOLEAN.
func (*Or) Type() types.Type { return types.Bool }

// Eval applies three-valued OR.
func (o *Or) Eval(ctx *Context, row types.Row) (types.Datum, error) {
	sawNull := false
	for _, e := range o.Args {
		v, err := e.Eval(ctx, row)
		if err != nil {
			return types.Null, err
		}
		if v.IsNull() {
			sawNull = true
			continue
		}
		if v.Bool() {
			return types.NewBool(true), nil
		}
	}
	if sawNull {
		return types.Null, nil
	}
	return types.NewBool(false), nil
}

func (o *Or) String() string { return joinExprs(o.Args, " OR ") }

func joinExprs(es []Expr, sep string) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return "(" + strings.Join(parts, sep) + ")"
}

// Not is SQL's NOT: NULL stays NULL.
type Not struct{ Arg Expr }

// Type is BOOLEAN.
func (*Not) Type() types.Type { return types.Bool }

// Eval negates a BOOLEAN.
func (n *Not) Eval(ctx *Context, row types.Row) (types.Datum, error) {
	v, err := n.Arg.Eval(ctx, row)
	if err != nil || v.IsNull() {
		return v, err
	}
	return types.NewBool(!v.Bool()), nil
}

func (n *Not) String() string { return "(NOT " + n.Arg.String() + ")" }

// IsNull is `arg IS NULL` (or IS NOT NULL with Negate); never NULL itself.
type IsNull struct {
	Arg    Expr
	Negate bool
}

// Type is BOOLEAN.
func (*IsNull) Type() types.Type { return types.Bool }

// Eval tests for NULL.
func (n *IsNull) Eval(ctx *Context, row types.Row) (types.Datum, error) {
	v, err := n.Arg.Eval(ctx, row)
	if err != nil {
		return types.Null, err
	}
	return types.NewBool(v.IsNull() != n.Negate), nil
}

func (n *IsNull) String() string {
	if n.Negate {
		return "(" + n.Arg.String() + " IS NOT NULL)"
	}
	return "(" + n.Arg.String() + " IS NULL)"
}

// IsDistinctFrom is `a IS [NOT] DISTINCT FROM b`: equality where NULL equals
// NULL; never NULL itself.
type IsDistinctFrom struct {
	Left, Right Expr
	Negate      bool // IS NOT DISTINCT FROM
}

// Type is BOOLEAN.
func (*IsDistinctFrom) Type() types.Type { return types.Bool }

// Eval compares with NULLs equal.
func (d *IsDistinctFrom) Eval(ctx *Context, row types.Row) (types.Datum, error) {
	a, err := d.Left.Eval(ctx, row)
	if err != nil {
		return types.Null, err
	}
	b, err := d.Right.Eval(ctx, row)
	if err != nil {
		return types.Null, err
	}
	distinct := types.Compare(a, b) != 0
	return types.NewBool(distinct != d.Negate), nil
}

func (d *IsDistinctFrom) String() string {
	op := " IS DISTINCT FROM "
	if d.Negate {
		op = " IS NOT DISTINCT FROM "
	}
	return "(" + d.Left.String() + op + d.Right.String() + ")"
}

// When is one WHEN ... THEN ... arm of a CASE.
type When struct {
	Cond   Expr // BOOLEAN
	Result Expr
}

// Case is the searched CASE (the binder rewrites the simple form `CASE x
// WHEN v ...` into conditions x = v). The first arm whose condition is TRUE
// gives the result; else Else, or NULL without Else. Only the chosen arm's
// result is evaluated.
type Case struct {
	Whens []When
	Else  Expr // may be nil
	Typ   types.Type
}

// Type returns the common type of the results.
func (c *Case) Type() types.Type { return c.Typ }

// Eval picks the first true arm.
func (c *Case) Eval(ctx *Context, row types.Row) (types.Datum, error) {
	for _, w := range c.Whens {
		v, err := w.Cond.Eval(ctx, row)
		if err != nil {
			return types.Null, err
		}
		if !v.IsNull() && v.Bool() {
			return w.Result.Eval(ctx, row)
		}
	}
	if c.Else == nil {
		return types.Null, nil
	}
	return c.Else.Eval(ctx, row)
}

func (c *Case) String() string {
	var b strings.Builder
	b.WriteString("CASE")
	for _, w := range c.Whens {
		b.WriteString(" WHEN " + w.Cond.String() + " THEN " + w.Result.String())
	}
	if c.Else != nil {
		b.WriteString(" ELSE " + c.Else.String())
	}
	b.WriteString(" END")
	return b.String()
}

// Coalesce returns its first non-NULL argument, evaluating no further.
type Coalesce struct {
	Args []Expr
	Typ  types.Type
}

// Type returns the common type of the arguments.
func (c *Coalesce) Type() types.Type { return c.Typ }

// Eval returns the first non-NULL value, or NULL.
func (c *Coalesce) Eval(ctx *Context, row types.Row) (types.Datum, error) {
	for _, a := range c.Args {
		v, err := a.Eval(ctx, row)
		if err != nil || !v.IsNull() {
			return v, err
		}
	}
	return types.Null, nil
}

func (c *Coalesce) String() string { return "COALESCE" + joinExprs(c.Args, ", ") }

// NullIf is NULLIF(a, b): NULL when a = b, else a.
type NullIf struct{ Left, Right Expr }

// Type is the first argument's type.
func (n *NullIf) Type() types.Type { return n.Left.Type() }

// Eval compares and returns a or NULL.
func (n *NullIf) Eval(ctx *Context, row types.Row) (types.Datum, error) {
	a, err := n.Left.Eval(ctx, row)
	if err != nil {
		return types.Null, err
	}
	b, err := n.Right.Eval(ctx, row)
	if err != nil {
		return types.Null, err
	}
	if c, ok := types.CompareSQL(a, b); ok && c == 0 {
		return types.Null, nil
	}
	return a, nil
}

func (n *NullIf) String() string { return "NULLIF(" + n.Left.String() + ", " + n.Right.String() + ")" }

// In is `arg [NOT] IN (list...)` with SQL semantics: TRUE if arg equals an
// element; else NULL if arg or any element is NULL; else FALSE (negated
// for NOT IN, NULL staying NULL).
type In struct {
	Arg    Expr
	List   []Expr
	Negate bool
}

// Type is BOOLEAN.
func (*In) Type() types.Type { return types.Bool }

// Eval searches the list.
func (in *In) Eval(ctx *Context, row types.Row) (types.Datum, error) {
	v, err := in.Arg.Eval(ctx, row)
	if err != nil {
		return types.Null, err
	}
	if v.IsNull() {
		return types.Null, nil
	}
	sawNull := false
	for _, e := range in.List {
		x, err := e.Eval(ctx, row)
		if err != nil {
			return types.Null, err
		}
		c, ok := types.CompareSQL(v, x)
		if !ok {
			sawNull = true
			continue
		}
		if c == 0 {
			return types.NewBool(!in.Negate), nil
		}
	}
	if sawNull {
		return types.Null, nil
	}
	return types.NewBool(in.Negate), nil
}

func (in *In) String() string {
	op := " IN "
	if in.Negate {
		op = " NOT IN "
	}
	return "(" + in.Arg.String() + op + joinExprs(in.List, ", ") + ")"
}

// EvalChunk evaluates e for every row of c and returns the results as a
// Vector of e's type. The first error stops evaluation and names the row.
func EvalChunk(ctx *Context, e Expr, c *types.Chunk) (*types.Vector, error) {
	out := &types.Vector{Type: e.Type()}
	row := make(types.Row, 0, c.Width())
	for i := range c.Len() {
		row = c.AppendRowTo(row[:0], i)
		v, err := e.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		out.Append(v)
	}
	return out, nil
}

// Filter returns the indexes of c's rows for which the BOOLEAN expression
// pred is TRUE (NULL and FALSE drop the row, as WHERE does).
func Filter(ctx *Context, pred Expr, c *types.Chunk, sel []int) ([]int, error) {
	sel = sel[:0]
	row := make(types.Row, 0, c.Width())
	for i := range c.Len() {
		row = c.AppendRowTo(row[:0], i)
		v, err := pred.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		if !v.IsNull() && v.Bool() {
			sel = append(sel, i)
		}
	}
	return sel, nil
}

// errorf is a shorthand for a SQL error with a code.
func errorf(code, format string, args ...any) error { return sqlerr.New(code, format, args...) }
