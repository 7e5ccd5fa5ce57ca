package olap

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"time"

	duck "github.com/duckdb/duckdb-go/v2"

	"github.com/stratadb/strata/internal/duckdb"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/sqlerr"
)

// PostgreSQL functions that run Strata's own code in DuckDB
// ([pg-functions] in doc.go): to_char and format are Go scalar functions
// registered with DuckDB (strata_to_char, strata_format) behind macros of
// PostgreSQL's names, so that a SELECT, `strata verify` and a view give
// the same text for the same values.
//
// The value crosses into Go as the driver gives it (time.Time, an
// integer, a float, duckdb.Decimal), with its DuckDB type name (typeof),
// which tells a TIMESTAMPTZ from a TIMESTAMP and a DATE. The time zone is
// DuckDB's TimeZone setting, the query's (QueryOptions.Location).
//
// Tried and dropped: translating a constant template to strftime and
// string functions when the query text is rewritten. PostgreSQL pads
// names to nine characters, counts D from Sunday = 1, rounds numbers
// half away from zero and writes signs, blanks and # by rules that would
// each need their own SQL, non-constant templates could not be had at
// all, and a second implementation is a second place to be wrong.
//
// Also dropped: a to_char macro with one overload per argument type
// (TIMESTAMPTZ, TIMESTAMP, DATE passing epoch_us, any other type its
// text). DuckDB picks a macro overload before it binds aggregates and
// window functions, so to_char(min(t), ...) matched every overload and
// failed as ambiguous. The single macro leaves the type to the Go
// function, which sees it once DuckDB has bound the argument.

// pgFuncMacros put the Go functions behind PostgreSQL's names.
var pgFuncMacros = []string{
	`CREATE MACRO to_char(x, f) AS strata_to_char(x, strata_to_char_check(f, typeof(x)), typeof(x), current_setting('TimeZone'))`,
	formatMacro(),
}

// formatArgs is the most arguments after the format string that the
// format macro takes.
const formatArgs = 8

// formatMacro is the CREATE MACRO of format(f, a1, ..., an) for n from 0
// to formatArgs: strata_format(f, a1::VARCHAR, typeof(a1), ...).
func formatMacro() string {
	var b strings.Builder
	b.WriteString("CREATE MACRO format(f) AS strata_format(f)")
	for n := 1; n <= formatArgs; n++ {
		b.WriteString(", (f")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, ", a%d", i)
		}
		b.WriteString(") AS strata_format(f")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, ", a%d::VARCHAR, typeof(a%d)", i, i)
		}
		b.WriteString(")")
	}
	return b.String()
}

// registerPGFuncs registers the Go functions on db (functions are
// database-wide in DuckDB) and creates their macros.
func registerPGFuncs(db *sql.DB) error {
	conn, err := db.Conn(context.Background())
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := duck.RegisterScalarUDF(conn, "strata_to_char", toCharUDF{}); err != nil {
		return fmt.Errorf("strata_to_char: %w", err)
	}
	if err := duck.RegisterScalarUDF(conn, "strata_to_char_check", toCharCheckUDF{}); err != nil {
		return fmt.Errorf("strata_to_char_check: %w", err)
	}
	if err := duck.RegisterScalarUDF(conn, "strata_format", formatUDF{}); err != nil {
		return fmt.Errorf("strata_format: %w", err)
	}
	for _, q := range pgFuncMacros {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			return err
		}
	}
	return nil
}

// udfErrorRE finds the SQLSTATE and message of an error a Go function
// returned to DuckDB (taggedError) in the text DuckDB reports, after
// whatever the driver and DuckDB put before it.
var udfErrorRE = regexp.MustCompile(`SQLSTATE ([0-9A-Z]{5}): (.*)$`)

// taggedError is an error of a Go function as DuckDB receives it: its
// text carries the SQLSTATE, for errors DuckDB reports by their text (a
// failed bind), and it wraps the error, for those the driver hands back
// as they are (a failed row).
type taggedError struct{ err error }

func (e taggedError) Error() string {
	return "SQLSTATE " + sqlerr.Code(e.err) + ": " + e.err.Error()
}

func (e taggedError) Unwrap() error { return e.err }

// tagError carries err's SQLSTATE through DuckDB (taggedError).
func tagError(err error) error { return taggedError{err} }

