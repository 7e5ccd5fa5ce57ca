package pgsink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/stratadb/strata/connector/pgconnect"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// Config configures one sink subtask attempt.
type Config struct {
	Options Options
	// Name identifies the sink in the progress table; it must be the same
	// across restarts and unique among the sinks writing to the database
	// (the engine passes the sink job's name).
	Name string
	// Columns are the columns of the rows written; Key names the
	// primary-key columns, by which rows are upserted and deleted.
	Columns []catalog.Column
	Key     []string
}

// Sink is the two-phase-commit Committer of one Postgres sink subtask
// attempt (see doc.go): Prepare folds an epoch's changes into the net
// upserts and deletes of its keys and keeps them in the descriptor;
// Commit applies them in one Postgres transaction that also advances the
// subtask's progress row, unless the row says the epoch is applied
// already. Use one Sink per subtask attempt; NewSinkOperator runs it.
type Sink struct {
	cfg   Config
	key   []int
	types []types.Type

	// conn and target are set by Connect; all calls come from the
	// subtask's goroutine.
	conn   *pgx.Conn
	target *target
}

// NewSink returns the Committer of one subtask attempt. It checks the
// configuration only; Connect checks the target table. Errors wrap
// base.ErrInvalidArgument.
func NewSink(cfg Config) (*Sink, error) {
	if cfg.Name == "" {
		return nil, fmt.Errorf("postgres sink %s: no sink name: %w", cfg.Options.Target(), base.ErrInvalidArgument)
	}
	s := &Sink{cfg: cfg}
	for _, name := range cfg.Key {
		i := slices.IndexFunc(cfg.Columns, func(c catalog.Column) bool { return c.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("postgres sink %s: primary-key column %q is not a column: %w", cfg.Options.Target(), name, base.ErrInvalidArgument)
		}
		s.key = append(s.key, i)
	}
	if len(s.key) == 0 {
		return nil, fmt.Errorf("postgres sink %s: the sink's rows have no primary key to upsert and delete them by: %w", cfg.Options.Target(), base.ErrInvalidArgument)
	}
	for _, c := range cfg.Columns {
		s.types = append(s.types, c.Type)
	}
	return s, nil
}

// requestTimeout bounds one connection, check or commit.
const requestTimeout = time.Minute

// Check connects to the database and checks that the target table can
// take the rows of cols keyed by key (see Connect), for a CREATE SINK to
// refuse a target that does not fit before any job runs.
func Check(ctx context.Context, cfg Config) error {
	s, err := NewSink(cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.connect(ctx)
}

// Connect opens the sink's connection, checks the target table (it
// exists, has a column of a fitting type for every sink column, no other
// NOT NULL column without a default, and a primary key or unique index
// on exactly the key columns) and creates the progress table when it is
// missing. Errors name the table and the column.
func (s *Sink) Connect() error {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	return s.connect(ctx)
}

func (s *Sink) connect(ctx context.Context) error {
	if s.conn != nil {
		return nil
	}
	conn, err := pgx.Connect(ctx, s.cfg.Options.connString())
	if err != nil {
		return fmt.Errorf("postgres sink %s: database %s: %w", s.cfg.Options.Target(), s.cfg.Options.Database, pgconnect.New(s.cfg.Options.Hostname, s.cfg.Options.Port, err))
	}
	t, err := inspect(ctx, conn, s.cfg.Options, s.cfg.Columns, s.key)
	if err == nil {
		err = s.createProgress(ctx, conn)
	}
	if err != nil {
		conn.Close(context.Background())
		return err
	}
	s.conn, s.target = conn, t
	return nil
}

// createProgress creates the progress table when missing. Subtasks (and
// sinks) starting together serialize on an advisory lock, since
// CREATE TABLE IF NOT EXISTS is not safe against a concurrent one.
func (s *Sink) createProgress(ctx context.Context, conn *pgx.Conn) error {
	o := s.cfg.Options
	name := quoted(o.ProgressSchema, o.ProgressTable)
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres sink: progress table %s.%s: %w", o.ProgressSchema, o.ProgressTable, err)
	}
	defer tx.Rollback(context.Background())
	_, err = tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext($1))", "strata-sink-progress "+name)
	if err == nil {
		_, err = tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+name+` (
			sink text NOT NULL,
			subtask integer NOT NULL,
			epoch bigint NOT NULL,
			committed_at timestamptz NOT NULL DEFAULT now(),
			PRIMARY KEY (sink, subtask))`)
	}
	if err == nil {
		err = tx.Commit(ctx)
	}
	if err != nil {
		return fmt.Errorf("postgres sink: progress table %s.%s: %w", o.ProgressSchema, o.ProgressTable, err)
	}
	return nil
}

