package task

import (
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/message"
	"github.com/stratadb/strata/dataflow/queue"
	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/internal/types"
)

// edgeOut is one subtask's side of one out edge: the queues it writes to
// (one for forward, one per downstream subtask otherwise) and the hash
// partitioner's reusable buffers, so that routing a chunk allocates only
// the per-target chunks, never per row.
type edgeOut struct {
	edge   graph.Edge
	queues []*queue.Queue
	maxPar int
	sel    [][]int
	key    []byte
	// route maps a key group to the index of its target queue
	// (state.SubtaskOf, precomputed: a division per row showed up in
	// profiles).
	route []int32
}

// emitChunk routes c over the edge.
func (o *edgeOut) emitChunk(c *types.Chunk, cancel <-chan struct{}) error {
	if c.Len() == 0 {
		return nil
	}
	switch o.edge.Partitioning {
	case graph.Hash:
		if len(o.queues) == 1 {
			return o.queues[0].Put(message.Chunk(c), cancel)
		}
		if o.sel == nil {
			o.sel = make([][]int, len(o.queues))
			o.route = make([]int32, o.maxPar)
			for g := range o.route {
				o.route[g] = int32(state.SubtaskOf(state.KeyGroup(g), o.maxPar, len(o.queues)))
			}
		}
		for i := range o.sel {
			o.sel[i] = o.sel[i][:0]
		}
		n := c.Len()
		for r := range n {
			o.key = o.key[:0]
			for k, col := range o.edge.KeyColumns {
				o.key = types.AppendKey(o.key, c.Datum(col, r), o.edge.KeyTypes[k])
			}
			t := o.route[state.KeyGroupOf(o.key, o.maxPar)]
			o.sel[t] = append(o.sel[t], r)
		}
		for t, sel := range o.sel {
			switch len(sel) {
			case 0:
				continue
			case n:
				// Every row goes to t: hand the chunk on as it is.
				return o.queues[t].Put(message.Chunk(c), cancel)
			}
			if err := o.queues[t].Put(message.Chunk(selectRows(c, sel)), cancel); err != nil {
				return err
			}
		}
		return nil
	default:
		// Forward has one queue; broadcast shares the chunk between all
		// (invariant chunk-immutable).
		for _, q := range o.queues {
			if err := q.Put(message.Chunk(c), cancel); err != nil {
				return err
			}
		}
		return nil
	}
}

// emitAll sends m on every queue of the edge: at the head for unaligned
// barriers, in band otherwise.
func (o *edgeOut) emitAll(m message.Message, cancel <-chan struct{}) error {
	for _, q := range o.queues {
		var err error
		if m.IsPriority() {
			err = q.PutHead(m)
		} else {
			err = q.Put(m, cancel)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// outputs is a subtask's operator.Output: every out edge.
type outputs struct {
	edges  []*edgeOut
	cancel <-chan struct{}
}

// Emit implements operator.Output.
func (o *outputs) Emit(c *types.Chunk) error {
	for _, e := range o.edges {
		if err := e.emitChunk(c, o.cancel); err != nil {
			return err
		}
	}
	return nil
}

func (o *outputs) emitAll(m message.Message) error {
	for _, e := range o.edges {
		if err := e.emitAll(m, o.cancel); err != nil {
			return err
		}
	}
	return nil
}

// available reports whether every output queue has room for the results
// of one more input message.
func (o *outputs) available() bool {
	for _, e := range o.edges {
		for _, q := range e.queues {
			if !q.Available() {
				return false
			}
		}
	}
	return true
}

// selectRows returns a new chunk with c's rows at sel, copying each
// column's used slices directly (Chunk.Select goes through a Datum per
// value, several times slower on the exchange's hot path). A vector uses
// exactly the slices whose length is the chunk's length (types.Vector).
func selectRows(c *types.Chunk, sel []int) *types.Chunk {
	n := c.Len()
	out := &types.Chunk{Kinds: make([]types.RowKind, len(sel)), Cols: make([]types.Vector, len(c.Cols))}
	for j, i := range sel {
		out.Kinds[j] = c.Kinds[i]
	}
	for k := range c.Cols {
		src, dst := &c.Cols[k], &out.Cols[k]
		dst.Type = src.Type
		dst.Nulls = make([]bool, len(sel))
		for j, i := range sel {
			dst.Nulls[j] = src.Nulls[i]
		}
		if len(src.Ints) == n {
			dst.Ints = gather(src.Ints, sel)
		}
		if len(src.Aux) == n {
			dst.Aux = gather(src.Aux, sel)
		}
		if len(src.Floats) == n {
			dst.Floats = gather(src.Floats, sel)
		}
		if len(src.Decimals) == n {
			dst.Decimals = gather(src.Decimals, sel)
		}
		if len(src.Strs) == n {
			dst.Strs = gather(src.Strs, sel)
		}
	}
	return out
}

func gather[T any](src []T, sel []int) []T {
	out := make([]T, len(sel))
	for j, i := range sel {
		out[j] = src[i]
	}
	return out
}
