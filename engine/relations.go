package engine

import (
	"slices"
	"strings"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

// relations answers the binder's name lookups from one catalog version:
// "t" and "dev.t" name table t of the default database, "db.t" a table of
// another database.
type relations struct {
	cat *catalog.Catalog
	db  string
	// seen records the objects looked up, in order: a view's inputs.
	seen []catalog.ObjectName
	// system records the system tables looked up (strata_catalog.*).
	system []string
}

func (r *relations) objectName(name string) catalog.ObjectName {
	if db, n, ok := strings.Cut(name, "."); ok && db != "public" {
		return catalog.Name(db, n)
	} else if ok {
		// PostgreSQL's public schema is the session's database here, as
		// psql's \d shows it.
		return catalog.Name(r.db, n)
	}
	return catalog.Name(r.db, name)
}

// Relation implements binder.Catalog.
func (r *relations) Relation(name string) (*plan.Relation, error) {
	if rel, ok := systemRelation(name); ok {
		if !slices.Contains(r.system, name) {
			r.system = append(r.system, name)
		}
		return rel, nil
	}
	on := r.objectName(name)
	t, err := r.cat.Table(on)
	if err != nil {
		if r.cat.IsSource(on) {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "source %q cannot be read directly yet; create a table from it", name)
		}
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
	}
	if !slices.Contains(r.seen, on) {
		r.seen = append(r.seen, on)
	}
	rel := relationOf(t)
	rel.Name = name
	return rel, nil
}

// relationOf describes a catalog table to the binder, named db.name.
func relationOf(t catalog.Table) *plan.Relation {
	rel := &plan.Relation{Name: t.Name.String()}
	for _, c := range t.Columns {
		rel.Columns = append(rel.Columns, plan.Column{Name: c.Name, Type: c.Type, NotNull: c.NotNull})
	}
	for _, k := range t.PrimaryKey {
		for i, c := range t.Columns {
			if c.Name == k {
				rel.PrimaryKey = append(rel.PrimaryKey, i)
			}
		}
	}
	if col := t.Options[OptionWatermarkColumn]; col != "" {
		d, _ := time.ParseDuration(t.Options[OptionWatermarkDelay])
		for i, c := range t.Columns {
			if c.Name == col {
				rel.Watermark = &plan.Watermark{Column: i, Delay: types.IntervalValue{Micros: d.Microseconds()}}
			}
		}
	}
	return rel
}

// uniqueKey infers a set of output columns of n that no two rows of n
// share (see the package doc, "Keys of views"); nil when none is known.
// A plan that always yields at most one row (a global aggregate) has the
// empty key, reported as ok with no columns.
func uniqueKey(n plan.Node) (key []int, ok bool) {
	switch n := n.(type) {
	case *plan.Scan:
		if len(n.Rel.PrimaryKey) == 0 {
			return nil, false
		}
		return slices.Clone(n.Rel.PrimaryKey), true
	case *plan.Filter:
		return uniqueKey(n.Input)
	case *plan.Sort:
		return uniqueKey(n.Input)
	case *plan.Limit:
		return uniqueKey(n.Input)
	case *plan.Project:
		in, ok := uniqueKey(n.Input)
		if !ok {
			return nil, false
		}
		out := make([]int, 0, len(in))
		for _, k := range in {
			found := -1
			for j, e := range n.Exprs {
				if c, isCol := e.(*expr.ColumnRef); isCol && c.Index == k {
					found = j
					break
				}
			}
			if found < 0 {
				return nil, false
			}
			out = append(out, found)
		}
		return out, true
	case *plan.Aggregate:
		key := make([]int, len(n.GroupBy))
		for i := range key {
			key[i] = i
		}
		return key, true
	case *plan.Join:
		left, lok := uniqueKey(n.Left)
		right, rok := uniqueKey(n.Right)
		nl := len(n.Left.Schema())
		shifted := make([]int, len(right))
		for i, k := range right {
			shifted[i] = k + nl
		}
		fixed := equated(n.On, nl)
		switch n.Kind {
		case plan.InnerJoin, plan.CrossJoin:
			if !lok || !rok {
				return nil, false
			}
			// A side whose key the condition equates to the other side's
			// columns adds nothing.
			if allIn(shifted, fixed) {
				return left, true
			}
			if allIn(left, fixed) {
				return shifted, true
			}
			return append(left, shifted...), true
		case plan.LeftJoin:
			if lok && rok && allIn(shifted, fixed) {
				return left, true
			}
		case plan.RightJoin:
			if lok && rok && allIn(left, fixed) {
				return shifted, true
			}
		}
		// Otherwise both keys together: a padded side's key is NULL, one
		// value of the key encoding, and each unmatched row appears once.
		if lok && rok && n.Kind != plan.CrossJoin {
			return append(left, shifted...), true
		}
		return nil, false
	case *plan.TopN:
		// Deduplication (N = 1) keeps one row a partition: the partition
		// columns are a key. Otherwise Top-N keeps a subset of its input's
		// rows, so the input's key holds; without one, a partition's rows
		// are told apart by their row number.
		var part []int
		partOK := true
		for _, e := range n.Partition {
			c, ok := e.(*expr.ColumnRef)
			if !ok {
				partOK = false
				break
			}
			part = append(part, c.Index)
		}
		if n.N == 1 && partOK && len(part) > 0 {
			return part, true
		}
		if in, ok := uniqueKey(n.Input); ok {
			return in, true
		}
		if n.RankCol && partOK {
			return append(part, len(n.Cols)-1), true
		}
		return nil, false
	case *plan.WindowTVF:
		return nil, false
	}
	return nil, false
}

// equated returns the columns of the join row that the condition's
// conjuncts col = expr tie to the other side: col on one side, expr
// reading only columns of the other side (so the other side's row fixes
// col's value).
func equated(on expr.Expr, nl int) []int {
	var out []int
	side := func(e expr.Expr) (left, right bool) {
		expr.Walk(e, func(x expr.Expr) bool {
			if c, ok := x.(*expr.ColumnRef); ok {
				if c.Index < nl {
					left = true
				} else {
					right = true
				}
			}
			return true
		})
		return left, right
	}
	var walk func(e expr.Expr)
	walk = func(e expr.Expr) {
		switch e := e.(type) {
		case *expr.And:
			for _, a := range e.Args {
				walk(a)
			}
		case *expr.Call:
			if e.Fn == nil || e.Fn.Name != "=" || len(e.Args) != 2 {
				return
			}
			for i, a := range e.Args {
				c, ok := a.(*expr.ColumnRef)
				if !ok {
					continue
				}
				l, r := side(e.Args[1-i])
				if c.Index < nl && r && !l || c.Index >= nl && l && !r {
					out = append(out, c.Index)
				}
			}
		}
	}
	if on != nil {
		walk(on)
	}
	return out
}

func allIn(cols, set []int) bool {
	if len(cols) == 0 {
		return false
	}
	for _, c := range cols {
		if !slices.Contains(set, c) {
			return false
		}
	}
	return true
}
