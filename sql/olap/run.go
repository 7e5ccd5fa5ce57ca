package olap

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"

	duck "github.com/duckdb/duckdb-go/v2"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/pglex"
	"github.com/stratadb/strata/sql/sqlerr"
)

// runSelect prepares sqlText on conn, refuses anything but one SELECT or
// EXPLAIN, runs it and converts the rows.
func runSelect(ctx context.Context, conn *sql.Conn, sqlText string, maxRows int, args ...driver.NamedValue) (*Result, error) {
	var res *Result
	err := withStatement(ctx, conn, sqlText, func(ds *duck.Stmt) error {
		if n := ds.NumInput(); n != len(args) {
			return sqlerr.New(sqlerr.ProtocolViolation, "the statement has %d parameters, %d were given", n, len(args))
		}
		rows, err := ds.QueryContext(ctx, args)
		if err != nil {
			return err
		}
		defer rows.Close()
		res, err = readRows(ctx, rows, maxRows)
		return err
	})
	if err == nil {
		nameColumns(ctx, conn, sqlText, res.Columns, res.duckNames)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, sqlerr.Wrap(sqlerr.QueryCanceled, fmt.Errorf("canceling statement due to user request: %w", ctx.Err()))
		}
		return nil, pgColumnHint(ctx, conn, pgQueryNames(mapError(wholeRowError(ctx, conn, err, sqlText)), sqlText), sqlText)
	}
	return res, nil
}

// describeSelect prepares sqlText on conn and returns its columns and
// parameter types.
func describeSelect(ctx context.Context, conn *sql.Conn, sqlText string) ([]Column, []types.Type, error) {
	var cols []Column
	var params []types.Type
	var duckNames []string
	err := withStatement(ctx, conn, sqlText, func(ds *duck.Stmt) error {
		n, err := ds.ColumnCount()
		if err != nil {
			return err
		}
		for i := range n {
			name, err := ds.ColumnName(i)
			if err != nil {
				return err
			}
			if ct, err := ds.ColumnType(i); err != nil || ct == duck.TYPE_INVALID || ct == duck.TYPE_ANY {
				// Not known before the parameters are (SELECT $1).
				cols = append(cols, Column{Name: pgColumnName(name), Type: types.Unknown})
				duckNames = append(duckNames, name)
				continue
			}
			ti, err := ds.ColumnTypeInfo(i)
			if err != nil {
				return err
			}
			c, err := newResultColumn(duckTypeName(ti))
			if err != nil {
				return unreturnableColumn(name, duckTypeName(ti), err)
			}
			cols = append(cols, Column{Name: pgColumnName(name), Type: c.typ})
			duckNames = append(duckNames, name)
		}
		for i := 1; i <= ds.NumInput(); i++ {
			pt, err := ds.ParamType(i)
			if err != nil {
				return err
			}
			t, err := strataType(duckTypeNames[pt])
			if err != nil {
				t = types.Unknown
			}
			params = append(params, t)
		}
		return nil
	})
	if err != nil {
		return nil, nil, pgColumnHint(ctx, conn, pgQueryNames(mapError(wholeRowError(ctx, conn, err, sqlText)), sqlText), sqlText)
	}
	nameColumns(ctx, conn, sqlText, cols, duckNames)
	return cols, params, nil
}

// nameColumns gives cols PostgreSQL's names when some DuckDB name is an
// expression's text ([column-names]).
func nameColumns(ctx context.Context, conn *sql.Conn, sqlText string, cols []Column, duckNames []string) {
	for _, n := range duckNames {
		if pgColumnName(n) != n {
			if names := treeNames(ctx, conn, sqlText, len(cols)); names != nil {
				for i := range cols {
					cols[i].Name = names[i]
				}
			}
			return
		}
	}
}

