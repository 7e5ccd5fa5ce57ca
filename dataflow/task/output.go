package task

import (
	"bytes"
	"unsafe"

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
	sel    [][]int32
	// hashes holds the key hashes of the chunk being routed
	// (state.HashKeys: column by column, no key bytes per row).
	hashes []uint64
	// facts says which of the routed chunk's byte slices are all zero.
	facts chunkFacts
	// pool holds chunks the receivers gave back (invariant
	// chunk-recycle); nil when the edge makes no chunks of its own.
	pool *chunkPool
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
			o.sel = make([][]int32, len(o.queues))
			o.route = make([]int32, o.maxPar)
			for g := range o.route {
				o.route[g] = int32(state.SubtaskOf(state.KeyGroup(g), o.maxPar, len(o.queues)))
			}
		}
		n := c.Len()
		o.facts = scan(c, o.facts)
		if !o.splitInt64(c) {
			o.hashes = state.HashKeys(c, o.edge.KeyColumns, o.edge.KeyTypes, o.hashes)
			o.split(n)
		}
		pooled := o.pool != nil && intsOnly(c)
		for t, sel := range o.sel {
			switch len(sel) {
			case 0:
				continue
			case n:
				// Every row goes to t: hand the chunk on as it is.
				return o.queues[t].Put(message.Chunk(c), cancel)
			}
			var m message.Message
			if pooled {
				m = message.Chunk(selectPooled(c, sel, o.facts, o.pool.get()))
				m.Recyclable = true
			} else {
				m = message.Chunk(selectRows(c, sel, o.facts))
			}
			if err := o.queues[t].Put(m, cancel); err != nil {
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

// split fills o.sel with the rows of each target, in row order, from the
// key hashes of the n rows in o.hashes. Every target's selection has room
// for all n rows, so that appending never grows it, and the loop keeps the
// route table, the mask and the selections in locals (through o the
// compiler reloads them on every row, since the appends write memory).
func (o *edgeOut) split(n int) {
	sel, route, hashes := o.sel, o.route, o.hashes[:n]
	o.resetSel(n)
	if m := uint64(o.maxPar); m&(m-1) == 0 {
		mask := m - 1
		route = route[:mask+1]
		for r, h := range hashes {
			t := route[h&mask]
			sel[t] = append(sel[t], int32(r))
		}
		return
	}
	for r, h := range hashes {
		t := route[state.GroupOfHash(h, o.maxPar)]
		sel[t] = append(sel[t], int32(r))
	}
}

// resetSel empties every target's selection, with room for n rows.
func (o *edgeOut) resetSel(n int) {
	for i, s := range o.sel {
		if cap(s) < n {
			s = make([]int32, 0, n)
		}
		o.sel[i] = s[:0]
	}
}

// splitInt64 is split for the most common exchange, two targets, a
// power-of-two maximum parallelism and a key of one 8-byte integer column
// without NULLs in c (state.Int64Keys; o.facts must be c's): it hashes the
// whole key column (state.HashInt64Keys, eight keys a step in vector
// registers where the processor can), then, in one loop over the hashes,
// writes each row's number into both selections and advances only its
// target's count. It returns false, doing nothing, for any other edge or
// chunk.
//
// The general path appends to the selections; an append keeps the
// selection's length in memory, so a row waits for the previous row's
// store whenever both go to the same target, half of the rows, while these
// counters stay in registers. Hashing inside the routing loop, one key at
// a time (state.HashInt64Key, inlined), cost 5.8 µs a chunk of 1024 rows
// in BenchmarkExchange/recycled; hashing the column first cost 4.9 µs
// with the scalar loop and 2.8 µs with the vector kernel.
func (o *edgeOut) splitInt64(c *types.Chunk) bool {
	m := uint64(o.maxPar)
	if len(o.sel) != 2 || m&(m-1) != 0 {
		return false
	}
	keys, ok := state.Int64Keys(c, o.edge.KeyColumns, o.edge.KeyTypes)
	if !ok || !o.facts.noNulls[o.edge.KeyColumns[0]] {
		return false
	}
	n := len(keys)
	o.resetSel(n)
	mask := m - 1
	route := o.route[:mask+1]
	s0, s1 := o.sel[0][:n], o.sel[1][:n]
	n0, n1 := 0, 0
	o.hashes = state.HashInt64Keys(o.hashes, keys)
	for r, h := range o.hashes[:n] {
		t := int(route[h&mask])
		s0[n0], s1[n1] = int32(r), int32(r)
		n0 += 1 - t
		n1 += t
	}
	o.sel[0], o.sel[1] = s0[:n0], s1[:n1]
	return true
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

// chunkFacts records which byte-wide slices of a chunk are all zero: row
// kinds all +I, a column without NULLs. selectRows leaves those slices as
// make returns them instead of gathering zeros, which the exchange did for
// most of its input.
type chunkFacts struct {
	allInserts bool
	noNulls    []bool
}

// scan fills f for c (reusing f's slice).
func scan(c *types.Chunk, f chunkFacts) chunkFacts {
	f.allInserts = allZero(c.Kinds)
	f.noNulls = f.noNulls[:0]
	for k := range c.Cols {
		f.noNulls = append(f.noNulls, allZero(c.Cols[k].Nulls))
	}
	return f
}

// allZero reports whether every element of s, a slice of a byte-wide
// type, is zero. It looks at s as bytes so that bytes.IndexFunc-style
// scanning runs at memory speed (the byte loop of a generic version was
// as slow as the gather it saves).
func allZero[T ~uint8 | ~bool](s []T) bool {
	if len(s) == 0 {
		return true
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s))
	return bytes.Count(b, zeroByte) == len(b)
}

var zeroByte = []byte{0}

// selectRows returns a new chunk with c's rows at sel, copying each
// column's used slices directly (Chunk.Select goes through a Datum per
// value, several times slower on the exchange's hot path). A vector uses
// exactly the slices whose length is the chunk's length (types.Vector).
// The NULL flags of all columns share one allocation, and so do the Ints
// of all columns that use them, each slice capped at its own rows so that
// an append to one never writes into another. Slices that f says are all
// zero are not gathered: make's zeros are the same.
func selectRows(c *types.Chunk, sel []int32, f chunkFacts) *types.Chunk {
	n, m := c.Len(), len(sel)
	out := &types.Chunk{Kinds: make([]types.RowKind, m), Cols: make([]types.Vector, len(c.Cols))}
	if !f.allInserts {
		gatherInto(out.Kinds, c.Kinds, sel)
	}
	nints := 0
	for k := range c.Cols {
		if len(c.Cols[k].Ints) == n {
			nints++
		}
	}
	nulls := make([]bool, m*len(c.Cols))
	ints := make([]int64, m*nints)
	for k := range c.Cols {
		src, dst := &c.Cols[k], &out.Cols[k]
		dst.Type = src.Type
		dst.Nulls, nulls = nulls[:m:m], nulls[m:]
		if !f.noNulls[k] {
			gatherInto(dst.Nulls, src.Nulls, sel)
		}
		if len(src.Ints) == n {
			dst.Ints, ints = ints[:m:m], ints[m:]
			gatherInto(dst.Ints, src.Ints, sel)
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

// chunkPool is a bounded free list of chunks that receivers gave back to
// the edge that made them (invariant chunk-recycle). Both ends are
// non-blocking: an empty pool means a new chunk, a full one drops the
// chunk for the garbage collector.
type chunkPool struct{ free chan *types.Chunk }

func newChunkPool(n int) *chunkPool { return &chunkPool{free: make(chan *types.Chunk, n)} }

// get returns a recycled chunk, or nil.
func (p *chunkPool) get() *types.Chunk {
	select {
	case c := <-p.free:
		return c
	default:
		return nil
	}
}

// put gives c back.
func (p *chunkPool) put(c *types.Chunk) {
	select {
	case p.free <- c:
	default:
	}
}

// intsOnly reports whether every column of c keeps its values in Ints
// alone (integers, BOOLEAN, DATE, TIME, TIMESTAMP(TZ)): the chunks the
// pool recycles, whose slices hold no pointers to clear.
func intsOnly(c *types.Chunk) bool {
	n := c.Len()
	for k := range c.Cols {
		v := &c.Cols[k]
		if len(v.Ints) != n || len(v.Aux) != 0 || len(v.Floats) != 0 || len(v.Decimals) != 0 || len(v.Strs) != 0 {
			return false
		}
	}
	return true
}

// selectPooled is selectRows for an intsOnly chunk, into the memory of buf
// (a recycled chunk, or nil for a new one). Every slice has its own
// allocation, sized for c's whole length so that it fits whatever share
// of the next chunk it gets; every element is written, zeros included.
func selectPooled(c *types.Chunk, sel []int32, f chunkFacts, buf *types.Chunk) *types.Chunk {
	n, m := c.Len(), len(sel)
	out := buf
	if out == nil || len(out.Cols) != len(c.Cols) {
		out = &types.Chunk{Cols: make([]types.Vector, len(c.Cols))}
	}
	out.Kinds = resize(out.Kinds, m, n)
	if f.allInserts {
		clear(out.Kinds)
	} else {
		gatherInto(out.Kinds, c.Kinds, sel)
	}
	for k := range c.Cols {
		src, dst := &c.Cols[k], &out.Cols[k]
		*dst = types.Vector{Type: src.Type, Nulls: resize(dst.Nulls, m, n), Ints: resize(dst.Ints, m, n)}
		if f.noNulls[k] {
			clear(dst.Nulls)
		} else {
			gatherInto(dst.Nulls, src.Nulls, sel)
		}
	}
	// The Ints two columns at a time: one pass over sel for both.
	k := 0
	for ; k+1 < len(c.Cols); k += 2 {
		gatherInto2(out.Cols[k].Ints, out.Cols[k+1].Ints, c.Cols[k].Ints[:n], c.Cols[k+1].Ints[:n], sel)
	}
	if k < len(c.Cols) {
		gatherInto(out.Cols[k].Ints, c.Cols[k].Ints, sel)
	}
	return out
}

// gatherInto2 is gatherInto of two columns of the same length n in one
// loop: dst0[j], dst1[j] = src0[sel[j]], src1[sel[j]].
func gatherInto2(dst0, dst1, src0, src1 []int64, sel []int32) {
	dst0, dst1 = dst0[:len(sel)], dst1[:len(sel)]
	src1 = src1[:len(src0)]
	for j, i := range sel {
		dst0[j], dst1[j] = src0[i], src1[i]
	}
}

// resize returns s with length m, reallocated with capacity max(m, n)
// when it has less than m.
func resize[T any](s []T, m, n int) []T {
	if cap(s) >= m {
		return s[:m]
	}
	return make([]T, m, max(m, n))
}

func gather[T any](src []T, sel []int32) []T {
	out := make([]T, len(sel))
	gatherInto(out, src, sel)
	return out
}

func gatherInto[T any](dst, src []T, sel []int32) {
	dst = dst[:len(sel)]
	for j, i := range sel {
		dst[j] = src[i]
	}
}
