package binder

import (
	"strings"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

// isUnknownLiteral reports whether e is a quoted string or NULL literal,
// or a parameter, whose type is not known yet.
func isUnknownLiteral(e expr.Expr) bool {
	switch e := e.(type) {
	case *expr.Const:
		return e.Typ.Kind == types.KindUnknown
	case *plan.Param:
		return e.Typ.Kind == types.KindUnknown
	}
	return false
}

// coerce converts e to type to: an unknown literal is read with the type's
// input function (as Postgres does), anything else gets a Cast node when
// its type differs; constant results are folded. explicit marks CAST and
// ::, which allow more conversions and truncate strings silently.
func (b *Binder) coerce(e expr.Expr, to types.Type, explicit bool, loc int32) (expr.Expr, error) {
	from := e.Type()
	if from == to {
		return e, nil
	}
	if p, ok := e.(*plan.Param); ok && from.Kind == types.KindUnknown {
		return b.inferParam(p, to, explicit, loc)
	}
	if c, ok := e.(*expr.Const); ok && from.Kind == types.KindUnknown {
		if c.Value.IsNull() {
			return &expr.Const{Value: types.Null, Typ: to}, nil
		}
		if to.Kind == types.KindUnknown {
			return e, nil
		}
		v, err := types.ParseText(to, c.Value.Str(), b.ctx.Location())
		if err != nil {
			if l, ok := b.litLocs[c]; ok && l >= 0 {
				loc = l
			}
			return nil, b.atLoc(loc, sqlerr.From(err))
		}
		return &expr.Const{Value: v, Typ: to}, nil
	}
	if !explicit && from.Kind == to.Kind && unconstrained(to) {
		// NUMERIC(10,2) fits a NUMERIC parameter as it is; VARCHAR(5) a
		// VARCHAR one.
		return e, nil
	}
	if !types.CanCast(from, to, explicit) {
		return nil, b.errAt(loc, sqlerr.DatatypeMismatch, "cannot cast type %s to %s", typeName(from), typeName(to))
	}
	return b.fold(&expr.Cast{Arg: e, To: to, Explicit: explicit}, loc)
}

// unconstrained reports whether t carries no modifier that a value would
// have to be checked against.
func unconstrained(t types.Type) bool {
	switch t.Kind {
	case types.KindNumeric:
		return t.Precision == 0
	case types.KindVarchar:
		return t.Length == 0
	case types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
		return t.Precision == types.MaxTimestampPrecision
	case types.KindChar:
		return false
	}
	return true
}

func typeName(t types.Type) string {
	if t.Kind == types.KindUnknown {
		return "unknown"
	}
	return strings.ToLower(t.String())
}

// fold evaluates a constant expression once and replaces it with its
// value. An expression whose evaluation fails (1/0) is left as it is: it
// raises its error when, and only when, it is evaluated, so that
// COALESCE(1, 1/0) and CASE WHEN true THEN 1 ELSE 1/0 END give 1 as in
// Postgres, which does not fold what it will not evaluate.
func (b *Binder) fold(e expr.Expr, loc int32) (expr.Expr, error) {
	if _, ok := e.(*expr.Const); ok || !expr.IsConstant(e) {
		return e, nil
	}
	v, err := e.Eval(b.ctx, nil)
	if err != nil {
		return e, nil
	}
	return &expr.Const{Value: v, Typ: e.Type()}, nil
}

// foldBool simplifies AND with a constant FALSE argument to FALSE and OR
// with a constant TRUE to TRUE (Postgres's eval_const_expressions), so that
// the other arguments are never evaluated.
func foldBool(args []expr.Expr, isAnd bool) (expr.Expr, bool) {
	for _, a := range args {
		c, ok := a.(*expr.Const)
		if ok && !c.Value.IsNull() && c.Value.Bool() != isAnd {
			return &expr.Const{Value: types.NewBool(!isAnd), Typ: types.Bool}, true
		}
	}
	return nil, false
}

// commonType returns the type a set of expressions is unified to (CASE
// results, COALESCE, IN lists, UNION columns, VALUES columns), as
// Postgres's select_common_type: unknown literals take the others' type,
// all-unknown is TEXT, otherwise the implicit-cast target of each pair.
func (b *Binder) commonType(es []expr.Expr, what string, loc int32) (types.Type, error) {
	var t types.Type
	have := false
	for _, e := range es {
		et := e.Type()
		if et.Kind == types.KindUnknown {
			continue
		}
		if !have {
			t, have = et, true
			continue
		}
		if et == t {
			continue
		}
		if et.Kind == t.Kind {
			// Same kind, other modifiers: the unconstrained form (a CHAR of
			// no length does not exist, so two CHARs meet in TEXT).
			switch t.Kind {
			case types.KindNumeric:
				t = types.Numeric
			case types.KindVarchar:
				t = types.Varchar
			case types.KindChar:
				t = types.Text
			default:
				t = types.Type{Kind: t.Kind, Precision: maxInt32(t.Precision, et.Precision)}
			}
			continue
		}
		ct, ok := types.ImplicitCastTarget(t, et)
		if !ok {
			return types.Type{}, b.errAt(loc, sqlerr.DatatypeMismatch, "%s types %s and %s cannot be matched", what, typeName(t), typeName(et))
		}
		t = ct
	}
	if !have {
		return types.Text, nil
	}
	return t, nil
}

func maxInt32(a, b int32) int32 {
	if a > b {
		return a
	}
	return b
}

// coerceAll unifies es to their common type.
func (b *Binder) coerceAll(es []expr.Expr, what string, loc int32) ([]expr.Expr, types.Type, error) {
	t, err := b.commonType(es, what, loc)
	if err != nil {
		return nil, t, err
	}
	out := make([]expr.Expr, len(es))
	for i, e := range es {
		if out[i], err = b.coerce(e, t, false, loc); err != nil {
			return nil, t, err
		}
	}
	return out, t, nil
}

// isOperator reports whether name is an operator symbol rather than a
// function name.
func isOperator(name string) bool {
	return name != "" && strings.IndexFunc(name, func(r rune) bool {
		return r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
	}) < 0
}

// call resolves fn for args (unknown literals typed as TEXT when every
// argument is unknown), casts the arguments to the chosen overload's
// parameters and folds the call when it is constant.
func (b *Binder) call(name string, args []expr.Expr, loc int32) (expr.Expr, error) {
	allUnknown := len(args) > 0
	for _, a := range args {
		if !isUnknownLiteral(a) {
			allUnknown = false
		}
	}
	if allUnknown {
		for i, a := range args {
			var err error
			if args[i], err = b.coerce(a, types.Text, false, loc); err != nil {
				return nil, err
			}
		}
	}
	// Postgres: "if one argument of a binary operator is of unknown type,
	// assume it is the same type as the other argument" (an untyped literal
	// or NULL in 1 + '2', a + NULL).
	if len(args) == 2 && isOperator(name) {
		for i := range 2 {
			other := args[1-i].Type()
			if isUnknownLiteral(args[i]) && other.Kind != types.KindUnknown {
				if b.fns.HasExact(name, other.Kind, other.Kind) {
					c, err := b.coerce(args[i], other, false, loc)
					if err != nil {
						return nil, err
					}
					args[i] = c
				}
			}
		}
	}
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	fn, params, err := b.fns.Lookup(name, ts)
	if err != nil {
		return nil, b.atLoc(loc, err)
	}
	cargs := make([]expr.Expr, len(args))
	for i, a := range args {
		if cargs[i], err = b.coerce(a, params[i], false, loc); err != nil {
			return nil, err
		}
	}
	if fn.Check != nil {
		if err := fn.Check(cargs); err != nil {
			return nil, b.atLoc(loc, err)
		}
	}
	return b.fold(expr.NewCall(fn, cargs...), loc)
}
