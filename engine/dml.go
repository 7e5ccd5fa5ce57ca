package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/sqlerr"
)

// The DML log of a table written by SQL statements is a file of records
//
//	u32 payload length | u32 CRC-32C of the payload | payload
//
// (little endian), each payload one transaction: a chunk in the chunk codec
// (internal/types), row kinds included. A record is appended and fsynced
// before the statement that wrote it waits for its epoch; a torn record at
// the end (a crash during the append, before it was acknowledged) is cut
// off when the log is opened. The ingest job of the table reads the log as
// its transactional input: a record's offset is its position.
//
// The fsynced append is a statement's point of no return (commit): a
// statement canceled before it writes nothing; after it the record will
// be committed, so the statement waits for that regardless of its
// cancellation and reports success.
const dmlHeader = 8

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func dmlPath(dir string, n catalog.ObjectName) string {
	return filepath.Join(dir, "dml", n.Database+"."+n.Name+".log")
}

// dmlLog is a table's DML log: the writer side for statements and the
// ingest.Reader side for the table's DML job.
type dmlLog struct {
	path string
	name catalog.ObjectName

	// write serialises statements on the table from read to commit, so
	// that an UPDATE reads what every earlier statement wrote.
	write sync.Mutex

	mu   sync.Mutex
	f    *os.File
	size int64
	// dropped is set when the log is closed, because its table is dropped
	// or the engine closes: a statement waiting for its epoch then ends.
	dropped bool
	// last is the latest epoch close the job reported, recent the last
	// closeHistory of them (oldest first), so that a statement finds the
	// first close at or after its record, its record's epoch, even when
	// several closes came before it looked; changed is closed and
	// replaced when last moves.
	last    ingest.Pair
	recent  []ingest.Pair
	changed chan struct{}
}

// closeHistory is how many epoch closes a DML log remembers.
const closeHistory = 256

// dmlLog opens (once) the DML log of table n.
func (e *Engine) dmlLog(n catalog.ObjectName) (*dmlLog, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if l, ok := e.dml[n]; ok {
		return l, nil
	}
	l, err := openDMLLog(dmlPath(e.opts.Dir, n), n)
	if err != nil {
		return nil, err
	}
	e.dml[n] = l
	return l, nil
}

func openDMLLog(path string, n catalog.ObjectName) (*dmlLog, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("table %s: DML log: %w", n, err)
	}
	l := &dmlLog{path: path, name: n, f: f, changed: make(chan struct{})}
	// Find the end of the last whole record; cut off a torn tail.
	var pos int64
	for {
		_, next, err := l.readAt(pos)
		if err != nil {
			break
		}
		pos = next
	}
	st, err := f.Stat()
	if err != nil {
		return nil, errors.Join(fmt.Errorf("table %s: DML log: %w", n, err), f.Close())
	}
	if st.Size() != pos {
		if err := f.Truncate(pos); err != nil {
			return nil, errors.Join(fmt.Errorf("table %s: DML log: cutting a torn record: %w", n, err), f.Close())
		}
		if err := f.Sync(); err != nil {
			return nil, errors.Join(fmt.Errorf("table %s: DML log: %w", n, err), f.Close())
		}
	}
	l.size = pos
	return l, nil
}

func (l *dmlLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	// Wake the statements waiting for its epochs: the log is closed when
	// its table is dropped (they end with 42P01) or the engine closes.
	l.dropped = true
	close(l.changed)
	return err
}

// readAt decodes the record at pos; io.EOF when there is none whole.
func (l *dmlLog) readAt(pos int64) (*types.Chunk, int64, error) {
	var h [dmlHeader]byte
	if _, err := l.f.ReadAt(h[:], pos); err != nil {
		return nil, 0, io.EOF
	}
	n := int64(binary.LittleEndian.Uint32(h[:4]))
	payload := make([]byte, n)
	if _, err := l.f.ReadAt(payload, pos+dmlHeader); err != nil {
		return nil, 0, io.EOF
	}
	if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(h[4:]) {
		return nil, 0, fmt.Errorf("table %s: DML log record at %d: checksum mismatch: %w", l.name, pos, base.ErrChecksum)
	}
	c, rest, err := types.DecodeChunk(payload)
	if err != nil || len(rest) != 0 {
		return nil, 0, fmt.Errorf("table %s: DML log record at %d: %v: %w", l.name, pos, err, base.ErrCorruption)
	}
	return c, pos + dmlHeader + n, nil
}

