package expr

import (
	"fmt"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // zone tests do not depend on the machine's database

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Typed literal markers for function test tables. A plain Go value maps
// to the SQL type Postgres would give its literal: int is INTEGER, int64
// BIGINT, float64 DOUBLE PRECISION, string TEXT, bool BOOLEAN, nil an
// untyped NULL.
type (
	numS   string     // NUMERIC
	tsS    string     // TIMESTAMP 'YYYY-MM-DD HH:MM:SS[.ffffff]'
	tstzS  string     // TIMESTAMPTZ, read in the case's time zone
	dateS  string     // DATE 'YYYY-MM-DD'
	timeS  string     // TIME 'HH:MM:SS[.ffffff]'
	jsonS  string     // JSONB
	nullOf types.Kind // a NULL of a given type
)

// fcase is one function call and what Postgres 15 prints for it.
type fcase struct {
	fn   string
	args []any
	want string // FormatText in the context's time zone; "NULL" for NULL
	code string // SQLSTATE of the expected error, if any
}

func toDatum(t *testing.T, ctx *Context, a any) (types.Datum, types.Type) {
	t.Helper()
	parseTime := func(layout, s string, loc *time.Location) time.Time {
		v, err := time.ParseInLocation(layout, s, loc)
		if err != nil {
			t.Fatalf("bad test literal %q: %v", s, err)
		}
		return v
	}
	switch v := a.(type) {
	case nil:
		return types.Null, types.Unknown
	case nullOf:
		return types.Null, typeOfKind(types.Kind(v))
	case int:
		return types.NewInt32(int32(v)), types.Int32
	case int16:
		return types.NewInt16(v), types.Int16
	case int64:
		return types.NewInt64(v), types.Int64
	case float64:
		return types.NewFloat64(v), types.Float64
	case float32:
		return types.NewFloat32(v), types.Float32
	case string:
		return types.NewText(v), types.Text
	case bool:
		return types.NewBool(v), types.Bool
	case numS:
		return num(t, string(v)), types.Numeric
	case tsS:
		return types.NewTimestamp(parseTime("2006-01-02 15:04:05", string(v), time.UTC).UnixMicro()), types.Timestamp
	case tstzS:
		return types.NewTimestampTZ(parseTime("2006-01-02 15:04:05", string(v), ctx.Location()).UnixMicro()), types.TimestampTZ
	case dateS:
		return types.NewDate(int32(parseTime("2006-01-02", string(v), time.UTC).Unix() / 86400)), types.Date
	case timeS:
		x := parseTime("15:04:05", string(v), time.UTC)
		return types.NewTime(int64(x.Hour())*3600e6 + int64(x.Minute())*60e6 + int64(x.Second())*1e6 + int64(x.Nanosecond()/1000)), types.Time
	case jsonS:
		d, err := types.NewJSONB(string(v))
		if err != nil {
			t.Fatalf("bad JSON literal %q: %v", v, err)
		}
		return d, types.JSONB
	case types.IntervalValue:
		return types.NewInterval(v), types.Interval
	case types.Datum:
		return v, typeOfKind(v.Kind())
	}
	t.Fatalf("unsupported test literal %T", a)
	return types.Null, types.Unknown
}

// evalCase resolves tc.fn for its argument types as the binder would
// (failing the test if an argument would need a cast, so that tables
// state types exactly), evaluates it and returns the printed result.
// Functions whose Postgres parameter is "any" (concat, jsonb_build_*)
// are called directly with mixed arguments.
func evalCase(t *testing.T, ctx *Context, tc fcase) (string, error) {
	t.Helper()
	ts := make([]types.Type, len(tc.args))
	cs := make([]Expr, len(tc.args))
	for i, a := range tc.args {
		d, typ := toDatum(t, ctx, a)
		ts[i] = typ
		cs[i] = &Const{Value: d, Typ: typ}
	}
	fn, params, err := Builtins.Lookup(tc.fn, ts)
	if err != nil {
		fn = anyOverload(tc.fn)
		if fn == nil {
			t.Fatalf("Lookup %s%v: %v", tc.fn, ts, err)
		}
	} else {
		for i := range params {
			if params[i].Kind != ts[i].Kind && ts[i].Kind != types.KindUnknown {
				t.Fatalf("Lookup %s%v casts argument %d to %s; state the type exactly", tc.fn, ts, i, params[i])
			}
		}
	}
	call := NewCall(fn, cs...)
	got, err := call.Eval(ctx, nil)
	if err != nil {
		return "", err
	}
	if got.IsNull() {
		return "NULL", nil
	}
	if got.Kind() != call.Type().Kind {
		t.Errorf("%s returned a %s, declared %s", tc.fn, got.Kind(), call.Type())
	}
	return types.FormatText(got, ctx.Location()), nil
}

// anyOverload returns the variadic overload of name that stands for a
// Postgres "any" parameter.
func anyOverload(name string) *Func {
	for _, f := range Builtins.byName[name] {
		if f.Variadic {
			return f
		}
	}
	return nil
}

func runCases(t *testing.T, ctx *Context, cases []fcase) {
	t.Helper()
	for _, tc := range cases {
		got, err := evalCase(t, ctx, tc)
		name := tc.fn + describeArgs(tc.args)
		if tc.code != "" {
			if err == nil || sqlerr.Code(err) != tc.code {
				t.Errorf("%s: got %q, %v; want error %s", name, got, err, tc.code)
			} else if tc.want != "" && err.Error() != tc.want {
				t.Errorf("%s: error %q, want %q", name, err.Error(), tc.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: unexpected error %v (%s)", name, err, sqlerr.Code(err))
			continue
		}
		if got != tc.want {
			t.Errorf("%s = %q, want %q", name, got, tc.want)
		}
	}
}

func describeArgs(args []any) string {
	parts := make([]string, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			parts[i] = "'" + v + "'"
		case nil:
			parts[i] = "NULL"
		default:
			parts[i] = fmt.Sprintf("%v", v)
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
