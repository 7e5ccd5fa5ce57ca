package nexmark

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	gen "github.com/stratadb/strata/connector/nexmark"
	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/server"
)

// RecoveryConfig configures the recovery benchmark's job: a view keyed by
// every bid, so that its state holds about StateBytes bytes.
type RecoveryConfig struct {
	// StateBytes is the target size of the view's keyed state, as its
	// checkpoint measures it (default 1 GiB). The run generates
	// StateBytes / (StateBytesPerBid * BidSize) bids; the actual
	// checkpoint size is reported beside it.
	StateBytes int64
	// BidSize is the average size of a bid (the nexmark bid.size option;
	// default 1000 bytes), most of it the extra column the view keys by.
	BidSize int
	// EpochInterval and CheckpointInterval default to 1 s.
	EpochInterval, CheckpointInterval time.Duration
	// Logger receives the engine's warnings; nil discards them.
	Logger *slog.Logger
}

func (c RecoveryConfig) withDefaults() RecoveryConfig {
	if c.StateBytes <= 0 {
		c.StateBytes = 1 << 30
	}
	if c.BidSize <= 0 {
		c.BidSize = 1000
	}
	if c.EpochInterval <= 0 {
		c.EpochInterval = time.Second
	}
	if c.CheckpointInterval <= 0 {
		c.CheckpointInterval = time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return c
}

// StateBytesPerBid is how many times its size a bid takes in the view's
// checkpoint, as measured on the heap state backend: the group's key (the
// bid's columns) is held in the aggregate's state and again in the
// materialized output row (50,000 bids of 1000 bytes made a checkpoint of
// 149 MB).
const StateBytesPerBid = 3

// Events is the number of Nexmark events whose bids make about StateBytes
// of state (46 in 50 events are bids).
func (c RecoveryConfig) Events() uint64 {
	c = c.withDefaults()
	bids := max(1, c.StateBytes/int64(StateBytesPerBid*c.BidSize))
	return uint64(bids*50/46 + 1)
}

// RecoveryView is the view of the recovery benchmark: one group, and so
// one entry of keyed state, per bid.
const RecoveryView = "recovery_state"

const recoveryQuery = `SELECT auction, bidder, date_time, extra, count(*) AS n FROM bid GROUP BY auction, bidder, date_time, extra`

// Recovery line prefixes that the recovery child prints on its output for
// the parent (RecoverySetup, RecoveryResume).
const (
	LineReady     = "ready"
	LineRecovered = "recovered"
	LineVerified  = "verified"
)

func (c RecoveryConfig) engineOptions(dir string) engine.Options {
	return engine.Options{Dir: dir, EpochInterval: c.EpochInterval, CheckpointInterval: c.CheckpointInterval, Logger: c.Logger}
}

// RecoverySetup creates, in a fresh data directory, table bid bounded to
// cfg.Events() events and the view RecoveryView over it; once the view has
// committed every event it prints "ready BYTES EPOCH" to out (BYTES the
// size of the view job's last completed checkpoint, EPOCH the view's
// committed epoch) and keeps running until ctx ends or the process is
// killed, as the benchmark does.
func RecoverySetup(ctx context.Context, dir string, cfg RecoveryConfig, out io.Writer) error {
	cfg = cfg.withDefaults()
	e, err := engine.Open(ctx, cfg.engineOptions(dir))
	if err != nil {
		return err
	}
	defer e.Close()
	sess := server.NewSession(e, engine.DefaultDatabase)
	ddl := tableDDL(gen.Bid, cfg.Events(), 1, nil, gen.OptBidSize, strconv.Itoa(cfg.BidSize))
	for _, st := range []string{ddl, "CREATE MATERIALIZED VIEW " + RecoveryView + " AS " + recoveryQuery} {
		if err := execSQL(ctx, sess, st); err != nil {
			return err
		}
	}
	r := &Runner{cfg: Config{Events: cfg.Events(), Seed: 1}.withDefaults()}
	target, err := r.waitConsumed(ctx, e, []gen.Table{gen.Bid}, ingestPosition(e))
	if err != nil {
		return err
	}
	view := catalog.Name(engine.DefaultDatabase, RecoveryView)
	if err := waitView(ctx, e, view, target); err != nil {
		return err
	}
	size, err := viewCheckpointBytes(e)
	if err != nil {
		return err
	}
	c, err := e.Meta().CommittedEpoch(ctx, view)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s %d %d\n", LineReady, size, c.Epoch)
	<-ctx.Done()
	return nil
}

// viewCheckpointBytes returns the size of the view job's latest completed
// checkpoint: its subtask files and the shared files it references (the
// heap backend's arena files, most of it).
func viewCheckpointBytes(e *engine.Engine) (int64, error) {
	for _, j := range e.Jobs() {
		if j.Kind != catalog.JobView {
			continue
		}
		st := checkpoint.NewStorage(checkpoint.OSFS{}, filepath.Join(e.Dir(), "checkpoints", j.Name), 1)
		var err error
		// A checkpoint completing meanwhile may delete the files of the
		// one read: read again.
		for range 10 {
			var m *checkpoint.Metadata
			if m, err = st.Latest(); err != nil {
				return 0, err
			}
			var n int64
			if n, err = st.Size(m); err == nil {
				return n, nil
			}
		}
		return 0, err
	}
	return 0, fmt.Errorf("recovery benchmark: no view job running: %w", base.ErrNotFound)
}

// RecoveryResume opens the data directory of a killed RecoverySetup: it
// first reads the view's committed epoch without starting jobs, then opens
// the engine (every job restores its latest checkpoint) and prints
// "recovered UNIX_NANOS EPOCH CPU_NANOS" as soon as the view commits a
// later epoch, CPU_NANOS being the CPU time (user and system) the process
// has used so far: on a machine shared with other work the wall time says
// as much about the neighbours as about the restore.
// With verify it then recomputes the view (engine.Verify) and prints
// "verified ok" or "verified mismatch ...".
func RecoveryResume(ctx context.Context, dir string, cfg RecoveryConfig, verify bool, out io.Writer) error {
	cfg = cfg.withDefaults()
	view := catalog.Name(engine.DefaultDatabase, RecoveryView)
	opts := cfg.engineOptions(dir)
	opts.NoJobs = true
	e, err := engine.Open(ctx, opts)
	if err != nil {
		return err
	}
	before, err := e.Meta().CommittedEpoch(ctx, view)
	if err != nil {
		e.Close()
		return err
	}
	if err := e.Close(); err != nil {
		return err
	}
	e, err = engine.Open(ctx, cfg.engineOptions(dir))
	if err != nil {
		return err
	}
	defer e.Close()
	if err := waitView(ctx, e, view, before.Epoch+1); err != nil {
		return err
	}
	now := time.Now()
	c, err := e.Meta().CommittedEpoch(ctx, view)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s %d %d %d\n", LineRecovered, now.UnixNano(), c.Epoch, processCPU().Nanoseconds())
	if !verify {
		return nil
	}
	v, err := e.Verify(ctx, view, base.NoEpoch)
	if err != nil {
		return err
	}
	if v.OK() {
		fmt.Fprintf(out, "%s ok %d rows at epoch %d\n", LineVerified, v.Rows, v.Epoch)
	} else {
		fmt.Fprintf(out, "%s mismatch %d missing, %d extra at epoch %d\n", LineVerified, len(v.Missing), len(v.Extra), v.Epoch)
	}
	return nil
}

// processCPU returns the user and system CPU time of this process.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
