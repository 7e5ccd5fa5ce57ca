package stream

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/agg"
)

// AggCall is one aggregate of a GroupAgg over input columns.
type AggCall struct {
	Spec agg.Spec
	// ArgCols are the input columns of the arguments (none for count(*)).
	ArgCols []int
	// FilterCol is the BOOLEAN input column of FILTER (WHERE ...), or -1.
	FilterCol int
}

// GroupAgg maintains GROUP BY aggregates over a retract changelog; see the
// package doc. Its output row is the key columns followed by the aggregate
// results.
//
// State: per group, keyed by the memcomparable key of the key columns, one
// value holding the group's row count, the row it last emitted and each
// accumulator's state; in operator state, the keys the open epoch changed.
// A write-back cache in front of keyed state (as RisingWave's managed
// state cache) makes the per-row path a map lookup; Snapshot writes the
// dirty groups back (it keeps a list of them, so a checkpoint costs the
// changed groups, not the cache). When the key is a few int-family
// columns (BIGINT, TIMESTAMP, ...), Process finds a row's group by a
// fixed-size key read from the key columns' slices (fixedKey,
// groupindex.go) and encodes the key only for a group it meets for the
// first time; the state layout is the same either way. The cache is not bounded by size; with Expiry the
// groups of closed windows leave it and keyed state at the end of the
// epoch that closed them (groupexpiry.go), so a windowed aggregate over
// a watermarked stream holds only its open windows.
//
// Invariant key-spelling: among key values that compare equal but are
// written differently (2.5 and 2.50 in an unconstrained NUMERIC column,
// '1 mon' and '30 days', jsonb 1.0 and 1, float -0 and 0, CHAR with and
// without trailing blanks), the group's output shows the spelling of its
// live rows that comes last by exact encoding (types.AppendRow of the
// key row): a spelling whose rows were all retracted is never shown, and
// the choice depends on the live rows only, not on their arrival order
// (DESIGN.md "Later: commit ahead of the checkpoint"). Postgres shows one
// of the live spellings, the first its hash table met, which depends on
// the physical order of its input; last by exact encoding gives what
// PostgreSQL 15 shows on the corpus ('1 mon' over '30 days', -0 over 0:
// months and the float sign bit encode high). For that, a group whose key
// types have several spellings keeps the multiset of its key rows'
// spellings with counts. Tried first: the first spelling the group saw,
// which shows 2.50 after its only row was deleted; then the first by
// exact encoding, which is as deterministic but shows 30 days and 0
// where Postgres shows 1 mon and -0.
type GroupAgg struct {
	operator.Base
	KeyCols  []int
	KeyTypes []types.Type
	Aggs     []AggCall
	// Expiry, when set, frees the groups of closed windows
	// (groupexpiry.go).
	Expiry *GroupExpiry

	ctx     *operator.Context
	outT    []types.Type
	spelled bool // a key type has values with several spellings
	cache   map[string]*group
	changed []*group
	dirty   []*group // the groups whose dirty flag is set
	key     []byte
	exact   []byte
	args    []types.Datum
	keyRow  types.Row
	exp     expiryState
	// fixed says that the key is fixedKeyCols or fewer columns of
	// int-family types (types.IntFamily); then byFixed indexes the
	// cache's groups that Process met by their fixedKey, which Process
	// reads from the key columns' Ints and Nulls without building datums
	// or encoding the key. noFixed (tests) turns the index off.
	fixed   bool
	noFixed bool
	byFixed fixedIndex
	// Scratch of emit and encodeGroup.
	now       types.Row
	enc, enc2 []byte
	accState  []byte
}

// fixedKeyCols is the most key columns a fixedKey holds.
const fixedKeyCols = 4

// fixedKey is a key of int-family columns: each column's value (zero
// when NULL) and a bit per NULL column. Two rows have the same fixedKey
// exactly when their key columns have the same values, so exactly when
// their memcomparable keys are equal.
type fixedKey struct {
	v     [fixedKeyCols]int64
	nulls uint8
}

