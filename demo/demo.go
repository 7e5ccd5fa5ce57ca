package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stratadb/strata/connector/nexmark"
	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/server"
	"github.com/stratadb/strata/sql/ddl"
	"github.com/stratadb/strata/sql/pgwire"
)

// Options configure Run.
type Options struct {
	// Engine is the engine's configuration (data directory, intervals).
	Engine engine.Options
	// Rate is the generator's rate in events per second.
	Rate uint64
	// Seed is the generator's seed.
	Seed uint64
	// Duration stops the demo after it (0: until ctx ends).
	Duration time.Duration
	// Serve, when set, is the Postgres wire address to serve on while
	// the demo runs.
	Serve string
	// HTTP, with Serve, is the address of /metrics and the API strata
	// verify uses ("" or "-": none).
	HTTP string
	// Stop, when closed, ends the run as Duration does: the views are
	// verified and the summary returned (a Ctrl-C). Cancelling ctx instead
	// abandons the run, verification included.
	Stop <-chan struct{}
	// Out receives the status and the summary.
	Out io.Writer
	// Live redraws a status block in place (a terminal); otherwise a
	// status line is printed every few seconds.
	Live bool

	// afterCreate, in tests, runs once the topology is created, before
	// the checks start (a slow creation).
	afterCreate func()
}

// Summary is the outcome of Run.
type Summary struct {
	Events           uint64
	Passed, Violated int
	Verified, Views  int
	// Duration is how long the topology ran, from its creation to the
	// stop; Verification is how long the final verification took.
	Duration, Verification time.Duration
	LastEpoch              base.Epoch
	VerificationDetails    []string
	// Warning, when not "", says why no consistency check ran (or none
	// completed) and what to change; the command prints it just before
	// Line, whose shape stays the same.
	Warning string
}

// Line is the summary's last line, in the shape scripts read:
// "consistency checks: P passed, V violated; views verified: K of N".
func (s Summary) Line() string {
	return fmt.Sprintf("consistency checks: %d passed, %d violated; views verified: %d of %d", s.Passed, s.Violated, s.Verified, s.Views)
}

// Views are the demo's materialized views, in creation order.
var Views = []string{"t1", "t2", "t3"}

// bidWatermark is the bid table's watermark declaration.
const bidWatermark = "WATERMARK FOR date_time AS date_time - INTERVAL '5' SECOND"

// Script returns the SQL that creates the demo's tables and views.
func Script(rate, seed uint64) string {
	var b strings.Builder
	for _, sc := range []nexmark.Schema{nexmark.PersonSchema, nexmark.AuctionSchema, nexmark.BidSchema} {
		cols := make([]string, len(sc.Columns))
		for i, c := range sc.Columns {
			cols[i] = c.Name + " " + c.Type.String()
		}
		if len(sc.PrimaryKey) > 0 {
			cols = append(cols, "PRIMARY KEY ("+strings.Join(sc.PrimaryKey, ", ")+")")
		}
		if sc.Table == nexmark.BidSchema.Table {
			// Bids arrive in event-time order (connector/nexmark: event
			// n's time grows with n), so the watermark drops none; it lets
			// t1 free each 10-second window's groups 15 s of event time
			// after the window starts (stream.GroupExpiry).
			cols = append(cols, bidWatermark)
		}
		fmt.Fprintf(&b, "CREATE TABLE %s (%s)\n  WITH (connector = 'nexmark', nexmark.table = '%s', rate = '%d', event.rate = '%d', seed = '%d');\n",
			sc.Table, strings.Join(cols, ", "), sc.Table, rate, rate, seed)
	}
	b.WriteString(`CREATE MATERIALIZED VIEW t1 AS
  SELECT auction, date_bin(INTERVAL '10 seconds', date_time, TIMESTAMP '2000-01-01') AS window_start, count(*) AS bids, sum(price) AS volume
  FROM bid GROUP BY auction, date_bin(INTERVAL '10 seconds', date_time, TIMESTAMP '2000-01-01');
CREATE MATERIALIZED VIEW t2 AS
  SELECT window_start, count(*) AS auctions, sum(bids) AS bids, sum(volume) AS volume
  FROM t1 GROUP BY window_start;
CREATE MATERIALIZED VIEW t3 AS
  SELECT t2.window_start, t2.bids AS t2_bids, s.bids AS t1_bids, t2.auctions AS t2_auctions, s.auctions AS t1_auctions, s.top_bids
  FROM t2 JOIN (SELECT window_start, sum(bids) AS bids, count(*) AS auctions, max(bids) AS top_bids FROM t1 GROUP BY window_start) s
  ON t2.window_start = s.window_start;
`)
	return b.String()
}

