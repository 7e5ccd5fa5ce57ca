package olap

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"github.com/cockroachdb/apd/v3"
	"strconv"
	"strings"
	"sync"
	"time"

	duck "github.com/duckdb/duckdb-go/v2"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/table"
)

// dataSchema is the DuckDB schema that holds loaded tables.
const dataSchema = "strata_data"

// Input is one table a query reads, and the epoch it reads it at.
type Input struct {
	// Name is the name the SQL uses, as ReferencedTables returns it: "t1",
	// or "dev.t1" to make both dev.t1 and (when no other input is called
	// t1) t1 resolve to it. Each part is exact, already folded: "MixedCase"
	// is the table the SQL writes "MixedCase", mixedcase the one it writes
	// MixedCase or mixedcase.
	Name string
	// Table is the opened table.
	Table *table.Table
	// Epoch is the epoch to read at; it must not be above the table's
	// committed epoch.
	Epoch base.Epoch
	// Multiset says the table stores a multiset view: its last column is
	// each row's multiplicity, and the SQL sees the other columns, each
	// row as many times as its multiplicity says ([multiset-inputs]).
	Multiset bool
	// Quotients, for the stored view of Verify only, says which of the
	// view's columns hold quotients (a division or avg in the expression
	// that computes them), compared as [verify-quotient] says; nil or
	// false: compared exactly.
	Quotients []bool
}

// Options configure an Engine. Zero values take the defaults.
type Options struct {
	// CacheTables bounds the loaded tables kept between queries (default 64).
	CacheTables int
	// CacheRows bounds the rows they hold together (default 20M).
	CacheRows int64
	// Threads is DuckDB's worker thread count (default: DuckDB's, the
	// number of cores).
	Threads int
	// MemoryLimit is DuckDB's memory limit, e.g. "4GB" (default: DuckDB's,
	// 80% of RAM).
	MemoryLimit string
	// ParquetDirs are the directories of local warehouses whose append
	// tables DuckDB reads straight from their Parquet data files
	// ([append-parquet]); DuckDB reads no other file. Append tables
	// elsewhere are loaded row by row.
	ParquetDirs []string
}

// QueryOptions are per query.
type QueryOptions struct {
	// Location is the session time zone: DuckDB's TimeZone setting for the
	// query (TIMESTAMPTZ arithmetic and casts). Nil means UTC.
	Location *time.Location
	// MaxRows bounds the rows returned; a query producing more fails with
	// 54000 program_limit_exceeded. 0 means no bound.
	MaxRows int
	// Params are the values of $1, $2, ... DuckDB casts each to the type
	// the statement expects, so text values (a client's untyped
	// parameters) work where the text is valid input for that type.
	Params []types.Datum
}

// Column is one result column: its name and Strata type.
type Column struct {
	Name string
	Type types.Type
}

// Result is a query's outcome.
type Result struct {
	Columns []Column
	Rows    []types.Row

	duckNames []string // DuckDB's names of the columns
}

// Engine runs SELECTs over Strata tables in one embedded in-memory DuckDB
// database. It is safe for concurrent use by many sessions.
type Engine struct {
	connector *duck.Connector
	db        *sql.DB
	cache     *cache
	// views names the cache entries that are DuckDB views over Parquet
	// files rather than loaded tables ([append-parquet]).
	views    sync.Map
	catalogs *catalogCache
	// parquetDirs are Options.ParquetDirs.
	parquetDirs []string

	mu struct {
		sync.Mutex
		conns map[any]*connState // idle connections' bound names; guarded by mu
	}
}

