package expr

import (
	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/types"
)

// Specialized forms (invariant specialize-same-result): Specialize
// replaces a few expression shapes that streaming projections and
// filters evaluate for every row with nodes that compute the same values
// and errors with fewer calls and allocations. Each specialized node keeps
// the expression it replaces, renders as it (String) and has its type, so
// EXPLAIN and error messages do not change; where its shortcut does not
// apply to a row (a result too large for 64 bits) it computes that row
// the general way. TestSpecializeMatchesGeneral evaluates both forms over
// random and edge-case rows.
//
// The shapes, from Nexmark q1 and q14:
//   - c * CAST(x AS NUMERIC) and CAST(x AS NUMERIC) * c, c a finite
//     NUMERIC constant and x an integer (numericScale): the product in
//     integer arithmetic (see smallArith), without the cast's decimal;
//   - such a product compared with a finite NUMERIC constant
//     (numericScaleCompare): the comparison without making the product a
//     datum at all;
//   - substring(s FROM p), p a constant pattern that compiles
//     (regexSubstringConst), from q21: the compiled expression is looked
//     up once, not in the shared cache on every row.
//
// Each of these nodes also has a vector form (batch.go), which a Batch
// uses to evaluate a whole chunk at once.

// regexSubstringFunc is the overload substring(text FROM pattern), set
// as the registry is built.
var regexSubstringFunc *Func

// numericBinops maps the registered NUMERIC + - * / % overloads to their
// operator; numericCompares maps the NUMERIC comparison overloads to
// their test of a types.Compare result. Both are filled as the registry
// is built and read only afterwards.
var (
	numericBinops   = map[*Func]byte{}
	numericCompares = map[*Func]func(int) bool{}
)

// Specialize returns e with the shapes listed above replaced by their
// specialized nodes (e itself when it has none). The result must be
// used only for evaluation: Walk, Children and Transform see a
// specialized node as a leaf, so callers that inspect the tree (which
// columns it reads, whether it is constant) must look at e.
func Specialize(e Expr) Expr {
	out, err := Transform(e, func(x Expr) (Expr, error) {
		c, ok := x.(*Call)
		if !ok || len(c.Args) != 2 {
			return x, nil
		}
		if op, ok := numericBinops[c.Fn]; ok && op == '*' {
			if n := newNumericScale(c); n != nil {
				return n, nil
			}
		}
		if c.Fn == regexSubstringFunc {
			if n := newRegexSubstringConst(c); n != nil {
				return n, nil
			}
		}
		if test, ok := numericCompares[c.Fn]; ok {
			if n := newNumericScaleCompare(c, test); n != nil {
				return n, nil
			}
		}
		return x, nil
	})
	if err != nil {
		panic("expr: Specialize: " + err.Error()) // the function above returns no error
	}
	return out
}

// finiteNumericConst returns the value of e when e is a finite,
// non-NULL NUMERIC constant small enough for smallOf.
func finiteNumericConst(e Expr) (*apd.Decimal, smallDec, bool) {
	k, ok := e.(*Const)
	if !ok || k.Value.IsNull() || k.Value.Kind() != types.KindNumeric {
		return nil, smallDec{}, false
	}
	d := k.Value.Decimal()
	s, ok := smallOf(d)
	return d, s, ok
}

// intToNumeric returns x when e is CAST(x AS NUMERIC) (no precision) of
// an integer kind.
func intToNumeric(e Expr) (Expr, bool) {
	c, ok := e.(*Cast)
	if !ok || c.To != types.Numeric {
		return nil, false
	}
	switch c.Arg.Type().Kind {
	case types.KindInt16, types.KindInt32, types.KindInt64:
		return c.Arg, true
	}
	return nil, false
}

// numericScale is orig = c * CAST(arg AS NUMERIC) (constLeft) or
// CAST(arg AS NUMERIC) * c, c a finite NUMERIC constant.
type numericScale struct {
	orig      *Call
	arg       Expr
	c         smallDec
	cdec      *apd.Decimal
	constLeft bool
}

func newNumericScale(c *Call) *numericScale {
	for i := range 2 {
		d, s, ok := finiteNumericConst(c.Args[i])
		if !ok {
			continue
		}
		if arg, ok := intToNumeric(c.Args[1-i]); ok {
			return &numericScale{orig: c, arg: arg, c: s, cdec: d, constLeft: i == 0}
		}
	}
	return nil
}

// Type implements Expr.
func (n *numericScale) Type() types.Type { return n.orig.Type() }

func (n *numericScale) String() string { return n.orig.String() }