// withStatement prepares sqlText on conn, refuses anything but one SELECT
// or EXPLAIN (0A000) and calls fn with the statement.
func withStatement(ctx context.Context, conn *sql.Conn, sqlText string, fn func(*duck.Stmt) error) error {
	toks := lex(sqlText)
	for i, t := range toks {
		if t.text == ";" && nextSolid(toks, i+1) < len(toks) {
			return sqlerr.New(sqlerr.FeatureNotSupported, "the OLAP engine runs one statement at a time")
		}
	}
	return conn.Raw(func(dc any) error {
		pc, ok := dc.(driver.ConnPrepareContext)
		if !ok {
			return fmt.Errorf("olap: DuckDB connection cannot prepare: %w", base.ErrInvalidArgument)
		}
		st, err := pc.PrepareContext(ctx, sqlText)
		if err != nil {
			return err
		}
		defer st.Close()
		ds, ok := st.(*duck.Stmt)
		if !ok {
			return fmt.Errorf("olap: unexpected statement type %T: %w", st, base.ErrInvalidArgument)
		}
		kind, err := ds.StatementType()
		if err != nil {
			return err
		}
		if kind != duck.STATEMENT_TYPE_SELECT && kind != duck.STATEMENT_TYPE_EXPLAIN {
			return sqlerr.New(sqlerr.FeatureNotSupported, "only SELECT runs on the OLAP engine")
		}
		return fn(ds)
	})
}

// readRows converts a DuckDB result to Strata rows.
func readRows(ctx context.Context, rows driver.Rows, maxRows int) (*Result, error) {
	names := rows.Columns()
	res := &Result{Columns: make([]Column, len(names)), duckNames: names}
	tn, ok := rows.(driver.RowsColumnTypeDatabaseTypeName)
	if !ok {
		return nil, fmt.Errorf("olap: result without column types: %w", base.ErrInvalidArgument)
	}
	conv := make([]resultColumn, len(names))
	for i, n := range names {
		c, err := newResultColumn(tn.ColumnTypeDatabaseTypeName(i))
		if err != nil {
			return nil, unreturnableColumn(n, tn.ColumnTypeDatabaseTypeName(i), err)
		}
		conv[i] = c
		res.Columns[i] = Column{Name: pgColumnName(n), Type: c.typ}
	}
	vals := make([]driver.Value, len(names))
	for n := 0; ; n++ {
		if n%1024 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err := rows.Next(vals); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		if maxRows > 0 && n >= maxRows {
			return nil, sqlerr.New(sqlerr.ProgramLimitExceeded, "the result has more than %d rows", maxRows)
		}
		row := make(types.Row, len(vals))
		for i, v := range vals {
			d, err := conv[i].datum(v)
			if err != nil {
				return nil, sqlerr.Wrap(sqlerr.FeatureNotSupported, fmt.Errorf("result column %q: %w", names[i], err))
			}
			row[i] = d
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

// unreturnableColumn is the 0A000 error for a result column of a type
// Strata has no equivalent for (a struct, a map), named as PostgreSQL
// would name it. Its cause is a *columnTypeError.
func unreturnableColumn(name, duckType string, cause error) error {
	e := sqlerr.Wrap(sqlerr.FeatureNotSupported, &columnTypeError{column: name, duckType: duckType, err: cause})
	e.Message = fmt.Sprintf("column %q has type %s, which Strata cannot return", pgColumnName(name), strings.ToLower(pgTypeWords(duckType)))
	e.Hint = "Cast the column to text or to a scalar type."
	return e
}

// columnTypeError says which result column has a type Strata cannot
// return (unreturnableColumn).
type columnTypeError struct {
	column, duckType string
	err              error
}

func (e *columnTypeError) Error() string { return e.err.Error() }

func (e *columnTypeError) Unwrap() error { return e.err }

// wholeRowError turns err, when it is about a result column of a STRUCT
// type whose select item is a bare reference to a relation of query
// (SELECT t FROM t), into the error for a whole-row reference:
// PostgreSQL returns the row as a composite value, which Strata has no
// type for, and DuckDB returns it as a STRUCT.
func wholeRowError(ctx context.Context, conn *sql.Conn, err error, query string) error {
	var ct *columnTypeError
	if !errors.As(err, &ct) || !strings.HasPrefix(ct.duckType, "STRUCT(") || !isRelationName(ctx, conn, query, ct.column) {
		return err
	}
	name := foldName(query, ct.column)
	ref := name
	if !plainLowerIdent(ref) {
		ref = quoteIdent(ref)
	}
	e := sqlerr.Wrap(sqlerr.FeatureNotSupported, ct)
	e.Message = fmt.Sprintf("a whole-row reference (%q) is not supported; list the columns or use %s.*", name, ref)
	return e
}

// plainLowerIdent reports whether name needs no quotes in SQL text: a
// lower-case identifier.
func plainLowerIdent(name string) bool {
	if name == "" || !pglex.IsIdentStart(name[0]) || name != strings.ToLower(name) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !pglex.IsIdentChar(name[i]) {
			return false
		}
	}
	return true
}