// udfError returns the code and message of a DuckDB error message that a
// Go function raised (tagError), ok false for other messages.
func udfError(msg string) (code, text string, ok bool) {
	first, _, _ := strings.Cut(msg, "\n")
	m := udfErrorRE.FindStringSubmatch(strings.TrimSpace(first))
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

func varcharInfo() duck.TypeInfo {
	ti, err := duck.NewTypeInfo(duck.TYPE_VARCHAR)
	if err != nil {
		panic("olap: VARCHAR type info: " + err.Error())
	}
	return ti
}

// zones caches time zones by DuckDB's name for them.
var zones sync.Map // string -> *time.Location

func zoneOf(name string) (*time.Location, error) {
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "time zone %q not recognized", name)
	}
	zones.Store(name, loc)
	return loc, nil
}

// DuckDB's infinite timestamps and dates, as the driver gives them:
// ±math.MaxInt64 µs and ±math.MaxInt32 days since 1970.
const (
	duckTimestampInfinity = math.MaxInt64
	duckDateInfinity      = math.MaxInt32
)

// timeDatum is the value of type t (TIMESTAMPTZ, TIMESTAMP or DATE) that
// the driver gave as x, DuckDB's infinities as Strata's.
func timeDatum(t types.Type, x time.Time) types.Datum {
	if t.Kind == types.KindDate {
		days := x.Unix() / 86400
		if x.Unix() < 0 && x.Unix()%86400 != 0 {
			days--
		}
		switch {
		case days >= duckDateInfinity:
			return types.NewDate(types.DateInfinity)
		case days <= -duckDateInfinity:
			return types.NewDate(types.DateNegInfinity)
		}
		return types.NewDate(int32(days))
	}
	us := x.UnixMicro()
	switch {
	case us >= duckTimestampInfinity:
		us = types.TimestampInfinity
	case us <= -duckTimestampInfinity:
		us = types.TimestampNegInfinity
	}
	if t.Kind == types.KindTimestampTZ {
		return types.NewTimestampTZ(us)
	}
	return types.NewTimestamp(us)
}

// valueType is the Strata type of DuckDB type name (typeof's spelling).
func valueType(duckName string) (types.Type, error) {
	if duckName == "TIMESTAMP WITH TIME ZONE" {
		duckName = "TIMESTAMPTZ"
	}
	if strings.HasPrefix(duckName, "DECIMAL") {
		return types.Numeric, nil // read every digit; to_char rounds
	}
	t, err := duckdb.StrataType(duckName)
	if err != nil {
		return types.Type{}, sqlerr.New(sqlerr.UndefinedFunction, "function to_char(%s, text) does not exist", strings.ToLower(pgTypeWords(duckName)))
	}
	if t.Kind == types.KindNumeric {
		t = types.Numeric // read every digit; to_char rounds
	}
	return t, nil
}

// toCharUDF is strata_to_char(value, template, type name, zone), the value
// of any type with its typeof name: PostgreSQL's to_char (expr.ToChar). A constant template with a pattern
// Strata lacks fails when the query is bound, as in a view.
type toCharUDF struct{}

// Config implements duck.ScalarFunc.
func (toCharUDF) Config() duck.ScalarFuncConfig {
	v := varcharInfo()
	anyType, err := duck.NewTypeInfo(duck.TYPE_ANY)
	if err != nil {
		panic("olap: ANY type info: " + err.Error())
	}
	return duck.ScalarFuncConfig{InputTypeInfos: []duck.TypeInfo{anyType, v, v, v}, ResultTypeInfo: v}
}

// Executor implements duck.ScalarFunc.
func (toCharUDF) Executor() duck.ScalarFuncExecutor {
	return duck.ScalarFuncExecutor{
		RowExecutor: func(vals []driver.Value) (any, error) {
			s, ok, err := toChar(vals)
			if err != nil {
				return nil, tagError(err)
			}
			if !ok {
				return nil, nil
			}
			return s, nil
		},
	}
}

// toCharCheckUDF is strata_to_char_check(template, type name), the
// template: a constant template with a pattern Strata lacks for values of
// the type fails when DuckDB binds the query, as it fails when a view is
// planned. It is a function of its own because the driver folds every
// constant argument of a function with a bind step, and cannot fold a
// DECIMAL (to_char(1.5, ...)); a constant call is folded once, so only a
// template from a column costs a call per row.
type toCharCheckUDF struct{}

