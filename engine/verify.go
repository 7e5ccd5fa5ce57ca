package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/binder"
	"github.com/stratadb/strata/sql/exec"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/olap"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/table"
)

// Verification is the outcome of Verify: the stored view compared, as a
// multiset, with its query recomputed over its inputs at one epoch.
type Verification struct {
	View  catalog.ObjectName
	Epoch base.Epoch
	// By names the engine that recomputed the query: "duckdb", an engine
	// independent of Strata's operators, or "batch" (Strata's batch
	// executor) for queries DuckDB cannot run (window TVFs).
	By string
	// Rows is the number of rows the recomputation gives.
	Rows int
	// Missing are rows the recomputation gives that the view lacks (one
	// entry per missing copy); Extra are rows the view holds that the
	// recomputation does not give.
	Missing, Extra []types.Row
}

// OK reports whether the view equals its recomputation.
func (v Verification) OK() bool { return len(v.Missing) == 0 && len(v.Extra) == 0 }

func (v Verification) String() string {
	if v.OK() {
		return fmt.Sprintf("%s at epoch %d: %d rows, equal to its query recomputed by %s", v.View.Name, v.Epoch, v.Rows, v.By)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s at epoch %d: %d rows missing, %d extra (recomputed by %s)", v.View.Name, v.Epoch, len(v.Missing), len(v.Extra), v.By)
	for i, r := range v.Missing {
		if i == 5 {
			b.WriteString("\n  ...")
			break
		}
		b.WriteString("\n  missing " + r.String())
	}
	for i, r := range v.Extra {
		if i == 5 {
			b.WriteString("\n  ...")
			break
		}
		b.WriteString("\n  extra   " + r.String())
	}
	return b.String()
}

// Verify recomputes view's query over its inputs read at epoch at (0: the
// view's committed epoch) and compares the result with the view read at the
// same epoch. The recomputation runs in DuckDB (sql/olap), independent of
// the streaming operators; a query DuckDB cannot run (Strata's window TVFs)
// runs in the batch executor instead. Values compare by SQL equality, so
// NUMERIC 1.5 equals 1.50.
func (e *Engine) Verify(ctx context.Context, view catalog.ObjectName, at base.Epoch) (Verification, error) {
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return Verification{}, err
	}
	t, err := cat.Table(view)
	if err != nil || t.Kind != catalog.KindView {
		return Verification{}, sqlerr.New(sqlerr.UndefinedTable, "materialized view %q does not exist", view.Name)
	}
	if err := unstoredInputs(cat, view); err != nil {
		return Verification{}, err
	}
	tb, err := e.Table(view)
	if err != nil {
		return Verification{}, err
	}
	if at == 0 {
		if at, err = tb.CommittedEpoch(); err != nil {
			return Verification{}, err
		}
		if at == base.NoEpoch {
			return Verification{}, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %q has committed no epoch yet", view.Name)
		}
	}
	var loc *time.Location
	if def, err := cat.Job(viewJobName(view)); err == nil {
		loc = jobZone(def)
	}
	if v, ok, err := e.verifyOLAP(ctx, view, t, tb, at, loc); ok || err != nil {
		return v, err
	}
	st, err := parser.ParseOne(t.Query)
	if err != nil {
		return Verification{}, err
	}
	rels := &relations{cat: cat, db: view.Database}
	ectx := &expr.Context{Loc: loc}
	p, err := binder.New(rels, t.Query, ectx).BindQuery(st.Node)
	if err != nil {
		return Verification{}, err
	}
	sc, _, err := e.scannerAt(rels, at)
	if err != nil {
		return Verification{}, err
	}
	want, err := exec.Run(ectx, p, sc)
	if err != nil {
		return Verification{}, fmt.Errorf("recomputing %s: %w", view.Name, err)
	}
	got, err := e.readRows(t, at)
	if err != nil {
		return Verification{}, err
	}
	v := Verification{View: view, Epoch: at, Rows: len(want), By: "batch"}
	v.Missing, v.Extra = multisetDiff(want, got)
	return v, nil
}

// multisetDiff returns the rows of a not in b and of b not in a, counting
// copies.
func multisetDiff(a, b []types.Row) (onlyA, onlyB []types.Row) {
	cmp := func(x, y types.Row) int { return types.CompareRows(x, y, nil) }
	a, b = slices.Clone(a), slices.Clone(b)
	slices.SortFunc(a, cmp)
	slices.SortFunc(b, cmp)
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch c := cmp(a[i], b[j]); {
		case c == 0:
			i++
			j++
		case c < 0:
			onlyA = append(onlyA, a[i])
			i++
		default:
			onlyB = append(onlyB, b[j])
			j++
		}
	}
	onlyA = append(onlyA, a[i:]...)
	onlyB = append(onlyB, b[j:]...)
	return onlyA, onlyB
}

// verifyOLAP verifies with DuckDB; ok is false when DuckDB cannot run the
// query.
func (e *Engine) verifyOLAP(ctx context.Context, view catalog.ObjectName, t catalog.Table, tb *table.Table, at base.Epoch, loc *time.Location) (Verification, bool, error) {
	query := t.Query
	q, ok, err := e.PlanOLAP(ctx, view.Database, query)
	if err != nil || !ok {
		return Verification{}, false, nil
	}
	epochs := map[catalog.ObjectName]base.Epoch{}
	for _, n := range q.Tables {
		epochs[n] = at
	}
	in, err := e.olapInputs(q, epochs)
	if err != nil {
		return Verification{}, false, err
	}
	d, err := q.olap.VerifyIn(ctx, loc, query, in, olap.Input{Name: view.Name, Table: tb, Epoch: at, Multiset: multisetColumn(t) != ""})
	if err != nil {
		if sqlerr.Code(err) == sqlerr.SyntaxError || sqlerr.Code(err) == "42883" || sqlerr.Code(err) == sqlerr.UndefinedTable || BeyondOLAP(err) {
			return Verification{}, false, nil
		}
		return Verification{}, false, fmt.Errorf("verifying %s: %w", view.Name, err)
	}
	v := Verification{View: view, Epoch: at, Rows: d.Computed, By: "duckdb"}
	for _, r := range d.Missing {
		for range max(r.Count, 1) {
			v.Missing = append(v.Missing, r.Row)
		}
	}
	for _, r := range d.Extra {
		for range max(r.Count, 1) {
			v.Extra = append(v.Extra, r.Row)
		}
	}
	return v, true, nil
}