// Next implements ingest.Reader.
func (l *dmlLog) Next(pos uint64) (*types.Chunk, uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil, pos, fmt.Errorf("table %s: DML log is closed: %w", l.name, base.ErrClosed)
	}
	if int64(pos) >= l.size {
		return nil, pos, nil
	}
	c, next, err := l.readAt(int64(pos))
	if err != nil {
		return nil, pos, err
	}
	return c, uint64(next), nil
}

// closed is the ingest source's OnClose hook.
func (l *dmlLog) closed(p ingest.Pair) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last = p
	if len(l.recent) == closeHistory {
		l.recent = append(l.recent[:0], l.recent[1:]...)
	}
	l.recent = append(l.recent, p)
	if l.dropped {
		return
	}
	close(l.changed)
	l.changed = make(chan struct{})
}

// append writes one transaction durably and returns the position after it.
func (l *dmlLog) append(c *types.Chunk) (uint64, error) {
	payload := types.AppendChunk(nil, c)
	rec := make([]byte, dmlHeader, dmlHeader+len(payload))
	binary.LittleEndian.PutUint32(rec[:4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(rec[4:], crc32.Checksum(payload, castagnoli))
	rec = append(rec, payload...)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return 0, fmt.Errorf("table %s: DML log is closed: %w", l.name, base.ErrClosed)
	}
	if _, err := l.f.WriteAt(rec, l.size); err != nil {
		return 0, fmt.Errorf("table %s: DML log: %w", l.name, err)
	}
	if err := l.f.Sync(); err != nil {
		return 0, fmt.Errorf("table %s: DML log: %w", l.name, err)
	}
	l.size += int64(len(rec))
	return uint64(l.size), nil
}

// epochOf waits until the job closed an epoch at or after position end and
// returns the first such epoch, the one the record ending at end is in. A table dropped meanwhile ends the wait with 42P01
// (droppedError); so does one whose log is gone from the engine (a log
// opened by a statement that raced the DROP), checked every
// dropCheckInterval.
func (e *Engine) epochOf(ctx context.Context, l *dmlLog, end uint64) (base.Epoch, error) {
	for {
		l.mu.Lock()
		p, ch, dropped := l.last, l.changed, l.dropped
		for _, r := range l.recent {
			if r.Position >= end && r.Epoch > 0 {
				// The first close at or after the record: its epoch
				// (without a history old enough, the oldest one
				// remembered, an epoch at or after it).
				p = r
				break
			}
		}
		l.mu.Unlock()
		if p.Position >= end && p.Epoch > 0 {
			return p.Epoch, nil
		}
		if dropped {
			if e.ctx.Err() != nil {
				return 0, fmt.Errorf("table %s: waiting for an epoch: the engine is closing: %w", l.name, base.ErrClosed)
			}
			if err := e.checkExists(ctx, l.name); err != nil {
				return 0, err
			}
			return 0, sqlerr.Wrap(sqlerr.ObjectNotInPrerequisiteState, fmt.Errorf("table %s: its DML log was closed before the write's epoch closed (another job writes the table now): %w", l.name, base.ErrClosed))
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-e.ctx.Done():
			return 0, fmt.Errorf("table %s: waiting for an epoch: the engine is closing: %w", l.name, base.ErrClosed)
		case <-ch:
		case <-time.After(dropCheckInterval):
			if err := e.checkExists(ctx, l.name); err != nil {
				// A log opened by a statement that raced the DROP
				// (after dropStorage) goes too, lest a table created
				// again under the name read its records.
				return 0, errors.Join(err, e.forgetLog(l))
			}
		}
	}
}

// forgetLog closes and removes log l of a dropped table when the engine
// still holds it (it was opened after the DROP removed the table's log).
func (e *Engine) forgetLog(l *dmlLog) error {
	e.mu.Lock()
	stray := e.dml[l.name] == l
	if stray {
		delete(e.dml, l.name)
	}
	e.mu.Unlock()
	if !stray {
		return nil
	}
	if err := l.close(); err != nil {
		return err
	}
	if err := os.Remove(l.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("table %s: removing the DML log of the dropped table: %w", l.name, err)
	}
	return nil
}

// dropCheckInterval is how often a statement waiting for a table's epoch
// checks that the table still exists.
const dropCheckInterval = 100 * time.Millisecond

// droppedError is the error of a statement whose table was dropped while
// it waited for the table's epoch (42P01, as a statement naming a table
// that does not exist).
func droppedError(name catalog.ObjectName) error {
	return sqlerr.New(sqlerr.UndefinedTable, "relation %q was dropped while this statement waited for its epoch", name.Name)
}

// checkExists returns droppedError when table or view name is no longer
// in the catalog.
func (e *Engine) checkExists(ctx context.Context, name catalog.ObjectName) error {
	cat, err := e.meta.Catalog(context.WithoutCancel(ctx))
	if err != nil {
		return err
	}
	if _, err := cat.Table(name); err != nil {
		return droppedError(name)
	}
	return nil
}

// Apply writes the changes of c (rows of t's columns, with row kinds) to
// table name as one transaction and returns the epoch that holds it, once
// that epoch is committed: a read at a consistent version started after
// Apply returns sees the change. Only tables without a connector can be
// written; the error for others is a *sqlerr.Error (42809). ctx ending
// before the append writes nothing (ctx's error); after it Apply waits
// for the commit all the same (commit).
func (e *Engine) Apply(ctx context.Context, name catalog.ObjectName, c *types.Chunk) (base.Epoch, error) {
	l, err := e.writableLog(ctx, name)
	if err != nil {
		return 0, err
	}
	l.write.Lock()
	defer l.write.Unlock()
	return e.applyLocked(ctx, l, c)
}

func (e *Engine) writableLog(ctx context.Context, name catalog.ObjectName) (*dmlLog, error) {
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	t, err := cat.Table(name)
	if err != nil {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name.Name)
	}
	if t.Kind != catalog.KindTable {
		return nil, sqlerr.New(sqlerr.WrongObjectType, "cannot change materialized view %q; its view job writes it", name.Name)
	}
	if _, err := cat.Job(dmlJobName(name)); err != nil {
		return nil, sqlerr.New(sqlerr.WrongObjectType, "cannot change table %q: another job writes it (its connector, source or sink)", name.Name)
	}
	if e.opts.NoJobs {
		e.mu.Lock()
		_, running := e.jobs[dmlJobName(name)]
		e.mu.Unlock()
		if !running {
			// Nothing would commit the write: it would wait forever.
			return nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "cannot change table %q: its job is not running (the instance was opened without its jobs: strata start --no-jobs)", name.Name)
		}
	}
	return e.dmlLog(name)
}

