package nexmark

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stratadb/strata/connector/ingest"
	gen "github.com/stratadb/strata/connector/nexmark"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/server"
)

// Config configures Run.
type Config struct {
	// Events is the number of Nexmark events (all three tables together)
	// each query consumes (default 1,000,000).
	Events uint64
	// Seed is the generator's seed.
	Seed uint64
	// Parallelism is the parallelism of the views' stateful steps
	// (engine.Options.Parallelism; default 1).
	Parallelism int
	// EpochInterval and CheckpointInterval default to 1 s and 10 s.
	EpochInterval, CheckpointInterval time.Duration
	// Dir is where each query's data directory (and the Parquet files) go;
	// a temporary directory, removed at the end, when empty.
	Dir string
	// Keep keeps each query's data directory after its run.
	Keep bool
	// BidKey, when set, declares these columns of bid as its primary key
	// (bid has none in Nexmark), such as BidKeyColumns: the views that
	// select bid's rows are then keyed by it rather than append tables or
	// multisets ([bid-key]); the price is that bid becomes a primary-key
	// table whose writes are merged by key.
	BidKey []string
	// VsDuckDB writes the events to Parquet and runs each query's batch
	// form in DuckDB: its time and whether the view equals its result.
	VsDuckDB bool
	// Input is how the queries read person, auction and bid: InputTable
	// (the default) or InputSource ([input-source]).
	Input string
	// Timeout bounds each query's run (default 30 min).
	Timeout time.Duration
	// Logger receives the engine's warnings; nil discards them.
	Logger *slog.Logger
	// Progress, when set, receives a line per query step.
	Progress io.Writer
}

