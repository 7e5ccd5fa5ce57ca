package olap

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// connState is what one DuckDB connection has bound: its temporary views
// (name to loaded table) and its time zone. [names-per-query] Before a
// query runs, its connection's views are made exactly the query's names:
// views of earlier queries that this one does not name are dropped, views
// whose target changed are replaced, and unchanged ones are kept, which
// spares most of a small query's DDL. A connection whose state is not
// known (new, or its state was forgotten) has its temporary views listed
// and dropped first.
type connState struct {
	key   any               // the driver connection
	views map[string]string // view name -> its SELECT (viewBody)
	zone  string            // DuckDB TimeZone, "" if not set by the engine
}

// maxConnStates bounds the remembered connection states; past it they are
// all forgotten, which is safe (see connState).
const maxConnStates = 256

// takeConnState returns conn's state, removing it from the engine's map
// while the connection is in use.
func (e *Engine) takeConnState(ctx context.Context, conn *sql.Conn) (*connState, error) {
	var key any
	if err := conn.Raw(func(dc any) error { key = dc; return nil }); err != nil {
		return nil, mapError(err)
	}
	e.mu.Lock()
	st, ok := e.mu.conns[key]
	delete(e.mu.conns, key)
	e.mu.Unlock()
	if ok {
		return st, nil
	}
	st = &connState{key: key, views: map[string]string{}}
	rows, err := conn.QueryContext(ctx, "SELECT view_name FROM duckdb_views() WHERE temporary AND NOT internal")
	if err != nil {
		return nil, mapError(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, mapError(err)
		}
		st.views[name] = "?" // unknown target: never equal to a wanted one
	}
	if err := rows.Err(); err != nil {
		return nil, mapError(err)
	}
	return st, nil
}

func (e *Engine) putConnState(st *connState) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.mu.conns) >= maxConnStates {
		clear(e.mu.conns)
	}
	e.mu.conns[st.key] = st
}

// bind makes the connection's views exactly want (view name -> its
// SELECT) and its time zone zone.
func (st *connState) bind(ctx context.Context, conn *sql.Conn, want map[string]string, zone string) error {
	for v, target := range st.views {
		if want[v] == target {
			continue
		}
		if _, err := conn.ExecContext(ctx, "DROP VIEW IF EXISTS "+quoteIdent(v)); err != nil {
			return mapError(err)
		}
		delete(st.views, v)
	}
	for v, target := range want {
		if st.views[v] == target {
			continue
		}
		q := "CREATE OR REPLACE TEMP VIEW " + quoteIdent(v) + " AS " + target
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return mapError(err)
		}
		st.views[v] = target
	}
	if st.zone != zone {
		if _, err := conn.ExecContext(ctx, "SET TimeZone = "+quoteString(zone)); err != nil {
			return sqlerr.Wrap(sqlerr.InvalidParameterValue, fmt.Errorf("time zone %q: %w", zone, mapError(err)))
		}
		st.zone = zone
	}
	return nil
}

// zoneName is DuckDB's name for the session time zone.
func zoneName(loc *time.Location) string {
	if loc == nil || loc.String() == "Local" {
		return "UTC"
	}
	return loc.String()
}

// viewBody is the SELECT of the view that names loaded table en: the
// table as it is, or for a multiset view's table (Input.Multiset) each
// row as many times as its last column says, without that column.
// [char-trimmed] A CHAR(n) column is stored blank-padded, as PostgreSQL
// stores it, and DuckDB has no such type: the view gives it without its
// trailing blanks, which is what PostgreSQL reads when a CHAR value meets
// a string operator or function (||, length, upper, a cast to text or
// varchar) and what its comparisons ignore ('a  ' = 'a'). The price is
// the display of the bare column, which PostgreSQL pads, and LIKE and
// concat(), which see the padding in PostgreSQL (doc.go, Known gaps).
func viewBody(en *entry, multiset bool) string {
	from := dataSchema + "." + quoteIdent(en.name)
	var trim []string
	for i, c := range en.cols {
		if c.typ.Kind == types.KindChar && !(multiset && i == len(en.cols)-1) {
			q := quoteIdent(c.name)
			trim = append(trim, "rtrim("+q+", ' ') AS "+q)
		}
	}
	replace := ""
	if len(trim) > 0 {
		replace = " REPLACE (" + strings.Join(trim, ", ") + ")"
	}
	if !multiset || len(en.cols) == 0 {
		if replace == "" {
			return "SELECT * FROM " + from
		}
		return "SELECT *" + replace + " FROM " + from
	}
	count := quoteIdent(en.cols[len(en.cols)-1].name)
	return "SELECT t.* EXCLUDE (" + count + ")" + replace + " FROM " + from + " AS t, range(t." + count + ") AS strata_copies(copy)"
}
