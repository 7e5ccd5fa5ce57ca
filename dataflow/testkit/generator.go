package testkit

import (
	"encoding/binary"
	"fmt"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// Schema is the generator's row type: (key BIGINT, value BIGINT).
var Schema = []types.Type{types.Int64, types.Int64}

// GeneratorConfig shapes a Generator's output.
type GeneratorConfig struct {
	// Rows is the number of rows each subtask produces (0: unbounded).
	Rows int64
	// RowsPerEpoch is the number of rows between epoch barriers.
	RowsPerEpoch int64
	// ChunkSize is the number of rows per chunk (at most; chunks end at
	// epoch boundaries).
	ChunkSize int
	// Keys is the number of distinct keys.
	Keys int64
	// Hold, when set, keeps the source from ending while it returns true
	// (its last epoch is closed; it only waits), so that a test can make
	// failures happen before the job ends. Output and positions do not
	// change.
	Hold func() bool `json:"-"`
	// Pace, when set, is called before each chunk; it may sleep to slow
	// the source down. Output and positions do not change.
	Pace func() `json:"-"`
	// WithEpoch adds a third column, the epoch each row belongs to
	// (EpochSchema), for alignment tests.
	WithEpoch bool
}

// EpochSchema is the generator's row type WithEpoch: (key, value, epoch).
var EpochSchema = []types.Type{types.Int64, types.Int64, types.Int64}

// Row returns row n of subtask s: its key and value.
func (c GeneratorConfig) Row(s int, n int64) (key, value int64) {
	return (n*7919 + int64(s)*104729) % c.Keys, n%13 + 1
}

// Generator is one subtask of the deterministic source.
type Generator struct {
	cfg    GeneratorConfig
	ctx    *operator.Context
	pos    int64
	closed base.Epoch
	chunk  *types.Chunk
}

// NewGenerator returns the source subtask.
func NewGenerator(cfg GeneratorConfig) *Generator { return &Generator{cfg: cfg} }

const genState = "generator-position"

// Open implements operator.Source: restore the position.
func (g *Generator) Open(ctx *operator.Context) error {
	g.ctx = ctx
	b, ok, err := ctx.State.OperatorValue(genState).Get()
	if err != nil || !ok {
		return err
	}
	if len(b) != 16 {
		return fmt.Errorf("generator %s subtask %d position of %d bytes: %w", ctx.Vertex, ctx.Subtask, len(b), base.ErrCorruption)
	}
	g.pos = int64(binary.BigEndian.Uint64(b))
	g.closed = base.Epoch(binary.BigEndian.Uint64(b[8:]))
	return nil
}

// Position returns the next row number and the last closed epoch.
func (g *Generator) Position() (int64, base.Epoch) { return g.pos, g.closed }

func (g *Generator) epochOf(n int64) base.Epoch { return base.Epoch(n/g.cfg.RowsPerEpoch + 1) }

// Next implements operator.Source.
func (g *Generator) Next() (operator.Item, error) {
	if g.pos > 0 && g.epochOf(g.pos-1) > g.closed && (g.pos%g.cfg.RowsPerEpoch == 0 || g.pos == g.cfg.Rows) {
		g.closed++
		return operator.Item{Epoch: g.closed}, nil
	}
	if g.cfg.Rows > 0 && g.pos == g.cfg.Rows {
		if g.cfg.Hold != nil && g.cfg.Hold() {
			return operator.Item{}, nil
		}
		return operator.Item{Done: true}, nil
	}
	if g.cfg.Pace != nil {
		g.cfg.Pace()
	}
	end := g.pos + int64(g.cfg.ChunkSize)
	if b := (g.pos/g.cfg.RowsPerEpoch + 1) * g.cfg.RowsPerEpoch; end > b {
		end = b
	}
	if g.cfg.Rows > 0 && end > g.cfg.Rows {
		end = g.cfg.Rows
	}
	n := int(end - g.pos)
	ncols := 2
	if g.cfg.WithEpoch {
		ncols = 3
	}
	c := &types.Chunk{Kinds: make([]types.RowKind, n), Cols: make([]types.Vector, ncols)}
	for i := range c.Cols {
		c.Cols[i] = types.Vector{Type: types.Int64, Nulls: make([]bool, n), Ints: make([]int64, n)}
	}
	for i := range n {
		row := g.pos + int64(i)
		c.Cols[0].Ints[i], c.Cols[1].Ints[i] = g.cfg.Row(g.ctx.Subtask, row)
		if g.cfg.WithEpoch {
			c.Cols[2].Ints[i] = int64(g.epochOf(row))
		}
	}
	g.pos = end
	return operator.Item{Chunk: c}, nil
}

// Snapshot implements operator.Source: the position and the last closed
// epoch.
func (g *Generator) Snapshot(base.CheckpointID) error {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:], uint64(g.pos))
	binary.BigEndian.PutUint64(b[8:], uint64(g.closed))
	return g.ctx.State.OperatorValue(genState).Set(b[:])
}

// NotifyComplete implements operator.Source.
func (g *Generator) NotifyComplete(base.CheckpointID) error { return nil }

// Close implements operator.Source.
func (g *Generator) Close() error { return nil }
