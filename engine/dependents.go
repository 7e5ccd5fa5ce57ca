package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/sqlerr"
)

// dependent is one object that depends, directly or through others, on
// an object a DROP without CASCADE would remove.
type dependent struct {
	// name is how a message names it: a view's or table's name, or
	// "sink k".
	name string
	// kind and on say what it depends on directly: "materialized view
	// gv depends on table g" (PostgreSQL's DETAIL lines).
	kind, on string
	// obj is the view's name; zero for a sink.
	obj catalog.ObjectName
}

// dependentsOf returns every object that depends on the relations in
// roots, transitively, in breadth-first order: the views and sinks whose
// jobs read a root, then those reading those views, and so on, each once,
// as PostgreSQL's DROP lists every object a CASCADE would remove.
func dependentsOf(cat *catalog.Catalog, roots ...catalog.ObjectName) []dependent {
	kindOf := func(n catalog.ObjectName) string {
		if t, err := cat.Table(n); err == nil && t.Kind == catalog.KindView {
			return "materialized view"
		}
		return "table"
	}
	seen := map[catalog.ObjectName]bool{}
	queue := slices.Clone(roots)
	for _, r := range roots {
		seen[r] = true
	}
	var out []dependent
	sinks := map[string]bool{}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		on := kindOf(n) + " " + n.Name
		jobs := cat.Jobs()
		slices.SortFunc(jobs, func(a, b catalog.Job) int { return strings.Compare(a.Name, b.Name) })
		for _, j := range jobs {
			if !slices.Contains(j.Reads, n) {
				continue
			}
			if isSinkJob(j) {
				if s := j.Options[jobOptSink]; !sinks[s] {
					sinks[s] = true
					out = append(out, dependent{name: "sink " + s, kind: "sink " + s, on: on})
				}
				continue
			}
			for _, w := range j.Writes {
				if seen[w] {
					continue
				}
				seen[w] = true
				out = append(out, dependent{name: w.Name, kind: kindOf(w) + " " + w.Name, on: on, obj: w})
				queue = append(queue, w)
			}
		}
	}
	return out
}

// dependentsError is the refusal (2BP01) of DROP what name without
// CASCADE while objects ds depend on it (dependentsOf, less what the
// statement drops too): the message names every one of them,
// transitively, and the DETAIL says what each depends on directly, one a
// line, as PostgreSQL's does. nil when ds is empty.
func dependentsError(what string, name catalog.ObjectName, ds []dependent) error {
	if len(ds) == 0 {
		return nil
	}
	verb := "depend"
	if len(ds) == 1 {
		verb = "depends"
	}
	err := sqlerr.New(sqlerr.DependentObjectsStillExist,
		"cannot drop %s %s because %s %s on it (use DROP ... CASCADE to drop the dependent objects too)",
		what, name.Name, dependentNames(ds), verb)
	err.Detail = dependentDetail(ds)
	return err
}

// dependentNames lists the names of ds, sorted, comma separated.
func dependentNames(ds []dependent) string {
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.name
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// dependentDetail is the DETAIL of a refused DROP: "materialized view gv2
// depends on materialized view gv", one line each.
func dependentDetail(ds []dependent) string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = fmt.Sprintf("%s depends on %s", d.kind, d.on)
	}
	return strings.Join(lines, "\n")
}

// sourceDependentsError is the refusal (2BP01) of DROP SOURCE src while
// tables are created from it: the message names every such table, and
// the views and sinks over them, transitively; the DETAIL says what each
// depends on directly. nil when no table uses src.
func sourceDependentsError(cat *catalog.Catalog, src catalog.ObjectName) error {
	var tables []catalog.ObjectName
	var ds []dependent
	for _, t := range cat.Tables() {
		if t.Options[OptionSource] == src.String() {
			tables = append(tables, t.Name)
			ds = append(ds, dependent{name: "table " + t.Name.Name, kind: "table " + t.Name.Name, on: "source " + src.Name})
		}
	}
	if len(tables) == 0 {
		return nil
	}
	slices.SortFunc(tables, func(a, b catalog.ObjectName) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(ds, func(a, b dependent) int { return strings.Compare(a.name, b.name) })
	above := dependentsOf(cat, tables...)
	ds = append(ds, above...)
	msg := fmt.Sprintf("cannot drop source %s because %s %s created from it", src.Name, dependentNames(ds[:len(tables)]), map[bool]string{true: "is", false: "are"}[len(tables) == 1])
	if len(above) > 0 {
		verb := "depend"
		if len(above) == 1 {
			verb = "depends"
		}
		msg += fmt.Sprintf(", and %s %s on them", dependentNames(above), verb)
	}
	err := sqlerr.New(sqlerr.DependentObjectsStillExist, "%s (DROP TABLE each first)", msg)
	err.Detail = dependentDetail(ds)
	return err
}

// CascadeNotice is PostgreSQL's notice (00000) of a DROP ... CASCADE of
// the tables or views names (one statement): "drop cascades to
// materialized view v" for one dependent, "drop cascades to N other
// objects" with a DETAIL line "drop cascades to ..." for each of
// several, transitively; an object the statement names is no dependent.
// nil when nothing depends on names (or none exists).
func (e *Engine) CascadeNotice(ctx context.Context, names ...catalog.ObjectName) (*sqlerr.Error, error) {
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	ds := dependentsOf(cat, names...)
	switch len(ds) {
	case 0:
		return nil, nil
	case 1:
		return sqlerr.New(sqlerr.SuccessfulCompletion, "drop cascades to %s", ds[0].kind), nil
	}
	n := sqlerr.New(sqlerr.SuccessfulCompletion, "drop cascades to %d other objects", len(ds))
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = "drop cascades to " + d.kind
	}
	n.Detail = strings.Join(lines, "\n")
	return n, nil
}
