package pgcdc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// Config describes a source: where the database is and which tables it
// streams.
type Config struct {
	Options Options
	// Tables are the upstream tables and the Strata tables they feed; their
	// order is the order of the union layout and of the tags.
	Tables []Table
	// Name is the source's name, for messages.
	Name string
	// StatusInterval is how often a standby status update goes to the
	// server (default 1 s); the server's own requests are answered at
	// once.
	StatusInterval time.Duration
	// QueueTxns bounds the transactions decoded ahead of the reader
	// (default 64); a full queue stops reading the WAL.
	QueueTxns int
	// Quarantined are the tables an earlier run of the source stopped
	// following (doc.go, Quarantine), as OnQuarantine recorded them: they
	// stay quarantined from the same positions.
	Quarantined []Quarantine
	// OnQuarantine, when set, records a new quarantine durably before
	// the transaction that starts it is handed out; an error fails the
	// source (and the transaction is read again).
	OnQuarantine func(Quarantine) error
}

// Stream is one source's logical replication stream (doc.go): it reads the
// WAL of the source's slot through pgoutput and hands the transactions
// out, in commit order, as chunks of the union layout. It implements
// connector/ingest.Reader for one ingest source subtask at a time (several
// attempts of it one after the other). Like Debezium's and Flink CDC's
// Postgres connectors it owns one slot and one walsender connection for
// all its tables; unlike them it hands out whole transactions, never rows.
type Stream struct {
	cfg    Config
	layout *Layout

	// confirmed is the highest position Confirm was given.
	confirmed atomic.Uint64

	mu struct {
		sync.Mutex
		sess   *session // the session serving Next, or nil
		closed bool
	}
	// held is the initial snapshot, kept until a confirmed position passes
	// it (invariant snapshot-held).
	held struct {
		sync.Mutex
		snap *Txn
	}
	// q holds the quarantined tables (doc.go, Quarantine).
	q struct {
		sync.Mutex
		byTable map[int]Quarantine // by layout index
		atOpen  map[int]error      // inspections failed at Open, applied at the first Next
	}
}

// session is one replication connection started at one position; its
// goroutine decodes transactions into txns.
type session struct {
	next   uint64    // position the next transaction in txns follows; guarded by Stream.mu
	txns   chan *Txn // bounded
	errc   chan error
	cancel context.CancelFunc
	done   chan struct{}
}

func (ss *session) stop() {
	ss.cancel()
	<-ss.done
}

// Open checks cfg against the database and returns the source's Stream:
// every table exists with every declared column, of a supported type that
// fits the Strata type; its replica identity can feed the Strata table
// (doc.go, Row kinds); and the publication lists every table (it is
// created when missing). A table that fails these checks (errors wrapping
// base.ErrInvalidArgument that name the table and column) does not stop
// the source: it is quarantined from the first position Next is asked
// for (doc.go, Quarantine), and so are the tables cfg.Quarantined names.
// Open fails for the options, the layout, and a server it cannot reach
// or query. It does not touch the slot: the first Next creates or resumes
// it, once it knows the position to start from.
func Open(ctx context.Context, cfg Config) (*Stream, error) {
	if err := cfg.Options.Validate(); err != nil {
		return nil, err
	}
	l, err := NewLayout(cfg.Tables)
	if err != nil {
		return nil, err
	}
	if cfg.StatusInterval <= 0 {
		cfg.StatusInterval = time.Second
	}
	if cfg.QueueTxns <= 0 {
		cfg.QueueTxns = 64
	}
	if cfg.Name == "" {
		cfg.Name = cfg.Options.Slot
	}
	conn, err := cfg.Options.connect(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("postgres-cdc source %s: %w", cfg.Name, err)
	}
	defer closeConn(conn)
	s := &Stream{cfg: cfg, layout: l}
	followed, err := s.openQuarantines(ctx, conn)
	if err != nil {
		return nil, err
	}
	if err := ensurePublication(ctx, conn, cfg.Options.Publication, cfg.Options.Slot, followed); err != nil {
		return nil, err
	}
	return s, nil
}

// Layout returns the layout of the chunks Next returns.
func (s *Stream) Layout() *Layout { return s.layout }