// evalSmall evaluates the product: null when arg is NULL, else the
// product as a smallDec when it fits (ok), else arg's value x for
// the general path.
func (n *numericScale) evalSmall(ctx *Context, row types.Row) (r smallDec, x int64, null, ok bool, err error) {
	v, err := n.arg.Eval(ctx, row)
	if err != nil || v.IsNull() {
		return smallDec{}, 0, true, false, err
	}
	x = v.Int64()
	r, ok = smallArith('*', n.c, smallOfInt(x))
	return r, x, false, ok, nil
}

// general is the product of c and x through apd, in orig's operand order.
func (n *numericScale) general(x int64) (types.Datum, error) {
	if n.constLeft {
		return numericArith('*', n.cdec, apd.New(x, 0))
	}
	return numericArith('*', apd.New(x, 0), n.cdec)
}

// Eval implements Expr.
func (n *numericScale) Eval(ctx *Context, row types.Row) (types.Datum, error) {
	r, x, null, ok, err := n.evalSmall(ctx, row)
	if err != nil || null {
		return types.Null, err
	}
	return n.product(r, x, ok)
}

// product is the value of the product of c and x: r when ok (the
// product fits a smallDec), else the general path's.
func (n *numericScale) product(r smallDec, x int64, ok bool) (types.Datum, error) {
	if ok {
		return r.datum(), nil
	}
	return n.general(x)
}

// numericScaleCompare is orig = scale <op> c or c <op> scale (constLeft),
// c a finite NUMERIC constant.
type numericScaleCompare struct {
	orig      *Call
	scale     *numericScale
	c         *apd.Decimal
	cdatum    types.Datum
	constLeft bool
	test      func(int) bool
}

func newNumericScaleCompare(c *Call, test func(int) bool) *numericScaleCompare {
	for i := range 2 {
		d, _, ok := finiteNumericConst(c.Args[i])
		if !ok {
			continue
		}
		if s, ok := c.Args[1-i].(*numericScale); ok {
			return &numericScaleCompare{orig: c, scale: s, c: d, cdatum: c.Args[i].(*Const).Value, constLeft: i == 0, test: test}
		}
	}
	return nil
}

// Type implements Expr.
func (n *numericScaleCompare) Type() types.Type { return n.orig.Type() }

func (n *numericScaleCompare) String() string { return n.orig.String() }

// Eval implements Expr.
func (n *numericScaleCompare) Eval(ctx *Context, row types.Row) (types.Datum, error) {
	r, x, null, ok, err := n.scale.evalSmall(ctx, row)
	if err != nil || null {
		return types.Null, err
	}
	return n.compare(r, x, ok)
}

// compare is the comparison of the product of c and x (r when ok, as
// numericScale.product) with the constant.
func (n *numericScaleCompare) compare(r smallDec, x int64, ok bool) (types.Datum, error) {
	var cmp int
	if ok {
		// Both finite: types.Compare of two finite NUMERICs is apd's Cmp.
		var d apd.Decimal
		d.Form, d.Negative, d.Exponent = apd.Finite, r.neg, r.exp
		d.Coeff.SetUint64(r.coeff)
		cmp = d.Cmp(n.c)
	} else {
		v, err := n.scale.general(x)
		if err != nil {
			return types.Null, err
		}
		cmp = types.Compare(v, n.cdatum)
	}
	if n.constLeft {
		cmp = -cmp
	}
	return types.NewBool(n.test(cmp)), nil
}

// regexSubstringConst is orig = substring(arg FROM p), p a constant
// pattern, with p compiled.
type regexSubstringConst struct {
	orig *Call
	arg  Expr
	re   *compiledRegex
}

// newRegexSubstringConst returns the node for c, or nil when the pattern
// is not a constant or does not compile (the call then reports the error
// on each row with a non-NULL string, as it does unspecialized).
func newRegexSubstringConst(c *Call) *regexSubstringConst {
	k, ok := c.Args[1].(*Const)
	if !ok || k.Value.IsNull() {
		return nil
	}
	re, err := compileRegexLit(k.Value.Str(), regexOpts{newline: 's'})
	if err != nil {
		return nil
	}
	return &regexSubstringConst{orig: c, arg: c.Args[0], re: re}
}

// Type implements Expr.
func (n *regexSubstringConst) Type() types.Type { return n.orig.Type() }

func (n *regexSubstringConst) String() string { return n.orig.String() }

// Eval implements Expr.
func (n *regexSubstringConst) Eval(ctx *Context, row types.Row) (types.Datum, error) {
	v, err := n.arg.Eval(ctx, row)
	if err != nil || v.IsNull() {
		return types.Null, err
	}
	return regexSubstring(v.Str(), n.re), nil
}
