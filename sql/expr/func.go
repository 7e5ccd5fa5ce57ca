package expr

import (
	"slices"
	"sort"
	"strings"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Func is one overload of a function or operator.
type Func struct {
	// Name is the function name in lower case, or the operator symbol.
	Name string
	// Params are the parameter kinds; modifiers do not take part in
	// overload resolution (NUMERIC(10,2) matches a NUMERIC parameter).
	Params []types.Kind
	// Variadic: the last parameter repeats zero or more times.
	Variadic bool
	// Infix marks an operator, rendered as "a + b" or "-a".
	Infix bool
	// Strict: NULL in any argument gives NULL without calling Eval
	// (Postgres's STRICT / RETURNS NULL ON NULL INPUT).
	Strict bool
	// Volatile: the result may differ between calls with equal arguments
	// (random(), now()); the planner must not fold or reorder it.
	Volatile bool
	// Result gives the result type for the argument types; nil means
	// ResultKind without modifiers.
	Result     func(args []types.Type) types.Type
	ResultKind types.Kind
	// Eval computes the result. For a strict function no argument is NULL.
	Eval func(ctx *Context, args []types.Datum) (types.Datum, error)
	// Check, when set, looks at a call's bound arguments when the call is
	// planned and returns the error that every evaluation would give (a
	// constant to_char template with an unsupported pattern), so that the
	// statement fails before it runs. Nil means nothing to check.
	Check func(args []Expr) error
}

// ResultType returns the result type for argument types args.
func (f *Func) ResultType(args []types.Type) types.Type {
	if f.Result != nil {
		return f.Result(args)
	}
	return typeOfKind(f.ResultKind)
}

// Signature renders "name(int8, int8)" for messages.
func (f *Func) Signature() string {
	parts := make([]string, len(f.Params))
	for i, p := range f.Params {
		parts[i] = strings.ToLower(typeOfKind(p).String())
	}
	if f.Variadic && len(parts) > 0 {
		parts[len(parts)-1] = "VARIADIC " + parts[len(parts)-1]
	}
	return f.Name + "(" + strings.Join(parts, ", ") + ")"
}

// typeOfKind returns the unmodified type of kind k (TIMESTAMP with its
// default precision 6).
func typeOfKind(k types.Kind) types.Type {
	switch k {
	case types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
		return types.Type{Kind: k, Precision: types.MaxTimestampPrecision}
	case types.KindChar:
		return types.Type{Kind: k, Length: 1}
	}
	return types.Type{Kind: k}
}

// Registry holds function and operator overloads by name.
type Registry struct {
	byName map[string][]*Func
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byName: map[string][]*Func{}} }

// Add registers overloads. A second overload with the same name and
// parameter kinds panics: the built-in tables are wrong.
func (r *Registry) Add(fns ...*Func) {
	for _, f := range fns {
		for _, g := range r.byName[f.Name] {
			if g.Variadic == f.Variadic && sameKinds(g.Params, f.Params) {
				panic("expr: duplicate overload " + f.Signature())
			}
		}
		r.byName[f.Name] = append(r.byName[f.Name], f)
	}
}