// Next implements connector/ingest.Reader: the transaction at pos (the
// first whose commit record starts at or after pos; the snapshot at 0) and
// the position after it, or a nil chunk when none has arrived yet. It
// never waits for the server. A pos other than the one the last
// transaction ended at (a restore) restarts the replication connection at
// pos (invariant rewind-is-restart). An error of the connection or of a
// change the source refuses is returned once; the next call starts
// again. The bad row images of a transaction get their tables' error
// modes as it is handed out (doc.go, Bad values), and the rows of
// quarantined tables are left out (doc.go, Quarantine).
func (s *Stream) Next(pos uint64) (*types.Chunk, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return nil, pos, fmt.Errorf("postgres-cdc source %s: %w", s.cfg.Name, base.ErrClosed)
	}
	if err := s.applyOpen(pos); err != nil {
		return nil, pos, err
	}
	ss := s.mu.sess
	if ss != nil && ss.next != pos {
		ss.stop()
		ss = nil
	}
	if ss == nil {
		s.mu.sess = s.startSession(pos)
		return nil, pos, nil
	}
	select {
	case t := <-ss.txns:
		c, err := s.admit(t)
		if err != nil {
			// A dead letter or a quarantine that could not be recorded:
			// the transaction is not handed out, and the next call reads
			// it again from the server.
			ss.stop()
			s.mu.sess = nil
			return nil, pos, err
		}
		ss.next = t.EndLSN
		return c, t.EndLSN, nil
	default:
	}
	select {
	case err := <-ss.errc:
		ss.stop()
		s.mu.sess = nil
		return nil, pos, fmt.Errorf("postgres-cdc source %s: %w", s.cfg.Name, err)
	default:
		return nil, pos, nil
	}
}

// Confirm tells the Stream that every transaction before pos is committed
// in Strata (pos is where an epoch that every table of the source has
// committed was closed; Confirmer computes it). The confirmed position
// goes to the server with the next standby status update, which lets it
// recycle the WAL before it, and a held snapshot before it is dropped.
// Positions below one confirmed already are ignored.
func (s *Stream) Confirm(pos uint64) {
	for {
		cur := s.confirmed.Load()
		if pos <= cur || s.confirmed.CompareAndSwap(cur, pos) {
			break
		}
	}
	s.held.Lock()
	if s.held.snap != nil && pos >= s.held.snap.EndLSN {
		s.held.snap = nil
	}
	s.held.Unlock()
}

// Confirmed returns the highest position given to Confirm.
func (s *Stream) Confirmed() uint64 { return s.confirmed.Load() }

// Close stops the replication connection. Next then fails with
// base.ErrClosed. The slot stays (DropSlot removes it).
func (s *Stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.sess != nil {
		s.mu.sess.stop()
		s.mu.sess = nil
	}
	s.mu.closed = true
	return nil
}

// DropSlot drops the source's replication slot, waiting for a connection
// still using it to go (DROP SOURCE). A slot that does not exist is no
// error.
func (s *Stream) DropSlot(ctx context.Context) error {
	conn, err := s.cfg.Options.connect(ctx, true)
	if err != nil {
		return fmt.Errorf("postgres-cdc source %s: %w", s.cfg.Name, err)
	}
	defer closeConn(conn)
	if _, err := dropSlot(ctx, conn, s.cfg.Options.Slot); err != nil {
		return fmt.Errorf("postgres-cdc source %s: %w", s.cfg.Name, err)
	}
	return nil
}

func (s *Stream) startSession(pos uint64) *session {
	ctx, cancel := context.WithCancel(context.Background())
	ss := &session{next: pos, txns: make(chan *Txn, s.cfg.QueueTxns), errc: make(chan error, 1), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(ss.done)
		if err := s.run(ctx, ss, pos); err != nil && ctx.Err() == nil {
			ss.errc <- err
		}
	}()
	return ss
}

func (s *Stream) heldSnapshot() *Txn {
	s.held.Lock()
	defer s.held.Unlock()
	return s.held.snap
}

// run is a session's goroutine: connect, find where to stream from (taking
// the snapshot for position 0), then stream.
func (s *Stream) run(ctx context.Context, ss *session, start uint64) error {
	slot := s.cfg.Options.Slot
	conn, err := s.cfg.Options.connect(ctx, true)
	if err != nil {
		return fmt.Errorf("replication: %w", err)
	}
	defer closeConn(conn)
	var from, floor uint64
	if start == 0 {
		snap := s.heldSnapshot()
		if snap == nil {
			if snap, err = s.snapshot(ctx, conn); err != nil {
				return err
			}
			s.held.Lock()
			s.held.snap = snap
			s.held.Unlock()
		}
		if err := s.deliver(ctx, conn, ss, snap, snap.EndLSN); err != nil {
			return err
		}
		from, floor = snap.EndLSN, snap.EndLSN
	} else {
		if snap := s.heldSnapshot(); snap != nil && start < snap.EndLSN {
			return fmt.Errorf("position %d is inside the initial snapshot (which ends at %s): not a transaction boundary: %w",
				start, pglogrepl.LSN(snap.EndLSN), base.ErrCorruption)
		}
		confirmed, ok, err := slotConfirmed(ctx, conn, slot)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("replication slot %s does not exist, so the source cannot resume at %s: %w", slot, pglogrepl.LSN(start), base.ErrNotFound)
		}
		if start < confirmed {
			// The server would start at its confirmed position and the
			// transactions in between would be lost.
			return fmt.Errorf("cannot resume at %s: slot %s has confirmed up to %s and the WAL before it is gone (a snapshot taken before the restart that never committed, or a position confirmed too early): %w",
				pglogrepl.LSN(start), slot, pglogrepl.LSN(confirmed), base.ErrCorruption)
		}
		from, floor = start, confirmed
	}
	if err := startReplication(ctx, conn, slot, s.cfg.Options.Publication, from); err != nil {
		return err
	}
	return s.stream(ctx, conn, ss, from, floor)
}