// Config implements duck.ScalarFunc.
func (toCharCheckUDF) Config() duck.ScalarFuncConfig {
	v := varcharInfo()
	return duck.ScalarFuncConfig{InputTypeInfos: []duck.TypeInfo{v, v}, ResultTypeInfo: v}
}

// Executor implements duck.ScalarFunc.
func (toCharCheckUDF) Executor() duck.ScalarFuncExecutor {
	return duck.ScalarFuncExecutor{
		ScalarBinder: func(ctx context.Context, args []duck.ScalarUDFArg) (context.Context, error) {
			if len(args) != 2 || !args[0].Foldable || !args[1].Foldable {
				return ctx, nil
			}
			tmpl, ok1 := args[0].Value.(string)
			name, ok2 := args[1].Value.(string)
			if !ok1 || !ok2 || name == "NULL" || name == `"NULL"` {
				return ctx, nil
			}
			t, err := valueType(name)
			if err == nil {
				err = expr.CheckToChar(toCharKind(t.Kind), tmpl)
			}
			if err != nil {
				return ctx, tagError(err)
			}
			return ctx, nil
		},
		RowExecutor: func(vals []driver.Value) (any, error) { return vals[0], nil },
	}
}

// toCharKind is the kind whose templates values of kind k take.
func toCharKind(k types.Kind) types.Kind {
	switch k {
	case types.KindInt16:
		return types.KindFloat64
	case types.KindDate:
		return types.KindTimestampTZ
	}
	return k
}

func toChar(vals []driver.Value) (string, bool, error) {
	tmpl, _ := vals[1].(string)
	name, _ := vals[2].(string)
	zone, _ := vals[3].(string)
	t, err := valueType(name)
	if err != nil {
		return "", false, err
	}
	loc, err := zoneOf(zone)
	if err != nil {
		return "", false, err
	}
	v, err := argDatum(vals[0], t)
	if err != nil {
		return "", false, err
	}
	return expr.ToChar(&expr.Context{Loc: loc}, v, tmpl)
}

// argDatum is the value x the driver gave for an argument of type t.
func argDatum(x any, t types.Type) (types.Datum, error) {
	if tm, ok := x.(time.Time); ok {
		switch t.Kind {
		case types.KindTimestamp, types.KindTimestampTZ, types.KindDate:
			return timeDatum(t, tm), nil
		}
	}
	v, err := duckdb.ToDatum(x, t)
	if err != nil {
		return types.Null, sqlerr.New(sqlerr.InternalError, "strata_to_char: %v", err)
	}
	return v, nil
}

// formatUDF is strata_format(f, a1 text, typeof(a1), ...): PostgreSQL's
// format() (expr.Format) over the arguments' text. Integer arguments
// (a width taken with *) and booleans keep their type; other values are
// their DuckDB text, as %s shows them.
type formatUDF struct{}

// Config implements duck.ScalarFunc.
func (formatUDF) Config() duck.ScalarFuncConfig {
	v := varcharInfo()
	return duck.ScalarFuncConfig{InputTypeInfos: []duck.TypeInfo{v}, VariadicTypeInfo: v, ResultTypeInfo: v, SpecialNullHandling: true}
}

// Executor implements duck.ScalarFunc.
func (formatUDF) Executor() duck.ScalarFuncExecutor {
	return duck.ScalarFuncExecutor{RowExecutor: func(vals []driver.Value) (any, error) {
		f, ok := vals[0].(string)
		if !ok {
			return nil, nil
		}
		args := make([]types.Datum, 0, len(vals)/2)
		for i := 1; i+1 < len(vals); i += 2 {
			text, ok := vals[i].(string)
			if !ok {
				args = append(args, types.Null)
				continue
			}
			d := types.NewText(text)
			switch name, _ := vals[i+1].(string); name {
			case "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER", "BOOLEAN":
				t, err := duckdb.StrataType(name)
				if err == nil {
					if v, err := types.ParseText(t, text, nil); err == nil {
						d = v
					}
				}
			}
			args = append(args, d)
		}
		s, err := expr.Format(&expr.Context{}, f, args)
		if err != nil {
			return nil, tagError(err)
		}
		return s, nil
	}}
}
