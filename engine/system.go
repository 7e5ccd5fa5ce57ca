package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/plan"
)

// SystemSchema is the schema of the system tables: strata_catalog.tables,
// .jobs, .lineage and .epochs describe the instance as it is when a query
// reads them (they are not versioned).
const SystemSchema = "strata_catalog"

type systemTable struct {
	cols []plan.Column
	rows func(ctx context.Context, e *Engine) ([]types.Row, error)
}

func sysCols(spec ...string) []plan.Column {
	out := make([]plan.Column, 0, len(spec)/2)
	for i := 0; i < len(spec); i += 2 {
		t, err := types.ParseType(spec[i+1])
		if err != nil {
			panic(err)
		}
		out = append(out, plan.Column{Name: spec[i], Type: t})
	}
	return out
}

func text(s string) types.Datum { return types.NewText(s) }
func i64(n int64) types.Datum   { return types.NewInt64(n) }

var systemTables = map[string]systemTable{
	// tables: every table and view with its committed epoch, freshness
	// lag, latest snapshot and the records of its live data files.
	"tables": {
		cols: sysCols("name", "TEXT", "kind", "TEXT", "committed_epoch", "BIGINT", "freshness_lag_ms", "BIGINT",
			"snapshot_id", "BIGINT", "total_records", "BIGINT", "writer", "TEXT"),
		rows: func(ctx context.Context, e *Engine) ([]types.Row, error) {
			cat, err := e.meta.Catalog(ctx)
			if err != nil {
				return nil, err
			}
			f, err := e.meta.Freshness(ctx)
			if err != nil {
				return nil, err
			}
			writers := map[catalog.ObjectName]string{}
			for _, j := range cat.Jobs() {
				for _, w := range j.Writes {
					writers[w] = j.Name
				}
			}
			var out []types.Row
			for _, t := range cat.Tables() {
				row := types.Row{text(t.Name.Name), text(string(t.Kind)), types.Null, types.Null, types.Null, types.Null, text(writers[t.Name])}
				for _, tf := range f.Tables {
					if tf.Table == t.Name {
						row[2] = i64(int64(tf.Committed))
						if tf.Known {
							row[3] = i64(tf.Lag.Milliseconds())
						}
					}
				}
				if tb, err := e.Table(t.Name); err == nil {
					if s, err := tb.Latest(); err == nil && s != nil {
						row[4], row[5] = i64(int64(s.ID)), i64(s.TotalRecordCount)
					}
				}
				out = append(out, row)
			}
			// Sources store nothing: no epoch, snapshot or writer.
			for _, s := range cat.Sources() {
				out = append(out, types.Row{text(s.Name.Name), text("source"), types.Null, types.Null, types.Null, types.Null, types.Null})
			}
			return out, nil
		},
	},
	// jobs: every job with its status, restarts in this process and last
	// completed checkpoint.
	"jobs": {
		cols: sysCols("name", "TEXT", "kind", "TEXT", "status", "TEXT", "reads", "TEXT", "writes", "TEXT", "restarts", "BIGINT",
			"last_checkpoint", "BIGINT", "checkpoint_duration_ms", "BIGINT", "checkpoint_bytes", "BIGINT", "channel_state_bytes", "BIGINT", "error", "TEXT"),
		rows: func(ctx context.Context, e *Engine) ([]types.Row, error) {
			infos, err := e.meta.Jobs(ctx)
			if err != nil {
				return nil, err
			}
			local := map[string]JobStatus{}
			for _, j := range e.Jobs() {
				local[j.Name] = j
			}
			var out []types.Row
			for _, j := range infos {
				l := local[j.Job.Name]
				errText := types.Null
				if l.Err != nil {
					errText = text(base.UserMessage(l.Err.Error()))
				} else if j.Reason != "" {
					errText = text(base.UserMessage(j.Reason))
				}
				cp := l.LastCheckpoint
				out = append(out, types.Row{text(j.Job.Name), text(string(JobKind(j.Job))), text(e.JobStatusText(j.Status, l)),
					text(names(j.Job.Reads)), text(names(j.Job.Writes)), i64(int64(l.Restarts)),
					i64(int64(max(j.LastCheckpoint, cp.ID))), i64(cp.Duration.Milliseconds()), i64(cp.StateBytes + cp.ChannelStateBytes),
					i64(cp.ChannelStateBytes), errText})
			}
			return out, nil
		},
	},
	// lineage: one row per edge, object read by a job -> object it writes
	// (for an external sink, the sink).
	"lineage": {
		cols: sysCols("upstream", "TEXT", "downstream", "TEXT", "job", "TEXT"),
		rows: jobRows(func(_ *Engine, j catalog.Job) []types.Row {
			var out []types.Row
			if isExternalSinkJob(j) {
				// An external sink writes no table: its edge ends at the
				// sink's own name.
				for _, r := range j.Reads {
					out = append(out, types.Row{text(r.Name), text(j.Options[jobOptSink]), text(j.Name)})
				}
			}
			for _, w := range j.Writes {
				if len(j.Reads) == 0 {
					out = append(out, types.Row{types.Null, text(w.Name), text(j.Name)})
				}
				for _, r := range j.Reads {
					out = append(out, types.Row{text(r.Name), text(w.Name), text(j.Name)})
				}
			}
			return out
		}),
	},
	// checkpoints: the completed checkpoints each job retains on disk,
	// with their mode and size.
	"checkpoints": {
		cols: sysCols("job", "TEXT", "checkpoint_id", "BIGINT", "mode", "TEXT", "subtasks", "BIGINT", "bytes", "BIGINT"),
		rows: jobRows(func(e *Engine, j catalog.Job) []types.Row {
			st := e.checkpointStorage(j.Name)
			ms, err := st.Completed()
			if err != nil {
				return nil // a job without checkpoints yet
			}
			var out []types.Row
			for _, m := range ms {
				var size int64
				for _, f := range m.Subtasks {
					size += f.Size
				}
				out = append(out, types.Row{text(j.Name), i64(int64(m.Checkpoint)), text(m.Mode), i64(int64(len(m.Subtasks))), i64(size)})
			}
			return out
		}),
	},
	// dead_letters: records of connector tables with errors = 'dead-letter'
	// that did not parse, with their position, error and raw bytes (one
	// entry per position, replays included once).
	"dead_letters": {
		cols: sysCols("table_name", "TEXT", "source", "TEXT", "position", "BIGINT", "location", "TEXT", "error", "TEXT", "raw", "BYTEA"),
		rows: func(ctx context.Context, e *Engine) ([]types.Row, error) { return e.deadLetterRows() },
	},
	// skipped: records of connector tables with errors = 'skip' that
	// did not parse and were skipped, counted since this process started
	// their jobs (a replay after a restore counts a record again).
	"skipped": {
		cols: sysCols("table_name", "TEXT", "skipped", "BIGINT"),
		rows: func(ctx context.Context, e *Engine) ([]types.Row, error) {
			e.mu.Lock()
			defer e.mu.Unlock()
			var out []types.Row
			for n, errs := range e.skipErrs {
				var sum uint64
				for _, x := range errs {
					sum += x.Skipped()
				}
				if len(errs) > 0 {
					out = append(out, types.Row{text(n.Name), i64(int64(sum))})
				}
			}
			return out, nil
		},
	},
	// epochs: the epoch clock: the open epoch, when it opened, and the
	// interval.
	"epochs": {
		cols: sysCols("current_epoch", "BIGINT", "started_at", "TIMESTAMPTZ", "interval_ms", "BIGINT"),
		rows: func(ctx context.Context, e *Engine) ([]types.Row, error) {
			info, err := e.meta.CurrentEpoch(ctx)
			if err != nil {
				return nil, err
			}
			return []types.Row{{i64(int64(info.Epoch)), types.NewTimestampTZ(info.Start.UnixMicro()), i64(e.opts.EpochInterval.Milliseconds())}}, nil
		},
	},
}

