package expr

import (
	"strings"
	"unicode/utf8"

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
	if out, ok := castStringFast(v, c.To); ok {
		return out, nil
	}
	out, err := types.Cast(v, c.To, types.CastContext{Loc: ctx.Location(), Explicit: c.Explicit})
	if err != nil {
		return types.Null, sqlerr.From(err)
	}
	return out, nil
}

// castStringFast is the cast of a VARCHAR or TEXT value to TEXT or to a
// VARCHAR without a length, which the binder inserts wherever a VARCHAR
// column meets a TEXT function (Nexmark's url and channel): the result is
// the same string under the target kind. It gives what types.Cast gives
// (the string's text is itself; the target's input checks the encoding
// and cuts nothing) without formatting and copying the string; ok is
// false for every other cast and for a string that fails the encoding
// check, which types.Cast then reports. CHAR is left out, as its cast to
// text drops trailing spaces.
func castStringFast(v types.Datum, to types.Type) (types.Datum, bool) {
	if k := v.Kind(); k != types.KindVarchar && k != types.KindText {
		return types.Null, false
	}
	if to.Kind != types.KindText && (to.Kind != types.KindVarchar || to.Length != 0) {
		return types.Null, false
	}
	s := v.Str()
	if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
		return types.Null, false
	}
	if to.Kind == types.KindText {
		return types.NewText(s), true
	}
	return types.NewVarchar(s), true
}

func (c *Cast) String() string {
	return "CAST(" + c.Arg.String() + " AS " + c.To.String() + ")"
}