type group struct {
	key  string
	fk   fixedKey // when the GroupAgg is fixed and byFixed holds the group
	fh   uint64   // hashFixed(&fk)
	keys types.Row
	// spellings are the live key rows' spellings (when the GroupAgg is
	// spelled), sorted by exact encoding; keys is the last one's row.
	spellings []spelling
	rows      int64
	accs      []agg.Accumulator
	emitted   types.Row // nil: nothing emitted yet
	dirty     bool      // differs from keyed state
	// roomy says that keys is the row a caller of load made with
	// groupRow, whose capacity emit may use for the emitted row.
	roomy   bool
	changed bool // changed in the open epoch
}

// spelling is one way a group's key row is written, with the number of
// live rows written so.
type spelling struct {
	exact string // types.AppendRow of row
	row   types.Row
	n     int64
}

const (
	groupState   = "group"
	changedState = "changed"
	// stateVersion 2 added the spellings; version 1 state (no spellings)
	// still loads, its key row counting as the spelling of every row.
	// Version 3 may store the emitted row as its aggregate results only
	// (emitted flag 2) when its key columns are the group's key row;
	// versions 1 and 2 still load.
	stateVersion   = 3
	stateVersionV2 = 2
	stateVersionV1 = 1
)

// severalSpellings reports whether values of kind k that compare equal
// (equal key encodings) can be written differently.
func severalSpellings(k types.Kind) bool {
	switch k {
	case types.KindBool, types.KindInt16, types.KindInt32, types.KindInt64, types.KindText,
		types.KindVarchar, types.KindBytea, types.KindUUID, types.KindDate, types.KindTime,
		types.KindTimestamp, types.KindTimestampTZ:
		return false
	}
	return true
}

// addSpelling counts a row of key row keys (exact encoding exact) into
// gr's spellings, or out of them when delta is negative, and makes the
// last live spelling the group's key row.
func (g *GroupAgg) addSpelling(gr *group, exact string, keys types.Row, delta int64) error {
	i, found := slices.BinarySearchFunc(gr.spellings, exact, func(s spelling, e string) int { return strings.Compare(s.exact, e) })
	switch {
	case found:
		gr.spellings[i].n += delta
		if gr.spellings[i].n < 0 {
			return fmt.Errorf("group aggregation %s: group %s: more rows retracted than added: %w", g.ctx.Vertex, keys, base.ErrInvalidArgument)
		}
		if gr.spellings[i].n == 0 {
			gr.spellings = slices.Delete(gr.spellings, i, i+1)
		}
	case delta < 0:
		return fmt.Errorf("group aggregation %s: group %s: a retraction of a row never added: %w", g.ctx.Vertex, keys, base.ErrInvalidArgument)
	default:
		gr.spellings = slices.Insert(gr.spellings, i, spelling{exact: exact, row: keys.Copy(), n: delta})
	}
	if n := len(gr.spellings); n > 0 {
		gr.keys = gr.spellings[n-1].row
	}
	return nil
}

func (g *GroupAgg) global() bool { return len(g.KeyCols) == 0 }

// OutputTypes returns the output row's types: key types, then the
// aggregates' result types.
func (g *GroupAgg) OutputTypes() ([]types.Type, error) {
	out := append([]types.Type(nil), g.KeyTypes...)
	for _, a := range g.Aggs {
		t, err := a.Spec.ResultType()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// Open implements operator.Operator: restore the groups the open epoch
// had changed before the checkpoint this subtask restarts from.
func (g *GroupAgg) Open(ctx *operator.Context) error {
	g.ctx = ctx
	g.cache = map[string]*group{}
	var err error
	if g.outT, err = g.OutputTypes(); err != nil {
		return err
	}
	g.spelled = false
	g.fixed = len(g.KeyTypes) > 0 && len(g.KeyTypes) <= fixedKeyCols && !g.noFixed
	for _, t := range g.KeyTypes {
		if severalSpellings(t.Kind) {
			g.spelled = true
		}
		if !types.IntFamily(t.Kind) {
			g.fixed = false
		}
	}
	g.byFixed = fixedIndex{}
	g.dirty = g.dirty[:0]
	if g.Expiry != nil {
		if g.global() {
			return fmt.Errorf("group aggregation %s: expiry without group keys: %w", ctx.Vertex, base.ErrInvalidArgument)
		}
		if err := g.openExpiry(); err != nil {
			return err
		}
	}
	b, ok, err := ctx.State.OperatorValue(changedState).Get()
	if err != nil {
		return err
	}
	for ok && len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return g.corrupt("changed-key list")
		}
		gr, err := g.load(string(b[k:k+int(n)]), nil)
		if err != nil {
			return err
		}
		g.markChanged(gr)
		b = b[k+int(n):]
	}
	if g.global() {
		gr, err := g.load("", nil)
		if err != nil {
			return err
		}
		if gr.emitted == nil {
			g.markChanged(gr) // the global row appears at the first epoch
		}
	}
	return nil
}

