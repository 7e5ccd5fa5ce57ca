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
	// last is the latest epoch close the job reported; changed is closed
	// and replaced when it moves.
	last    ingest.Pair
	changed chan struct{}
}

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
// returns that epoch.
func (l *dmlLog) epochOf(ctx context.Context, end uint64) (base.Epoch, error) {
	for {
		l.mu.Lock()
		p, ch := l.last, l.changed
		l.mu.Unlock()
		if p.Position >= end && p.Epoch > 0 {
			return p.Epoch, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-ch:
		}
	}
}

// Apply writes the changes of c (rows of t's columns, with row kinds) to
// table name as one transaction and returns the epoch that holds it, once
// that epoch is committed: a read at a consistent version started after
// Apply returns sees the change. Only tables without a connector can be
// written; the error for others is a *sqlerr.Error (42809).
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
	return e.dmlLog(name)
}

func (e *Engine) applyLocked(ctx context.Context, l *dmlLog, c *types.Chunk) (base.Epoch, error) {
	if c.Len() == 0 {
		return 0, nil
	}
	end, err := l.append(c)
	if err != nil {
		return 0, err
	}
	return e.waitApplied(ctx, l, end)
}

// waitApplied waits until the log's records up to end are in a committed
// epoch and returns that epoch.
func (e *Engine) waitApplied(ctx context.Context, l *dmlLog, end uint64) (base.Epoch, error) {
	ep, err := l.epochOf(ctx, end)
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

// waitCommitted waits until table name has committed epoch ep.
func (e *Engine) waitCommitted(ctx context.Context, name catalog.ObjectName, ep base.Epoch) error {
	// The writer's restarts and newest checkpoint when it last made
	// progress during the wait.
	restarts, checkpoint := -1, base.CheckpointID(0)
	for i := 0; ; i++ {
		c, err := e.meta.CommittedEpoch(ctx, name)
		if err == nil && c.Epoch >= ep {
			return nil
		}
		if err != nil && !errors.Is(err, base.ErrNotFound) {
			return err
		}
		// A writer that keeps failing will not commit ep: after two
		// restarts without a completed checkpoint between, say so
		// rather than wait forever.
		if i%20 == 0 {
			if job, n, chk, cause := e.writerRestarts(name); job != "" {
				switch {
				case restarts < 0 || chk != checkpoint:
					restarts, checkpoint = n, chk
				case n >= restarts+2:
					return sqlerr.Wrap(sqlerr.ObjectNotInPrerequisiteState,
						fmt.Errorf("%s has not committed epoch %d: its writer %s keeps failing (%d restarts): %w", name.Name, ep, job, n, cause))
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// writerRestarts returns the job of this process that writes table name,
// its restarts, its newest completed checkpoint and its last failure (""
// when none runs here).
func (e *Engine) writerRestarts(name catalog.ObjectName) (job string, restarts int, checkpoint base.CheckpointID, cause error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, rj := range e.jobs {
		if !slices.Contains(rj.def.Writes, name) {
			continue
		}
		rj.mu.Lock()
		defer rj.mu.Unlock()
		return rj.def.Name, rj.restarts, rj.lastCheckpoint.ID, rj.err
	}
	return "", 0, 0, nil
}
