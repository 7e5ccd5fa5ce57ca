package pgcdc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// Quarantine is a table of a source that the source stopped following
// (doc.go, Quarantine): from position From on, none of its changes are
// handed out, while the source's other tables go on.
type Quarantine struct {
	// Table is the Strata table's name (Table.Name).
	Table string
	// From is the commit LSN of the first transaction of which nothing of
	// the table is handed out (0: the initial snapshot on).
	From uint64
	// Err says why, naming the source, the table, the column and the
	// change's LSN.
	Err string
}

// Error implements error: the reason, as a read of the table reports it.
func (q Quarantine) Error() string { return q.Err }

// quarantineError is the text of a quarantine for an error of a table:
// the error's words, without the marker texts that only classify it
// (": strata: invalid argument"), since the text is shown as it is in
// strata_catalog.jobs.
func (s *Stream) quarantineError(err error) string {
	msg := err.Error()
	for _, m := range []error{base.ErrInvalidArgument, base.ErrOutOfRange, ErrUnsupported} {
		msg = strings.ReplaceAll(msg, ": "+m.Error(), "")
	}
	return fmt.Sprintf("postgres-cdc source %s: %s", s.cfg.Name, msg)
}

// Check inspects one table as Open does (it exists upstream with every
// declared column, of a type that fits, and a replica identity that can
// feed it) without starting anything: CREATE TABLE ... FROM source runs it
// so that a table the source could not follow is refused up front rather
// than quarantined at once. Errors wrap base.ErrInvalidArgument and name
// the table and column.
func Check(ctx context.Context, opts Options, t Table) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	if _, err := NewLayout([]Table{t}); err != nil {
		return err
	}
	conn, err := opts.connect(ctx, false)
	if err != nil {
		return fmt.Errorf("postgres-cdc: %w", err)
	}
	defer closeConn(conn)
	return inspect(ctx, conn, t)
}

// CheckSource checks what CREATE SOURCE can check before any table is
// added (RisingWave validates a postgres-cdc source the same way): the
// options are valid, the database accepts a connection with them, and its
// wal_level is logical, which logical replication needs. Errors name what
// failed (connect errors keep the driver's words: refused, unknown
// database, password).
func CheckSource(ctx context.Context, opts Options) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	conn, err := opts.connect(ctx, false)
	if err != nil {
		return fmt.Errorf("postgres-cdc: %w", err)
	}
	defer closeConn(conn)
	rows, err := query(ctx, conn, "SELECT current_setting('wal_level')")
	if err != nil {
		return fmt.Errorf("postgres-cdc: read wal_level: %w", err)
	}
	if len(rows) != 1 || len(rows[0]) != 1 || rows[0][0] != "logical" {
		level := "unknown"
		if len(rows) == 1 && len(rows[0]) == 1 {
			level = rows[0][0]
		}
		return fmt.Errorf("postgres-cdc: database %s has wal_level = %s; logical replication needs wal_level = logical (set it in postgresql.conf and restart PostgreSQL): %w", opts.Database, level, base.ErrInvalidArgument)
	}
	return nil
}

// Quarantined returns the tables the Stream does not follow, by layout
// order.
func (s *Stream) Quarantined() []Quarantine {
	s.q.Lock()
	defer s.q.Unlock()
	var out []Quarantine
	for i := range s.layout.Tables() {
		if q, ok := s.q.byTable[i]; ok {
			out = append(out, q)
		}
	}
	return out
}

// quarantinedAtLocked tells whether table i's changes of the transaction
// committing at commit are left out. Called with s.q held.
func (s *Stream) quarantinedAtLocked(i int, commit uint64) bool {
	q, ok := s.q.byTable[i]
	return ok && q.From <= commit
}