func (e *Engine) applyLocked(ctx context.Context, l *dmlLog, c *types.Chunk) (base.Epoch, error) {
	if c.Len() == 0 {
		return 0, nil
	}
	return e.commit(ctx, l, c)
}

// commit appends c to the log and waits for its epoch: the DML path's
// point of no return is the fsynced append. A statement canceled (or
// timed out) before it writes nothing and returns ctx's error (57014 in
// the server); once the record is in the log it will commit, so the wait
// ignores ctx's cancellation, as PostgreSQL ignores a cancel while it
// writes its commit record, and the statement reports success. Only a
// writer that keeps failing (55000), a dropped table (42P01) or the
// engine closing end that wait with an error. The caller holds l.write.
func (e *Engine) commit(ctx context.Context, l *dmlLog, c *types.Chunk) (base.Epoch, error) {
	end, err := e.appendRecord(ctx, l, c)
	if err != nil {
		return 0, err
	}
	return e.waitApplied(context.WithoutCancel(ctx), l, end)
}

// appendRecord is the point of no return of a write (see commit): it
// appends c unless ctx has ended, and returns the position after it. A
// log closed because its table was dropped (a statement that waited for
// l.write while a DROP ran) is 42P01. The caller holds l.write.
func (e *Engine) appendRecord(ctx context.Context, l *dmlLog, c *types.Chunk) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("table %s: statement canceled before its rows were written: %w", l.name, err)
	}
	end, err := l.append(c)
	if errors.Is(err, base.ErrClosed) {
		if derr := e.checkExists(ctx, l.name); derr != nil {
			return 0, derr
		}
	}
	return end, err
}

// waitApplied waits until the log's records up to end are in a committed
// epoch and returns that epoch.
func (e *Engine) waitApplied(ctx context.Context, l *dmlLog, end uint64) (base.Epoch, error) {
	ep, err := e.epochOf(ctx, l, end)
	if err != nil {
		return 0, err
	}
	return ep, e.waitCommitted(ctx, l.name, ep)
}

// settle waits until everything appended to the log so far is committed:
// an UPDATE or DELETE then reads every earlier statement's rows.
func (e *Engine) settle(ctx context.Context, l *dmlLog) error {
	l.mu.Lock()
	end := uint64(l.size)
	l.mu.Unlock()
	if end == 0 {
		return nil
	}
	_, err := e.waitApplied(ctx, l, end)
	return err
}

