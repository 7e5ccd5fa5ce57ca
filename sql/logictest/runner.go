package logictest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/duckdb"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/binder"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/planner"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Runner runs the queries of scripts as streaming jobs and compares them
// with the oracle.
type Runner struct {
	// Oracle is the DuckDB that recomputes every query (OpenOracle).
	Oracle *duckdb.DB
	// Parallelisms lists the job parallelisms each query runs with
	// (default 1 and 2); the sources take the same parallelism.
	Parallelisms []int
	// Timeout bounds one job run (default one minute).
	Timeout time.Duration
}

// Status is the outcome of one query.
type Status uint8

// Outcomes.
const (
	Passed  Status = iota + 1
	Failed         // the view, its error or its rows are wrong
	Skipped        // marked skipif; Detail says what a probe run gave
)

// Outcome is the result of one query of a script.
type Outcome struct {
	Query  *Query
	Where  string // file:line
	Status Status
	// Detail explains a failure (query, epoch, diff) or what a skipped
	// query does today.
	Detail string
}

func (r *Runner) defaults() {
	if len(r.Parallelisms) == 0 {
		r.Parallelisms = []int{1, 2}
	}
	if r.Timeout == 0 {
		r.Timeout = time.Minute
	}
}

// oracleAnswer is DuckDB's result at one epoch.
type oracleAnswer struct {
	cols []duckdb.Column
	rows []types.Row
	err  error
}