// Close closes the connection.
func (s *Sink) Close() error {
	if s.conn == nil {
		return nil
	}
	err := s.conn.Close(context.Background())
	s.conn, s.target = nil, nil
	return err
}

// Prepare implements operator.Committer: it folds epoch e's changes into
// each key's last state, an upsert (+I) of its last row or a delete (-D)
// of the key, sorted by key, and returns them as the descriptor (the
// chunk codec). A -U followed by a +U of the same key is thus one upsert.
// It touches no external system: the descriptor is the write-ahead copy
// of the epoch, kept in the checkpoint until its commit. An epoch without
// changes gives an empty descriptor.
func (s *Sink) Prepare(_ int, _ base.Epoch, chunks []*types.Chunk) ([]byte, error) {
	type last struct {
		key  []byte
		kind types.RowKind
		row  types.Row
	}
	byKey := map[string]int{}
	var net []last
	for _, c := range chunks {
		for i := range c.Len() {
			row := c.Row(i)
			k := types.EncodeKey(nil, row, s.key, s.types)
			kind := types.Insert
			if c.Kind(i).IsRetract() {
				kind = types.Delete
			}
			if j, ok := byKey[string(k)]; ok {
				net[j].kind, net[j].row = kind, row
				continue
			}
			byKey[string(k)] = len(net)
			net = append(net, last{key: k, kind: kind, row: row})
		}
	}
	if len(net) == 0 {
		return nil, nil
	}
	slices.SortFunc(net, func(a, b last) int { return bytes.Compare(a.key, b.key) })
	out := types.NewChunk(s.types, len(net))
	for _, l := range net {
		out.Append(l.kind, l.row)
	}
	return types.AppendChunk(nil, out), nil
}

// batchRows bounds the rows of one statement.
const batchRows = 5000

