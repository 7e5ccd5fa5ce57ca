package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/epoch"
	"github.com/stratadb/strata/meta/store"
	"github.com/stratadb/strata/meta/version"
)

// CurrentEpoch implements meta.Service.
func (m *Meta) CurrentEpoch(context.Context) (epoch.Info, error) {
	if err := m.lock(); err != nil {
		return epoch.Info{}, err
	}
	m.mu.Unlock()
	return m.clock.Current(), nil
}

// WaitEpoch implements meta.Service; it blocks on the clock's broadcast,
// not on the service's mutex.
func (m *Meta) WaitEpoch(ctx context.Context, after base.Epoch) (epoch.Info, error) {
	// A closed service answers ErrClosed like every other call, also when
	// the stopped clock is past after.
	if err := m.lock(); err != nil {
		return epoch.Info{}, err
	}
	m.mu.Unlock()
	return m.clock.Wait(ctx, after)
}

// CommitEpoch implements meta.Service. The table must exist, and e must
// have opened: a writer cannot have committed an epoch the clock has not
// reached. A report going backwards is refused and logged.
//
// Reports are group-committed: a report that moves an epoch joins the
// batch being gathered, and one caller at a time (the leader) writes a
// whole batch to the store in one transaction without holding the mutex,
// then publishes it; the others wait for their batch (invariant
// commit-reports-grouped). A batch that fails to persist fails every
// report in it and publishes none of them.
func (m *Meta) CommitEpoch(ctx context.Context, table catalog.ObjectName, e base.Epoch) error {
	if err := m.lock(); err != nil {
		return err
	}
	if _, err := m.mu.catalog.Table(table); err != nil {
		m.mu.Unlock()
		return fmt.Errorf("commit of epoch %d: %w", e, err)
	}
	if cur := m.clock.Current().Epoch; e > cur {
		m.mu.Unlock()
		return fmt.Errorf("table %s: commit of epoch %d, which has not opened (current epoch %d): %w", table, e, cur, base.ErrInvalidArgument)
	}
	changed, err := m.mu.tracker.CheckCommit(table, e)
	if err != nil {
		if errors.Is(err, version.ErrEpochBackwards) {
			m.mu.refused++
			m.log.Warn("refused committed epoch going backwards", "table", table.String(), "epoch", uint64(e), "err", err)
		}
		m.mu.Unlock()
		return err
	}
	if !changed {
		m.mu.Unlock()
		return nil
	}
	c := version.Committed{Epoch: e, Reported: m.opts.Time.Now()}
	if start, _, ok := m.clock.StartOf(e); ok {
		c.Start = start
	}
	if m.mu.reports == nil {
		m.mu.reports = &reportBatch{commits: map[catalog.ObjectName]version.Committed{}, done: make(chan struct{})}
	}
	b := m.mu.reports
	if prev, ok := b.commits[table]; !ok || prev.Epoch < c.Epoch {
		b.commits[table] = c
	}
	lead := !m.mu.flushing
	m.mu.flushing = m.mu.flushing || lead
	m.mu.Unlock()
	if lead {
		m.flushReports(ctx)
	}
	select {
	case <-b.done:
		return b.err
	case <-ctx.Done():
		return fmt.Errorf("table %s: report of committed epoch %d: %w", table, e, ctx.Err())
	}
}

// reportBatch is the committed-epoch reports gathered for one store
// transaction: the newest report of each table, and done, closed once the
// batch is persisted and published (or failed, with err).
type reportBatch struct {
	commits map[catalog.ObjectName]version.Committed
	done    chan struct{}
	err     error
}

// flushReports is the leader's work: it persists the gathered batch (the
// leader's own) and publishes it. If more reports gathered meanwhile, a new
// goroutine leads their batch, so that no caller waits for batches after
// its own. The store write happens outside the mutex but under applyMu,
// taken before the mutex is released, so that every store write of a change
// made under the mutex afterwards (a DROP deleting the table's committed
// epoch) lands after it.
func (m *Meta) flushReports(ctx context.Context) {
	m.mu.Lock()
	b := m.mu.reports
	m.mu.reports = nil
	var sb store.Batch
	for t, c := range b.commits {
		sb.Put(commitKey(t), mustJSON(c))
	}
	m.applyMu.Lock()
	m.mu.Unlock()
	err := m.store.Apply(context.WithoutCancel(ctx), sb)
	m.applyMu.Unlock()
	m.mu.Lock()
	if err != nil {
		b.err = fmt.Errorf("meta service: persisting the committed epochs of %d tables: %w", len(b.commits), err)
	} else {
		for t, c := range b.commits {
			// A table dropped while the batch was written keeps no
			// committed epoch (the DROP's delete landed after it).
			if _, terr := m.mu.catalog.Table(t); terr != nil {
				continue
			}
			if changed, cerr := m.mu.tracker.CheckCommit(t, c.Epoch); cerr == nil && changed {
				m.mu.tracker.Commit(t, c)
			}
		}
		if !m.mu.closed {
			m.broadcastLocked()
		}
	}
	if m.mu.reports != nil {
		go m.flushReports(context.WithoutCancel(ctx))
	} else {
		m.mu.flushing = false
	}
	m.mu.Unlock()
	close(b.done)
}

// CommittedEpoch implements meta.Service.
func (m *Meta) CommittedEpoch(_ context.Context, table catalog.ObjectName) (version.Committed, error) {
	if err := m.lock(); err != nil {
		return version.Committed{}, err
	}
	defer m.mu.Unlock()
	if _, err := m.mu.catalog.Table(table); err != nil {
		return version.Committed{}, err
	}
	c, _ := m.mu.tracker.Committed(table)
	return c, nil
}