// jobRows returns the rows function of a system table with rows per job:
// fn's rows for every job of the catalog, in the catalog's order.
func jobRows(fn func(e *Engine, j catalog.Job) []types.Row) func(ctx context.Context, e *Engine) ([]types.Row, error) {
	return func(ctx context.Context, e *Engine) ([]types.Row, error) {
		cat, err := e.meta.Catalog(ctx)
		if err != nil {
			return nil, err
		}
		var out []types.Row
		for _, j := range cat.Jobs() {
			out = append(out, fn(e, j)...)
		}
		return out, nil
	}
}

func names(ns []catalog.ObjectName) string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Name
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// systemRelation returns the relation of a system table named
// "strata_catalog.NAME", or false.
func systemRelation(name string) (*plan.Relation, bool) {
	rest, ok := strings.CutPrefix(name, SystemSchema+".")
	if !ok {
		return nil, false
	}
	st, ok := systemTables[rest]
	if !ok {
		return nil, false
	}
	return &plan.Relation{Name: name, Columns: slices.Clone(st.cols)}, true
}

// SystemTables lists the system tables' names.
func SystemTables() []string {
	out := make([]string, 0, len(systemTables))
	for n := range systemTables {
		out = append(out, SystemSchema+"."+n)
	}
	slices.Sort(out)
	return out
}

// systemRows computes a system table's rows now.
func (e *Engine) systemRows(ctx context.Context, name string) ([]types.Row, error) {
	st, ok := systemTables[strings.TrimPrefix(name, SystemSchema+".")]
	if !ok {
		return nil, fmt.Errorf("system table %s does not exist: %w", name, base.ErrNotFound)
	}
	return st.rows(ctx, e)
}
