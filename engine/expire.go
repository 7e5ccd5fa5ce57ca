package engine

import (
	"context"
	"errors"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/catalog"
)

// ExpireInterval is how often the engine expires the snapshots of every
// table under its retention options (snapshot.num-retained.min/max,
// snapshot.time-retained), as Paimon's committer expires snapshots after
// its commits. Expiration deletes about as many files as the commits
// since the last run wrote, so a long interval deletes them in bursts:
// at 10 commits a second per table, a 10 s interval made each run delete
// thousands of files at once and took seconds of a core from the jobs.
const ExpireInterval = time.Second

// expireLoop runs expireAll every ExpireInterval until the engine closes.
func (e *Engine) expireLoop() {
	defer e.wg.Done()
	tick := time.NewTicker(ExpireInterval)
	defer tick.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-tick.C:
		}
		if err := e.expireAll(e.ctx); err != nil && e.ctx.Err() == nil {
			e.log.Warn("snapshot expiration", "err", err)
		}
	}
}

// expireAll removes the consumers of jobs that no longer exist, then
// expires the snapshots of every table. [expire-keeps-readable] Besides
// what the table store keeps itself (the newest snapshots, its consumers:
// the table sources of the jobs reading the table, at their last completed
// checkpoint, and its tags), it keeps every snapshot a read may still ask
// for: from the newest snapshot at or before the lowest epoch that a live
// pin holds on the table or that any table has committed (a consistent
// read is never older than the least committed table of its group), so a
// query at a consistent version always finds its snapshot.
func (e *Engine) expireAll(ctx context.Context) error {
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return err
	}
	low := base.Epoch(0)
	first := true
	for _, t := range cat.Tables() {
		c, err := e.meta.CommittedEpoch(ctx, t.Name)
		if err != nil {
			if errors.Is(err, base.ErrNotFound) {
				continue // dropped meanwhile
			}
			return err
		}
		if first || c.Epoch < low {
			low, first = c.Epoch, false
		}
	}
	var errs []error
	for _, t := range cat.Tables() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := e.expireTable(ctx, t.Name, low); err != nil && !errors.Is(err, base.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// expireTable expires one table's snapshots, keeping those a read at or
// after epoch low (or a pin on the table) may need, after removing the
// consumers of jobs that are gone. It holds e.ddl, so that no DROP or
// CREATE of the table runs meanwhile.
func (e *Engine) expireTable(ctx context.Context, name catalog.ObjectName, low base.Epoch) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	tb, err := e.Table(name)
	if err != nil {
		return err
	}
	snaps := tb.Store().Snapshots
	// Consumers first, then the jobs: a job is registered before its
	// sources start, so a consumer listed here whose job the catalog read
	// after it does not hold belongs to a dropped job.
	consumers, err := snaps.Consumers()
	if err != nil {
		return err
	}
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return err
	}
	for id := range consumers {
		if _, err := cat.Job(id); errors.Is(err, base.ErrNotFound) {
			if err := snaps.DeleteConsumer(id); err != nil && !errors.Is(err, base.ErrNotFound) {
				return err
			}
		}
	}
	if pinned, ok, err := e.meta.PinnedEpoch(ctx, name); err != nil {
		return err
	} else if ok && pinned < low {
		low = pinned
	}
	sn, err := snaps.AtOrBeforeEpoch(low)
	if err != nil {
		return err
	}
	if sn == nil {
		return nil // every snapshot is newer than what a read may ask for
	}
	res, err := tb.ExpireKeeping(sn.ID)
	if err != nil {
		return err
	}
	if len(res.Expired) > 0 {
		e.log.Debug("expired snapshots", "table", name.String(), "snapshots", len(res.Expired), "files", res.DeletedFiles)
	}
	return nil
}
