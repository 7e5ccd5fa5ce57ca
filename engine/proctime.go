package engine

import (
	"fmt"
	"io"
	"time"

	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// Processing-time columns (catalog.GeneratedProcTime, DDL `p_time
// TIMESTAMPTZ GENERATED ALWAYS AS (proctime()) STORED`) hold the wall-clock
// time at which their row was written into the table. RisingWave's
// `p_time TIMESTAMPTZ AS PROCTIME()` is the model, with one difference
// that matters for verification: the value is stamped once, by the step
// that writes the row into the table, and stored there, so every view
// over the table, `strata verify` and DuckDB read the same values, and a
// view's result over them is as deterministic as over any other column.
//
//   - Connector tables: the connector produces the table's other columns
//     (it is opened with the table minus its generated columns), and
//     procTimeReader inserts the stamp, one instant per chunk the
//     connector returns, before the ingest source closes epochs over it.
//     Rows committed before a crash keep their stored stamp; rows read
//     again after a restore (past the last checkpoint's position, never
//     committed) are stamped at their new ingestion.
//   - INSERT: the statement's rows share one stamp, taken when it runs,
//     and the stamp is written with them to the table's DML log, so a
//     replay of the log gives the same values.
//   - UPDATE keeps a row's stamp unless it sets the column to DEFAULT,
//     which stamps it again; any other value is 428C9, as is an INSERT
//     that gives a value other than DEFAULT.
//   - CDC tables refuse such columns (0A000): one replication stream
//     feeds several tables there and its snapshot diff compares stored
//     rows with upstream ones, which a stamp would always tell apart.

// generatedAlways is SQLSTATE 428C9, generated_always: a value for a
// generated column.
const generatedAlways = "428C9"

// generatedColumns returns the positions of t's generated columns,
// ascending.
func generatedColumns(t catalog.Table) []int {
	var out []int
	for i, c := range t.Columns {
		if c.IsGenerated() {
			out = append(out, i)
		}
	}
	return out
}

// withoutGenerated returns t with only the columns rows carry: what a
// connector produces.
func withoutGenerated(t catalog.Table) catalog.Table {
	if len(generatedColumns(t)) == 0 {
		return t
	}
	cols := make([]catalog.Column, 0, len(t.Columns))
	for _, c := range t.Columns {
		if !c.IsGenerated() {
			cols = append(cols, c)
		}
	}
	t.Columns = cols
	return t
}

// procTimeMicros is the wall-clock instant now as a TIMESTAMPTZ value
// (microseconds since the Unix epoch).
func procTimeMicros(now time.Time) int64 { return now.UnixMicro() }

// stampReaders wraps each reader of table t's connector so that its
// chunks gain t's processing-time columns; readers of a table without
// any are returned as they are.
func stampReaders(t catalog.Table, rs []ingest.Reader, now func() time.Time) []ingest.Reader {
	gen := generatedColumns(t)
	if len(gen) == 0 {
		return rs
	}
	out := make([]ingest.Reader, len(rs))
	for i, r := range rs {
		out[i] = &procTimeReader{r: r, table: t.Name, gen: gen, types: columnTypes(t.Columns), now: now}
	}
	return out
}

// procTimeReader is an ingest.Reader that inserts processing-time columns
// into the chunks of the connector's reader r. It keeps r's Close,
// Errors and checkpointed state (ingest.StatefulReader), which the engine
// and the ingest source look for on readers.
type procTimeReader struct {
	r     ingest.Reader
	table catalog.ObjectName
	gen   []int        // positions of the generated columns in the table, ascending
	types []types.Type // the table's column types
	now   func() time.Time
}

// Next returns r's next chunk with the stamp of this instant in every
// generated column.
func (p *procTimeReader) Next(pos uint64) (*types.Chunk, uint64, error) {
	c, next, err := p.r.Next(pos)
	if err != nil || c == nil {
		return c, next, err
	}
	out, err := stampChunk(c, p.gen, p.types, procTimeMicros(p.now()))
	if err != nil {
		return nil, 0, fmt.Errorf("table %s: %w", p.table, err)
	}
	return out, next, nil
}

// Close closes r when it holds resources.
func (p *procTimeReader) Close() error {
	if c, ok := p.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Errors returns r's record error counters, nil when it has none.
func (p *procTimeReader) Errors() *format.Errors {
	if x, ok := p.r.(interface{ Errors() *format.Errors }); ok {
		return x.Errors()
	}
	return nil
}

var _ ingest.StatefulReader = (*procTimeReader)(nil)

// SnapshotState implements ingest.StatefulReader for r.
func (p *procTimeReader) SnapshotState() ([]byte, error) { return ingest.SnapshotState(p.r) }

// RestoreState implements ingest.StatefulReader for r.
func (p *procTimeReader) RestoreState(state []byte) error { return ingest.RestoreState(p.r, state) }

// readerBacklog returns where the input of a table's connector readers
// ends now (ingest.Backlogger), when there is one reader and it can say;
// ok is false otherwise (generators and Kafka have no end to wait for).
func readerBacklog(rs []ingest.Reader) (end uint64, ok bool, err error) {
	if len(rs) != 1 {
		return 0, false, nil
	}
	r := rs[0]
	if p, stamped := r.(*procTimeReader); stamped {
		r = p.r
	}
	b, ok := r.(ingest.Backlogger)
	if !ok {
		return 0, false, nil
	}
	end, err = b.Backlog()
	return end, err == nil, err
}

// stampChunk returns c with a TIMESTAMPTZ column of value micros inserted
// at each position of gen, making a chunk of the table's columns ts. c's
// vectors are shared, not copied. A chunk of another width is an error:
// the connector did not produce the table's other columns.
func stampChunk(c *types.Chunk, gen []int, ts []types.Type, micros int64) (*types.Chunk, error) {
	width := len(ts)
	if c.Width()+len(gen) != width {
		return nil, fmt.Errorf("connector produced %d columns, want %d besides the %d processing-time columns: %w", c.Width(), width-len(gen), len(gen), base.ErrInvalidArgument)
	}
	n := c.Len()
	out := &types.Chunk{Kinds: c.Kinds, Cols: make([]types.Vector, 0, width)}
	src := 0
	for i, g := 0, 0; i < width; i++ {
		if g < len(gen) && gen[g] == i {
			g++
			v := types.Vector{Type: ts[i], Nulls: make([]bool, n), Ints: make([]int64, n)}
			for j := range v.Ints {
				v.Ints[j] = micros
			}
			out.Cols = append(out.Cols, v)
			continue
		}
		out.Cols = append(out.Cols, c.Cols[src])
		src++
	}
	return out, nil
}