// admit applies the quarantines to t (doc.go, Quarantine): the tables the
// decoder could not follow in t (Txn.Failed) and those with a bad row in
// fail mode are quarantined from t's commit; each new quarantine goes to
// Config.OnQuarantine before t is handed out. It applies the error modes
// of the other bad rows (doc.go, Bad values), and returns t's chunk
// without the rows of the tables quarantined as of t. An error (the
// dead-letter receiver or OnQuarantine failing) fails the source: t is
// read again by the next call.
func (s *Stream) admit(t *Txn) (*types.Chunk, error) {
	s.q.Lock()
	defer s.q.Unlock()
	type pending struct {
		table int
		q     Quarantine
	}
	var added []pending
	add := func(i int, from uint64, err error) {
		if s.quarantinedAtLocked(i, from) || slices.ContainsFunc(added, func(p pending) bool { return p.table == i }) {
			return
		}
		added = append(added, pending{i, Quarantine{Table: s.layout.Table(i).Name, From: from, Err: s.quarantineError(err)}})
	}
	for _, f := range t.Failed {
		add(f.Table, t.CommitLSN, f.Err)
	}
	isOut := func(i int) bool {
		return s.quarantinedAtLocked(i, t.CommitLSN) || slices.ContainsFunc(added, func(p pending) bool { return p.table == i })
	}
	for _, b := range t.Bad {
		if isOut(b.Table) {
			continue // the table stopped before t: its bad rows go with it
		}
		r := format.BadRecord{Source: "postgres-cdc source " + s.cfg.Name, Where: b.Where, Position: b.Position, Raw: b.Raw, Err: b.Err}
		errs := s.cfg.Tables[b.Table].Errors
		if errs == nil || errs.Mode == format.Fail {
			add(b.Table, t.CommitLSN, fmt.Errorf("%s: %w", b.Where, b.Err))
			continue
		}
		if err := errs.Handle(r); err != nil {
			return nil, err
		}
	}
	for _, p := range added {
		if s.cfg.OnQuarantine != nil {
			if err := s.cfg.OnQuarantine(p.q); err != nil {
				return nil, fmt.Errorf("postgres-cdc source %s: record the quarantine of table %s: %w", s.cfg.Name, p.q.Table, err)
			}
		}
		s.q.byTable[p.table] = p.q
	}
	out := make([]TableFailure, 0, len(s.q.byTable))
	for i := range s.layout.Tables() {
		if s.quarantinedAtLocked(i, t.CommitLSN) {
			out = append(out, TableFailure{Table: i})
		}
	}
	if len(out) == 0 {
		return t.Chunk, nil
	}
	return dropTables(t.Chunk, out), nil
}

// openQuarantines sets up the quarantines of a new Stream: those cfg
// names (kept from an earlier run) and, for the other tables, an
// inspection whose failure quarantines the table from the first position
// Next is asked for (applyOpen). It returns the tables still followed,
// for the publication; an error that is not the table's (the server's)
// fails Open.
func (s *Stream) openQuarantines(ctx context.Context, conn *pgconn.PgConn) ([]Table, error) {
	s.q.byTable = map[int]Quarantine{}
	s.q.atOpen = map[int]error{}
	for _, q := range s.cfg.Quarantined {
		if i, ok := s.layout.Index(q.Table); ok {
			s.q.byTable[i] = q
		}
	}
	var followed []Table
	for i, t := range s.cfg.Tables {
		if _, ok := s.q.byTable[i]; ok {
			continue
		}
		if err := inspect(ctx, conn, t); err != nil {
			if !errors.Is(err, base.ErrInvalidArgument) {
				return nil, err // the server, not the table
			}
			s.q.atOpen[i] = err
			continue
		}
		followed = append(followed, t)
	}
	return followed, nil
}

// applyOpen quarantines, from pos, the tables whose inspection failed at
// Open, recording each with Config.OnQuarantine; it runs at the first
// Next, so that the error shows before any transaction arrives.
func (s *Stream) applyOpen(pos uint64) error {
	s.q.Lock()
	defer s.q.Unlock()
	for i := range s.layout.Tables() {
		err, ok := s.q.atOpen[i]
		if !ok {
			continue
		}
		q := Quarantine{Table: s.layout.Table(i).Name, From: pos, Err: s.quarantineError(err)}
		if s.cfg.OnQuarantine != nil {
			if err := s.cfg.OnQuarantine(q); err != nil {
				return fmt.Errorf("postgres-cdc source %s: record the quarantine of table %s: %w", s.cfg.Name, q.Table, err)
			}
		}
		s.q.byTable[i] = q
		delete(s.q.atOpen, i)
	}
	return nil
}

// quarantinedAt tells whether table i's changes of the transaction
// committing at commit are left out.
func (s *Stream) quarantinedAt(i int, commit uint64) bool {
	s.q.Lock()
	defer s.q.Unlock()
	return s.quarantinedAtLocked(i, commit)
}
