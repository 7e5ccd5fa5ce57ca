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
// The caller holds e.ddl (other DDL waits for the snapshot, which adding
// a table makes the source take of all its tables anyway).
func (e *Engine) awaitSourceSnapshot(ctx context.Context, src, name catalog.ObjectName) error {
	return e.awaitInitial(ctx, name, fmt.Sprintf("its initial snapshot from source %s", src.Name), func() error {
		return e.waitSourceSnapshot(ctx, src, name)
	})
}

// awaitBacklog is the end of CREATE TABLE of a table whose connector can
// say where its input ends now (ingest.Backlogger: the files of a file
// table): it returns once the table's ingest job has read up to end and
// the table has committed the epoch that closed there, so that a SELECT
// right after the CREATE sees the rows of the files that were there, as
// after CREATE TABLE on a CDC source. Files added later arrive as the job
// reads them.
func (e *Engine) awaitBacklog(ctx context.Context, name catalog.ObjectName, end uint64) error {
	return e.awaitInitial(ctx, name, "the rows of its input present at the CREATE", func() error {
		return e.waitPosition(ctx, ingestJobName(name), name, end)
	})
}

// awaitInitial runs wait, which waits for table name to commit what its
// input held when it was created (what, for messages). Cancelling the
// statement first, the job failing until then (two restarts without a
// checkpoint: 55000 naming the job and its error), or the engine closing
// drops the table again, so that a CREATE that reports an error leaves
// nothing behind.
func (e *Engine) awaitInitial(ctx context.Context, name catalog.ObjectName, what string, wait func() error) error {
	err := wait()
	if err == nil {
		return nil
	}
	dropErr := e.drop(context.WithoutCancel(ctx), "table", []catalog.ObjectName{name}, true, false)
	if ctx.Err() != nil {
		return errors.Join(sqlerr.New(sqlerr.QueryCanceled, "canceling statement: table %s was dropped before %s was committed", name.Name, what), dropErr)
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

// waitPosition waits until ingest job job has closed an epoch at position
// end or later, then until table name has committed that epoch.
func (e *Engine) waitPosition(ctx context.Context, job string, name catalog.ObjectName, end uint64) error {
	for {
		if p := e.IngestPosition(job); p.Epoch > 0 && p.Position >= end {
			return e.waitCommitted(ctx, name, p.Epoch)
		}
		if j, failing, ok := e.firstFailing(name); ok {
			return sqlerr.Wrap(sqlerr.ObjectNotInPrerequisiteState,
				fmt.Errorf("table %s has not read its input: its job %s keeps failing (%d restarts without progress): %w", name.Name, j.name, failing, j.cause))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-e.ctx.Done():
			return fmt.Errorf("table %s: waiting for its input to be read: the engine is closing: %w", name.Name, base.ErrClosed)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// waitSourceSnapshot waits until table name, fed by source src, has
// committed the epoch holding the source job's initial snapshot: the
// first epoch the job closes past position 0.
func (e *Engine) waitSourceSnapshot(ctx context.Context, src, name catalog.ObjectName) error {
	return e.waitPosition(ctx, cdcJobName(src), name, 1)
}
