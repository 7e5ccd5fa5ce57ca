package testkit

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// OutputSchema is KeyedSum's row type: (key, sum, count), all BIGINT.
var OutputSchema = []types.Type{types.Int64, types.Int64, types.Int64}

// KeyedSum is a keyed running SUM(value), COUNT(*) GROUP BY key over
// Schema rows. At each epoch close it emits +U (key, sum, count) for every
// key the epoch changed, in key order, so an epoch's output does not
// depend on arrival order.
//
// It keeps a write-back cache of the accumulators it touched in front of
// keyed state (RisingWave's managed state cache): rows update the cache,
// and Snapshot writes the dirty entries into keyed state just before the
// runtime snapshots the backend. Keyed state thus holds exactly the
// checkpointed values at every snapshot, while the per-row path touches a
// Go map only. The cache is not bounded, which suits a test operator.
type KeyedSum struct {
	operator.Base
	// Eager emits the changed keys after every input chunk instead of at
	// epoch close, so that output flows at the input's pace (benchmarks
	// with a throttled sink need the backpressure to reach the source).
	Eager bool
	ctx   *operator.Context
	cache map[int64]*acc
	// changed lists the accumulators the open epoch changed, each once
	// (acc.changed), so that the per-row path needs no second map.
	changed []*acc
	key     []byte
}

type acc struct {
	key      int64
	sum, cnt int64
	dirty    bool
	changed  bool
}

// NewKeyedSum returns the operator subtask.
func NewKeyedSum() *KeyedSum {
	return &KeyedSum{cache: map[int64]*acc{}}
}

const (
	sumState     = "sum-count"
	changedState = "sum-changed"
)

// Open implements operator.Operator: restore the keys changed in the open
// epoch.
func (s *KeyedSum) Open(ctx *operator.Context) error {
	s.ctx = ctx
	b, ok, err := ctx.State.OperatorValue(changedState).Get()
	if err != nil || !ok {
		return err
	}
	if len(b)%8 != 0 {
		return fmt.Errorf("keyed sum %s subtask %d: changed keys of %d bytes: %w", ctx.Vertex, ctx.Subtask, len(b), base.ErrCorruption)
	}
	for ; len(b) > 0; b = b[8:] {
		a, err := s.get(int64(binary.BigEndian.Uint64(b)))
		if err != nil {
			return err
		}
		s.markChanged(a)
	}
	return nil
}

func (s *KeyedSum) markChanged(a *acc) {
	if !a.changed {
		a.changed = true
		s.changed = append(s.changed, a)
	}
}

func (s *KeyedSum) setKey(k int64) {
	s.key = types.AppendKey(s.key[:0], types.NewInt64(k), types.Int64)
	s.ctx.State.SetCurrentKey(s.key)
}

// get returns k's accumulator, loading it from keyed state on a miss.
func (s *KeyedSum) get(k int64) (*acc, error) {
	if a := s.cache[k]; a != nil {
		return a, nil
	}
	s.setKey(k)
	b, ok, err := s.ctx.State.Value(sumState).Get()
	if err != nil {
		return nil, err
	}
	a := &acc{key: k}
	if ok {
		if len(b) != 16 {
			return nil, fmt.Errorf("keyed sum %s: state of key %d has %d bytes: %w", s.ctx.Vertex, k, len(b), base.ErrCorruption)
		}
		a.sum, a.cnt = int64(binary.BigEndian.Uint64(b)), int64(binary.BigEndian.Uint64(b[8:]))
	}
	s.cache[k] = a
	return a, nil
}

// Process implements operator.Operator.
func (s *KeyedSum) Process(_ int, c *types.Chunk) error {
	keys, vals := c.Cols[0].Ints, c.Cols[1].Ints
	for r := range c.Len() {
		a, err := s.get(keys[r])
		if err != nil {
			return err
		}
		if c.Kinds[r].IsRetract() {
			a.sum -= vals[r]
			a.cnt--
		} else {
			a.sum += vals[r]
			a.cnt++
		}
		a.dirty = true
		if !a.changed {
			a.changed = true
			s.changed = append(s.changed, a)
		}
	}
	if s.Eager {
		return s.OnEpoch(base.NoEpoch)
	}
	return nil
}

// OnEpoch implements operator.Operator: emit the epoch's changes.
func (s *KeyedSum) OnEpoch(base.Epoch) error {
	if len(s.changed) == 0 {
		return nil
	}
	slices.SortFunc(s.changed, func(a, b *acc) int { return cmp.Compare(a.key, b.key) })
	n := len(s.changed)
	out := &types.Chunk{Kinds: make([]types.RowKind, n), Cols: make([]types.Vector, 3)}
	for i := range out.Kinds {
		out.Kinds[i] = types.UpdateAfter
	}
	for i := range out.Cols {
		out.Cols[i] = types.Vector{Type: OutputSchema[i], Nulls: make([]bool, n), Ints: make([]int64, n)}
	}
	for r, a := range s.changed {
		out.Cols[0].Ints[r], out.Cols[1].Ints[r], out.Cols[2].Ints[r] = a.key, a.sum, a.cnt
		a.changed = false
	}
	clear(s.changed)
	s.changed = s.changed[:0]
	return s.ctx.Output.Emit(out)
}

// Snapshot implements operator.Operator: write the dirty accumulators into
// keyed state and keep the open epoch's changed keys.
func (s *KeyedSum) Snapshot(base.CheckpointID) error {
	var buf [16]byte
	for k, a := range s.cache {
		if !a.dirty {
			continue
		}
		s.setKey(k)
		binary.BigEndian.PutUint64(buf[:], uint64(a.sum))
		binary.BigEndian.PutUint64(buf[8:], uint64(a.cnt))
		if err := s.ctx.State.Value(sumState).Set(buf[:]); err != nil {
			return err
		}
		a.dirty = false
	}
	b := make([]byte, 0, 8*len(s.changed))
	for _, a := range s.changed {
		b = binary.BigEndian.AppendUint64(b, uint64(a.key))
	}
	return s.ctx.State.OperatorValue(changedState).Set(b)
}
