package ddl

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	sqlparser "github.com/stratadb/strata/sql/parser"
)

// summary renders a statement in a compact form that tests compare with
// expected text: every field that is set, with parse trees deparsed, so
// that a test sees what Postgres parsed.
func summary(t *testing.T, st Statement) string {
	t.Helper()
	var b strings.Builder
	add := func(format string, args ...any) { fmt.Fprintf(&b, " "+format, args...) }
	deparse := func(n *pg_query.Node) string {
		if n == nil {
			return "<nil>"
		}
		s, err := sqlparser.Deparse(n)
		if err != nil {
			t.Fatalf("deparse %v: %v", n, err)
		}
		return s
	}
	opts := func(m map[string]string) {
		if m == nil {
			return
		}
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			kv = append(kv, k+"="+m[k])
		}
		add("with{%s}", strings.Join(kv, ","))
	}
	cols := func(cs []ColumnDef, pk []string, wm *Watermark) {
		var parts []string
		for _, c := range cs {
			s := c.Name + " " + c.Type.String()
			if c.NotNull {
				s += " NOT NULL"
			}
			if c.Generated != "" {
				s += " GENERATED(" + c.Generated + ")"
			}
			parts = append(parts, fmt.Sprintf("%s@%d", s, c.Pos))
		}
		add("(%s)", strings.Join(parts, ", "))
		if pk != nil {
			add("pk(%s)", strings.Join(pk, ","))
		}
		if wm != nil {
			add("wm(%s-%v@%d)", wm.Column, wm.Delay, wm.Pos)
		}
	}
	switch s := st.(type) {
	case *CreateTable:
		b.WriteString("CREATE TABLE " + s.Name)
		if s.IfNotExists {
			add("ifnotexists")
		}
		if s.Query == nil {
			cols(s.Columns, s.PrimaryKey, s.Watermark)
		}
		opts(s.With)
		if s.FromSource != "" {
			add("from(%s,%s)", s.FromSource, s.FromTable)
		}
		if s.Query != nil {
			add("as[%s] text[%s]", deparse(s.Query), s.QueryText)
		}
	case *CreateSource:
		b.WriteString("CREATE SOURCE " + s.Name)
		if s.IfNotExists {
			add("ifnotexists")
		}
		cols(s.Columns, s.PrimaryKey, s.Watermark)
		opts(s.With)
	case *CreateView:
		b.WriteString("CREATE VIEW " + s.Name)
		if s.IfNotExists {
			add("ifnotexists")
		}
		opts(s.With)
		add("as[%s] text[%s]", deparse(s.Query), s.QueryText)
	case *CreateSink:
		b.WriteString("CREATE SINK " + s.Name)
		if s.IfNotExists {
			add("ifnotexists")
		}
		if s.Into != "" {
			add("into %s", s.Into)
		}
		if s.From != "" {
			add("from %s", s.From)
		}
		opts(s.With)
		if s.Query != nil {
			add("as[%s] text[%s]", deparse(s.Query), s.QueryText)
		}
	case *Drop:
		fmt.Fprintf(&b, "DROP %s %s", s.Kind, strings.Join(s.Names, ","))
		if s.IfExists {
			add("ifexists")
		}
		if s.Cascade {
			add("cascade")
		}
	case *Show:
		b.WriteString("SHOW " + s.What)
	case *Describe:
		b.WriteString("DESCRIBE " + s.Name)
	case *Explain:
		b.WriteString("EXPLAIN")
		if s.Analyze {
			add("analyze")
		}
		add("{%s}", summary(t, s.Statement))
	case *Query:
		fmt.Fprintf(&b, "QUERY [%s] text[%s]", deparse(s.Node), s.QueryText)
		if s.AtEpoch != nil {
			add("epoch=%d", *s.AtEpoch)
		}
	case *Insert:
		fmt.Fprintf(&b, "INSERT %s (%s)", s.Table, strings.Join(s.Columns, ","))
		if s.Rows != nil {
			add("rows[%s]", deparse(s.Rows))
		}
		add("[%s]", deparse(s.Node))
	case *Update:
		fmt.Fprintf(&b, "UPDATE %s [%s]", s.Table, deparse(s.Node))
	case *Delete:
		fmt.Fprintf(&b, "DELETE %s [%s]", s.Table, deparse(s.Node))
	case *Set:
		fmt.Fprintf(&b, "SET %s=%q", s.Name, s.Value)
		if s.Local {
			add("local")
		}
		if s.Default {
			add("default")
		}
	case *Other:
		fmt.Fprintf(&b, "OTHER %s [%s]", kindName(s.Node), deparse(s.Node))
	default:
		t.Fatalf("unknown statement type %T", st)
	}
	return b.String()
}
