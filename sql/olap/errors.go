package olap

import (
	"context"
	"errors"
	"fmt"
	"strings"

	duck "github.com/duckdb/duckdb-go/v2"

	"github.com/stratadb/strata/sql/sqlerr"
)

// syntaxOrAccessRule is SQLSTATE class 42's general code, for DuckDB
// binder errors without a closer PostgreSQL match.
const syntaxOrAccessRule = "42000"

// mapError turns a DuckDB error into a *sqlerr.Error with a PostgreSQL
// SQLSTATE ([error-map] in doc.go); the message is DuckDB's, without its
// "<Kind> Error: " prefix. Errors that already are *sqlerr.Error pass
// through.
func mapError(err error) error {
	if err == nil {
		return nil
	}
	var se *sqlerr.Error
	if errors.As(err, &se) {
		return se
	}
	var de *duck.Error
	if !errors.As(err, &de) {
		return sqlerr.From(err)
	}
	msg := de.Msg
	if msg == "" { // the driver's own errors (binding, types) carry no Msg
		msg = err.Error()
	}
	if _, rest, ok := strings.Cut(msg, " Error: "); ok && !strings.Contains(msg[:len(msg)-len(rest)], "\n") {
		msg = rest
	}
	if code, text, ok := udfError(msg); ok {
		// Raised by Strata's own function inside DuckDB (pgfuncs.go).
		out := sqlerr.Wrap(code, err)
		out.Message = text
		return out
	}
	code := sqlerr.InternalError
	switch de.Type {
	case duck.ErrorTypeParser, duck.ErrorTypeSyntax:
		code = sqlerr.SyntaxError
	case duck.ErrorTypeDivideByZero:
		code = sqlerr.DivisionByZero
	case duck.ErrorTypeInterrupt:
		code = sqlerr.QueryCanceled
	case duck.ErrorTypeOutOfRange:
		code = sqlerr.NumericValueOutOfRange
	case duck.ErrorTypeConversion:
		code = sqlerr.InvalidTextRepresentation
	case duck.ErrorTypeOutOfMemory:
		code = "53200" // out_of_memory
	case duck.ErrorTypeNotImplemented:
		code = sqlerr.FeatureNotSupported
	case duck.ErrorTypePermission:
		code = sqlerr.InsufficientPrivilege
	case duck.ErrorTypeCatalog:
		switch {
		case strings.Contains(msg, "Table Function with name"), strings.Contains(msg, "Function with name"):
			code = sqlerr.UndefinedFunction
		case strings.Contains(msg, "Table with name"):
			code = sqlerr.UndefinedTable
		case strings.Contains(msg, "Type with name"):
			code = sqlerr.UndefinedFunction
		case strings.Contains(msg, "Schema with name"):
			code = sqlerr.InvalidSchemaName
		default:
			code = sqlerr.UndefinedObject
		}
	case duck.ErrorTypeBinder:
		switch {
		case strings.Contains(msg, "Referenced column") || strings.Contains(msg, "not found in FROM clause") || strings.Contains(msg, "does not have a column named"):
			code = sqlerr.UndefinedColumn
		case strings.Contains(msg, "Referenced table") || strings.Contains(msg, "Table \"") && strings.Contains(msg, "not found"):
			code = sqlerr.UndefinedTable
		case strings.Contains(msg, "No function matches"):
			code = sqlerr.UndefinedFunction
		case strings.Contains(msg, "must appear in the GROUP BY clause"):
			code = sqlerr.GroupingError
		case strings.Contains(msg, "Ambiguous reference"):
			code = sqlerr.AmbiguousColumn
		default:
			code = syntaxOrAccessRule
		}
	case duck.ErrorTypeInvalidInput:
		code = sqlerr.InvalidParameterValue
		if strings.HasPrefix(msg, "division by zero") {
			code = sqlerr.DivisionByZero // raised by the division macros
		}
	}
	if i := strings.Index(msg, "\n\nLINE "); i >= 0 {
		msg = msg[:i] // DuckDB's echo of the statement with a caret
	}
	pm, _ := translate(strings.TrimSpace(msg), code)
	out := sqlerr.Wrap(pm.code, err)
	out.Message, out.Hint, out.Detail = pm.message, pm.hint, pm.detail
	return out
}

// BeyondEngine reports whether err is DuckDB refusing values it cannot
// hold: NUMERIC NaN or infinities, more than 38 digits (0A000 from
// loading), or a sum overflowing its 128-bit integers. The message the
// client sees is PostgreSQL's; DuckDB's own is read from the cause.
func BeyondEngine(err error) bool {
	if err == nil {
		return false
	}
	if sqlerr.Code(err) == sqlerr.FeatureNotSupported && strings.Contains(err.Error(), "OLAP engine") {
		return true
	}
	var de *duck.Error
	if !errors.As(err, &de) {
		return false
	}
	return strings.Contains(de.Msg, "Overflow in HUGEINT") || strings.Contains(de.Msg, "HUGEINT is out of range")
}

// canceled turns any error of a statement whose context ended into 57014
// query_canceled, whichever step it stopped in (loading, binding names,
// running), so that a cancelled query always reports the same code.
func canceled(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	if sqlerr.Code(err) == sqlerr.QueryCanceled {
		return err
	}
	return sqlerr.Wrap(sqlerr.QueryCanceled, fmt.Errorf("canceling statement due to user request: %w", ctx.Err()))
}