// snapshot (re)creates the slot with an exported snapshot and reads every
// table in it: the initial snapshot, one transaction of +I rows ending at
// the slot's consistent point.
func (s *Stream) snapshot(ctx context.Context, conn *pgconn.PgConn) (*Txn, error) {
	slot := s.cfg.Options.Slot
	// Position 0 means that nothing of this source was committed: a slot
	// left by an earlier run is of no use (its snapshot is gone).
	if _, ok, err := slotConfirmed(ctx, conn, slot); err != nil {
		return nil, err
	} else if ok {
		if err := pglogrepl.DropReplicationSlot(ctx, conn, slot, pglogrepl.DropReplicationSlotOptions{Wait: true}); err != nil {
			return nil, fmt.Errorf("drop the stale slot %s: %w", slot, err)
		}
	}
	res, err := pglogrepl.CreateReplicationSlot(ctx, conn, slot, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{SnapshotAction: "EXPORT_SNAPSHOT", Mode: pglogrepl.LogicalReplication})
	if err != nil {
		return nil, fmt.Errorf("create replication slot %s: %w", slot, err)
	}
	cp, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil || cp == 0 {
		return nil, fmt.Errorf("slot %s: consistent point %q: %w", slot, res.ConsistentPoint, base.ErrCorruption)
	}
	q, err := s.cfg.Options.connect(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	defer closeConn(q)
	if _, err := q.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY; SET TRANSACTION SNAPSHOT '"+res.SnapshotName+"'").ReadAll(); err != nil {
		return nil, fmt.Errorf("use the exported snapshot %s: %w", res.SnapshotName, err)
	}
	c := types.NewChunk(s.layout.types, 64)
	var bad []BadRow
	row := make(types.Row, s.layout.Width())
	var n uint64 // rows read, for the positions of bad ones
	for i := range s.layout.Tables() {
		if s.quarantinedAt(i, 0) {
			continue // not followed from the snapshot on
		}
		t := s.layout.Table(i)
		off, _ := s.layout.Span(i)
		sql := "SELECT "
		for j, col := range t.Columns {
			if j > 0 {
				sql += ", "
			}
			sql += quoteIdent(col.Name)
		}
		sql += " FROM " + t.qualified()
		rr := q.ExecParams(ctx, sql, nil, nil, nil, nil)
		for rr.NextRow() {
			for k := range row {
				row[k] = types.Null
			}
			row[0] = types.NewInt32(int32(i))
			vals := rr.Values()
			var badCol int
			var badErr error
			for j, v := range vals {
				if v == nil {
					continue
				}
				d, err := types.ParseText(t.Columns[j].Type, string(v), time.UTC)
				if err != nil {
					badCol, badErr = j, err
					break
				}
				row[off+j] = d
			}
			if badErr != nil {
				bad = append(bad, BadRow{Table: i, Column: t.Columns[badCol].Name, Position: SnapshotPosition(n),
					Where: fmt.Sprintf("table %s column %s: row %d of the initial snapshot", t.Name, t.Columns[badCol].Name, n),
					Raw:   rawRow(columnNames(t), vals), Err: badErr})
			} else {
				c.Append(types.Insert, row)
			}
			n++
		}
		if _, err := rr.Close(); err != nil {
			return nil, fmt.Errorf("read %s for the initial snapshot: %w", t.Upstream, err)
		}
	}
	if _, err := q.Exec(ctx, "COMMIT").ReadAll(); err != nil {
		return nil, fmt.Errorf("end the snapshot transaction: %w", err)
	}
	return &Txn{CommitLSN: 0, EndLSN: uint64(cp), Chunk: c, Bad: bad}, nil
}

