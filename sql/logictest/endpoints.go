package logictest

import (
	"fmt"
	"hash/fnv"
	"sync"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/stream"
)

// endpoints feeds a job from a dataset and collects its output: source
// subtask i of a table replays the changes of the keys that hash to i
// (every change of a key goes through one subtask, in order, as a keyed
// connector's split would give), one chunk per epoch, then closes the
// epoch (an append-only table's rows go round-robin, or all through
// subtask 0 when it has a watermark); the sink records each subtask's changes with the epoch they
// belong to.
type endpoints struct {
	data *Dataset
	par  int

	mu struct {
		sync.Mutex
		out []epochChanges // guarded by mu
	}
}

// epochChanges is what one sink subtask received in one epoch.
type epochChanges struct {
	epoch   base.Epoch
	changes []Change
}

func (e *endpoints) Source(rel *plan.Relation, subtask int) operator.Source {
	t := e.data.Table(rel.Name)
	n := e.data.NumEpochs()
	src := &replaySource{epochs: make([][]Change, n), types: relTypes(rel)}
	in := e.data.Inputs[rel.Name]
	pos := 0
	for i := range n {
		if i >= len(in) {
			continue
		}
		for _, c := range in[i] {
			// An append-only table's rows go round-robin, except with
			// a watermark: then all go through subtask 0, so that which
			// rows are late is the same at every parallelism and is what
			// the oracle drops (invariant late-rows).
			part := uint64(pos)
			switch {
			case len(t.Rel.PrimaryKey) > 0:
				part = keyHash(t.Rel, c.Row)
			case t.Rel.Watermark != nil:
				part = 0
			}
			pos++
			if part%uint64(e.par) == uint64(subtask) {
				src.epochs[i] = append(src.epochs[i], c)
			}
		}
	}
	return src
}

// SourceParallelism is the job's parallelism, except for an input with a
// watermark: its rows all go through one subtask (Source), so it has one,
// as a source whose watermark an interval join can rely on
// (stream.JoinInterval).
func (e *endpoints) SourceParallelism(rel *plan.Relation) int {
	if rel.Watermark != nil {
		return 1
	}
	return e.par
}
func (e *endpoints) SinkParallelism() int       { return 0 }
func (e *endpoints) Sink(int) operator.Operator { return &collectSink{ep: e} }

func relTypes(rel *plan.Relation) []types.Type {
	ts := make([]types.Type, len(rel.Columns))
	for i, c := range rel.Columns {
		ts[i] = c.Type
	}
	return ts
}

func keyHash(rel *plan.Relation, r types.Row) uint64 {
	h := fnv.New64a()
	h.Write(types.EncodeKey(nil, r, rel.PrimaryKey, relTypes(rel)))
	return h.Sum64()
}

// replaySource emits epochs[i] as one chunk, then closes epoch i+1.
type replaySource struct {
	epochs [][]Change
	types  []types.Type
	next   int  // index of the epoch to emit
	sent   bool // epochs[next]'s chunk went out
}

func (s *replaySource) Open(*operator.Context) error { return nil }

func (s *replaySource) Next() (operator.Item, error) {
	if s.next >= len(s.epochs) {
		return operator.Item{Done: true}, nil
	}
	if !s.sent && len(s.epochs[s.next]) > 0 {
		s.sent = true
		c := types.NewChunk(s.types, len(s.epochs[s.next]))
		for _, ch := range s.epochs[s.next] {
			c.Append(ch.Kind, ch.Row)
		}
		return operator.Item{Chunk: c}, nil
	}
	s.next++
	s.sent = false
	return operator.Item{Epoch: base.Epoch(s.next)}, nil
}

func (s *replaySource) Snapshot(base.CheckpointID) error       { return nil }
func (s *replaySource) NotifyComplete(base.CheckpointID) error { return nil }
func (s *replaySource) Close() error                           { return nil }

// collectSink records the changes of each epoch when the epoch closes.
type collectSink struct {
	operator.Base
	ep  *endpoints
	cur []Change
}

func (s *collectSink) Process(_ int, c *types.Chunk) error {
	for i := range c.Len() {
		s.cur = append(s.cur, Change{Kind: c.Kind(i), Row: c.Row(i)})
	}
	return nil
}

func (s *collectSink) OnEpoch(e base.Epoch) error {
	s.ep.mu.Lock()
	defer s.ep.mu.Unlock()
	s.ep.mu.out = append(s.ep.mu.out, epochChanges{epoch: e, changes: s.cur})
	s.cur = nil
	return nil
}

func (s *collectSink) Finish() error {
	if len(s.cur) > 0 {
		// Output after the last epoch closed belongs to no epoch: record
		// it under an epoch past the end so the comparison reports it.
		return s.OnEpoch(base.Epoch(1 << 30))
	}
	return nil
}

// Lookup implements planner.LookupEndpoints: rel's rows at an epoch, as
// its changelog in the dataset says (epoch E holds the changes of the
// dataset's first E epochs, as the sources close them).
func (e *endpoints) Lookup(rel *plan.Relation) (stream.LookupTable, error) {
	t := e.data.Table(rel.Name)
	if t == nil {
		return nil, fmt.Errorf("lookup of %s: no such table in the dataset", rel.Name)
	}
	return &datasetLookup{rel: t.Rel, epochs: e.data.Inputs[rel.Name]}, nil
}

// datasetLookup reads a dataset's table by key at an epoch.
type datasetLookup struct {
	rel    *plan.Relation
	epochs [][]Change
}

// LookupAt implements stream.LookupTable.
func (d *datasetLookup) LookupAt(e base.Epoch, keys []types.Row) ([]types.Row, error) {
	st := newLiveState(d.rel)
	for i := 0; i < int(e) && i < len(d.epochs); i++ {
		for _, c := range d.epochs[i] {
			if err := st.apply(c); err != nil {
				return nil, err
			}
		}
	}
	out := make([]types.Row, len(keys))
	for i, k := range keys {
		full := make(types.Row, len(d.rel.Columns))
		for j, c := range d.rel.PrimaryKey {
			full[c] = k[j]
		}
		out[i] = st.rows[st.key(full)]
	}
	return out, nil
}
