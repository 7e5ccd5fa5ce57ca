package tablesink

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/commit"
	"github.com/stratadb/strata/table/write"
)

// EpochReporter is the part of the meta service a sink needs
// (meta.Service.CommitEpoch).
type EpochReporter interface {
	CommitEpoch(ctx context.Context, table catalog.ObjectName, e base.Epoch) error
}

// Committer writes into one table.
type Committer struct {
	table  *table.Table
	name   catalog.ObjectName
	user   string
	report EpochReporter
	writer *write.Writer
	// ReportTimeout bounds one report to the meta service.
	ReportTimeout time.Duration
	// rep reports committed epochs to the meta service in the background
	// (nil until the first report).
	rep *reporter
}

// reporter tells the meta service a table's committed epoch on a goroutine
// of its own, so that a commit does not wait for the meta service's store
// write (one transaction and fsync for every table's reports, and so the
// slowest step of a commit when the disk is busy). The table's own commit
// is durable before the report is posted, so a report that is late, or
// lost in a crash, never shows an epoch the table has not committed; the
// next report, or a restart's first commit, brings the meta service up to
// date. Reports posted while one is in flight are merged into one of the
// newest epoch; they never go back, since one goroutine sends them in
// order. A failed report fails the sink's next commit, and Close.
type reporter struct {
	mu      sync.Mutex
	pending base.Epoch // the newest epoch posted and not yet sent; 0 none
	busy    bool       // a report is being sent
	err     error      // the first failed report
	wake    chan struct{}
	idle    *sync.Cond // signalled when pending is 0 and nothing is busy, or on failure
	stop    chan struct{}
	done    chan struct{}
}

// post hands epoch e to the reporter and returns the error of an earlier
// failed report, if any.
func (c *Committer) post(e base.Epoch) error {
	if c.rep == nil {
		r := &reporter{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
		r.idle = sync.NewCond(&r.mu)
		c.rep = r
		go c.runReporter(r)
	}
	r := c.rep
	r.mu.Lock()
	err := r.err
	r.pending = max(r.pending, e)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return err
}

// runReporter sends the posted epochs until stopped, or until a report
// fails.
func (c *Committer) runReporter(r *reporter) {
	defer close(r.done)
	for {
		select {
		case <-r.wake:
		case <-r.stop:
			return
		}
		r.mu.Lock()
		e := r.pending
		r.pending, r.busy = 0, e != 0
		r.mu.Unlock()
		if e == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.ReportTimeout)
		err := c.report.CommitEpoch(ctx, c.name, e)
		cancel()
		r.mu.Lock()
		r.busy = false
		if err != nil && r.err == nil {
			r.err = fmt.Errorf("table sink %s: report of committed epoch %d: %w", c.name, e, err)
		}
		r.idle.Broadcast()
		failed := r.err != nil
		r.mu.Unlock()
		if failed {
			return
		}
	}
}

// flushReports waits until every posted epoch is reported (or a report
// failed), stops the reporter and returns the first failure.
func (c *Committer) flushReports() error {
	r := c.rep
	if r == nil {
		return nil
	}
	r.mu.Lock()
	for (r.pending != 0 || r.busy) && r.err == nil {
		select {
		case r.wake <- struct{}{}:
		default:
		}
		r.idle.Wait()
	}
	err := r.err
	r.mu.Unlock()
	close(r.stop)
	<-r.done
	c.rep = nil
	return err
}

// New returns the committer of one sink subtask attempt writing tb, known
// to the meta service as name. user is the commit user (the job's name):
// it must stay the same across attempts and restarts, because commits are
// idempotent per (user, epoch). report may be nil (no meta service).
func New(tb *table.Table, name catalog.ObjectName, user string, report EpochReporter) *Committer {
	return &Committer{table: tb, name: name, user: user, report: report, ReportTimeout: 10 * time.Second}
}

