package plan

import (
	"fmt"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Params holds the parameters $1, $2, ... of a prepared statement (the
// extended query protocol's Parse, Bind and Execute): their types, fixed
// when the statement is bound (given by the client or inferred by the
// binder), and their values, supplied before each execution. Every Param
// of a plan points to its statement's Params.
//
// Lifecycle: the binder fills Types; the caller calls Set with one
// execution's values (a Bind message), runs the plan, and may call Set
// again for the next execution. Set must not run while an execution of
// the plan is evaluating expressions: a statement that several executions
// use at once needs one binding per execution.
type Params struct {
	// Types has one entry per parameter, $1 first.
	Types  []types.Type
	values []types.Datum
	set    bool
}

// Set supplies the values of the next execution, $1 first: exactly one per
// parameter, each NULL or a datum of its parameter's type kind (a Bind
// message's text-format value s is types.ParseText(Types[i], s, loc)). A
// wrong count is a protocol violation (08P01), as in Postgres's Bind; a
// value of another kind is 22023.
func (p *Params) Set(values []types.Datum) error {
	if len(values) != len(p.Types) {
		return sqlerr.New(sqlerr.ProtocolViolation, "bind message supplies %d parameters, but the statement requires %d", len(values), len(p.Types))
	}
	for i, v := range values {
		t := p.Types[i]
		if !v.IsNull() && t.Kind != types.KindUnknown && v.Kind() != t.Kind {
			return sqlerr.New(sqlerr.InvalidParameterValue, "parameter $%d is of type %s, got a value of type %s", i+1, t, types.Type{Kind: v.Kind()})
		}
	}
	p.values = append(p.values[:0], values...)
	p.set = true
	return nil
}

// Param is a reference to parameter $(Index+1) of a prepared statement:
// an expr.Expr leaf whose value is the one Params.Set supplied for the
// current execution. Typ is the type the binder inferred for this
// occurrence (types.Unknown only where no context needs one, as in
// $1 IS NULL; the statement's parameter is then TEXT). Like a column
// reference it is not constant, so the binder never folds it.
type Param struct {
	Index  int
	Typ    types.Type
	Params *Params
}

// Type returns the parameter's type.
func (p *Param) Type() types.Type { return p.Typ }

// Eval returns the parameter's value for the current execution; before
// Params.Set it fails with 08P01.
func (p *Param) Eval(*expr.Context, types.Row) (types.Datum, error) {
	if p.Params == nil || !p.Params.set || p.Index >= len(p.Params.values) {
		return types.Null, sqlerr.New(sqlerr.ProtocolViolation, "no value supplied for parameter $%d", p.Index+1)
	}
	return p.Params.values[p.Index], nil
}

func (p *Param) String() string { return fmt.Sprintf("$%d", p.Index+1) }
