package stream

import (
	"fmt"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
)

// LookupTable reads a stored table by primary key at an epoch: what a
// LookupJoin needs of the table store (the engine implements it over
// table.Table with scan.AtEpoch and scan.Lookup).
type LookupTable interface {
	// LookupAt returns, for each key (the primary key's values in key
	// order), the table's row with that key at epoch e (the newest
	// snapshot whose epoch is <= e), or nil when the table has none. It
	// waits until the table has committed e: the table is not an input
	// of the job's dataflow, so no barrier alignment waits for it. The
	// rows have the table's columns.
	LookupAt(e base.Epoch, keys []types.Row) ([]types.Row, error)
}

// LookupJoin enriches an append-only stream with a stored table's rows,
// looked up by the table's primary key at the epoch being processed
// (Flink's lookup join, JOIN t FOR SYSTEM_TIME AS OF proctime;
// RisingWave's temporal join; here the time is the epoch, not a wall
// clock). The operator keeps no copy of the table: a row of epoch E meets
// the table as it is at epoch E, and later changes of the table do not
// revisit it. So the output is append-only and deterministic: a replay
// of epoch E after a failure reads the same version of the table.
//
// Input rows are the stream's columns; Keys compute the table's primary
// key from them (NULL in any key column matches nothing). Output rows are
// the stream's columns then the table's, for an inner join only the
// matched rows, for a left join every row, NULL-padded when the key has
// no row or Residual (over the joined row) is not TRUE.
//
// The rows of the open epoch are buffered until OnEpoch(E), which looks
// their keys up at E (one call for the epoch's distinct keys) and emits
// the joined rows in arrival order. The buffer is operator state, so a
// checkpoint in the middle of an epoch keeps it.
type LookupJoin struct {
	operator.Base
	Kind                  plan.JoinKind
	LeftTypes, RightTypes []types.Type
	// Keys compute, from a stream row, the table's primary-key values in
	// key order (of the key columns' types).
	Keys     []expr.Expr
	KeyTypes []types.Type
	// Residual filters joined rows; nil keeps every row whose key
	// matches.
	Residual expr.Expr
	Eval     *expr.Context
	Table    LookupTable

	ctx  *operator.Context
	outT []types.Type
	// buffer holds the open epoch's rows, column by column (no
	// allocation per row); row and joined are scratch rows.
	buffer *types.Chunk
	row    types.Row
	joined types.Row
}

const lookupBuffer = "lookup-buffer"

// Open implements operator.Operator.
func (l *LookupJoin) Open(ctx *operator.Context) error {
	l.ctx = ctx
	if l.Eval == nil {
		l.Eval = &expr.Context{}
	}
	if l.Kind != plan.InnerJoin && l.Kind != plan.LeftJoin {
		return fmt.Errorf("lookup join %s: a %s join: %w", ctx.Vertex, l.Kind, base.ErrInvalidArgument)
	}
	l.outT = append(append([]types.Type(nil), l.LeftTypes...), l.RightTypes...)
	l.buffer = types.NewChunk(l.LeftTypes, 0)
	b, ok, err := ctx.State.OperatorValue(lookupBuffer).Get()
	if err != nil || !ok {
		return err
	}
	for len(b) > 0 {
		row, rest, err := types.DecodeRow(b, l.LeftTypes)
		if err != nil {
			return fmt.Errorf("lookup join %s subtask %d: buffered row: %w", ctx.Vertex, ctx.Subtask, base.ErrCorruption)
		}
		l.buffer.Append(types.Insert, row)
		b = rest
	}
	return nil
}

// Process implements operator.Operator: buffer the epoch's rows.
func (l *LookupJoin) Process(_ int, c *types.Chunk) error {
	for r := range c.Len() {
		if k := c.Kinds[r]; k != types.Insert {
			return fmt.Errorf("lookup join %s: a %s in its append-only input: %w", l.ctx.Vertex, k, base.ErrInvalidArgument)
		}
		l.row = c.AppendRowTo(l.row[:0], r)
		l.buffer.Append(types.Insert, l.row)
	}
	return nil
}

// OnEpoch implements operator.Operator: look the epoch's keys up at e and
// emit the joined rows.
func (l *LookupJoin) OnEpoch(e base.Epoch) error {
	n := l.buffer.Len()
	if n == 0 {
		return nil
	}
	keyOf := make([]int, n) // index into keys, -1 for a NULL key
	index := map[string]int{}
	var keys []types.Row
	var enc []byte
	key := make(types.Row, len(l.Keys))
	for i := range n {
		row := l.buffer.AppendRowTo(l.row[:0], i)
		l.row = row
		enc = enc[:0]
		null := false
		for j, k := range l.Keys {
			v, err := k.Eval(l.Eval, row)
			if err != nil {
				return err
			}
			null = null || v.IsNull()
			key[j] = v
			enc = types.AppendKey(enc, v, l.KeyTypes[j])
		}
		if null {
			keyOf[i] = -1
			continue
		}
		at, ok := index[string(enc)]
		if !ok {
			at = len(keys)
			index[string(enc)] = at
			keys = append(keys, key.Copy())
		}
		keyOf[i] = at
	}
	var found []types.Row
	if len(keys) > 0 {
		var err error
		if found, err = l.Table.LookupAt(e, keys); err != nil {
			return fmt.Errorf("lookup join %s: epoch %d: %w", l.ctx.Vertex, e, err)
		}
		if len(found) != len(keys) {
			return fmt.Errorf("lookup join %s: %d rows for %d keys: %w", l.ctx.Vertex, len(found), len(keys), base.ErrInvalidArgument)
		}
	}
	out := types.NewChunk(l.outT, n)
	for i := range n {
		row := l.buffer.AppendRowTo(l.row[:0], i)
		l.row = row
		var match types.Row
		if keyOf[i] >= 0 && found[keyOf[i]] != nil {
			joined := append(append(l.joined[:0], row...), fit(found[keyOf[i]], len(l.RightTypes))...)
			l.joined = joined
			ok := true
			if l.Residual != nil {
				v, err := l.Residual.Eval(l.Eval, joined)
				if err != nil {
					return err
				}
				ok = !v.IsNull() && v.Bool()
			}
			if ok {
				match = joined
			}
		}
		switch {
		case match != nil:
			out.Append(types.Insert, match)
		case l.Kind == plan.LeftJoin:
			l.joined = append(append(l.joined[:0], row...), make(types.Row, len(l.RightTypes))...)
			out.Append(types.Insert, l.joined)
		}
	}
	l.buffer.Reset()
	if out.Len() == 0 {
		return nil
	}
	return l.ctx.Output.Emit(out)
}

// fit pads a row of an older schema (fewer columns: columns added since
// read as NULL) to n columns.
func fit(r types.Row, n int) types.Row {
	if len(r) >= n {
		return r[:n]
	}
	return append(append(make(types.Row, 0, n), r...), make(types.Row, n-len(r))...)
}

// Snapshot implements operator.Operator: keep the open epoch's rows.
func (l *LookupJoin) Snapshot(base.CheckpointID) error {
	var b []byte
	for i := range l.buffer.Len() {
		l.row = l.buffer.AppendRowTo(l.row[:0], i)
		b = types.AppendRow(b, l.row, l.LeftTypes)
	}
	return l.ctx.State.OperatorValue(lookupBuffer).Set(b)
}