// Open starts an engine.
func Open(opts Options) (*Engine, error) {
	if opts.CacheTables <= 0 {
		opts.CacheTables = 64
	}
	if opts.CacheRows <= 0 {
		opts.CacheRows = 20 << 20
	}
	dsn := "?autoinstall_known_extensions=false&autoload_known_extensions=false&enable_external_access=false"
	if opts.Threads > 0 {
		dsn += fmt.Sprintf("&threads=%d", opts.Threads)
	}
	if opts.MemoryLimit != "" {
		dsn += "&memory_limit=" + opts.MemoryLimit
	}
	// External access is turned off once the directories DuckDB may read
	// are set, below: it cannot be turned on again, nor the directories
	// changed, afterwards.
	dsn = strings.Replace(dsn, "&enable_external_access=false", "", 1)
	connector, err := duck.NewConnector(dsn, func(ex driver.ExecerContext) error {
		// PostgreSQL's semantics where DuckDB's differ ([pg-settings]).
		for _, s := range []string{
			"SET integer_division = true",
			"SET default_null_order = 'nulls_last_on_asc_first_on_desc'",
		} {
			if _, err := ex.ExecContext(context.Background(), s, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("olap: open DuckDB: %w", err)
	}
	db := sql.OpenDB(connector)
	if err := lockDown(db, opts.ParquetDirs); err != nil {
		db.Close()
		connector.Close()
		return nil, fmt.Errorf("olap: open DuckDB: %w", err)
	}
	e := &Engine{connector: connector, db: db, parquetDirs: opts.ParquetDirs}
	e.mu.conns = map[any]*connState{}
	db.SetMaxIdleConns(16) // keep connections, and the names bound on them, between queries
	for _, q := range append(append([]string{"CREATE SCHEMA " + dataSchema, avgMacro()}, divisionMacros...), compatMacros...) {
		if _, err := db.Exec(q); err != nil {
			db.Close()
			return nil, fmt.Errorf("olap: open DuckDB: %w", err)
		}
	}
	if err := registerPGFuncs(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("olap: open DuckDB: %w", err)
	}
	e.cache = newCache(opts.CacheTables, opts.CacheRows, e.dropTable)
	e.catalogs = newCatalogCache(8, e.dropSchema)
	return e, nil
}

// Close releases the database. Queries running on it fail.
func (e *Engine) Close() error {
	err := e.db.Close()
	if cerr := e.connector.Close(); err == nil {
		err = cerr
	}
	return err
}

// lockDown lets DuckDB read files under dirs and nothing else: no other
// file, no network, no extension.
func lockDown(db *sql.DB, dirs []string) error {
	if len(dirs) > 0 {
		quoted := make([]string, len(dirs))
		for i, d := range dirs {
			quoted[i] = quoteString(strings.TrimSuffix(d, "/") + "/")
		}
		if _, err := db.Exec("SET GLOBAL allowed_directories = [" + strings.Join(quoted, ", ") + "]"); err != nil {
			return err
		}
	}
	if _, err := db.Exec("SET GLOBAL enable_external_access = false"); err != nil {
		return err
	}
	var on bool
	if err := db.QueryRow("SELECT current_setting('enable_external_access')").Scan(&on); err != nil {
		return err
	}
	if on {
		return errors.New("external access is still enabled")
	}
	return nil
}

// CacheStats returns the number of loaded tables the engine keeps and the
// rows they hold.
func (e *Engine) CacheStats() (tables int, rows int64) { return e.cache.stats() }

func (e *Engine) dropTable(name string) {
	// A failed drop leaks memory but no wrong answer: the name is never
	// handed out again.
	kind := "TABLE"
	if _, ok := e.views.LoadAndDelete(name); ok {
		kind = "VIEW"
	}
	_, _ = e.db.Exec("DROP " + kind + " IF EXISTS " + dataSchema + "." + quoteIdent(name))
}

func (e *Engine) dropSchema(name string) {
	_, _ = e.db.Exec("DROP SCHEMA IF EXISTS " + quoteIdent(name) + " CASCADE")
}

// Query runs sqlText, one SELECT (or EXPLAIN) in PostgreSQL syntax as
// DuckDB accepts it, over inputs, each read at its epoch with merge on
// read. Errors are *sqlerr.Error values (see mapError).
func (e *Engine) Query(ctx context.Context, inputs []Input, sqlText string, opts QueryOptions) (*Result, error) {
	return queryWith(ctx, sqlText, opts, func(sqlText string, fn connFunc) error {
		return e.withInputs(ctx, inputs, sqlText, opts.Location, fn)
	})
}

// connFunc is what withInputs and withRelations call with the connection
// and the rewritten SQL.
type connFunc = func(conn *sql.Conn, rewritten string) error

// queryWith runs the SELECT sqlText with opts' parameters on the
// connection with gives it (Query over tables, QueryRelations over
// relations).
func queryWith(ctx context.Context, sqlText string, opts QueryOptions, with func(sqlText string, fn connFunc) error) (*Result, error) {
	args, err := queryArgs(opts.Params)
	if err != nil {
		return nil, err
	}
	var res *Result
	err = with(castNumericParams(sqlText, opts.Params), func(conn *sql.Conn, rewritten string) error {
		var err error
		res, err = runSelect(ctx, conn, rewritten, opts.MaxRows, args...)
		return err
	})
	if err != nil {
		return nil, canceled(ctx, err)
	}
	return res, nil
}

// describeWith prepares a SELECT on the connection with gives it and
// returns its columns and parameter types (Describe, DescribeRelations).
func describeWith(ctx context.Context, with func(fn connFunc) error) ([]Column, []types.Type, error) {
	var cols []Column
	var params []types.Type
	err := with(func(conn *sql.Conn, rewritten string) error {
		var err error
		cols, params, err = describeSelect(ctx, conn, rewritten)
		return err
	})
	if err != nil {
		return nil, nil, canceled(ctx, err)
	}
	return cols, params, nil
}

// queryArgs are the driver's values of a query's parameters $1..$n.
func queryArgs(params []types.Datum) ([]driver.NamedValue, error) {
	args := make([]driver.NamedValue, len(params))
	for i, p := range params {
		v, err := paramValue(p)
		if err != nil {
			return nil, sqlerr.Wrap(sqlerr.InvalidParameterValue, fmt.Errorf("parameter $%d: %w", i+1, err))
		}
		args[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return args, nil
}

// Describe prepares sqlText over inputs without running it and returns its
// result columns and parameter types, for a wire protocol's Describe. A
// parameter whose type DuckDB cannot infer (SELECT $1) is types.Unknown.
// The inputs are loaded, so a following Query reuses them.
func (e *Engine) Describe(ctx context.Context, inputs []Input, sqlText string) ([]Column, []types.Type, error) {
	return describeWith(ctx, func(fn connFunc) error { return e.withInputs(ctx, inputs, sqlText, nil, fn) })
}

// withInputs loads inputs, binds their names on a connection of its own
// ([names-per-query]), sets the time zone (nil: UTC) and calls fn with the
// connection and the rewritten SQL; then it releases the loaded tables.
func (e *Engine) withInputs(ctx context.Context, inputs []Input, sqlText string, loc *time.Location, fn func(conn *sql.Conn, rewritten string) error) error {
	bindings, rewritten, err := rewriteQuery(inputs, sqlText)
	if err != nil {
		return err
	}
	entries := make([]*entry, len(inputs))
	defer func() {
		for _, en := range entries {
			if en != nil {
				e.cache.release(en)
			}
		}
	}()
	for i, in := range inputs {
		if entries[i], err = e.acquireInput(ctx, in); err != nil {
			return err
		}
	}
	return e.onConn(ctx, inputs, bindings, entries, rewritten, loc, fn)
}

// rewriteQuery turns a user's SELECT over inputs into the text DuckDB
// runs: LOOKUP unwrapped, keywords quoted, input names bound, regular
// expressions, generate_series and avg made PostgreSQL's.
func rewriteQuery(inputs []Input, sqlText string) ([]binding, string, error) {
	bindings, rewritten, err := bindNames(inputs, quoteDuckKeywords(unwrapLookup(sqlText)))
	if err != nil {
		return nil, "", err
	}
	return bindings, avgAsNumeric(seriesAsPostgres(regexLiterals(rewritten))), nil
}

// onConn binds each input's names to its loaded table (entries, in the
// order of inputs) on a connection of its own, sets the time zone and
// calls fn with the connection and rewritten, division guarded.
func (e *Engine) onConn(ctx context.Context, inputs []Input, bindings []binding, entries []*entry, rewritten string, loc *time.Location, fn func(conn *sql.Conn, rewritten string) error) error {
	want := map[string]string{}
	for i, in := range inputs {
		for _, v := range bindings[i].views {
			want[v] = viewBody(entries[i], in.Multiset)
		}
	}
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return mapError(err)
	}
	defer conn.Close()
	st, err := e.takeConnState(ctx, conn)
	if err != nil {
		return err
	}
	if err := st.bind(ctx, conn, want, zoneName(loc)); err != nil {
		// The connection's names are unknown now: discard it.
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		return err
	}
	defer e.putConnState(st)
	if rewritten, err = guardDivision(ctx, conn, rewritten); err != nil {
		return err
	}
	return fn(conn, rewritten)
}

// castNumericParams writes each $n bound to a NUMERIC value as
// CAST($n AS DECIMAL(38, s)), s the value's scale. DuckDB types a
// parameter by its context (the DECIMAL(10,2) column it is compared
// with) and casts the bound value to that type, rounding 2.495 to 2.50;
// Postgres compares the value at its own precision, and so does the
// cast. Values wider than DECIMAL(38) keep the plain parameter.
func castNumericParams(sqlText string, params []types.Datum) string {
	cast := map[string]string{}
	for i, p := range params {
		if p.IsNull() || p.Kind() != types.KindNumeric {
			continue
		}
		d := p.Decimal()
		if d.Form != apd.Finite {
			continue
		}
		sc := max(0, -int(d.Exponent))
		if int(d.NumDigits()) > 38 || sc > 38 {
			continue
		}
		cast[strconv.Itoa(i+1)] = fmt.Sprintf("DECIMAL(38, %d)", sc)
	}
	return castParamsAs(sqlText, cast)
}