func sameKinds(a, b []types.Kind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// HasExact reports whether name has an overload with exactly these
// parameter kinds.
func (r *Registry) HasExact(name string, params ...types.Kind) bool {
	for _, f := range r.byName[name] {
		if !f.Variadic && sameKinds(f.Params, params) {
			return true
		}
	}
	return false
}

// Has reports whether any overload of name exists.
func (r *Registry) Has(name string) bool { return len(r.byName[name]) > 0 }

// Lookup picks the overload of name for argument types args and returns it
// with the parameter type each argument must be cast to (equal to the
// argument's type where no cast is needed). Resolution, as Postgres's in
// its common cases: the overload needing the fewest implicit casts wins,
// an exact match needing none; among equal counts, the one casting to
// more preferred types (TEXT for untyped literals, DOUBLE PRECISION among
// numbers), then the one whose casts climb the type ladder least; a tie is
// ambiguous (42725). No candidate:
// 42883 undefined_function, naming the argument types.
func (r *Registry) Lookup(name string, args []types.Type) (*Func, []types.Type, error) {
	cands := r.byName[name]
	if len(cands) == 0 {
		return nil, nil, sqlerr.New(sqlerr.UndefinedFunction, "function %s does not exist", describeCall(name, args))
	}
	type scored struct {
		f                             *Func
		casts, anys, preferred, climb int
	}
	var ok []scored
	for _, f := range cands {
		params := expandParams(f, len(args))
		if params == nil {
			continue
		}
		s := scored{f: f}
		fits := true
		for i, a := range args {
			c, fit := castCost(a.Kind, params[i])
			if !fit {
				fits = false
				break
			}
			if params[i] == AnyKind {
				s.anys++ // an exact parameter type beats "any"
			}
			if c > 0 {
				s.casts++
				s.climb += c
				if preferredKinds[params[i]] {
					s.preferred++
				}
			}
		}
		if fits {
			ok = append(ok, s)
		}
	}
	if len(ok) == 0 {
		what := "function"
		if cands[0].Infix {
			what = "operator"
		}
		if what == "operator" {
			e := sqlerr.Wrap(sqlerr.UndefinedFunction, &NoOperatorError{Name: name, Args: slices.Clone(args)})
			e.Hint = noOperatorHint
			return nil, nil, e
		}
		return nil, nil, sqlerr.New(sqlerr.UndefinedFunction, "%s does not exist: %s", what, describeCall(name, args))
	}
	sort.SliceStable(ok, func(i, j int) bool {
		if ok[i].casts != ok[j].casts {
			return ok[i].casts < ok[j].casts
		}
		if ok[i].anys != ok[j].anys {
			return ok[i].anys < ok[j].anys
		}
		if ok[i].preferred != ok[j].preferred {
			return ok[i].preferred > ok[j].preferred
		}
		return ok[i].climb < ok[j].climb
	})
	if len(ok) > 1 && ok[0].casts == ok[1].casts && ok[0].anys == ok[1].anys && ok[0].preferred == ok[1].preferred && ok[0].climb == ok[1].climb {
		// Tied candidates with "any" parameters lose to the one candidate
		// without any, as PostgreSQL's polymorphic operators lose to a
		// concrete one that takes the arguments' preferred type:
		// bpchar || bpchar is text || text, not text || anynonarray.
		var concrete []scored
		for _, c := range ok {
			if c.anys == 0 {
				concrete = append(concrete, c)
			}
		}
		if ok[0].anys == 0 || len(concrete) != 1 {
			return nil, nil, sqlerr.New(sqlerr.AmbiguousFunction, "function %s is not unique", describeCall(name, args))
		}
		ok[0] = concrete[0]
	}
	f := ok[0].f
	params := expandParams(f, len(args))
	out := make([]types.Type, len(args))
	for i, a := range args {
		switch {
		case a.Kind == params[i]:
			out[i] = a
		case params[i] == AnyKind && a.Kind != types.KindUnknown:
			out[i] = a
		case params[i] == AnyKind:
			out[i] = types.Text
		default:
			out[i] = typeOfKind(params[i])
		}
	}
	return f, out, nil
}

func expandParams(f *Func, n int) []types.Kind {
	if !f.Variadic {
		if len(f.Params) != n {
			return nil
		}
		if f.Params == nil {
			return []types.Kind{}
		}
		return f.Params
	}
	fixed := len(f.Params) - 1
	if n < fixed {
		return nil
	}
	out := append([]types.Kind(nil), f.Params[:fixed]...)
	for len(out) < n {
		out = append(out, f.Params[fixed])
	}
	return out
}

// NoOperatorError is the cause of the 42883 an operator call gets when no
// operator of its name takes its argument types (Postgres's "operator does
// not exist: text = integer"): Name is the operator (=, +, ...), Args the
// types of its one or two operands, left first.
type NoOperatorError struct {
	Name string
	Args []types.Type
}

// Error says it as Postgres does: "operator does not exist: text =
// integer", or "operator does not exist: - text" for a prefix operator.
func (e *NoOperatorError) Error() string {
	parts := make([]string, len(e.Args))
	for i, a := range e.Args {
		parts[i] = typeWord(a)
	}
	if len(parts) == 1 {
		return "operator does not exist: " + e.Name + " " + parts[0]
	}
	return "operator does not exist: " + strings.Join(parts, " "+e.Name+" ")
}

// noOperatorHint is Postgres's hint with an operator that does not exist.
const noOperatorHint = "No operator matches the given name and argument types. You might need to add explicit type casts."

// typeWord names a in messages as Postgres does: its kind in lower case,
// "character varying" and "character" for VARCHAR and CHAR, "unknown" for
// an untyped argument.
func typeWord(a types.Type) string {
	switch a.Kind {
	case types.KindUnknown:
		return "unknown"
	case types.KindVarchar:
		return "character varying"
	case types.KindChar:
		return "character"
	}
	return strings.ToLower(a.Kind.String())
}

func describeCall(name string, args []types.Type) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = typeWord(a)
	}
	return name + "(" + strings.Join(parts, ", ") + ")"
}

