package ingest_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/dataflow/state/heap"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/epoch"
)

// stillClock stays at epoch 1.
type stillClock struct{}

func (stillClock) CurrentEpoch(context.Context) (epoch.Info, error) { return epoch.Info{Epoch: 1}, nil }

func (stillClock) WaitEpoch(ctx context.Context, _ base.Epoch) (epoch.Info, error) {
	<-ctx.Done()
	return epoch.Info{}, ctx.Err()
}

// counter gives one row per position; with state set it is a
// StatefulReader that records what it was restored with.
type counter struct {
	state    []byte
	restored [][]byte
}

func (c *counter) Next(pos uint64) (*types.Chunk, uint64, error) {
	ch := types.NewChunk([]types.Type{types.Int64}, 1)
	ch.Append(types.Insert, types.Row{types.NewInt64(int64(pos))})
	return ch, pos + 1, nil
}

type statefulCounter struct{ counter }

func (c *statefulCounter) SnapshotState() ([]byte, error) { return c.state, nil }

func (c *statefulCounter) RestoreState(b []byte) error {
	c.restored = append(c.restored, b)
	return nil
}

// TestReaderState checks that a StatefulReader's state travels in the
// source's checkpoint: a new Source and Reader restored from it (a new
// process) get it back; a Source opened without a checkpoint restores
// nil; a plain Reader's checkpoint holds no reader state.
func TestReaderState(t *testing.T) {
	step := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	run := func(r ingest.Reader) (handle []byte, raw []byte) {
		b := heap.New()
		st := state.NewStore(b, state.RangeOf(0, 1, 8), 8)
		s := ingest.New(ingest.Config{Reader: r, Clock: stillClock{}, Name: "t"})
		step(s.Open(&operator.Context{Vertex: "src", Parallelism: 1, State: st}))
		defer s.Close()
		for range 3 {
			it, err := s.Next()
			step(err)
			if it.Chunk == nil {
				t.Fatalf("no chunk: %+v", it)
			}
		}
		step(s.Snapshot(1))
		raw, _, err := st.OperatorValue("ingest-source").Get()
		step(err)
		sn, err := b.Snapshot(1, nil)
		step(err)
		return sn.Handle, raw
	}
	first := &statefulCounter{counter{state: []byte("start@0")}}
	h, raw := run(first)
	if len(first.restored) != 1 || first.restored[0] != nil {
		t.Fatalf("a fresh source restored %q, want one nil", first.restored)
	}
	rb, err := heap.Restore(h, nil)
	step(err)
	second := &statefulCounter{}
	s2 := ingest.New(ingest.Config{Reader: second, Clock: stillClock{}, Name: "t"})
	step(s2.Open(&operator.Context{Vertex: "src", Parallelism: 1, State: state.NewStore(rb, state.RangeOf(0, 1, 8), 8), Restored: 1}))
	defer s2.Close()
	if len(second.restored) != 1 || string(second.restored[0]) != "start@0" {
		t.Fatalf("restored %q, want the checkpoint's start@0", second.restored)
	}
	it, err := s2.Next()
	step(err)
	if it.Chunk == nil || it.Chunk.Row(0)[0].Int64() != 3 {
		t.Fatalf("after restore: %+v, want the row at position 3", it)
	}
	if _, raw := run(&counter{}); bytes.Contains(raw, []byte(`"reader"`)) {
		t.Fatalf("a plain Reader's checkpoint %s holds reader state", raw)
	}
	if !bytes.Contains(raw, []byte(`"reader"`)) {
		t.Fatalf("checkpoint %s lacks the reader state", raw)
	}
}