// waitCommitted waits until table name has committed epoch ep. A job
// anywhere upstream of name (its writer, the writers of the tables that
// job reads, and so on) that keeps failing ends the wait with 55000
// naming the job and its last error, as does a table dropped meanwhile
// (42P01).
func (e *Engine) waitCommitted(ctx context.Context, name catalog.ObjectName, ep base.Epoch) error {
	// Per upstream job, its restarts and its last checkpoint that
	// counted as progress, when it last made progress during the wait.
	type progress struct {
		restarts   int
		checkpoint base.CheckpointID
	}
	seen := map[string]progress{}
	for i := 0; ; i++ {
		c, err := e.meta.CommittedEpoch(ctx, name)
		if err == nil && c.Epoch >= ep {
			return nil
		}
		if err != nil && !errors.Is(err, base.ErrNotFound) {
			return err
		}
		if i%20 == 0 && i > 0 {
			// A table dropped during the wait never commits ep.
			if err := e.checkExists(ctx, name); err != nil {
				return err
			}
		}
		// A job that keeps failing will not let name commit ep: after
		// two restarts without progress between (runningJob.failing),
		// say so rather than wait forever.
		if i%20 == 0 {
			for _, j := range e.upstreamJobs(name) {
				p, ok := seen[j.name]
				switch {
				case !ok || j.checkpoint != p.checkpoint:
					seen[j.name] = progress{j.restarts, j.checkpoint}
				case j.restarts >= p.restarts+2:
					var err *sqlerr.Error
					if j.writes == name {
						err = sqlerr.Wrap(sqlerr.ObjectNotInPrerequisiteState,
							fmt.Errorf("%s has not committed epoch %d: its writer %s keeps failing (%d restarts): %w", name.Name, ep, j.name, j.restarts, j.cause))
					} else {
						err = sqlerr.Wrap(sqlerr.ObjectNotInPrerequisiteState,
							fmt.Errorf("%s has not committed epoch %d: job %s upstream of it (writing %s) keeps failing (%d restarts): %w", name.Name, ep, j.name, j.writes.Name, j.restarts, j.cause))
					}
					err.Hint = failingJobHint(j)
					return err
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-e.ctx.Done():
			return fmt.Errorf("%s: waiting for epoch %d: the engine is closing: %w", name, ep, base.ErrClosed)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// failingJobHint tells what ends the failures of job j. A job retries the
// epoch it failed in as it is, so a change to its input made after that
// epoch never reaches it: a view or sink whose query fails on its input
// is dropped and created again with a query that handles those rows
// (there is no CREATE OR REPLACE MATERIALIZED VIEW, as in PostgreSQL and
// RisingWave).
func failingJobHint(j jobHealth) string {
	switch {
	case strings.HasPrefix(j.name, "view-"):
		return fmt.Sprintf("The query of materialized view %s fails on its input, and retrying the same epoch fails again. DROP MATERIALIZED VIEW %s, then create it again with a query that handles those rows (for example NULLIF(d, 0) for a divisor d).", j.writes.Name, j.writes.Name)
	case strings.HasPrefix(j.name, "sink-"):
		sink := strings.TrimPrefix(j.name, "sink-"+j.writes.Database+"-")
		return fmt.Sprintf("The query of sink %s fails on its input, and retrying the same epoch fails again. DROP SINK %s, then create it again with a query that handles those rows.", sink, sink)
	case strings.HasPrefix(j.name, "ingest-"), strings.HasPrefix(j.name, "cdc-"):
		return fmt.Sprintf("The source feeding %s delivers records the table refuses. Fix the source, or set the table's connector option errors = 'skip' to skip such records, or DROP TABLE %s.", j.writes.Name, j.writes.Name)
	}
	return ""
}

// jobHealth is what upstreamJobs reports of one job.
type jobHealth struct {
	name     string
	writes   catalog.ObjectName
	restarts int
	// checkpoint is the last checkpoint that counted as progress
	// (runningJob.progress).
	checkpoint base.CheckpointID
	cause      error
	// failing counts its restarts since it last made progress
	// (runningJob.failing).
	failing int
}

// upstreamJobs returns the jobs of this process that name depends on:
// the job writing it, then, breadth first, the jobs writing the tables
// each of those reads (its lineage), each once, with its restarts, last
// checkpoint that counted as progress and last failure.
func (e *Engine) upstreamJobs(name catalog.ObjectName) []jobHealth {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []jobHealth
	visited := map[catalog.ObjectName]bool{name: true}
	queue := []catalog.ObjectName{name}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, rj := range e.jobs {
			if !slices.Contains(rj.def.Writes, n) {
				continue
			}
			rj.mu.Lock()
			out = append(out, jobHealth{name: rj.def.Name, writes: n, restarts: rj.restarts, checkpoint: rj.progress, cause: rj.err, failing: rj.failing})
			rj.mu.Unlock()
			for _, r := range rj.def.Reads {
				if !visited[r] {
					visited[r] = true
					queue = append(queue, r)
				}
			}
		}
	}
	return out
}
