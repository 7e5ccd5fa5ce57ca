package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/sqlerr"
)

// awaitSourceSnapshot is the end of CREATE TABLE ... FROM src: it returns
// once the source's new job has committed name's initial snapshot, so
// that a SELECT right after the CREATE sees the upstream rows, as CREATE
// MATERIALIZED VIEW returns once the view's first epoch is committed
// (RisingWave's CREATE TABLE on a CDC source likewise returns after the
// backfill). The snapshot is position 0 of the job's reader (snapshotDiff)
// and one transaction: the first epoch the job closes past position 0
// holds it, and waitCommitted then waits for name to commit that epoch.
//
// Cancelling the statement first, the job failing until then (two
// restarts without a checkpoint: 55000 naming the job and its error), or
// the engine closing drops the table again, so that a CREATE that reports
// an error leaves nothing behind; the source's job goes back to its
// other tables. The caller holds e.ddl (other DDL waits for the snapshot,
// which adding a table makes the source take of all its tables anyway).
func (e *Engine) awaitSourceSnapshot(ctx context.Context, src, name catalog.ObjectName) error {
	err := e.waitSourceSnapshot(ctx, src, name)
	if err == nil {
		return nil
	}
	dropErr := e.drop(context.WithoutCancel(ctx), "table", name, true, false)
	if ctx.Err() != nil {
		return errors.Join(sqlerr.New(sqlerr.QueryCanceled, "canceling statement: table %s was dropped before its initial snapshot from source %s was committed", name.Name, src.Name), dropErr)
	}
	if dropErr != nil {
		return errors.Join(err, dropErr)
	}
	code := sqlerr.Code(err)
	if code == sqlerr.InternalError {
		code = sqlerr.ObjectNotInPrerequisiteState
	}
	return sqlerr.Wrap(code, fmt.Errorf("table %s was not created: %w", name.Name, err))
}

// waitSourceSnapshot waits until table name, fed by source src, has
// committed the epoch holding the source job's initial snapshot.
func (e *Engine) waitSourceSnapshot(ctx context.Context, src, name catalog.ObjectName) error {
	job := cdcJobName(src)
	for {
		if p := e.IngestPosition(job); p.Epoch > 0 && p.Position > 0 {
			return e.waitCommitted(ctx, name, p.Epoch)
		}
		if j, failing, ok := e.firstFailing(name); ok {
			return sqlerr.Wrap(sqlerr.ObjectNotInPrerequisiteState,
				fmt.Errorf("source %s has not taken the initial snapshot of %s: its job %s keeps failing (%d restarts since its last checkpoint): %w", src.Name, name.Name, j.name, failing, j.cause))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-e.ctx.Done():
			return fmt.Errorf("table %s: waiting for its initial snapshot: the engine is closing: %w", name.Name, base.ErrClosed)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