// Commit implements operator.Committer: in one transaction it locks the
// subtask's progress row, returns at once when the row holds e or a
// later epoch (the epoch was applied: a re-commit after a restore changes
// nothing), applies the deletes and the upserts, and sets the row to e.
func (s *Sink) Commit(subtask int, e base.Epoch, desc []byte) error {
	if uint64(e) > math.MaxInt64 {
		return fmt.Errorf("postgres sink %s: epoch %d does not fit a bigint: %w", s.cfg.Options.Target(), e, base.ErrOutOfRange)
	}
	var net *types.Chunk
	if len(desc) > 0 {
		c, rest, err := types.DecodeChunk(desc)
		if err != nil || len(rest) != 0 {
			return fmt.Errorf("postgres sink %s, epoch %d: prepared descriptor: %v: %w", s.cfg.Options.Target(), e, err, base.ErrCorruption)
		}
		net = c
	}
	if err := s.Connect(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if err := s.apply(ctx, subtask, e, net); err != nil {
		// A broken connection is not reused; the next attempt connects
		// anew.
		s.Close()
		return fmt.Errorf("postgres sink %s: commit of epoch %d: %w", s.cfg.Options.Target(), e, err)
	}
	return nil
}

func (s *Sink) apply(ctx context.Context, subtask int, e base.Epoch, net *types.Chunk) error {
	o := s.cfg.Options
	progress := quoted(o.ProgressSchema, o.ProgressTable)
	record := "INSERT INTO " + progress + ` AS p (sink, subtask, epoch) VALUES ($1, $2, $3)
		ON CONFLICT (sink, subtask) DO UPDATE SET epoch = EXCLUDED.epoch, committed_at = now() WHERE p.epoch < EXCLUDED.epoch`
	if net == nil || net.Len() == 0 {
		// Nothing to apply: recording the epoch is one statement, and a
		// later epoch recorded already is kept.
		_, err := s.conn.Exec(ctx, record, s.cfg.Name, subtask, int64(e))
		return err
	}
	tx, err := s.conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background())
	var done int64
	err = tx.QueryRow(ctx, "SELECT epoch FROM "+progress+" WHERE sink = $1 AND subtask = $2 FOR UPDATE", s.cfg.Name, subtask).Scan(&done)
	switch {
	case err == nil && done >= int64(e):
		return nil
	case err != nil && !errors.Is(err, pgx.ErrNoRows):
		return err
	}
	var dels, ups []int
	for i := range net.Len() {
		if net.Kind(i) == types.Delete {
			dels = append(dels, i)
		} else {
			ups = append(ups, i)
		}
	}
	for len(dels) > 0 {
		n := min(len(dels), batchRows)
		if _, err := tx.Exec(ctx, s.target.remove, s.params(net, dels[:n], s.key)...); err != nil {
			return err
		}
		dels = dels[n:]
	}
	all := make([]int, len(s.types))
	for i := range all {
		all[i] = i
	}
	for len(ups) > 0 {
		n := min(len(ups), batchRows)
		if _, err := tx.Exec(ctx, s.target.upsert, s.params(net, ups[:n], all)...); err != nil {
			return err
		}
		ups = ups[n:]
	}
	if _, err := tx.Exec(ctx, record, s.cfg.Name, subtask, int64(e)); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// params returns, per column of cols, the text values of rows (NULL as
// an invalid Text): the text[] parameters of the statements.
func (s *Sink) params(c *types.Chunk, rows, cols []int) []any {
	out := make([]any, len(cols))
	for n, col := range cols {
		vals := make([]pgtype.Text, len(rows))
		for i, r := range rows {
			if d := c.Datum(col, r); !d.IsNull() {
				vals[i] = pgtype.Text{String: types.FormatText(d, time.UTC), Valid: true}
			}
		}
		out[n] = vals
	}
	return out
}

// Progress returns the last epoch the sink's subtask committed according
// to the progress table, 0 when it committed none.
func Progress(ctx context.Context, conn *pgx.Conn, o Options, name string, subtask int) (base.Epoch, error) {
	var e int64
	err := conn.QueryRow(ctx, "SELECT epoch FROM "+quoted(o.ProgressSchema, o.ProgressTable)+" WHERE sink = $1 AND subtask = $2", name, subtask).Scan(&e)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("postgres sink: progress of %s subtask %d: %w", name, subtask, err)
	}
	return base.Epoch(e), nil
}

// sinkOperator is the two-phase-commit sink over a Sink that connects
// (and checks the target) when the subtask opens, before the restored
// epochs are re-committed, and closes the connection with the subtask.
type sinkOperator struct {
	*operator.TwoPhaseCommitSink
	sink *Sink
}

// NewSinkOperator returns the sink operator of one subtask attempt over
// s (operator.TwoPhaseCommitSink: prepare on epoch barriers, commit on
// checkpoint completion, re-commit on restore).
func NewSinkOperator(s *Sink) operator.Operator {
	return &sinkOperator{TwoPhaseCommitSink: operator.NewTwoPhaseCommitSink(s), sink: s}
}

// Open implements operator.Operator.
func (o *sinkOperator) Open(ctx *operator.Context) error {
	if err := o.sink.Connect(); err != nil {
		return err
	}
	return o.TwoPhaseCommitSink.Open(ctx)
}

// Close implements operator.Operator.
func (o *sinkOperator) Close() error {
	return errors.Join(o.TwoPhaseCommitSink.Close(), o.sink.Close())
}