// CheckQuery is the consistency check's SELECT (see the package doc).
const CheckQuery = `SELECT a.n AS t1_bids, b.n AS t2_bids, c.n AS t3_bids, a.k AS t1_rows, b.k AS t2_auctions, c.k AS t3_auctions,
       c.bad AS t3_mismatches
FROM (SELECT coalesce(sum(bids), 0) AS n, count(*) AS k FROM t1) a,
     (SELECT coalesce(sum(bids), 0) AS n, coalesce(sum(auctions), 0) AS k FROM t2) b,
     (SELECT coalesce(sum(t2_bids), 0) AS n, coalesce(sum(t1_auctions), 0) AS k,
             count(*) FILTER (WHERE t2_bids <> t1_bids OR t2_auctions <> t1_auctions) AS bad FROM t3) c`

// exec runs a script through a SQL session, as a client would.
func exec(ctx context.Context, s *server.Session, script string) ([]*pgwire.Result, error) {
	stmts, err := ddl.Parse(script)
	if err != nil {
		return nil, err
	}
	var out []*pgwire.Result
	for _, st := range stmts {
		p, err := s.Prepare(ctx, st.Text(), nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", firstLine(st.Text()), err)
		}
		r, err := s.Execute(ctx, p, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", firstLine(st.Text()), err)
		}
		out = append(out, r)
	}
	return out, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

// CheckFresh refuses a data directory that already holds tables, or whose
// meta store another strata process holds or that cannot be read, before
// anything of it starts (Run calls it first; the command calls it before
// printing anything): it opens the instance without its jobs
// (engine.Options.NoJobs), so that the refusal does not first run (and
// log the failures of) that instance's jobs. A directory without a meta
// store yet is fresh. With a meta store of the caller's (opts.MetaStore),
// which closing an engine would close, Run's own check after opening
// applies instead.
func CheckFresh(ctx context.Context, opts engine.Options) error {
	if opts.MetaStore != nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(opts.Dir, "meta.db")); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	opts.NoJobs = true
	e, err := engine.Open(ctx, opts)
	if err != nil {
		return err
	}
	cat, err := e.Catalog(ctx)
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if len(cat.Tables()) > 0 {
		return freshError(opts.Dir)
	}
	return nil
}

// freshError is the refusal of a data directory that holds tables.
func freshError(dir string) error {
	return fmt.Errorf("data directory %s already holds tables; the demo needs a fresh one (give --data a new directory, or remove this one)", dir)
}