// stream reads the replication stream into ss.txns, skipping transactions
// that commit before from, and sends standby status updates.
func (s *Stream) stream(ctx context.Context, conn *pgconn.PgConn, ss *session, from, floor uint64) error {
	dec := newDecoder(s.layout)
	nextStatus := time.Time{}
	for {
		if !time.Now().Before(nextStatus) {
			if err := s.sendStatus(ctx, conn, floor); err != nil {
				return err
			}
			nextStatus = time.Now().Add(s.cfg.StatusInterval)
		}
		rctx, cancel := context.WithDeadline(ctx, nextStatus)
		raw, err := conn.ReceiveMessage(rctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if pgconn.Timeout(err) {
				continue
			}
			return fmt.Errorf("replication stream: %w", err)
		}
		switch msg := raw.(type) {
		case *pgproto3.ErrorResponse:
			return fmt.Errorf("replication stream: %w", pgconn.ErrorResponseToPgError(msg))
		case *pgproto3.CopyData:
			if len(msg.Data) == 0 {
				continue
			}
			switch msg.Data[0] {
			case pglogrepl.PrimaryKeepaliveMessageByteID:
				ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(msg.Data[1:])
				if err != nil {
					return fmt.Errorf("keepalive: %w", err)
				}
				if ka.ReplyRequested {
					nextStatus = time.Time{}
				}
			case pglogrepl.XLogDataByteID:
				x, err := pglogrepl.ParseXLogData(msg.Data[1:])
				if err != nil {
					return fmt.Errorf("XLogData: %w", err)
				}
				m, err := pglogrepl.Parse(x.WALData)
				if err != nil {
					return fmt.Errorf("pgoutput message at %s: %v: %w", x.WALStart, err, base.ErrCorruption)
				}
				t, err := dec.Step(m, uint64(x.WALStart))
				if err != nil {
					return err
				}
				if t != nil && t.CommitLSN >= from {
					if err := s.deliver(ctx, conn, ss, t, floor); err != nil {
						return err
					}
				}
			}
		}
	}
}

// deliver puts t on the session's queue, answering the server with status
// updates while the queue is full.
func (s *Stream) deliver(ctx context.Context, conn *pgconn.PgConn, ss *session, t *Txn, floor uint64) error {
	tick := time.NewTicker(s.cfg.StatusInterval)
	defer tick.Stop()
	for {
		select {
		case ss.txns <- t:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if err := s.sendStatus(ctx, conn, floor); err != nil {
				return err
			}
		}
	}
}

// sendStatus reports the confirmed position (never below floor, where
// the slot was when the session started) as written, flushed and applied.
// It sends nothing before replication started (floor 0 is never used:
// the snapshot's end or the slot's confirmed position is the floor).
func (s *Stream) sendStatus(ctx context.Context, conn *pgconn.PgConn, floor uint64) error {
	lsn := pglogrepl.LSN(max(floor, s.confirmed.Load()))
	err := pglogrepl.SendStandbyStatusUpdate(ctx, conn, pglogrepl.StandbyStatusUpdate{WALWritePosition: lsn, WALFlushPosition: lsn, WALApplyPosition: lsn})
	if err != nil {
		return fmt.Errorf("standby status update: %w", err)
	}
	return nil
}

// startReplication starts streaming slot from lsn with pgoutput protocol
// version 1, retrying for a while when the slot is still held by the
// connection of a session being stopped (SQLSTATE 55006).
func startReplication(ctx context.Context, conn *pgconn.PgConn, slot, publication string, lsn uint64) error {
	opts := pglogrepl.StartReplicationOptions{Mode: pglogrepl.LogicalReplication,
		PluginArgs: []string{"proto_version '1'", "publication_names '" + publication + "'"}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := pglogrepl.StartReplication(ctx, conn, slot, pglogrepl.LSN(lsn), opts)
		var pe *pgconn.PgError
		if err == nil {
			return nil
		}
		if !errors.As(err, &pe) || pe.Code != "55006" || time.Now().After(deadline) {
			return fmt.Errorf("start replication of slot %s at %s: %w", slot, pglogrepl.LSN(lsn), err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// slotConfirmed returns the slot's confirmed flush position, and whether
// the slot exists. It refuses a slot of another output plugin.
func slotConfirmed(ctx context.Context, conn *pgconn.PgConn, slot string) (uint64, bool, error) {
	res, err := conn.Exec(ctx, "SELECT plugin, confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '"+slot+"'").ReadAll()
	if err != nil {
		return 0, false, fmt.Errorf("look up slot %s: %w", slot, err)
	}
	if len(res) != 1 || len(res[0].Rows) == 0 {
		return 0, false, nil
	}
	r := res[0].Rows[0]
	if string(r[0]) != "pgoutput" {
		return 0, false, fmt.Errorf("slot %s uses plugin %q, not pgoutput: %w", slot, r[0], base.ErrInvalidArgument)
	}
	if r[1] == nil {
		return 0, true, nil
	}
	lsn, err := pglogrepl.ParseLSN(string(r[1]))
	if err != nil {
		return 0, false, fmt.Errorf("slot %s: confirmed_flush_lsn %q: %w", slot, r[1], base.ErrCorruption)
	}
	return uint64(lsn), true, nil
}

// closeConn closes conn, waiting at most a second for the server to take
// the goodbye.
func closeConn(conn *pgconn.PgConn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	conn.Close(ctx)
}
