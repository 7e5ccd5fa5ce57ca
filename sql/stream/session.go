package stream

import (
	"fmt"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// SessionWindow is the SESSION window table-valued function over a
// retract changelog: it appends window_start and window_end to each row,
// where a partition's session is a maximal run of rows (in event-time
// order) each less than Gap after the latest before it; the session's
// window is [its first time, its last time + Gap), Flink's merging session
// windows (each row's window [t, t+gap), overlapping windows merged).
//
// A row that bridges the gap between two sessions merges them: the rows of
// both are retracted with their old windows and emitted with the merged
// one; a retraction can split a session the same way. The operator keeps
// every row of a partition in keyed state in time order (see sorted) and,
// at the end of an epoch, recomputes each changed partition's sessions and
// emits the difference from what it emitted before, -D rows then +I rows.
// Rows whose time is NULL or infinite belong to no session and are
// dropped.
//
// Input rows are the row (the first Width columns, TimeCol among them)
// followed by the partition columns a Map computed before the hash
// exchange; with no partition columns the whole input is one partition
// (the SESSION TVF of the plan has no PARTITION BY yet), which the planner
// runs with parallelism 1.
//
// State grows with the partition: rows of sessions the watermark closed
// are not dropped yet.
type SessionWindow struct {
	operator.Base
	InTypes   []types.Type
	Width     int
	PartCols  []int
	PartTypes []types.Type
	TimeCol   int
	// Gap in microseconds (> 0).
	Gap int64

	st   sorted
	row  types.Row
	part []byte
	ord  []byte
}

// OutputTypes returns the row's types followed by window_start and
// window_end of the time column's type.
func (s *SessionWindow) OutputTypes() []types.Type {
	tt := s.InTypes[s.TimeCol]
	return append(append([]types.Type(nil), s.InTypes[:s.Width]...), tt, tt)
}

// Open implements operator.Operator.
func (s *SessionWindow) Open(ctx *operator.Context) error {
	if s.Gap <= 0 {
		return fmt.Errorf("session window %s: gap %d us is not positive: %w", ctx.Vertex, s.Gap, base.ErrInvalidArgument)
	}
	s.st = sorted{what: "session window", rowT: s.InTypes[:s.Width], outT: s.OutputTypes()}
	return s.st.open(ctx)
}

// Process implements operator.Operator.
func (s *SessionWindow) Process(_ int, c *types.Chunk) error {
	tt := s.InTypes[s.TimeCol]
	for i := range c.Len() {
		t := c.Datum(s.TimeCol, i)
		if t.IsNull() || infinite(t.Micros()) {
			continue
		}
		s.row = c.AppendRowTo(s.row[:0], i)
		s.part = partKey(s.part[:0], s.row, s.PartCols, s.PartTypes)
		s.ord = types.AppendKey(s.ord[:0], t, tt)
		if err := s.st.add(s.part, s.ord, s.row[:s.Width], c.Kinds[i]); err != nil {
			return err
		}
	}
	return nil
}

// OnEpoch implements operator.Operator: emit the changes of the changed
// partitions' sessions.
func (s *SessionWindow) OnEpoch(base.Epoch) error {
	mk := timeMaker(s.InTypes[s.TimeCol])
	return s.st.flush(func(part []byte) ([]types.Row, error) {
		var out []types.Row
		var session []types.Row // rows of the open session, with copies
		var start, last int64
		closeSession := func() {
			for _, r := range session {
				out = append(out, append(r, mk(start), mk(last+s.Gap)))
			}
			session = session[:0]
		}
		err := s.st.scan(part, func(row types.Row, n int64) (bool, error) {
			t := row[s.TimeCol].Micros()
			if len(session) > 0 && t >= last+s.Gap {
				closeSession()
			}
			if len(session) == 0 {
				start = t
			}
			last = t
			for range n {
				session = append(session, row.Copy())
			}
			return false, nil
		})
		if len(session) > 0 {
			closeSession()
		}
		return out, err
	})
}

// Snapshot implements operator.Operator.
func (s *SessionWindow) Snapshot(base.CheckpointID) error { return s.st.snapshot() }