func (g *GroupAgg) corrupt(what string) error {
	return fmt.Errorf("group aggregation %s subtask %d: %s: %w", g.ctx.Vertex, g.ctx.Subtask, what, base.ErrCorruption)
}

func (g *GroupAgg) markChanged(gr *group) {
	if !gr.changed {
		gr.changed = true
		g.changed = append(g.changed, gr)
	}
}

func (g *GroupAgg) markDirty(gr *group) {
	if !gr.dirty {
		gr.dirty = true
		g.dirty = append(g.dirty, gr)
	}
}

// forget drops gr from the cache and the fixed-key index; a freed group
// is not written back.
func (g *GroupAgg) forget(gr *group) {
	delete(g.cache, gr.key)
	if g.fixed {
		g.byFixed.remove(gr)
	}
	gr.dirty = false
}

func (g *GroupAgg) newAccs() ([]agg.Accumulator, error) {
	accs := make([]agg.Accumulator, len(g.Aggs))
	for i, a := range g.Aggs {
		acc, err := agg.New(a.Spec)
		if err != nil {
			return nil, err
		}
		accs[i] = acc
	}
	return accs, nil
}

// load returns the group of key from the cache or keyed state; keys is
// the group's key row when the caller has it (nil on restore).
func (g *GroupAgg) load(key string, keys types.Row) (*group, error) {
	if gr := g.cache[key]; gr != nil {
		return gr, nil
	}
	accs, err := g.newAccs()
	if err != nil {
		return nil, err
	}
	gr := &group{key: key, keys: keys, accs: accs}
	g.ctx.State.SetCurrentKey([]byte(key))
	b, ok, err := g.ctx.State.Value(groupState).Get()
	if err != nil {
		return nil, err
	}
	if ok {
		if err := g.decodeGroup(gr, b); err != nil {
			return nil, err
		}
	}
	if gr.keys == nil {
		if gr.keys, err = g.keysFromKey(key); err != nil {
			return nil, err
		}
	}
	// A group not in keyed state keeps the caller's key row.
	gr.roomy = !ok && !g.spelled && keys != nil && cap(keys) >= len(g.outT)
	if !ok && g.Expiry != nil {
		g.indexGroup(gr)
	}
	g.cache[key] = gr
	return gr, nil
}

// keysFromKey decodes a key row (canonical form) for a group restored
// without its stored key row.
func (g *GroupAgg) keysFromKey(key string) (types.Row, error) {
	b := []byte(key)
	row := make(types.Row, len(g.KeyTypes))
	for i, t := range g.KeyTypes {
		var err error
		if row[i], b, err = types.DecodeKey(b, t); err != nil {
			return nil, err
		}
	}
	return row, nil
}

// Group state: version, rows (varint), key row, when spelled the number
// of spellings (uvarint) and each one's count (varint) and key row, the
// emitted flag (0: nothing emitted; 1: the emitted row follows; 2: the
// emitted row is the key row followed by the aggregate results that
// follow, which a GroupAgg whose key has one spelling always writes, as
// its key row never changes) and the emitted row or results (row codec),
// then each accumulator's state with its length.
func (g *GroupAgg) encodeGroup(gr *group) []byte {
	b := binary.AppendVarint([]byte{stateVersion}, gr.rows)
	b = types.AppendRow(b, gr.keys, g.KeyTypes)
	if g.spelled {
		b = binary.AppendUvarint(b, uint64(len(gr.spellings)))
		for _, s := range gr.spellings {
			b = binary.AppendVarint(b, s.n)
			b = types.AppendRow(b, s.row, g.KeyTypes)
		}
	}
	k := len(g.KeyTypes)
	switch {
	case gr.emitted == nil:
		b = append(b, 0)
	case !g.spelled:
		b = types.AppendRow(append(b, 2), gr.emitted[k:], g.outT[k:])
	default:
		b = types.AppendRow(append(b, 1), gr.emitted, g.outT)
	}
	for _, a := range gr.accs {
		g.accState = a.AppendState(g.accState[:0])
		b = binary.AppendUvarint(b, uint64(len(g.accState)))
		b = append(b, g.accState...)
	}
	return b
}

