package engine

import (
	"context"
	"errors"
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
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/sql/stream"
	"github.com/stratadb/strata/table"
)

// Verification is the outcome of Verify: the stored view compared, as a
// multiset, with its query recomputed over its inputs at one epoch.
type Verification struct {
	View  catalog.ObjectName
	Epoch base.Epoch
	// By names the engine that recomputed the query: "duckdb", an engine
	// independent of Strata's operators (window TVFs included, written as
	// DuckDB subqueries), or "batch" (Strata's batch executor) for a
	// query DuckDB cannot run.
	By string
	// Rows is the number of rows the recomputation gives.
	Rows int
	// Missing are rows the recomputation gives that the view lacks (one
	// entry per missing copy); Extra are rows the view holds that the
	// recomputation does not give.
	Missing, Extra []types.Row
	// Notes explain a difference that is the view's meaning rather than
	// a fault: an input with a watermark, whose late rows the view
	// dropped while the recomputation reads every row. When OK, empty, or
	// one note naming the rows in which a per-partition top-N view and
	// its recomputation kept different ones of rows tied at the cut-off,
	// a difference verify accepted ([verify-topn-ties], verify_topn.go).
	Notes []string
}

// OK reports whether the view equals its recomputation.
func (v Verification) OK() bool { return len(v.Missing) == 0 && len(v.Extra) == 0 }

