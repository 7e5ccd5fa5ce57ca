package server

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/ddl"
	"github.com/stratadb/strata/sql/pgwire"
)

// Options configure Start.
type Options struct {
	// Engine configures the engine (data directory, intervals).
	Engine engine.Options
	// Listen is the Postgres wire address (default 127.0.0.1:4566).
	Listen string
	// HTTP is the address of /metrics and /healthz (default
	// 127.0.0.1:8080; "-" turns it off).
	HTTP string
	// Logger receives connection and job events; nil means slog.Default().
	Logger *slog.Logger
	// TLS, when set, lets clients upgrade the wire connection
	// (sslmode=require); RequireTLS refuses plaintext clients.
	TLS        *tls.Config
	RequireTLS bool
	// Auth, when set, asks every client for a password (SCRAM-SHA-256);
	// otherwise any user name is accepted.
	Auth pgwire.Authenticator
}

// Server is a running engine with its listeners.
type Server struct {
	Engine *engine.Engine
	wire   *pgwire.Server
	ln     net.Listener
	http   *http.Server
	hln    net.Listener
	log    *slog.Logger
	done   chan error
}

// Start opens the engine (resuming every job from its latest checkpoint)
// and starts serving. Close stops everything.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Listen == "" {
		opts.Listen = "127.0.0.1:4566"
	}
	if opts.HTTP == "" {
		opts.HTTP = "127.0.0.1:8080"
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.Engine.Logger = opts.Logger
	// The port first: a port in use is refused before the engine
	// creates or opens anything in the data directory.
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", opts.Listen, err)
	}
	var hln net.Listener
	if opts.HTTP != "-" {
		if hln, err = net.Listen("tcp", opts.HTTP); err != nil {
			return nil, errors.Join(fmt.Errorf("listen on %s: %w", opts.HTTP, err), ln.Close())
		}
	}
	e, err := engine.Open(ctx, opts.Engine)
	if err != nil {
		if hln != nil {
			err = errors.Join(err, hln.Close())
		}
		return nil, errors.Join(err, ln.Close())
	}
	s := &Server{Engine: e, ln: ln, log: opts.Logger, done: make(chan error, 2)}
	s.wire, err = pgwire.NewServerWithOptions(Handler{Engine: e}, pgwire.Options{Log: opts.Logger, TLS: opts.TLS, RequireTLS: opts.RequireTLS, Auth: opts.Auth})
	if err != nil {
		if hln != nil {
			err = errors.Join(err, hln.Close())
		}
		return nil, errors.Join(err, s.ln.Close(), e.Close())
	}
	go func() { s.done <- s.wire.Serve(s.ln) }()
	if hln != nil {
		s.hln = hln
		reg := prometheus.NewRegistry()
		reg.MustRegister(&collector{e: e}, prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
		mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
		mux.HandleFunc("/verify", s.verify)
		s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := s.http.Serve(s.hln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.done <- err
			}
		}()
	}
	return s, nil
}

// PsqlCommand returns the psql command line that connects to a wire
// server listening at addr, as user root (any name is accepted without
// a password file) to the default database.
func PsqlCommand(addr net.Addr) string { return PsqlCommandAs(addr, "root") }

// PsqlCommandAs returns the psql command line that connects to a wire
// server listening at addr as user, to the default database; a user name
// that the shell would split or expand is quoted.
func PsqlCommandAs(addr net.Addr, user string) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "psql " + addr.String() + " -U " + shellWord(user)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1" // listening on every address: this machine's is one
	}
	return fmt.Sprintf("psql -h %s -p %s -U %s -d %s", host, port, shellWord(user), engine.DefaultDatabase)
}