func (g *GroupAgg) decodeGroup(gr *group, b []byte) error {
	if len(b) < 1 || b[0] != stateVersion && b[0] != stateVersionV2 && b[0] != stateVersionV1 {
		return g.corrupt("group state version")
	}
	version := b[0]
	b = b[1:]
	rows, k := binary.Varint(b)
	if k <= 0 {
		return g.corrupt("group row count")
	}
	gr.rows = rows
	b = b[k:]
	keys, rest, err := types.DecodeRow(b, g.KeyTypes)
	if err != nil {
		return err
	}
	gr.keys, b = keys, rest
	gr.spellings = nil
	switch {
	case g.spelled && version == stateVersionV1:
		if gr.rows > 0 {
			gr.spellings = []spelling{{exact: string(types.AppendRow(nil, keys, g.KeyTypes)), row: keys, n: gr.rows}}
		}
	case g.spelled:
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)) {
			return g.corrupt("group spelling count")
		}
		b = b[k:]
		for range n {
			cnt, k := binary.Varint(b)
			if k <= 0 || cnt <= 0 {
				return g.corrupt("group spelling row count")
			}
			row, rest, err := types.DecodeRow(b[k:], g.KeyTypes)
			if err != nil {
				return err
			}
			exact := string(b[k : len(b)-len(rest)])
			if len(gr.spellings) > 0 && gr.spellings[len(gr.spellings)-1].exact >= exact {
				return g.corrupt("group spelling order")
			}
			gr.spellings = append(gr.spellings, spelling{exact: exact, row: row, n: cnt})
			b = rest
		}
	}
	if len(b) < 1 {
		return g.corrupt("group emitted flag")
	}
	switch {
	case b[0] == 1:
		row, rest, err := types.DecodeRow(b[1:], g.outT)
		if err != nil {
			return err
		}
		gr.emitted, b = row, rest
	case b[0] == 2 && version == stateVersion:
		k := len(g.KeyTypes)
		res, rest, err := types.DecodeRow(b[1:], g.outT[k:])
		if err != nil {
			return err
		}
		gr.emitted, b = append(append(make(types.Row, 0, len(g.outT)), gr.keys...), res...), rest
	case b[0] == 0:
		b = b[1:]
	default:
		return g.corrupt("group emitted flag")
	}
	for _, a := range gr.accs {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return g.corrupt("accumulator state length")
		}
		if err := a.LoadState(b[k : k+int(n)]); err != nil {
			return err
		}
		b = b[k+int(n):]
	}
	if len(b) != 0 {
		return g.corrupt("trailing group state")
	}
	return nil
}

// Process implements operator.Operator: fold each row into its group.
func (g *GroupAgg) Process(_ int, c *types.Chunk) error {
	if g.fixed && g.fixedColumns(c) {
		return g.processFixed(c)
	}
	keys := make(types.Row, len(g.KeyCols))
	for r := range c.Len() {
		g.key = g.key[:0]
		for i, col := range g.KeyCols {
			keys[i] = c.Datum(col, r)
			g.key = types.AppendKey(g.key, keys[i], g.KeyTypes[i])
		}
		if g.Expiry != nil {
			if err := g.observeWindow(keys, c.Kinds[r]); err != nil {
				return err
			}
		}
		gr := g.cache[string(g.key)]
		if gr == nil {
			var err error
			if gr, err = g.load(string(g.key), g.groupRow(keys)); err != nil {
				return err
			}
		}
		if err := g.fold(gr, c, r, keys); err != nil {
			return err
		}
	}
	return nil
}

