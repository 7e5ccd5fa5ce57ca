package expr

import (
	"fmt"
	"strings"

	"github.com/stratadb/strata/internal/types"
)

// Shared sub-expressions (invariant memo-same-result): a projection such
// as Nexmark q22's split_part(url, '/', 4), split_part(url, '/', 5), ...
// casts the same VARCHAR column to TEXT once per output column, and q21's
// CASE tests lower(channel) against four names. Memoize makes each
// repeated sub-expression one node that computes its value at most once
// per row: the first occurrence evaluated on a row computes it (value or
// error) and the later ones on the same row return it. Evaluation stays
// lazy, so a sub-expression that no taken branch reaches is still not
// evaluated and raises nothing; since only deterministic expressions
// (no volatile function) are shared, every occurrence would have
// computed the same value and error, and results do not change.

// Memo is the row counter of the shared nodes Memoize makes for one
// operator: NextRow before each row makes them compute afresh. A Memo
// and its nodes belong to one goroutine.
type Memo struct{ row uint64 }

// NextRow starts a new row: shared values computed so far are stale.
func (m *Memo) NextRow() { m.row++ }

// memoized is a shared sub-expression (see Memoize).
type memoized struct {
	inner Expr
	memo  *Memo
	row   uint64 // the row value and err belong to; 0 before the first
	value types.Datum
	err   error
}

// Type implements Expr.
func (n *memoized) Type() types.Type { return n.inner.Type() }

func (n *memoized) String() string { return n.inner.String() }

// Eval returns the value computed on this row, computing it first if
// needed.
func (n *memoized) Eval(ctx *Context, row types.Row) (types.Datum, error) {
	if n.row == n.memo.row && n.row != 0 {
		return n.value, n.err
	}
	n.value, n.err = n.inner.Eval(ctx, row)
	n.row = n.memo.row
	return n.value, n.err
}

// Memoize returns es with every Call or Cast that occurs more than once
// among them (the same function on the same arguments, anywhere in any
// of them) replaced by one shared node computing it once per row of m
// (see above); expressions with nothing repeated come back unchanged.
// Call m.NextRow before evaluating each row. Like Specialize, the result
// is for evaluation only (a shared node is a leaf to Walk).
func Memoize(es []Expr, m *Memo) []Expr {
	counts := map[string]int{}
	for _, e := range es {
		if e != nil {
			countShapes(e, counts)
		}
	}
	shared := map[string]*memoized{}
	out := make([]Expr, len(es))
	for i, e := range es {
		if e != nil {
			out[i] = share(e, counts, shared, m)
		}
	}
	return out
}

// countShapes counts the shareable sub-expressions of e by key.
func countShapes(e Expr, counts map[string]int) {
	if k, ok := shapeKey(e); ok && shareable(e) {
		counts[k]++
		if counts[k] > 1 {
			return // its parts were counted with its first occurrence
		}
	}
	for _, c := range Children(e) {
		countShapes(c, counts)
	}
}

// share rebuilds e with its repeated shareable sub-expressions (the
// outermost ones) replaced by shared nodes.
func share(e Expr, counts map[string]int, shared map[string]*memoized, m *Memo) Expr {
	if k, ok := shapeKey(e); ok && shareable(e) && counts[k] > 1 {
		n := shared[k]
		if n == nil {
			n = &memoized{inner: e, memo: m}
			shared[k] = n
		}
		return n
	}
	kids := Children(e)
	if len(kids) == 0 {
		return e
	}
	nk := make([]Expr, len(kids))
	changed := false
	for i, c := range kids {
		nk[i] = share(c, counts, shared, m)
		changed = changed || nk[i] != c
	}
	if !changed {
		return e
	}
	return WithChildren(e, nk)
}

// shareable reports whether e is worth sharing and safe to: a Call or a
// Cast over expressions this package knows, with no volatile call.
func shareable(e Expr) bool {
	switch e.(type) {
	case *Call, *Cast:
	default:
		return false
	}
	ok := true
	Walk(e, func(x Expr) bool {
		if c, isCall := x.(*Call); isCall && c.Fn.Volatile {
			ok = false
		}
		return ok
	})
	return ok
}

// shapeKey returns a key that two expressions share only when they
// compute the same: node kind, function overload (by identity), types,
// constants' kind and text, columns by index; ok is false for a node kind
// it does not know (which then is never shared).
func shapeKey(e Expr) (string, bool) {
	var b strings.Builder
	if !writeKey(&b, e) {
		return "", false
	}
	return b.String(), true
}

func writeKey(b *strings.Builder, e Expr) bool {
	switch n := e.(type) {
	case *ColumnRef:
		fmt.Fprintf(b, "$%d:%s", n.Index, n.Typ)
		return true
	case *Const:
		if n.Value.IsNull() {
			fmt.Fprintf(b, "null:%s", n.Typ)
			return true
		}
		fmt.Fprintf(b, "const:%s:%s:%q", n.Typ, n.Value.Kind(), n.Value.String())
		return true
	case *Call:
		fmt.Fprintf(b, "call:%p:%s(", n.Fn, n.Typ)
	case *Cast:
		fmt.Fprintf(b, "cast:%s:%t(", n.To, n.Explicit)
	case *And:
		b.WriteString("and(")
	case *Or:
		b.WriteString("or(")
	case *Not:
		b.WriteString("not(")
	case *IsNull:
		fmt.Fprintf(b, "isnull:%t(", n.Negate)
	case *IsDistinctFrom:
		fmt.Fprintf(b, "distinct:%t(", n.Negate)
	case *Case:
		fmt.Fprintf(b, "case:%s:%t(", n.Typ, n.Else != nil)
	case *Coalesce:
		fmt.Fprintf(b, "coalesce:%s(", n.Typ)
	case *NullIf:
		b.WriteString("nullif(")
	case *In:
		fmt.Fprintf(b, "in:%t(", n.Negate)
	default:
		return false
	}
	for _, c := range Children(e) {
		if !writeKey(b, c) {
			return false
		}
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return true
}