// Run creates the demo topology in a fresh engine and runs it until
// opts.Duration passes or ctx ends, then verifies every view and returns
// the summary (the caller prints its Line last).
func Run(ctx context.Context, opts Options) (Summary, error) {
	var sum Summary
	if err := CheckFresh(ctx, opts.Engine); err != nil {
		return sum, err
	}
	// Without a limit of the user's, the collector keeps the heap within
	// a share of the machine (see MemoryShare).
	limitDesc, restoreLimit := SetMemoryLimit(MemoryShare)
	defer restoreLimit()
	if limitDesc != "" {
		fmt.Fprintln(opts.Out, limitDesc)
	}
	var srv *server.Server
	var e *engine.Engine
	var err error
	if opts.Serve != "" {
		httpAddr := opts.HTTP
		if httpAddr == "" {
			httpAddr = "-"
		}
		srv, err = server.Start(ctx, server.Options{Engine: opts.Engine, Listen: opts.Serve, HTTP: httpAddr})
		if err != nil {
			return sum, err
		}
		e = srv.Engine
		defer srv.Close()
		fmt.Fprintf(opts.Out, "serving: %s\n", server.PsqlCommand(srv.Addr()))
		if a := srv.HTTPAddr(); a != nil {
			fmt.Fprintf(opts.Out, "metrics on http://%s/metrics; verify a view while it runs with: strata verify --http %s t3\n", a, a)
		}
	} else {
		e, err = engine.Open(ctx, opts.Engine)
		if err != nil {
			return sum, err
		}
		defer e.Close()
	}
	cat, err := e.Catalog(ctx)
	if err != nil {
		return sum, err
	}
	if len(cat.Tables()) > 0 {
		return sum, freshError(opts.Engine.Dir)
	}
	sess := server.NewSession(e, engine.DefaultDatabase)
	// The generators start with their tables: times and rates count from
	// here, not from when the views are ready.
	created := time.Now()
	if _, err := exec(ctx, sess, Script(opts.Rate, opts.Seed)); err != nil {
		return sum, err
	}
	if opts.afterCreate != nil {
		opts.afterCreate()
	}
	// Creating a view returns once it has committed its first epoch.
	ready := time.Since(created)
	runCtx := ctx
	if opts.Duration > 0 {
		// The duration counts from the start of the topology, its
		// creation included: creating the views waits for each one's
		// first epoch, which takes seconds, and a run asked to last D
		// ends at D (to within the check running then, which the
		// deadline interrupts), followed only by the verification. A
		// creation that outlasts D leaves no time for checks.
		var cancel context.CancelFunc
		runCtx, cancel = context.WithDeadline(ctx, created.Add(opts.Duration))
		defer cancel()
	}
	st := &status{e: e, out: opts.Out, live: opts.Live, start: created}
	tick := time.NewTicker(e.EpochInterval())
	defer tick.Stop()
	lastPrint := time.Time{}
	var lastErr string
	stopped := false
loop:
	for {
		select {
		case <-runCtx.Done():
			break loop
		case <-opts.Stop:
			stopped = true
			break loop
		case <-tick.C:
		}
		ok, detail, err := check(runCtx, sess)
		switch {
		case err != nil && runCtx.Err() != nil:
			break loop
		case err != nil:
			lastErr = server.UserMessage(err.Error())
		case ok:
			sum.Passed++
		default:
			sum.Violated++
			lastErr = "violated: " + detail
		}
		if opts.Live || time.Since(lastPrint) >= 5*time.Second {
			st.print(ctx, sum, lastErr)
			lastPrint = time.Now()
		}
	}
	sum.Duration = time.Since(st.start)
	if ctx.Err() != nil {
		sum.Events = st.events()
		return sum, ctx.Err()
	}
	st.print(ctx, sum, lastErr)
	sum.Events = st.events()
	// Let the views catch up with the last epoch the tables committed,
	// then verify each at its committed epoch.
	if sum.Passed+sum.Violated == 0 {
		sum.Warning = noCheckWarning(opts.Duration, stopped, ready, e.EpochInterval(), lastErr)
	}
	fmt.Fprintf(opts.Out, "stopped after %v; verifying each view against its query recomputed at the view's committed epoch (its inputs read at that epoch) ...\n", sum.Duration.Round(time.Millisecond))
	verifyStart := time.Now()
	for _, v := range Views {
		res, err := e.Verify(ctx, catalog.Name(engine.DefaultDatabase, v), 0)
		sum.Views++
		if err != nil {
			sum.VerificationDetails = append(sum.VerificationDetails, fmt.Sprintf("%s: %s", v, server.UserMessage(err.Error())))
			continue
		}
		if res.OK() {
			sum.Verified++
		}
		sum.VerificationDetails = append(sum.VerificationDetails, res.String())
	}
	sum.Verification = time.Since(verifyStart)
	for _, d := range sum.VerificationDetails {
		fmt.Fprintln(opts.Out, "  "+d)
	}
	fmt.Fprintf(opts.Out, "final verification took %v\n", sum.Verification.Round(time.Millisecond))
	return sum, nil
}

// noCheckWarning says why a run counted no consistency check and what to
// change: a check runs every epoch once the views are created, and
// creating them takes ready (each view waits for its first epoch), so a
// duration (or a Ctrl-C) that ends the run before ready plus one epoch
// leaves none; checks that all failed (lastErr) are said as such.
func noCheckWarning(duration time.Duration, stopped bool, ready, epoch time.Duration, lastErr string) string {
	if lastErr != "" {
		return "warning: no consistency check completed; the last one failed: " + lastErr
	}
	// A duration that leaves a few epochs of checks after the creation,
	// rounded up to ten seconds.
	suggest := (2*ready + 5*epoch + 10*time.Second - 1).Truncate(10 * time.Second)
	if stopped || duration <= 0 {
		return fmt.Sprintf("warning: no consistency check ran: the demo was stopped before the first one, which runs an epoch after the views are created and have committed their first epoch (%v here); let it run longer, or give --duration %v", ready.Round(100*time.Millisecond), suggest)
	}
	return fmt.Sprintf("warning: no consistency check ran: --duration %v is shorter than the time to create the views and commit their first epoch (%v here) plus one epoch (%v); give a longer --duration, such as --duration %v", duration, ready.Round(100*time.Millisecond), epoch, suggest)
}

