package stream

import (
	"bytes"
	"fmt"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// OrderCol is one ORDER BY key of a TopN: an input column with its
// direction and the place of NULLs (Postgres: NULLS LAST ascending, FIRST
// descending, unless said otherwise).
type OrderCol struct {
	Col        int
	Type       types.Type
	Desc       bool
	NullsFirst bool
}

// TopN keeps, per partition, the rows ranked Offset+1 .. Offset+N by its
// order over a retract changelog: the Top-N and deduplication patterns
// (SELECT ... ROW_NUMBER() OVER (PARTITION BY p ORDER BY o) AS rn ...
// WHERE rn <= N; rn = 1 ordered by a time column keeps the first or last
// row per key) and, with no partition, a global ORDER BY ... LIMIT N
// OFFSET M. Flink's RetractableTopNFunction and RisingWave's
// GroupTopNExecutor do the same.
//
// Input rows are the row to keep (the first Width columns) followed by
// the partition and order columns a Map computed before the hash exchange
// on the partition columns. Output rows are the kept row, followed with
// RankCol by its row number (BIGINT, counted from 1 including the skipped
// Offset rows).
//
// All rows of a partition stay in keyed state, ordered (see sorted), since
// a retraction from the top brings in the next row, however far down. At
// the end of an epoch each changed partition's new top is compared with
// the top it emitted and only the difference is emitted, as -D rows then
// +I rows: a row pushed out is deleted, the next one brought in is
// inserted, rows that only moved within the top change only when their
// row number is output. Rows whose order keys tie are ranked by their
// encoding, so the result is deterministic (SQL leaves the order of ties
// open).
type TopN struct {
	operator.Base
	// InTypes are the input row's types.
	InTypes []types.Type
	// Width is the number of leading input columns that are the row.
	Width     int
	PartCols  []int
	PartTypes []types.Type
	Order     []OrderCol
	// N rows are kept after skipping Offset (N >= 1, Offset >= 0).
	N, Offset int64
	RankCol   bool
	// AppendOnly says the input has no retractions (Flink's
	// AppendOnlyTopNFunction): a row ranked below Offset+N can never come
	// back into the top, so at the end of each epoch such rows leave
	// state, which then holds at most Offset+N rows (with copies) per
	// partition. A retraction in such an input is an error.
	AppendOnly bool

	st   sorted
	row  types.Row
	part []byte
	ord  []byte
	enc  []byte
	key  []byte
}

// topBoundary is the keyed state of a partition whose top is full: the
// state key of its last row (rank Offset+N). A change to a row whose key
// sorts after it cannot change the top (an append-only input does not
// even store such a row); so the partition is not recomputed for it, and
// the per-row cost stays a state lookup. Its value is that key; absent
// while the top is not full.
const topBoundary = "topn-boundary"

// OutputTypes returns the row's types, with BIGINT appended for RankCol.
func (t *TopN) OutputTypes() []types.Type {
	out := append([]types.Type(nil), t.InTypes[:t.Width]...)
	if t.RankCol {
		out = append(out, types.Int64)
	}
	return out
}

// Open implements operator.Operator.
func (t *TopN) Open(ctx *operator.Context) error {
	if t.N < 1 || t.Offset < 0 {
		return fmt.Errorf("top-n %s: N %d and offset %d: %w", ctx.Vertex, t.N, t.Offset, base.ErrInvalidArgument)
	}
	t.st = sorted{what: "top-n", rowT: t.InTypes[:t.Width], outT: t.OutputTypes()}
	return t.st.open(ctx)
}

// AppendOrderKey appends the sort key of row's order columns: per column
// a marker placing NULL first or last, then the value's memcomparable
// encoding, complemented for a descending column.
func AppendOrderKey(dst []byte, row types.Row, order []OrderCol) []byte {
	for _, o := range order {
		d := row[o.Col]
		if d.IsNull() {
			if o.NullsFirst {
				dst = append(dst, 0x00)
			} else {
				dst = append(dst, 0x02)
			}
			continue
		}
		ko := types.Ascending
		if o.Desc {
			ko = types.Descending
		}
		dst = types.AppendKeyOrdered(append(dst, 0x01), d, o.Type, ko)
	}
	return dst
}

// Process implements operator.Operator.
func (t *TopN) Process(_ int, c *types.Chunk) error {
	for i := range c.Len() {
		if t.AppendOnly && c.Kinds[i].IsRetract() {
			return fmt.Errorf("top-n %s: a %s in an input declared append-only: %w", t.st.ctx.Vertex, c.Kinds[i], base.ErrInvalidArgument)
		}
		t.row = c.AppendRowTo(t.row[:0], i)
		t.part = partKey(t.part[:0], t.row, t.PartCols, t.PartTypes)
		t.ord = AppendOrderKey(t.ord[:0], t.row, t.Order)
		t.enc = types.AppendRow(t.enc[:0], t.row[:t.Width], t.st.rowT)
		t.key = append(append(t.key[:0], t.ord...), t.enc...)
		t.st.ctx.State.SetCurrentKey(t.part)
		bnd, full, err := t.st.ctx.State.Value(topBoundary).Get()
		if err != nil {
			return err
		}
		below := full && bytes.Compare(t.key, bnd) > 0
		if below && t.AppendOnly {
			continue // can never enter the top
		}
		if err := t.st.addKey(t.part, t.key, t.enc, t.row[:t.Width], c.Kinds[i], !below); err != nil {
			return err
		}
	}
	return nil
}

// OnEpoch implements operator.Operator: emit the changes of the changed
// partitions' tops.
func (t *TopN) OnEpoch(base.Epoch) error {
	return t.st.flush(func(part []byte) ([]types.Row, error) {
		var out []types.Row
		var rank int64
		var evict [][]byte
		var boundary []byte
		limit := t.Offset + t.N
		err := t.st.scanKeys(part, func(key []byte, row types.Row, n int64) (bool, error) {
			if rank >= limit {
				evict = append(evict, bytes.Clone(key))
				return false, nil
			}
			if rank+n >= limit {
				boundary = bytes.Clone(key)
			}
			for range n {
				rank++
				if rank <= t.Offset {
					continue
				}
				if rank > limit {
					break
				}
				r := row.Copy()
				if t.RankCol {
					r = append(r, types.NewInt64(rank))
				}
				out = append(out, r)
			}
			return rank >= limit && !t.AppendOnly, nil
		})
		if err == nil && len(evict) > 0 {
			err = t.st.evict(part, evict)
		}
		if err != nil {
			return nil, err
		}
		t.st.ctx.State.SetCurrentKey(part)
		if boundary == nil {
			err = t.st.ctx.State.Value(topBoundary).Clear()
		} else {
			err = t.st.ctx.State.Value(topBoundary).Set(boundary)
		}
		return out, err
	})
}

// Snapshot implements operator.Operator.
func (t *TopN) Snapshot(base.CheckpointID) error { return t.st.snapshot() }
