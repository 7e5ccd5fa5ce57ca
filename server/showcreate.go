package server

import (
	"context"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/ddl"
	"github.com/stratadb/strata/sql/pgwire"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/table/schema"
)

// SHOW CREATE ([show-create]): RisingWave's statement, one row with
// columns Name and "Create Sql", the CREATE statement rebuilt from the
// catalog, which run on a fresh server makes an equal object: the same
// columns with their types, NOT NULL and processing-time generation, the
// primary key, the watermark, the FROM clause of a CDC table, and the
// options in WITH with quoted keys and values. A view's query is the text
// stored at its CREATE. Options Strata keeps for itself (the watermark's,
// a CDC table's source, a view's multiset and nullable-key marks) show as
// the clauses that set them, or not at all.

// hiddenOptions are the options a catalog object carries that its CREATE
// statement did not write in WITH: set from other clauses, or by the
// engine.
var hiddenOptions = map[string]bool{
	engine.OptionWatermarkColumn: true,
	engine.OptionWatermarkDelay:  true,
	engine.OptionSource:          true,
	engine.OptionSourceTable:     true,
	engine.OptionMultiset:        true,
	schema.OptionNullableKey:     true,
}

// viewJobOptions are the options of CREATE MATERIALIZED VIEW that its job
// keeps, not its table.
var viewJobOptions = []string{"timezone", "state.backend"}

func (s *Session) showCreate(ctx context.Context, st *ddl.ShowCreate) (*pgwire.Result, error) {
	cat, err := s.e.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	name := ddl.ObjectName(st.Name, s.db)
	var text string
	switch st.Kind {
	case ddl.Table, ddl.View, ddl.PlainView:
		t, terr := cat.Table(name)
		switch {
		case terr != nil:
			return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", st.Name)
		case st.Kind == ddl.Table && t.Kind != catalog.KindTable:
			return nil, sqlerr.New(sqlerr.WrongObjectType, "%q is a materialized view; use SHOW CREATE MATERIALIZED VIEW", st.Name)
		case st.Kind != ddl.Table && t.Kind != catalog.KindView:
			return nil, sqlerr.New(sqlerr.WrongObjectType, "%q is a table; use SHOW CREATE TABLE", st.Name)
		case t.Kind == catalog.KindTable:
			text = s.createTableSQL(t)
		default:
			text = s.createViewSQL(cat, t)
		}
	case ddl.Source:
		src, serr := cat.Source(name)
		if serr != nil {
			return nil, sqlerr.New(sqlerr.UndefinedObject, "source %q does not exist", st.Name)
		}
		text = s.createSourceSQL(src)
	case ddl.Sink:
		if text = s.createSinkSQL(cat, name); text == "" {
			return nil, sqlerr.New(sqlerr.UndefinedObject, "sink %q does not exist", st.Name)
		}
	}
	return &pgwire.Result{Columns: textCols("Name", "Create Sql"), Rows: rowsOf([]string{s.displayName(name), text}), Tag: "SHOW"}, nil
}

// displayName is name as the session writes it: without the database
// when it is the session's.
func (s *Session) displayName(n catalog.ObjectName) string {
	if n.Database == s.db {
		return quoteIdent(n.Name)
	}
	return quoteIdent(n.Database) + "." + quoteIdent(n.Name)
}

// createTableSQL rebuilds the CREATE TABLE of plain table t.
func (s *Session) createTableSQL(t catalog.Table) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE " + s.displayName(t.Name) + " (")
	b.WriteString(elementsSQL(t.Columns, t.PrimaryKey, t.Options))
	b.WriteString(")")
	if src := t.Options[engine.OptionSource]; src != "" {
		if n, err := catalog.ParseObjectName(src); err == nil {
			src = s.displayName(n)
		}
		b.WriteString(" FROM " + src + " TABLE " + quoteLiteral(t.Options[engine.OptionSourceTable]))
	}
	b.WriteString(withSQL(t.Options))
	return b.String()
}

// createViewSQL rebuilds the CREATE MATERIALIZED VIEW of view t: its
// table options and its job's (time zone, state backend), then its query.
func (s *Session) createViewSQL(cat *catalog.Catalog, t catalog.Table) string {
	opts := maps.Clone(t.Options)
	if opts == nil {
		opts = map[string]string{}
	}
	for _, j := range cat.Jobs() {
		if j.Kind != catalog.JobView || !slices.Contains(j.Writes, t.Name) {
			continue
		}
		for _, k := range viewJobOptions {
			if v, ok := j.Options[k]; ok {
				opts[k] = v
			}
		}
	}
	return "CREATE MATERIALIZED VIEW " + s.displayName(t.Name) + withSQL(opts) + " AS " + t.Query
}