func (c Config) withDefaults() Config {
	if c.Events == 0 {
		c.Events = 1_000_000
	}
	if c.Parallelism < 1 {
		c.Parallelism = 1
	}
	if c.EpochInterval <= 0 {
		c.EpochInterval = time.Second
	}
	if c.CheckpointInterval <= 0 {
		c.CheckpointInterval = 10 * time.Second
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Minute
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if c.Input == "" {
		c.Input = InputTable
	}
	return c
}

// Inputs of Config.Input.
const (
	// InputTable: each query's inputs are tables with the nexmark
	// connector, filled by their ingest jobs, whose changelogs the view
	// reads.
	InputTable = "table"
	// InputSource: each query's inputs are sources (CREATE SOURCE) that
	// store nothing; the view's job runs the generator itself, as Flink
	// and RisingWave run Nexmark ([input-source]).
	InputSource = "source"
)

func (c Config) check() error {
	switch c.Input {
	case InputTable:
	case InputSource:
		if len(c.BidKey) > 0 {
			return fmt.Errorf("nexmark bench: --bid-key declares a primary key on bid, and a source has none (its changes are inserts only); use --input table: %w", base.ErrInvalidArgument)
		}
	default:
		return fmt.Errorf("nexmark bench: input %q is not %s or %s: %w", c.Input, InputTable, InputSource, base.ErrInvalidArgument)
	}
	return nil
}

// Statuses of a Result.
const (
	// StatusOK: the view consumed every event and committed; with
	// VsDuckDB, it also equals DuckDB's result.
	StatusOK = "ok"
	// StatusUnsupported: the SQL layer refused a statement of the query
	// (Error is its message); nothing was measured.
	StatusUnsupported = "unsupported"
	// StatusMismatch: the view differs from DuckDB's batch result.
	StatusMismatch = "mismatch"
	// StatusFailed: the run failed (a job error, the timeout).
	StatusFailed = "failed"
)

// Result is one query's run. Seconds run from the first CREATE TABLE to
// the moment the view has committed an epoch that holds every event;
// CPUSeconds are the process's user and system CPU time over the same
// span, so they include generating the events and writing the input
// tables as well as the view's job.
type Result struct {
	Query  string `json:"query"`
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	Note   string `json:"note,omitempty"`

	Events          uint64  `json:"events"`
	Seconds         float64 `json:"seconds"`
	CPUSeconds      float64 `json:"cpu_seconds"`
	EventsPerCPUSec float64 `json:"events_per_cpu_sec"`
	EventsPerSec    float64 `json:"events_per_sec"`
	PeakRSSBytes    int64   `json:"peak_rss_bytes"`
	Parallelism     int     `json:"parallelism"`
	// Input is Config.Input: "table" or "source".
	Input string `json:"input,omitempty"`
	// BidKey is Config.BidKey, comma-separated, when set.
	BidKey string `json:"bid_key,omitempty"`
	// Checkpoints is the number of completed checkpoints of all the run's
	// jobs; CheckpointP99Ms the 99th percentile of their durations and
	// CheckpointMaxBytes the largest one's size.
	Checkpoints        int     `json:"checkpoints"`
	CheckpointP99Ms    float64 `json:"checkpoint_p99_ms"`
	CheckpointMaxBytes int64   `json:"checkpoint_max_bytes"`
	// Epoch is the view's committed epoch that was read; ViewRows its rows.
	Epoch    uint64 `json:"epoch"`
	ViewRows int    `json:"view_rows"`

	// DuckDB's batch form over Parquet (VsDuckDB only).
	DuckDBSeconds float64 `json:"duckdb_seconds,omitempty"`
	// StrataOverDuckDB is Seconds / DuckDBSeconds.
	StrataOverDuckDB float64 `json:"strata_over_duckdb,omitempty"`
	DuckDBRows       int     `json:"duckdb_rows,omitempty"`
	// EqualToDuckDB is set when the view was compared with DuckDB's
	// result; Missing and Extra count the rows that differ and Diff shows
	// a few.
	EqualToDuckDB *bool    `json:"equal_to_duckdb,omitempty"`
	Missing       int      `json:"missing_rows,omitempty"`
	Extra         int      `json:"extra_rows,omitempty"`
	Diff          []string `json:"diff,omitempty"`
}

// Run runs each query in turn in a fresh engine (Runner.Query) and returns
// one Result per query. A query the SQL layer cannot plan gives a Result
// with StatusUnsupported and does not stop the run; only ctx ending or a
// failure to set up the run's directories does.
func Run(ctx context.Context, cfg Config, queries []Query) ([]Result, error) {
	r, err := NewRunner(cfg)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []Result
	for _, q := range queries {
		res := r.Query(ctx, q)
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		out = append(out, res)
	}
	return out, nil
}

// Runner runs queries one at a time over one configuration. It holds the
// DuckDB side (Parquet files of the events, written once) when VsDuckDB.
type Runner struct {
	cfg     Config
	dir     string
	tempDir bool
	duck    *duckSide // nil unless VsDuckDB
}

// NewRunner prepares the run's directory and, with VsDuckDB, writes the
// events to Parquet and opens DuckDB over them.
func NewRunner(cfg Config) (*Runner, error) {
	cfg = cfg.withDefaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	r := &Runner{cfg: cfg, dir: cfg.Dir}
	if r.dir == "" {
		d, err := os.MkdirTemp("", "strata-nexmark-")
		if err != nil {
			return nil, err
		}
		r.dir, r.tempDir = d, true
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return nil, fmt.Errorf("nexmark bench: directory %s: %w", r.dir, err)
	}
	if err := writeSideInput(r.sideInputPath()); err != nil {
		return nil, errors.Join(err, r.Close())
	}
	if cfg.VsDuckDB {
		fmt.Fprintf(cfg.Progress, "writing %d events to Parquet in %s ...\n", cfg.Events, filepath.Join(r.dir, "parquet"))
		d, err := openDuckSide(filepath.Join(r.dir, "parquet"), r.genConfig(), r.sideInputPath())
		if err != nil {
			return nil, errors.Join(err, r.Close())
		}
		r.duck = d
	}
	return r, nil
}

// Close closes DuckDB and removes a temporary directory.
func (r *Runner) Close() error {
	var errs []error
	if r.duck != nil {
		errs = append(errs, r.duck.close())
	}
	switch {
	case r.tempDir:
		errs = append(errs, os.RemoveAll(r.dir))
	case !r.cfg.Keep:
		// A directory of the caller's keeps nothing of the run but what
		// Keep asks for: each query's directory is removed after it,
		// the side input and the Parquet files here.
		errs = append(errs, os.Remove(r.sideInputPath()), os.RemoveAll(filepath.Join(r.dir, "parquet")))
	}
	return errors.Join(errs...)
}

func (r *Runner) sideInputPath() string { return filepath.Join(r.dir, "side_input.csv") }

func (r *Runner) genConfig() gen.Config {
	return gen.Config{Events: r.cfg.Events, Seed: r.cfg.Seed}
}

// writeSideInput writes q13's side input: SideInputRows rows "key,value"
// with value the key's decimal text, as the reference's side-input file
// holds.
func writeSideInput(path string) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("nexmark bench: side input %s: %w", path, err)
	}
	w := csv.NewWriter(f)
	for k := range SideInputRows {
		if err := w.Write([]string{strconv.Itoa(k), "v" + strconv.Itoa(k)}); err != nil {
			f.Close()
			return fmt.Errorf("nexmark bench: side input %s: %w", path, err)
		}
	}
	w.Flush()
	if err := errors.Join(w.Error(), f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("nexmark bench: side input %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

// BidKeyColumns is a key for bid that no two generated bids share in
// practice: extra is a random string of about 70 letters.
var BidKeyColumns = []string{"auction", "bidder", "date_time", "extra"}

// ProcTimeColumn is the processing-time column q12's bid table gets last
// (Query.ProcTime): the time each bid was ingested, stored in bid.
const ProcTimeColumn = "p_time TIMESTAMPTZ GENERATED ALWAYS AS (proctime()) STORED"

// tableDDL is the CREATE TABLE of a Nexmark table bounded to events, with
// key as the primary key of bid when set and more connector options
// (name, value pairs) when given.
func tableDDL(t gen.Table, events, seed uint64, bidKey []string, more ...string) string {
	return tableDDLWith(t, events, seed, bidKey, false, more...)
}

// tableDDLWith is tableDDL, with bid's ProcTimeColumn when procTime.
func tableDDLWith(t gen.Table, events, seed uint64, bidKey []string, procTime bool, more ...string) string {
	return createDDL("TABLE", t, events, seed, bidKey, procTime, more...)
}

// sourceDDL is the CREATE SOURCE of a Nexmark table bounded to events
// ([input-source]): tableDDL's columns and options, with no primary key
// (a source has none; its changes are inserts only, as Flink's and
// RisingWave's Nexmark sources declare none).
func sourceDDL(t gen.Table, events, seed uint64, procTime bool) string {
	return createDDL("SOURCE", t, events, seed, nil, procTime)
}

// createDDL is the CREATE TABLE or CREATE SOURCE (what) of tableDDLWith
// and sourceDDL.
func createDDL(what string, t gen.Table, events, seed uint64, bidKey []string, procTime bool, more ...string) string {
	sc := t.Schema()
	if t == gen.Bid && len(bidKey) > 0 {
		sc.PrimaryKey = bidKey
	}
	if what == "SOURCE" {
		sc.PrimaryKey = nil
	}
	cols := make([]string, len(sc.Columns))
	for i, c := range sc.Columns {
		cols[i] = c.Name + " " + c.Type.String()
	}
	if t == gen.Bid && procTime {
		cols = append(cols, ProcTimeColumn)
	}
	if len(sc.PrimaryKey) > 0 {
		cols = append(cols, "PRIMARY KEY ("+strings.Join(sc.PrimaryKey, ", ")+")")
	}
	opts := fmt.Sprintf("connector = 'nexmark', nexmark.table = '%s', events = '%d', seed = '%d'", t, events, seed)
	for i := 0; i+1 < len(more); i += 2 {
		opts += fmt.Sprintf(", %s = '%s'", more[i], more[i+1])
	}
	return fmt.Sprintf("CREATE %s %s (%s) WITH (%s)", what, t, strings.Join(cols, ", "), opts)
}

// ingestPosition tells where the ingest job of a Nexmark table of e last
// closed an epoch.
func ingestPosition(e *engine.Engine) func(gen.Table) ingest.Pair {
	return func(t gen.Table) ingest.Pair {
		return e.IngestPosition(engine.IngestJobName(catalog.Name(engine.DefaultDatabase, string(t))))
	}
}

func sideInputDDL(path string) string {
	return fmt.Sprintf("CREATE TABLE side_input (key BIGINT PRIMARY KEY, value VARCHAR) WITH (connector = 'file', path = '%s', format = 'csv')",
		strings.ReplaceAll(path, "'", "''"))
}

// execSQL runs one statement in a session, as a client would.
func execSQL(ctx context.Context, s *server.Session, text string) error {
	p, err := s.Prepare(ctx, text, nil)
	if err != nil {
		return err
	}
	_, err = s.Execute(ctx, p, nil)
	return err
}

// checkpoints collects the completed checkpoints of a run's jobs by
// watching engine.Jobs (each job reports its last one).
type checkpoints struct {
	mu   sync.Mutex
	seen map[string]map[base.CheckpointID]task.Event // guarded by mu
}

func (c *checkpoints) poll(e *engine.Engine) {
	jobs := e.Jobs()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]map[base.CheckpointID]task.Event{}
	}
	for _, j := range jobs {
		cp := j.LastCheckpoint
		if cp.ID == 0 {
			continue
		}
		if c.seen[j.Name] == nil {
			c.seen[j.Name] = map[base.CheckpointID]task.Event{}
		}
		c.seen[j.Name][cp.ID] = cp
	}
}

