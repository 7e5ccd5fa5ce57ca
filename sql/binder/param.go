package binder

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Postgres's SQLSTATEs for parameters (parse_param.c).
const (
	undefinedParameter = "42P02" // there is no parameter $n
	ambiguousParameter = "42P08" // inconsistent types deduced for parameter $n
	// could not determine data type of parameter $n (postgres.c,
	// exec_parse_message)
	indeterminateParameter = sqlerr.IndeterminateDatatype
)

// bindParam binds $n to a plan.Param of the type declared or already
// inferred for it; one still unknown behaves like an unknown literal until
// a context coerces it (inferParam).
func (b *Binder) bindParam(pr *pg_query.ParamRef) (expr.Expr, error) {
	e, err := b.bindParamOccurrence(pr)
	if err == nil {
		b.contextual[pr.GetNumber()-1] = true
	}
	return e, err
}

// bindParamOccurrence binds $n as bindParam does, but as an occurrence no
// context types: the bare operand of IS [NOT] NULL, which takes a value
// of any type ([param-typed-by-context]).
func (b *Binder) bindParamOccurrence(pr *pg_query.ParamRef) (expr.Expr, error) {
	n := int(pr.GetNumber())
	if b.params == nil || n < 1 {
		return nil, b.errAt(pr.GetLocation(), undefinedParameter, "there is no parameter $%d", n)
	}
	if n > 65535 {
		return nil, b.errAt(pr.GetLocation(), sqlerr.ProgramLimitExceeded, "parameter $%d is beyond the 65535 a statement may have", n)
	}
	for len(b.params.Types) < n {
		b.params.Types = append(b.params.Types, types.Unknown)
	}
	for len(b.contextual) < n {
		b.contextual = append(b.contextual, false)
	}
	return &plan.Param{Index: n - 1, Typ: b.params.Types[n-1], Params: b.params}, nil
}

// inferParam gives an untyped parameter occurrence the type its context
// asks for. The first context to type a parameter decides its type; a
// later occurrence of the same parameter in a context of another type
// kind is the error 42P08, as in Postgres (the same kind with other
// modifiers gets a cast).
func (b *Binder) inferParam(p *plan.Param, to types.Type, explicit bool, loc int32) (expr.Expr, error) {
	if to.Kind == types.KindUnknown {
		return p, nil
	}
	cur := b.params.Types[p.Index]
	if cur.Kind == types.KindUnknown {
		b.params.Types[p.Index] = to
		return &plan.Param{Index: p.Index, Typ: to, Params: b.params}, nil
	}
	if cur.Kind != to.Kind {
		return nil, b.errAt(loc, ambiguousParameter, "inconsistent types deduced for parameter $%d: %s versus %s", p.Index+1, typeName(cur), typeName(to))
	}
	return b.coerce(&plan.Param{Index: p.Index, Typ: cur, Params: b.params}, to, explicit, loc)
}