// createSourceSQL rebuilds the CREATE SOURCE of src.
func (s *Session) createSourceSQL(src catalog.Source) string {
	var b strings.Builder
	b.WriteString("CREATE SOURCE " + s.displayName(src.Name))
	if len(src.Columns) > 0 {
		b.WriteString(" (" + elementsSQL(src.Columns, src.PrimaryKey, src.Options) + ")")
	}
	opts := maps.Clone(src.Options)
	if opts == nil {
		opts = map[string]string{}
	}
	opts["connector"] = src.Connector
	b.WriteString(withSQL(opts))
	return b.String()
}

// Options of sink jobs, as the engine keeps them: the sink's name, an
// INTO sink's query, and an external sink's WITH options under a prefix.
const (
	sinkOptName  = "sink"
	sinkOptQuery = "query"
	sinkOptWith  = "with."
)

// createSinkSQL rebuilds the CREATE SINK of sink name from its job; ""
// when there is no such sink.
func (s *Session) createSinkSQL(cat *catalog.Catalog, name catalog.ObjectName) string {
	for _, j := range cat.Jobs() {
		if j.Options[sinkOptName] != name.Name || !strings.HasPrefix(j.Name, "sink-") {
			continue
		}
		switch {
		case j.Kind == catalog.JobSink && len(j.Writes) == 0 && len(j.Reads) == 1 && j.Reads[0].Database == name.Database:
			opts := map[string]string{}
			for k, v := range j.Options {
				if rest, ok := strings.CutPrefix(k, sinkOptWith); ok {
					opts[rest] = v
				}
			}
			return "CREATE SINK " + s.displayName(name) + " FROM " + s.displayName(j.Reads[0]) + withSQL(opts)
		case len(j.Writes) == 1 && j.Writes[0].Database == name.Database && j.Options[sinkOptQuery] != "":
			return "CREATE SINK " + s.displayName(name) + " INTO " + s.displayName(j.Writes[0]) + " AS " + j.Options[sinkOptQuery]
		}
	}
	return ""
}

// elementsSQL writes a column list: the columns, the primary key and the
// watermark that opts record.
func elementsSQL(cols []catalog.Column, key []string, opts map[string]string) string {
	var parts []string
	for _, c := range cols {
		p := quoteIdent(c.Name) + " " + typeSQL(c.Type)
		if c.NotNull && !slices.Contains(key, c.Name) {
			p += " NOT NULL"
		}
		if c.Generated == catalog.GeneratedProcTime {
			p += " GENERATED ALWAYS AS (proctime()) STORED"
		}
		parts = append(parts, p)
	}
	if len(key) > 0 {
		ks := make([]string, len(key))
		for i, k := range key {
			ks[i] = quoteIdent(k)
		}
		parts = append(parts, "PRIMARY KEY ("+strings.Join(ks, ", ")+")")
	}
	if col := opts[engine.OptionWatermarkColumn]; col != "" {
		w := "WATERMARK FOR " + quoteIdent(col) + " AS " + quoteIdent(col)
		if d, err := time.ParseDuration(opts[engine.OptionWatermarkDelay]); err == nil && d > 0 {
			w += " - INTERVAL '" + strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "' SECOND"
		}
		parts = append(parts, w)
	}
	return strings.Join(parts, ", ")
}

// typeSQL spells t as CREATE TABLE takes it.
func typeSQL(t types.Type) string {
	return t.String()
}

// withSQL writes ` WITH ('k' = 'v', ...)` of the options CREATE wrote,
// keys sorted; "" when there are none.
func withSQL(opts map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		if hiddenOptions[k] {
			continue
		}
		parts = append(parts, quoteLiteral(k)+" = "+quoteLiteral(opts[k]))
	}
	if len(parts) == 0 {
		return ""
	}
	return " WITH (" + strings.Join(parts, ", ") + ")"
}

// quoteLiteral writes s as a standard SQL string constant.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

var plainIdent = regexp.MustCompile(`^[a-z_][a-z0-9_$]*$`)

// quoteIdent writes name as an identifier that reads back as name:
// quoted unless it is lower case and not a keyword Postgres reserves
// somewhere.
func quoteIdent(name string) string {
	if plainIdent.MatchString(name) {
		res, err := pg_query.Scan(name)
		if err == nil && len(res.Tokens) == 1 {
			switch res.Tokens[0].KeywordKind {
			case pg_query.KeywordKind_NO_KEYWORD, pg_query.KeywordKind_UNRESERVED_KEYWORD:
				return name
			}
		}
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