// fixedColumns reports whether c's key columns are of int-family types,
// as the key types are when the GroupAgg is fixed.
func (g *GroupAgg) fixedColumns(c *types.Chunk) bool {
	for _, col := range g.KeyCols {
		if !types.IntFamily(c.Cols[col].Type.Kind) {
			return false
		}
	}
	return true
}

// processFixed is Process for a fixed key: each row's group is found by
// its fixedKey, read from the key columns' slices; the key row and the
// memcomparable key are built only for a group the index does not hold
// yet.
func (g *GroupAgg) processFixed(c *types.Chunk) error {
	var ecol []int64 // the expiry column's values
	var enull []bool
	if g.Expiry != nil {
		v := &c.Cols[g.KeyCols[g.Expiry.Col]]
		ecol, enull = v.Ints, v.Nulls
	}
	for r := range c.Len() {
		var fk fixedKey
		for i, col := range g.KeyCols {
			v := &c.Cols[col]
			if v.Nulls[r] {
				fk.nulls |= 1 << i
			} else {
				fk.v[i] = v.Ints[r]
			}
		}
		if g.Expiry != nil {
			w, ok := ecol[r], !enull[r] && !infinite(ecol[r])
			if c.Kinds[r] != types.Insert || ok && g.closed(w) {
				return g.observeWindow(g.keysOf(c, r), c.Kinds[r]) // the error
			}
			if ok && (!g.exp.seen || w > g.exp.max) {
				g.exp.max, g.exp.seen = w, true
			}
		}
		h := hashFixed(&fk)
		gr := g.byFixed.get(&fk, h)
		if gr == nil {
			keys := g.keysOf(c, r)
			g.key = g.key[:0]
			for i, d := range keys {
				g.key = types.AppendKey(g.key, d, g.KeyTypes[i])
			}
			var err error
			if gr, err = g.load(string(g.key), g.groupRow(keys)); err != nil {
				return err
			}
			gr.fk, gr.fh = fk, h
			g.byFixed.put(gr)
		}
		if err := g.fold(gr, c, r, nil); err != nil {
			return err
		}
	}
	return nil
}

// groupRow returns a copy of a new group's key row. Unless the
// GroupAgg is spelled, its capacity holds the output row, which emit
// then makes the group's emitted row (the key row never changes), so a
// group costs one row allocation, not two.
func (g *GroupAgg) groupRow(keys types.Row) types.Row {
	if g.spelled {
		return keys.Copy()
	}
	row := make(types.Row, len(g.outT))
	copy(row, keys)
	return row[:len(keys)]
}

// keysOf returns row r's key row in a scratch row.
func (g *GroupAgg) keysOf(c *types.Chunk, r int) types.Row {
	g.keyRow = g.keyRow[:0]
	for _, col := range g.KeyCols {
		g.keyRow = append(g.keyRow, c.Datum(col, r))
	}
	return g.keyRow
}

// fold folds row r of c into its group gr; keys is the row's key row,
// which a spelled GroupAgg needs (others may pass nil).
func (g *GroupAgg) fold(gr *group, c *types.Chunk, r int, keys types.Row) error {
	retract := c.Kinds[r].IsRetract()
	if retract {
		gr.rows--
	} else {
		gr.rows++
	}
	if gr.rows < 0 {
		return fmt.Errorf("group aggregation %s: a %s retracts a row of group %s that was never added: %w",
			g.ctx.Vertex, c.Kinds[r], gr.keys, base.ErrInvalidArgument)
	}
	if g.spelled {
		g.exact = types.AppendRow(g.exact[:0], keys, g.KeyTypes)
		delta := int64(1)
		if retract {
			delta = -1
		}
		if err := g.addSpelling(gr, string(g.exact), keys, delta); err != nil {
			return err
		}
	}
	for i, a := range g.Aggs {
		if a.FilterCol >= 0 {
			f := c.Datum(a.FilterCol, r)
			if f.IsNull() || !f.Bool() {
				continue
			}
		}
		g.args = g.args[:0]
		for _, col := range a.ArgCols {
			g.args = append(g.args, c.Datum(col, r))
		}
		var err error
		if retract {
			err = gr.accs[i].Retract(g.args)
		} else {
			err = gr.accs[i].Add(g.args)
		}
		if err != nil {
			return fmt.Errorf("group aggregation %s, group %s, %s: %w", g.ctx.Vertex, gr.keys, a.Spec.Func, err)
		}
	}
	g.markDirty(gr)
	g.markChanged(gr)
	return nil
}

