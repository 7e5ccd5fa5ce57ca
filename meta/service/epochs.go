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
func (m *Meta) CommitEpoch(ctx context.Context, table catalog.ObjectName, e base.Epoch) error {
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	if _, err := m.mu.catalog.Table(table); err != nil {
		return fmt.Errorf("commit of epoch %d: %w", e, err)
	}
	if cur := m.clock.Current().Epoch; e > cur {
		return fmt.Errorf("table %s: commit of epoch %d, which has not opened (current epoch %d): %w", table, e, cur, base.ErrInvalidArgument)
	}
	changed, err := m.mu.tracker.CheckCommit(table, e)
	if err != nil {
		if errors.Is(err, version.ErrEpochBackwards) {
			m.mu.refused++
			m.log.Warn("refused committed epoch going backwards", "table", table.String(), "epoch", uint64(e), "err", err)
		}
		return err
	}
	if !changed {
		return nil
	}
	c := version.Committed{Epoch: e, Reported: m.opts.Time.Now()}
	if start, _, ok := m.clock.StartOf(e); ok {
		c.Start = start
	}
	var b store.Batch
	b.Put(commitKey(table), mustJSON(c))
	if err := m.apply(ctx, fmt.Sprintf("committed epoch %d of table %s", e, table), b); err != nil {
		return err
	}
	m.mu.tracker.Commit(table, c)
	m.broadcastLocked()
	return nil
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