// RunScript runs every query of s and returns one outcome per query, in
// order.
func (r *Runner) RunScript(ctx context.Context, s *Script) []Outcome {
	r.defaults()
	answers := map[*Query][]oracleAnswer{}
	var setupErr error
	for _, ds := range datasets(s) {
		if err := r.askOracle(ctx, ds, s.Queries, answers); err != nil {
			setupErr = err
			break
		}
	}
	out := make([]Outcome, len(s.Queries))
	for i, q := range s.Queries {
		o := Outcome{Query: q, Where: s.Where(q)}
		var err error
		if setupErr != nil {
			err = setupErr
		} else {
			err = r.check(ctx, q, answers[q])
		}
		switch {
		case q.Skip != "":
			o.Status = Skipped
			if err == nil {
				o.Detail = fmt.Sprintf("skipif %s %s: the query passes now; remove the mark", q.Skip, q.SkipReason)
			} else {
				o.Detail = fmt.Sprintf("skipif %s %s: %s", q.Skip, q.SkipReason, firstLine(err.Error()))
			}
		case err != nil:
			o.Status = Failed
			o.Detail = fmt.Sprintf("%s: %s\n%v", o.Where, q.SQL, err)
		default:
			o.Status = Passed
		}
		out[i] = o
	}
	return out
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// datasets lists the distinct datasets of s in order of first use.
func datasets(s *Script) []*Dataset {
	var out []*Dataset
	seen := map[*Dataset]bool{}
	for _, q := range s.Queries {
		if !seen[q.Data] {
			seen[q.Data] = true
			out = append(out, q.Data)
		}
	}
	return out
}

// askOracle loads ds's tables into DuckDB epoch by epoch and records, for
// each query over ds that must not fail, DuckDB's answer at each epoch.
func (r *Runner) askOracle(ctx context.Context, ds *Dataset, qs []*Query, answers map[*Query][]oracleAnswer) error {
	states := map[string]*liveState{}
	for _, t := range ds.Tables {
		states[t.Rel.Name] = newLiveState(t.Rel)
	}
	for e := range ds.NumEpochs() {
		for _, t := range ds.Tables {
			if in := ds.Inputs[t.Rel.Name]; e < len(in) {
				for _, c := range in[e] {
					if err := states[t.Rel.Name].apply(c); err != nil {
						return fmt.Errorf("input %s, epoch %d: %w", t.Rel.Name, e+1, err)
					}
				}
			}
		}
		if err := loadTables(ctx, r.Oracle, ds, states); err != nil {
			return err
		}
		for _, q := range qs {
			if q.Data != ds || q.ErrCode != "" || q.NoOracle {
				continue
			}
			sql := q.SQL
			if q.Oracle != "" {
				sql = q.Oracle
			}
			if err := r.Oracle.Exec(ctx, "SET GLOBAL TimeZone = "+quote(q.TimeZone.String())); err != nil {
				return err
			}
			cols, rows, err := r.Oracle.Query(ctx, sql)
			answers[q] = append(answers[q], oracleAnswer{cols: cols, rows: rows, err: err})
		}
	}
	return nil
}

// catalog resolves a dataset's tables.
type catalog struct{ ds *Dataset }

func (c catalog) Relation(name string) (*plan.Relation, error) {
	if t := c.ds.Table(name); t != nil {
		return t.Rel, nil
	}
	return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
}

// check runs q at every parallelism and compares.
func (r *Runner) check(ctx context.Context, q *Query, answers []oracleAnswer) error {
	for _, par := range r.Parallelisms {
		if err := r.checkOnce(ctx, q, answers, par); err != nil {
			return fmt.Errorf("parallelism %d: %w", par, err)
		}
	}
	return nil
}

func (r *Runner) checkOnce(ctx context.Context, q *Query, answers []oracleAnswer, par int) error {
	job, ep, err := r.build(q, par)
	if err == nil {
		rctx, cancel := context.WithTimeout(ctx, r.Timeout)
		err = task.Run(rctx, job.Graph, task.Options{})
		cancel()
	}
	if q.ErrCode != "" {
		if err == nil {
			return fmt.Errorf("the statement succeeded; want error %s", q.ErrCode)
		}
		if code := sqlerr.Code(err); code != q.ErrCode {
			return fmt.Errorf("error %s (%v); want %s", code, err, q.ErrCode)
		}
		if pos := sqlerr.From(err).Position; q.ErrPos != 0 && pos != q.ErrPos {
			return fmt.Errorf("error %s (%v) at position %d; want position %d", q.ErrCode, err, pos, q.ErrPos)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("error %s: %w", sqlerr.Code(err), err)
	}
	return compareEpochs(q, job, ep, answers)
}

func (r *Runner) build(q *Query, par int) (*planner.Job, *endpoints, error) {
	st, err := parser.ParseOne(q.SQL)
	if err != nil {
		return nil, nil, err
	}
	eval := &expr.Context{Loc: q.TimeZone}
	p, err := binder.New(catalog{q.Data}, q.SQL, eval).BindQuery(st.Node)
	if err != nil {
		return nil, nil, err
	}
	if q.Multiset {
		p = &plan.Repeat{Input: planner.Multiset(p, "_strata_count"), Cols: p.Schema()}
	}
	ep := &endpoints{data: q.Data, par: par}
	job, err := planner.Build("view", p, ep, planner.Options{Parallelism: par, Eval: eval})
	if err != nil {
		return nil, nil, err
	}
	return job, ep, nil
}

// compareEpochs applies the sink's changes epoch by epoch to a multiset and
// compares it with the oracle's answer at each epoch, then with the
// expected rows.
func compareEpochs(q *Query, job *planner.Job, ep *endpoints, answers []oracleAnswer) error {
	ep.mu.Lock()
	batches := append([]epochChanges(nil), ep.mu.out...)
	ep.mu.Unlock()
	sort.SliceStable(batches, func(i, j int) bool { return batches[i].epoch < batches[j].epoch })
	n := len(answers)
	if q.NoOracle {
		n = q.Data.NumEpochs()
	}
	bag := map[string]int{}
	reps := map[string]types.Row{}
	next := 0
	for e := 1; e <= n; e++ {
		var log []string
		for ; next < len(batches) && batches[next].epoch <= base.Epoch(e); next++ {
			// Invariant quiet, of every query ("quiet" only marks the
			// queries written for it).
			if row := noise(batches[next].changes); row != "" {
				return fmt.Errorf("epoch %d: the view retracts and adds the same row in one epoch: %s", e, row)
			}
			for _, c := range batches[next].changes {
				k := FormatRow(c.Row)
				log = append(log, c.Kind.String()+" "+k)
				if c.Kind.IsAdd() {
					bag[k]++
					reps[k] = c.Row
				} else {
					bag[k]--
				}
			}
		}
		for k, cnt := range bag {
			if cnt < 0 {
				return fmt.Errorf("epoch %d: the view retracted a row it did not hold: %s\nchanges of the epoch:\n%s", e, k, strings.Join(log, "\n"))
			}
		}
		if q.NoOracle {
			continue
		}
		a := answers[e-1]
		if a.err != nil {
			return fmt.Errorf("epoch %d: the oracle failed: %w", e, a.err)
		}
		if len(a.cols) != len(job.Types) {
			return fmt.Errorf("epoch %d: the view has %d columns, the oracle %d", e, len(job.Types), len(a.cols))
		}
		inexact := make([]bool, len(job.Types))
		for i, t := range job.Types {
			inexact[i] = isFloat(t.Kind) || isFloat(a.cols[i].Type.Kind)
		}
		var got, want []string
		for k, cnt := range bag {
			for range cnt {
				got = append(got, normRow(reps[k], job.Types, inexact))
			}
		}
		for _, row := range a.rows {
			want = append(want, normRow(row, job.Types, inexact))
		}
		if d := diff(got, want); d != "" {
			return fmt.Errorf("epoch %d: the view differs from DuckDB (- view only, + DuckDB only):\n%s\nchanges of the epoch:\n%s", e, d, strings.Join(log, "\n"))
		}
	}
	if next < len(batches) {
		return fmt.Errorf("the view emitted changes after the last epoch (%d)", n)
	}
	if q.HasExpected {
		var got []string
		for k, cnt := range bag {
			for range cnt {
				got = append(got, formatRowIn(reps[k], q.TimeZone))
			}
		}
		if d := diff(got, q.Expected); d != "" {
			return fmt.Errorf("final rows differ from the expected rows (- view only, + expected only):\n%s", d)
		}
	}
	return nil
}

// noise returns a row that changes both retract and add, or "".
func noise(changes []Change) string {
	retracted, added := map[string]bool{}, map[string]bool{}
	for _, c := range changes {
		k := FormatRow(c.Row)
		if c.Kind.IsAdd() {
			added[k] = true
		} else {
			retracted[k] = true
		}
		if added[k] && retracted[k] {
			return k
		}
	}
	return ""
}

func isFloat(k types.Kind) bool { return k == types.KindFloat32 || k == types.KindFloat64 }

// diff compares two multisets of lines; it returns "" when they are equal,
// else the lines only in a ("- ") and only in b ("+ "), sorted.
func diff(a, b []string) string {
	count := map[string]int{}
	for _, s := range a {
		count[s]++
	}
	for _, s := range b {
		count[s]--
	}
	var out []string
	for s, c := range count {
		for ; c > 0; c-- {
			out = append(out, "- "+s)
		}
		for ; c < 0; c++ {
			out = append(out, "+ "+s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i][2:] < out[j][2:] || out[i][2:] == out[j][2:] && out[i] < out[j] })
	return strings.Join(out, "\n")
}

// FinalRows runs q at parallelism 1 and returns the view's rows after the
// last epoch in the expected-rows format, sorted: what -rewrite writes
// below "----".
func (r *Runner) FinalRows(ctx context.Context, q *Query) ([]string, error) {
	r.defaults()
	job, ep, err := r.build(q, 1)
	if err != nil {
		return nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	if err := task.Run(rctx, job.Graph, task.Options{}); err != nil {
		return nil, err
	}
	bag := map[string]int{}
	for _, b := range ep.mu.out {
		for _, c := range b.changes {
			if c.Kind.IsAdd() {
				bag[formatRowIn(c.Row, q.TimeZone)]++
			} else {
				bag[formatRowIn(c.Row, q.TimeZone)]--
			}
		}
	}
	var out []string
	for k, n := range bag {
		for range n {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out, nil
}