// OnEpoch implements operator.Operator: emit each changed group's net
// change, in key order, then free the groups of closed windows (Expiry).
func (g *GroupAgg) OnEpoch(base.Epoch) error {
	if err := g.emit(); err != nil {
		return err
	}
	if g.Expiry != nil {
		return g.expire()
	}
	return nil
}

// emit emits each changed group's net change, in key order.
func (g *GroupAgg) emit() error {
	if len(g.changed) == 0 {
		return nil
	}
	slices.SortFunc(g.changed, func(a, b *group) int { return strings.Compare(a.key, b.key) })
	out := types.NewChunk(g.outT, 2*len(g.changed))
	for _, gr := range g.changed {
		gr.changed = false
		live := gr.rows > 0 || g.global()
		if live {
			g.now = append(g.now[:0], gr.keys...)
			for _, a := range gr.accs {
				v, err := a.Result()
				if err != nil {
					return fmt.Errorf("group aggregation %s, group %s: %w", g.ctx.Vertex, gr.keys, err)
				}
				g.now = append(g.now, v)
			}
		}
		switch {
		case gr.emitted == nil && live:
			out.Append(types.Insert, g.now)
			if gr.roomy && cap(gr.keys) >= len(g.now) {
				// groupRow's row: its key columns already hold the
				// key row, the rest nothing else uses.
				gr.emitted = gr.keys[:len(g.now)]
				copy(gr.emitted, g.now)
			} else {
				gr.emitted = g.now.Copy()
			}
		case gr.emitted != nil && !live:
			out.Append(types.Delete, gr.emitted)
			gr.emitted = nil
		case gr.emitted != nil && live:
			g.enc = types.AppendRow(g.enc[:0], gr.emitted, g.outT)
			g.enc2 = types.AppendRow(g.enc2[:0], g.now, g.outT)
			if !bytes.Equal(g.enc, g.enc2) {
				out.Append(types.UpdateBefore, gr.emitted)
				out.Append(types.UpdateAfter, g.now)
			} // else no net change: emit nothing
			// The emitted row is the group's own (decodeGroup and this
			// function make it), never shared with a chunk: overwrite it.
			if len(gr.emitted) == len(g.now) {
				copy(gr.emitted, g.now)
			} else {
				gr.emitted = g.now.Copy()
			}
		}
		g.markDirty(gr)
	}
	clear(g.changed)
	g.changed = g.changed[:0]
	if out.Len() == 0 {
		return nil
	}
	return g.ctx.Output.Emit(out)
}

// Snapshot implements operator.Operator: write dirty groups to keyed state
// (deleting those without rows and output) and record the open epoch's
// changed keys.
func (g *GroupAgg) Snapshot(base.CheckpointID) error {
	for _, gr := range g.dirty {
		if !gr.dirty {
			continue // freed
		}
		g.ctx.State.SetCurrentKey([]byte(gr.key))
		v := g.ctx.State.Value(groupState)
		if gr.rows == 0 && gr.emitted == nil && !gr.changed && !g.global() {
			if err := v.Clear(); err != nil {
				return err
			}
			g.forget(gr)
			continue
		}
		if err := v.Set(g.encodeGroup(gr)); err != nil {
			return err
		}
		gr.dirty = false
	}
	clear(g.dirty)
	g.dirty = g.dirty[:0]
	var b []byte
	for _, gr := range g.changed {
		b = binary.AppendUvarint(b, uint64(len(gr.key)))
		b = append(b, gr.key...)
	}
	if g.Expiry != nil {
		if err := g.snapshotExpiry(); err != nil {
			return err
		}
	}
	return g.ctx.State.OperatorValue(changedState).Set(b)
}