// shellWord quotes s for a POSIX shell unless it is made only of
// characters the shell leaves alone.
func shellWord(s string) string {
	plain := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_.@%+=:,/-", c)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Addr is the Postgres wire listener's address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// HTTPAddr is the HTTP listener's address (nil when off).
func (s *Server) HTTPAddr() net.Addr {
	if s.hln == nil {
		return nil
	}
	return s.hln.Addr()
}

// Done reports a listener that stopped serving on its own.
func (s *Server) Done() <-chan error { return s.done }

// httpShutdownWait is how long Close lets running HTTP requests finish.
const httpShutdownWait = 5 * time.Second

// Close stops the listeners, then the engine: jobs stop, their last
// completed checkpoints stay for the next Start. HTTP requests still
// running after httpShutdownWait are cut off with a warning, not an
// error.
func (s *Server) Close() error {
	var errs []error
	if s.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), httpShutdownWait)
		if err := s.http.Shutdown(ctx); errors.Is(err, context.DeadlineExceeded) {
			// A request still running (a long /verify) is cut off:
			// stopping goes on, and nothing committed depends on it.
			s.log.Warn("HTTP requests still running were cut off", "addr", s.hln.Addr().String(), "after", httpShutdownWait)
			errs = append(errs, s.http.Close())
		} else {
			errs = append(errs, err)
		}
		cancel()
	}
	if s.wire != nil {
		errs = append(errs, s.wire.Close())
	}
	errs = append(errs, s.Engine.Close())
	return errors.Join(errs...)
}

// VerifyResponse is the JSON answer of GET /verify?view=NAME[&epoch=E].
type VerifyResponse struct {
	View    string   `json:"view"`
	Epoch   uint64   `json:"epoch"`
	Rows    int      `json:"rows"`
	OK      bool     `json:"ok"`
	Missing []string `json:"missing,omitempty"`
	Extra   []string `json:"extra,omitempty"`
	// By names the engine that recomputed the view ("duckdb", "batch").
	By string `json:"by,omitempty"`
	// Notes explain a difference (engine.Verification.Notes, and
	// explainDifference's notes on lookup joins and top-N ties), or why
	// a top-N view whose rows differ only among rows tied at its cut-off
	// is OK.
	Notes []string `json:"notes,omitempty"`
	Error string   `json:"error,omitempty"`
}

// Verify runs engine.Verify for a view named "v" or "db.v". A name that
// is a plain table or a source gets an error saying that verify checks
// materialized views and what the name is instead: a table (fed by
// INSERTs or a connector) has no query to recompute, so there is nothing
// to compare it with.
func Verify(ctx context.Context, e *engine.Engine, view string, epoch uint64) VerifyResponse {
	out := VerifyResponse{View: view}
	name := ddl.ObjectName(view, engine.DefaultDatabase)
	if what := notAView(ctx, e, name); what != "" {
		out.Error = fmt.Sprintf("%s is %s, not a materialized view: verify recomputes a materialized view's query from its inputs and compares the result with what the view stores; a table has no query to recompute", view, what)
		return out
	}
	v, err := e.Verify(ctx, name, base.Epoch(epoch))
	if err != nil {
		out.Error = base.UserMessage(err.Error())
		return out
	}
	out.Epoch, out.Rows, out.OK, out.By, out.Notes = uint64(v.Epoch), v.Rows, v.OK(), v.By, v.Notes
	for _, r := range v.Missing {
		out.Missing = append(out.Missing, r.String())
	}
	for _, r := range v.Extra {
		out.Extra = append(out.Extra, r.String())
	}
	if !out.OK {
		if cat, err := e.Catalog(ctx); err == nil {
			if t, err := cat.Table(name); err == nil {
				explainDifference(ctx, e, t, v, &out)
			}
		}
	}
	return out
}

// notAView says what name is when it names something other than a
// materialized view ("a table", "a source"), or "" (a view, or nothing
// at all, which engine.Verify reports).
func notAView(ctx context.Context, e *engine.Engine, name catalog.ObjectName) string {
	cat, err := e.Catalog(ctx)
	if err != nil {
		return ""
	}
	if t, err := cat.Table(name); err == nil && t.Kind != catalog.KindView {
		if src := t.Options[engine.OptionSource]; src != "" {
			return "a table (fed by source " + src + ")"
		}
		if c := t.Options["connector"]; c != "" {
			return "a table (fed by the " + c + " connector)"
		}
		return "a table"
	}
	if cat.IsSource(name) {
		return "a source"
	}
	return ""
}