// summary returns the count, the p99 duration in ms and the largest size.
func (c *checkpoints) summary() (n int, p99Ms float64, maxBytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ds []float64
	for _, m := range c.seen {
		for _, ev := range m {
			ds = append(ds, float64(ev.Duration)/float64(time.Millisecond))
			maxBytes = max(maxBytes, ev.StateBytes+ev.ChannelStateBytes)
		}
	}
	if len(ds) == 0 {
		return 0, 0, 0
	}
	slices.Sort(ds)
	return len(ds), ds[min(len(ds)-1, int(0.99*float64(len(ds))))], maxBytes
}

// Query runs one query in a fresh engine: it creates the query's input
// tables bounded to Config.Events events, creates the view, waits until
// every input has consumed its events and the view has committed an epoch
// that holds them, measures, reads the view and (VsDuckDB) compares it
// with DuckDB's batch result.
func (r *Runner) Query(ctx context.Context, q Query) Result {
	cfg := r.cfg
	res := Result{Query: q.Name, Events: cfg.Events, Parallelism: cfg.Parallelism, Note: q.Note, BidKey: strings.Join(cfg.BidKey, ","), Input: cfg.Input}
	fail := func(status string, err error) Result {
		res.Status, res.Error = status, err.Error()
		return res
	}
	sources := cfg.Input == InputSource
	if sources && q.View == "" {
		return fail(StatusUnsupported, fmt.Errorf("%s fills the input tables with no view; with --input source nothing is stored, so there is nothing to measure (use --input table)", q.Name))
	}
	dir := filepath.Join(r.dir, q.Name)
	if err := os.RemoveAll(dir); err != nil {
		return fail(StatusFailed, err)
	}
	if !cfg.Keep {
		defer os.RemoveAll(dir)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	fmt.Fprintf(cfg.Progress, "%s: %s, %d events ...\n", q.Name, q.Title, cfg.Events)

	runtime.GC()
	debug.FreeOSMemory()
	e, err := engine.Open(ctx, engine.Options{Dir: dir, EpochInterval: cfg.EpochInterval,
		CheckpointInterval: cfg.CheckpointInterval, Parallelism: cfg.Parallelism, Logger: cfg.Logger})
	if err != nil {
		return fail(StatusFailed, err)
	}
	defer e.Close()
	sess := server.NewSession(e, engine.DefaultDatabase)
	if q.SideInput {
		// The side input is set up, and committed, before the clock starts.
		if err := execSQL(ctx, sess, sideInputDDL(r.sideInputPath())); err != nil {
			return fail(StatusUnsupported, fmt.Errorf("side input: %w", err))
		}
		if err := waitRows(ctx, e, catalog.Name(engine.DefaultDatabase, "side_input"), SideInputRows); err != nil {
			return fail(StatusFailed, fmt.Errorf("side input: %w", err))
		}
	}

	var cps checkpoints
	smp := startSampler(50*time.Millisecond, func() { cps.poll(e) })
	start, cpu0 := time.Now(), cpuTime()
	for _, t := range q.Tables {
		ddl := tableDDLWith(t, cfg.Events, cfg.Seed, cfg.BidKey, q.ProcTime)
		status := StatusFailed
		if sources {
			ddl = sourceDDL(t, cfg.Events, cfg.Seed, q.ProcTime)
			// A source refuses what q12's bid needs (a stored
			// processing-time column): the query is unsupported then.
			status = StatusUnsupported
		}
		if err := execSQL(ctx, sess, ddl); err != nil {
			smp.finish()
			if ctx.Err() != nil {
				status = StatusFailed
			}
			return fail(status, fmt.Errorf("%s: %w", strings.SplitN(ddl, " (", 2)[0], err))
		}
	}
	view := catalog.Name(engine.DefaultDatabase, q.Name)
	var stmts []string
	if q.View != "" {
		stmts = append([]string{"CREATE MATERIALIZED VIEW " + q.Name + " AS " + q.View}, q.After...)
	}
	for _, st := range stmts {
		if err := execSQL(ctx, sess, strings.ReplaceAll(st, "{{dir}}", dir)); err != nil {
			smp.finish()
			if ctx.Err() != nil {
				// Stopped by the time limit (or a signal), not refused.
				return fail(StatusFailed, fmt.Errorf("%w (time limit %v)", err, cfg.Timeout))
			}
			return fail(StatusUnsupported, err)
		}
	}
	position := ingestPosition(e)
	if sources {
		position = func(t gen.Table) ingest.Pair {
			return e.SourcePosition(view, catalog.Name(engine.DefaultDatabase, string(t)))
		}
	}
	target, err := r.waitConsumed(ctx, e, q.Tables, position)
	// Without a view (the Ingest baseline) the tables are what is waited
	// for.
	waitFor := []catalog.ObjectName{view}
	if q.View == "" {
		waitFor = waitFor[:0]
		for _, t := range q.Tables {
			waitFor = append(waitFor, catalog.Name(engine.DefaultDatabase, string(t)))
		}
	}
	for _, n := range waitFor {
		if err == nil {
			err = waitView(ctx, e, n, target)
		}
	}
	wall, cpu := time.Since(start), cpuTime()-cpu0
	cps.poll(e)
	res.PeakRSSBytes = smp.finish()
	if err != nil {
		return fail(StatusFailed, err)
	}
	res.Seconds, res.CPUSeconds = wall.Seconds(), cpu.Seconds()
	if cpu > 0 {
		res.EventsPerCPUSec = float64(cfg.Events) / cpu.Seconds()
	}
	res.EventsPerSec = float64(cfg.Events) / wall.Seconds()
	res.Checkpoints, res.CheckpointP99Ms, res.CheckpointMaxBytes = cps.summary()

	res.Status = StatusOK
	if q.View == "" {
		fmt.Fprintf(cfg.Progress, "%s: %.2f s, %.2f CPU s, %.0f events/CPU s\n", q.Name, res.Seconds, res.CPUSeconds, res.EventsPerCPUSec)
		return res
	}
	// The view as SELECT * sees it: a view without a unique key is a
	// multiset whose rows read back as often as they occur.
	names, rows, at, err := e.ReadAt(ctx, view, base.NoEpoch)
	if err != nil {
		return fail(StatusFailed, err)
	}
	res.Epoch, res.ViewRows = uint64(at), len(rows)
	fmt.Fprintf(cfg.Progress, "%s: %.2f s, %.2f CPU s, %.0f events/CPU s, %d rows at epoch %d\n",
		q.Name, res.Seconds, res.CPUSeconds, res.EventsPerCPUSec, res.ViewRows, at)
	if r.duck != nil && q.DuckDB != "" {
		if q.ProcTime {
			// The stamps are this run's: DuckDB reads them from bid.
			if err := r.duck.loadProcTime(ctx, e, filepath.Join(dir, "bid_proctime.parquet"), at); err != nil {
				return fail(StatusFailed, err)
			}
		}
		r.compare(ctx, q, names, rows, &res)
	}
	return res
}

// waitConsumed waits until the reader of every table (position tells
// where it last closed an epoch: the table's ingest job, or the view's
// reader of the source) has closed an epoch at a position past its last
// event, and returns the highest such epoch: once the view commits it,
// the view holds every event.
func (r *Runner) waitConsumed(ctx context.Context, e *engine.Engine, tables []gen.Table, position func(gen.Table) ingest.Pair) (base.Epoch, error) {
	readers := make([]*gen.Reader, len(tables))
	for i, t := range tables {
		rd, err := gen.NewReader(t, r.genConfig())
		if err != nil {
			return 0, err
		}
		readers[i] = rd
	}
	for {
		var target base.Epoch
		done := true
		for i, t := range tables {
			p := position(t)
			if p.Epoch == 0 || !readers[i].Exhausted(p.Position) {
				done = false
				break
			}
			target = max(target, p.Epoch)
		}
		if done {
			return target, nil
		}
		if err := jobFailure(e); err != nil {
			return 0, err
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("waiting for the inputs to consume every event: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// jobFailure returns the error of a job that stopped or keeps restarting.
func jobFailure(e *engine.Engine) error {
	for _, j := range e.Jobs() {
		if j.Err != nil && (!j.Running || j.Restarts >= 3) {
			return fmt.Errorf("job %s: %w", j.Name, j.Err)
		}
	}
	return nil
}

// waitView waits until view has committed epoch ep, failing early when a
// job fails.
func waitView(ctx context.Context, e *engine.Engine, view catalog.ObjectName, ep base.Epoch) error {
	for {
		wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := e.WaitCommitted(wctx, view, ep)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("waiting for view %s to commit epoch %d: %w", view.Name, ep, ctx.Err())
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		if err := jobFailure(e); err != nil {
			return err
		}
	}
}

// waitRows waits until table name has committed an epoch holding n rows.
func waitRows(ctx context.Context, e *engine.Engine, name catalog.ObjectName, n int) error {
	tb, err := e.Table(name)
	if err != nil {
		return err
	}
	for {
		if at, err := tb.CommittedEpoch(); err == nil && at != base.NoEpoch {
			rows, err := tb.ReadAtEpoch(at)
			if err != nil {
				return err
			}
			if len(rows) >= n {
				return nil
			}
		}
		if err := jobFailure(e); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to hold %d rows: %w", name.Name, n, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// canonRow renders a row for comparison across engines: numbers of every
// kind as floats with 12 significant digits (DuckDB's avg is DOUBLE where
// Strata's is NUMERIC), timestamps as microseconds, text as itself.
func canonRow(r types.Row) string {
	var b strings.Builder
	for i, d := range r {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(canonDatum(d))
	}
	return b.String()
}

func canonDatum(d types.Datum) string {
	switch d.Kind() {
	case types.KindUnknown:
		return "NULL"
	case types.KindInt16, types.KindInt32, types.KindInt64:
		return strconv.FormatFloat(float64(d.Int64()), 'g', 12, 64)
	case types.KindFloat32, types.KindFloat64:
		return strconv.FormatFloat(d.Float64(), 'g', 12, 64)
	case types.KindNumeric:
		f, err := d.Decimal().Float64()
		if err != nil {
			return d.Decimal().String()
		}
		return strconv.FormatFloat(f, 'g', 12, 64)
	case types.KindTimestamp, types.KindTimestampTZ:
		return strconv.FormatInt(d.Micros(), 10)
	case types.KindChar, types.KindVarchar, types.KindText:
		return d.Str()
	}
	return types.FormatText(d, nil)
}

// diffRows compares two row lists as multisets of canonRow and returns how
// many rows of want got lacks, how many it has beyond want, and up to five
// examples of each.
func diffRows(want, got []types.Row) (missing, extra int, examples []string) {
	count := map[string]int{}
	for _, r := range want {
		count[canonRow(r)]++
	}
	for _, r := range got {
		count[canonRow(r)]--
	}
	keys := make([]string, 0, len(count))
	for k, n := range count {
		if n != 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var miss, ext []string
	for _, k := range keys {
		if n := count[k]; n > 0 {
			missing += n
			if len(miss) < 5 {
				miss = append(miss, "missing "+k)
			}
		} else {
			extra -= n
			if len(ext) < 5 {
				ext = append(ext, "extra   "+k)
			}
		}
	}
	return missing, extra, append(miss, ext...)
}