// AnyKind is a parameter kind that accepts an argument of any type as it
// is (Postgres's "any" pseudo-type, as concat and jsonb_build_object take);
// an untyped literal arrives as TEXT.
const AnyKind = types.Kind(255)

// preferredKinds are Postgres's preferred types of their categories
// (pg_type.typispreferred): when overloads need the same number of casts,
// the one casting to preferred types wins, so an untyped literal resolves
// to TEXT and round(5) to DOUBLE PRECISION, as in Postgres.
var preferredKinds = map[types.Kind]bool{
	types.KindBool: true, types.KindText: true, types.KindFloat64: true,
	types.KindTimestampTZ: true, types.KindInterval: true,
}

// numericLadder is the order of Postgres's implicit numeric casts.
var numericLadder = map[types.Kind]int{
	types.KindInt16: 1, types.KindInt32: 2, types.KindInt64: 3,
	types.KindNumeric: 4, types.KindFloat32: 5, types.KindFloat64: 6,
}

var timeLadder = map[types.Kind]int{
	types.KindDate: 1, types.KindTimestamp: 2, types.KindTimestampTZ: 3,
}

// castCost says whether a value of kind from may be implicitly cast to
// kind to, and how far up a ladder that climbs (0 = no cast).
func castCost(from, to types.Kind) (int, bool) {
	if from == to || (to == AnyKind && from != types.KindUnknown) {
		return 0, true
	}
	if from == types.KindUnknown {
		return 1, true // an untyped literal or NULL fits any parameter
	}
	if a, ok := numericLadder[from]; ok {
		if b, ok := numericLadder[to]; ok && b > a {
			return b - a, true
		}
		return 0, false
	}
	if a, ok := timeLadder[from]; ok {
		if b, ok := timeLadder[to]; ok && b > a {
			return b - a, true
		}
		return 0, false
	}
	switch from {
	case types.KindChar, types.KindVarchar:
		if to == types.KindText {
			return 1, true
		}
	case types.KindText:
		if to == types.KindVarchar {
			return 1, true
		}
	}
	return 0, false
}

// Builtins is the registry of Strata's built-in functions and operators.
var Builtins = func() *Registry {
	r := NewRegistry()
	registerArithmetic(r)
	registerComparison(r)
	registerString(r)
	registerLike(r)
	registerRegex(r)
	registerMath(r)
	registerDatetime(r)
	registerTimezone(r)
	registerJSON(r)
	registerFormat(r)
	registerToChar(r)
	registerSession(r)
	return r
}()

// ServerVersion is what version() reports after "PostgreSQL ": the
// Postgres version whose protocol and catalog Strata speaks (the wire
// server's server_version, pgwire.ServerVersion, says the same).
const ServerVersion = "15.0 (Strata)"

// registerSession adds the functions that describe the session, as
// psql, drivers and tools call them: version(), current_database(),
// current_schema(), current_setting(name [, missing_ok])
// (Context.Setting), and current_user, session_user, user (Context.User).
func registerSession(r *Registry) {
	text := func(name string, f func(*Context) string) {
		r.Add(&Func{Name: name, Params: []types.Kind{}, ResultKind: kText, Volatile: true, Eval: func(ctx *Context, _ []types.Datum) (types.Datum, error) {
			return types.NewText(f(ctx)), nil
		}})
	}
	text("version", func(*Context) string { return "PostgreSQL " + ServerVersion })
	text("current_database", func(c *Context) string {
		if c == nil {
			return ""
		}
		return c.Database
	})
	text("current_schema", func(*Context) string { return "public" })
	// current_setting(name [, missing_ok]) is SHOW name as a value:
	// 42704 for an unknown parameter, or NULL when missing_ok is true.
	setting := func(ctx *Context, args []types.Datum) (types.Datum, error) {
		name := strings.ToLower(args[0].Str())
		if ctx != nil && ctx.Setting != nil {
			if v, ok := ctx.Setting(name); ok {
				return types.NewText(v), nil
			}
		}
		if len(args) > 1 && !args[1].IsNull() && args[1].Bool() {
			return types.Null, nil
		}
		return types.Null, sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", args[0].Str())
	}
	r.Add(&Func{Name: "current_setting", Params: []types.Kind{kText}, ResultKind: kText, Strict: true, Volatile: true, Eval: setting})
	r.Add(&Func{Name: "current_setting", Params: []types.Kind{kText, kBool}, ResultKind: kText, Volatile: true, Eval: func(ctx *Context, args []types.Datum) (types.Datum, error) {
		if args[0].IsNull() {
			return types.Null, nil
		}
		return setting(ctx, args)
	}})
	text("current_user", func(c *Context) string {
		if c == nil {
			return ""
		}
		return c.User
	})
}
