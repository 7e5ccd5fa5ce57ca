package expr

import (
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Cast converts its argument to type To with Postgres's cast semantics
// (types.Cast). Explicit is true for CAST(x AS t) and x::t, which truncate
// strings silently; implicit and assignment casts inserted by the binder
// error instead.
type Cast struct {
	Arg      Expr
	To       types.Type
	Explicit bool
}

// Type returns the target type.
func (c *Cast) Type() types.Type { return c.To }

// Eval casts the argument's value; NULL stays NULL.
func (c *Cast) Eval(ctx *Context, row types.Row) (types.Datum, error) {
	v, err := c.Arg.Eval(ctx, row)
	if err != nil || v.IsNull() {
		return v, err
	}
	out, err := types.Cast(v, c.To, types.CastContext{Loc: ctx.Location(), Explicit: c.Explicit})
	if err != nil {
		return types.Null, sqlerr.From(err)
	}
	return out, nil
}

func (c *Cast) String() string {
	return "CAST(" + c.Arg.String() + " AS " + c.To.String() + ")"
}