// Sink returns a two-phase-commit sink operator over a new Committer.
func Sink(tb *table.Table, name catalog.ObjectName, user string, report EpochReporter) operator.Operator {
	return operator.NewTwoPhaseCommitSink(New(tb, name, user, report))
}

// Prepare implements operator.Committer.
func (c *Committer) Prepare(subtask int, e base.Epoch, chunks []*types.Chunk) ([]byte, error) {
	if subtask != 0 {
		return nil, fmt.Errorf("table sink %s: subtask %d: a table has one writer, run its sink with parallelism 1: %w", c.name, subtask, base.ErrInvalidArgument)
	}
	if c.writer == nil {
		w, err := c.table.NewWriter(c.user)
		if err != nil {
			return nil, fmt.Errorf("table sink %s: %w", c.name, err)
		}
		// Compaction runs beside the stream: an epoch that triggers it is
		// not held up by the rewrite (write package, [async-compaction]).
		w.SetAsyncCompaction(true)
		c.writer = w
	}
	for _, ch := range chunks {
		if err := c.writer.WriteChunk(e, ch); err != nil {
			return nil, fmt.Errorf("table sink %s, epoch %d: %w", c.name, e, err)
		}
	}
	msgs, err := c.writer.PrepareCommit(e)
	if err != nil {
		return nil, fmt.Errorf("table sink %s, prepare epoch %d: %w", c.name, e, err)
	}
	return commit.Marshal(msgs)
}

// Close waits until the writer's background compactions have finished
// (write.Writer.WaitCompaction): a compaction that went on writing files
// after its job stopped would race a DROP that removes the table's
// directory, and write into a table that is gone.
//
// It also waits until the meta service has heard of every committed epoch
// (reporter), and returns a failed report's error.
func (c *Committer) Close() error {
	if c.writer != nil {
		c.writer.WaitCompaction()
	}
	return c.flushReports()
}

// CommitsConcurrently implements operator.ConcurrentCommitter: CommitAll
// touches the table's committer and the meta service, Prepare only the
// writer, so a sink commits one checkpoint's epochs while it stages the
// next (the writer and the committer of Paimon's Flink sink are separate
// operators for the same reason).
func (c *Committer) CommitsConcurrently() bool { return true }

// Commit implements operator.Committer.
func (c *Committer) Commit(subtask int, e base.Epoch, prepared []byte) error {
	return c.CommitAll(subtask, []operator.PreparedEpoch{{Epoch: e, Prepared: prepared}})
}

// CommitAll implements operator.BatchCommitter: the epochs' messages go to
// the table in one commit (one snapshot per epoch that changed it, and the
// committed-epoch marker once), and the meta service hears of the last
// epoch once, instead of a commit and a report per epoch; the report is
// sent in the background (reporter): CommitAll returns once the table has
// committed.
func (c *Committer) CommitAll(_ int, epochs []operator.PreparedEpoch) error {
	if len(epochs) == 0 {
		return nil
	}
	var msgs []commit.Message
	for _, p := range epochs {
		m, err := commit.Unmarshal(p.Prepared)
		if err != nil {
			return fmt.Errorf("table sink %s, epoch %d: prepared messages: %w", c.name, p.Epoch, err)
		}
		msgs = append(msgs, m...)
	}
	first, last := epochs[0].Epoch, epochs[len(epochs)-1].Epoch
	if _, err := c.table.Commit(msgs); err != nil {
		return fmt.Errorf("table sink %s, commit of epochs %d to %d: %w", c.name, first, last, err)
	}
	if c.report == nil {
		return nil
	}
	// Report the table's committed epoch, not e: after a restore the
	// runtime re-commits epochs that a later checkpoint had already
	// committed (a checkpoint taken before an older one's commit holds
	// both), and the meta service refuses a report that goes backwards.
	ce, err := c.table.CommittedEpoch()
	if err != nil {
		return fmt.Errorf("table sink %s: committed epoch: %w", c.name, err)
	}
	return c.post(max(ce, last))
}