func (v Verification) String() string {
	var b strings.Builder
	if v.OK() {
		fmt.Fprintf(&b, "%s at epoch %d: %d %s, equal to its query recomputed by %s", v.View.Name, v.Epoch, v.Rows, plural(int64(v.Rows), "row", "rows"), v.By)
		for _, n := range v.Notes {
			b.WriteString("\n  note: " + n)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s at epoch %d: %d %s missing, %d extra (recomputed by %s)", v.View.Name, v.Epoch, len(v.Missing), plural(int64(len(v.Missing)), "row", "rows"), len(v.Extra), v.By)
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
	for _, n := range v.Notes {
		b.WriteString("\n  note: " + n)
	}
	return b.String()
}

// Verify recomputes view's query over its inputs read at epoch at (0: the
// view's committed epoch) and compares the result with the view read at the
// same epoch. The recomputation runs in DuckDB (sql/olap), independent of
// the streaming operators; window TVFs (TUMBLE, HOP, CUMULATE, SESSION)
// are written as DuckDB subqueries first (olap.WindowTVFsAsSQL). A query
// DuckDB cannot run runs in the batch executor instead. Values compare
// by SQL equality, so NUMERIC 1.5 equals 1.50; a NUMERIC column of
// quotients (a division or avg: quotientColumns) compares to the
// precision of the less precise side, since DuckDB divides in DOUBLE
// PRECISION or at another scale (sql/olap's [verify-quotient]).
//
// A per-partition top-N view (ROW_NUMBER() ... <= N) whose rows differ
// from the recomputation only among rows tied at rank N is a valid
// answer: Verify accepts it, the rows moved to a note
// ([verify-topn-ties], verify_topn.go).
//
// A view starts at its start epoch (ViewStartEpoch: its inputs' content at
// the epoch before, then their changes), so before it, and before its first
// commit, it has nothing to compare: that is an error
// (ObjectNotInPrerequisiteState), not a difference.
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
	committed, err := tb.CommittedEpoch()
	if err != nil {
		return Verification{}, err
	}
	if at, err = verifyEpoch(view, at, committed, e.ViewStartEpoch(ctx, view)); err != nil {
		return Verification{}, err
	}
	var loc *time.Location
	if def, err := cat.Job(viewJobName(view)); err == nil {
		loc = jobZone(def)
	}
	rels := &relations{cat: cat, db: view.Database}
	ectx := &expr.Context{Loc: loc}
	v, ok, err := e.verifyOLAP(ctx, view, t, tb, at, loc, rels, ectx)
	if err != nil {
		return Verification{}, err
	}
	if !ok {
		if v, err = e.verifyBatch(view, t, at, rels, ectx); err != nil {
			return Verification{}, err
		}
	}
	if !v.OK() {
		v.Notes = e.watermarkNotes(cat, view)
		e.explainTies(cat, t, &v, ectx)
	}
	return v, nil
}

// verifyEpoch picks the epoch to verify view at: at, or the committed
// epoch when at is 0. An epoch before the view's start epoch (start, 0
// when unknown) has no view content to compare, and a view that has not
// committed its start epoch yet is still catching up with its inputs'
// history: both are errors naming the start epoch. An epoch above the
// committed one is an error naming the view and its committed epoch
// (before any input is read, whose error would name the input instead).
func verifyEpoch(view catalog.ObjectName, at, committed, start base.Epoch) (base.Epoch, error) {
	if at == 0 {
		if committed == base.NoEpoch {
			return 0, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %q has committed no epoch yet", view.Name)
		}
		if start > 0 && committed < start {
			return 0, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %q has not committed its first epoch %d yet (committed: %d); it is still reading its inputs' history, verify it once it has", view.Name, start, committed)
		}
		at = committed
	}
	if at > committed {
		if committed == base.NoEpoch {
			return 0, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %q has committed no epoch yet: it has no content to verify at epoch %d", view.Name, at)
		}
		return 0, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %q: epoch %d is above its committed epoch %d; verify it at %d or below", view.Name, at, committed, committed)
	}
	if start > 0 && at < start {
		return 0, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %q starts at epoch %d (with its inputs' content at epoch %d): it has no content to verify at epoch %d", view.Name, start, start-1, at)
	}
	return at, nil
}

// verifyBatch recomputes view with Strata's batch executor.
func (e *Engine) verifyBatch(view catalog.ObjectName, t catalog.Table, at base.Epoch, rels *relations, ectx *expr.Context) (Verification, error) {
	st, err := parser.ParseOne(t.Query)
	if err != nil {
		return Verification{}, err
	}
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

// watermarkNotes explains a difference of a view whose inputs declare a
// watermark: the view's job dropped the rows that arrived later than the
// watermark (planner's LateFilter), while the recomputation reads every
// stored row, so such rows show as missing windows or counts.
// The count of rows dropped comes from the view job's late-row counters
// (stream.LateCounter, checkpointed with the job) when its job runs in
// this process.
func (e *Engine) watermarkNotes(cat *catalog.Catalog, view catalog.ObjectName) []string {
	def, err := cat.Job(viewJobName(view))
	if err != nil {
		return nil
	}
	e.mu.Lock()
	late := e.late[def.Name]
	e.mu.Unlock()
	var dropped int64
	counted := false
	for _, c := range late {
		dropped += c.Load()
		counted = true
	}
	var notes []string
	for _, in := range def.Reads {
		it, err := cat.Table(in)
		if err != nil || it.Options[OptionWatermarkColumn] == "" {
			continue
		}
		notes = append(notes, fmt.Sprintf("input %s has a watermark (%s - %s): the view drops rows that arrive later than it, the recomputation counts every row, so rows the watermark dropped show here as differences",
			in.Name, it.Options[OptionWatermarkColumn], it.Options[OptionWatermarkDelay]))
	}
	if len(notes) > 0 && counted {
		notes = append(notes, fmt.Sprintf("the view's job has dropped %d late %s so far", dropped, plural(dropped, "row", "rows")))
	}
	return notes
}

// windowsAsDuckDB writes the TUMBLE, HOP and CUMULATE calls of query as
// DuckDB subqueries (olap.WindowTVFsAsSQL), each call resolved by Strata's
// binder so that the window arithmetic's inputs (sizes, offset, time
// column and its type, the time zone rule, SESSION's partition) are the
// view's own. ok is false when the query has a call DuckDB is not given
// (a window kind without a DuckDB form; none today).
func windowsAsDuckDB(query string, rels *relations, ectx *expr.Context) (string, bool, error) {
	out, _, err := olap.WindowTVFsAsSQL(query, func(call string) (olap.Window, error) {
		text := "SELECT * FROM " + call
		st, err := parser.ParseOne(text)
		if err != nil {
			return olap.Window{}, err
		}
		p, err := binder.New(rels, text, ectx).BindQuery(st.Node)
		if err != nil {
			return olap.Window{}, err
		}
		w := findWindowTVF(p)
		if w == nil {
			return olap.Window{}, fmt.Errorf("%s binds to no window: %w", call, base.ErrInvalidArgument)
		}
		return duckWindow(w)
	})
	if errors.Is(err, errNoDuckWindow) {
		return query, false, nil
	}
	return out, err == nil, err
}

// errNoDuckWindow marks a window kind without a DuckDB form.
var errNoDuckWindow = errors.New("engine: window has no DuckDB form")

// duckWindow describes a bound window TVF for olap.WindowTVFsAsSQL.
func duckWindow(w *plan.WindowTVF) (olap.Window, error) {
	kind, ok := map[plan.WindowKind]olap.WindowKind{plan.Tumble: olap.Tumble, plan.Hop: olap.Hop, plan.Cumulate: olap.Cumulate, plan.Session: olap.Session}[w.Kind]
	if !ok {
		return olap.Window{}, errNoDuckWindow
	}
	in := w.Input.Schema()
	out := olap.Window{Kind: kind, TimeColumn: w.TimeCol, Partition: w.Partition}
	for _, c := range in {
		out.Columns = append(out.Columns, c.Name)
	}
	var err error
	if out.Size, err = stream.WindowMicros(w.Size); err != nil {
		return olap.Window{}, err
	}
	out.Slide, _ = stream.WindowMicros(w.Slide)
	out.Offset, _ = stream.WindowMicros(w.Offset)
	// The batch executor's and the planner's rule: days are calendar
	// days of the view's zone for a TIMESTAMPTZ.
	out.TZ = in[w.TimeCol].Type.Kind == types.KindTimestampTZ
	// SESSION's gap is always instant arithmetic (the planner's rule).
	out.Wall = out.TZ && kind != olap.Session && (w.Size.Days != 0 || w.Slide.Days != 0 || w.Offset.Days != 0)
	return out, nil
}

// findWindowTVF returns the first window TVF node of p, depth first.
func findWindowTVF(p plan.Node) *plan.WindowTVF {
	if w, ok := p.(*plan.WindowTVF); ok {
		return w
	}
	for _, in := range p.Inputs() {
		if w := findWindowTVF(in); w != nil {
			return w
		}
	}
	return nil
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
func (e *Engine) verifyOLAP(ctx context.Context, view catalog.ObjectName, t catalog.Table, tb *table.Table, at base.Epoch, loc *time.Location, rels *relations, ectx *expr.Context) (Verification, bool, error) {
	query, ok, err := windowsAsDuckDB(t.Query, rels, ectx)
	if err != nil || !ok {
		return Verification{}, false, nil
	}
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
	if err := inputsCommitted(view, q.Tables, in, at, rels.cat); err != nil {
		return Verification{}, false, err
	}
	stored := olap.Input{Name: view.Name, Table: tb, Epoch: at, Multiset: multisetColumn(t) != "", Quotients: viewQuotients(t, rels, ectx)}
	d, err := q.olap.VerifyIn(ctx, loc, query, in, stored)
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

// viewQuotients says which of view t's columns hold NUMERIC quotients
// (quotientColumns of its query's plan), which Verify compares to the
// precision of the less precise side (sql/olap's [verify-quotient]); nil,
// and an exact comparison, when the query does not bind.
func viewQuotients(t catalog.Table, rels *relations, ectx *expr.Context) []bool {
	st, err := parser.ParseOne(t.Query)
	if err != nil {
		return nil
	}
	p, err := binder.New(rels, t.Query, ectx).BindQuery(st.Node)
	if err != nil {
		return nil
	}
	return quotientColumns(p)
}

// inputsCommitted checks that every input of view (names, opened as in)
// has committed epoch at,
// the one verified; the error names the view, the input and what it is
// (the view's own committed epoch is checked first, by verifyEpoch, so
// an input behind it is rare: a table that has not committed the epoch
// its view has).
func inputsCommitted(view catalog.ObjectName, names []catalog.ObjectName, in []olap.Input, at base.Epoch, cat *catalog.Catalog) error {
	for k, i := range in {
		ce, err := i.Table.CommittedEpoch()
		if err != nil {
			return err
		}
		if at <= ce {
			continue
		}
		what := "table"
		if t, err := cat.Table(names[k]); err == nil && t.Kind == catalog.KindView {
			what = "materialized view"
		}
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "materialized view %q: epoch %d is above the committed epoch %d of its input, %s %q", view.Name, at, ce, what, names[k].Name)
	}
	return nil
}

// plural returns one when n is 1, else many.
func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