func (s *Server) verify(w http.ResponseWriter, r *http.Request) {
	var epoch uint64
	if q := r.URL.Query().Get("epoch"); q != "" {
		n, err := strconv.ParseUint(q, 10, 64)
		if err != nil {
			http.Error(w, fmt.Sprintf("epoch %q is not a number", q), http.StatusBadRequest)
			return
		}
		epoch = n
	}
	view := r.URL.Query().Get("view")
	if view == "" {
		http.Error(w, "name the view: /verify?view=NAME", http.StatusBadRequest)
		return
	}
	res := Verify(r.Context(), s.Engine, view, epoch)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(res)
}

// collector exports the engine's state at each scrape.
type collector struct{ e *engine.Engine }

var (
	descCommitted = prometheus.NewDesc("strata_table_committed_epoch", "Last epoch the table committed.", []string{"table"}, nil)
	descLag       = prometheus.NewDesc("strata_table_freshness_lag_seconds", "Now minus the start of the table's committed epoch.", []string{"table"}, nil)
	descEpoch     = prometheus.NewDesc("strata_epoch", "The epoch the clock has open.", nil, nil)
	descRestarts  = prometheus.NewDesc("strata_job_restarts_total", "Restarts of the job in this process.", []string{"job"}, nil)
	descRunning   = prometheus.NewDesc("strata_job_running", "1 while the job runs.", []string{"job"}, nil)
	descCkpt      = prometheus.NewDesc("strata_job_last_checkpoint_id", "Id of the job's last completed checkpoint.", []string{"job"}, nil)
	descCkptDur   = prometheus.NewDesc("strata_job_last_checkpoint_duration_seconds", "Duration of the job's last completed checkpoint.", []string{"job"}, nil)
	descQueueFill = prometheus.NewDesc("strata_queue_fill", "How full a vertex's input queues are, 0 to 1 (backpressure when it stays near 1).", []string{"job", "vertex"}, nil)
	descIngest    = prometheus.NewDesc("strata_ingest_position", "Source position at which the ingest job last closed an epoch (for a generator or a DML log: events or bytes read); its rate is the job's throughput.", []string{"job"}, nil)
	descCkptSize  = prometheus.NewDesc("strata_job_last_checkpoint_bytes", "State and channel-state bytes of the job's last completed checkpoint.", []string{"job"}, nil)
)

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descCommitted, descLag, descEpoch, descRestarts, descRunning, descCkpt, descCkptDur, descCkptSize, descIngest, descQueueFill} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if info, err := c.e.Meta().CurrentEpoch(ctx); err == nil {
		ch <- prometheus.MustNewConstMetric(descEpoch, prometheus.GaugeValue, float64(info.Epoch))
	}
	if f, err := c.e.Meta().Freshness(ctx); err == nil {
		for _, t := range f.Tables {
			ch <- prometheus.MustNewConstMetric(descCommitted, prometheus.GaugeValue, float64(t.Committed), t.Table.String())
			if t.Known {
				ch <- prometheus.MustNewConstMetric(descLag, prometheus.GaugeValue, t.Lag.Seconds(), t.Table.String())
			}
		}
	}
	for _, j := range c.e.Jobs() {
		running := 0.0
		if j.Running {
			running = 1
		}
		ch <- prometheus.MustNewConstMetric(descRunning, prometheus.GaugeValue, running, j.Name)
		ch <- prometheus.MustNewConstMetric(descRestarts, prometheus.CounterValue, float64(j.Restarts), j.Name)
		ch <- prometheus.MustNewConstMetric(descCkpt, prometheus.GaugeValue, float64(j.LastCheckpoint.ID), j.Name)
		ch <- prometheus.MustNewConstMetric(descCkptDur, prometheus.GaugeValue, j.LastCheckpoint.Duration.Seconds(), j.Name)
		ch <- prometheus.MustNewConstMetric(descCkptSize, prometheus.GaugeValue, float64(j.LastCheckpoint.StateBytes+j.LastCheckpoint.ChannelStateBytes), j.Name)
		for v, f := range j.QueueFill {
			ch <- prometheus.MustNewConstMetric(descQueueFill, prometheus.GaugeValue, f, j.Name, v)
		}
		if j.Kind == catalog.JobIngest {
			ch <- prometheus.MustNewConstMetric(descIngest, prometheus.CounterValue, float64(c.e.IngestPosition(j.Name).Position), j.Name)
		}
	}
}