// check runs the consistency query once.
func check(ctx context.Context, s *server.Session) (bool, string, error) {
	res, err := exec(ctx, s, CheckQuery)
	if err != nil {
		return false, "", err
	}
	r := res[0]
	if len(r.Rows) != 1 {
		return false, fmt.Sprintf("%d rows", len(r.Rows)), nil
	}
	row := r.Rows[0]
	vals := make([]string, len(row))
	for i, d := range row {
		vals[i] = types.FormatText(d, nil)
	}
	ok := vals[0] == vals[1] && vals[1] == vals[2] && vals[3] == vals[4] && vals[4] == vals[5] && vals[6] == "0"
	var parts []string
	for i, c := range r.Columns {
		parts = append(parts, c.Name+"="+vals[i])
	}
	return ok, strings.Join(parts, " "), nil
}

// status prints the live status.
type status struct {
	e     *engine.Engine
	out   io.Writer
	live  bool
	start time.Time
	lines int
	prev  struct {
		at     time.Time
		events uint64
	}
}

func (s *status) events() uint64 {
	var n uint64
	for _, t := range []string{"person", "auction", "bid"} {
		n = max(n, s.e.IngestPosition(engine.IngestJobName(catalog.Name(engine.DefaultDatabase, t))).Position)
	}
	return n
}

func (s *status) print(ctx context.Context, sum Summary, lastErr string) {
	now := time.Now()
	ev := s.events()
	rate := 0.0
	if !s.prev.at.IsZero() {
		if dt := now.Sub(s.prev.at).Seconds(); dt > 0 {
			rate = float64(ev-s.prev.events) / dt
		}
	} else if dt := now.Sub(s.start).Seconds(); dt > 0 {
		rate = float64(ev) / dt
	}
	s.prev.at, s.prev.events = now, ev
	var lines []string
	epoch := ""
	if info, err := s.e.Meta().CurrentEpoch(ctx); err == nil {
		epoch = strconv.FormatUint(uint64(info.Epoch), 10)
	}
	lines = append(lines, fmt.Sprintf("%6.1fs  events %d (%.0f/s)  epoch %s  checks %d passed, %d violated",
		now.Sub(s.start).Seconds(), ev, rate, epoch, sum.Passed, sum.Violated))
	if f, err := s.e.Meta().Freshness(ctx); err == nil {
		sort.Slice(f.Tables, func(i, j int) bool { return f.Tables[i].Table.Name < f.Tables[j].Table.Name })
		var parts []string
		for _, t := range f.Tables {
			lag := "-"
			if t.Known {
				lag = t.Lag.Round(10 * time.Millisecond).String()
			}
			parts = append(parts, fmt.Sprintf("%s@%d (lag %s)", t.Table.Name, t.Committed, lag))
		}
		lines = append(lines, "  tables: "+strings.Join(parts, "  "))
	}
	jobs := s.e.Jobs()
	sort.Slice(jobs, func(i, j int) bool { return jobs[i].Name < jobs[j].Name })
	var parts []string
	for _, j := range jobs {
		if !strings.HasPrefix(j.Name, "view-") {
			continue
		}
		cp := j.LastCheckpoint
		mode := "aligned"
		if cp.ChannelStateBytes > 0 {
			mode = "unaligned"
		}
		parts = append(parts, fmt.Sprintf("%s #%d %s %s %s", strings.TrimPrefix(j.Name, "view-dev-"), cp.ID, mode,
			cp.Duration.Round(time.Millisecond), byteSize(cp.StateBytes+cp.ChannelStateBytes)))
	}
	lines = append(lines, "  checkpoints: "+strings.Join(parts, "  "))
	if lastErr != "" {
		lines = append(lines, "  last problem: "+lastErr)
	}
	if s.live && s.lines > 0 {
		fmt.Fprintf(s.out, "\x1b[%dA", s.lines)
	}
	for _, l := range lines {
		if s.live {
			fmt.Fprint(s.out, "\x1b[2K")
		}
		fmt.Fprintln(s.out, l)
	}
	s.lines = len(lines)
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// ErrViolations is returned by the command when a check was violated or a
// view did not verify.
var ErrViolations = errors.New("the demo saw a consistency violation or a view that did not verify")
