package logictest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/plan"
)

// liveState is a table's rows by primary key (by arrival for an
// append-only table): what its changelog says the table holds. It checks
// that the changelog respects the key (invariant input-keyed in the
// package doc).
type liveState struct {
	rel  *plan.Relation
	rows map[string]types.Row
	// appended counts the rows of an append-only table (no primary key),
	// which are their own keys.
	appended int
	// pending is the key of a -U waiting for its +U.
	pending string
	hasPend bool
	// maxTime is the largest event time seen (when seenTime) of an
	// append-only table with a watermark; late counts the rows dropped
	// as late (invariant late-rows).
	maxTime  int64
	seenTime bool
	late     int
}

func newLiveState(rel *plan.Relation) *liveState {
	return &liveState{rel: rel, rows: map[string]types.Row{}}
}

func (s *liveState) key(r types.Row) string {
	if len(s.rel.PrimaryKey) == 0 {
		return fmt.Sprintf("%020d", s.appended)
	}
	ts := make([]types.Type, len(s.rel.Columns))
	for i, c := range s.rel.Columns {
		ts[i] = c.Type
	}
	return string(types.EncodeKey(nil, r, s.rel.PrimaryKey, ts))
}

// apply applies one change, refusing an insert of a live key, a retraction
// of a row that is not the live one, and a -U not followed by +U of the
// same key.
func (s *liveState) apply(c Change) error {
	if len(s.rel.PrimaryKey) == 0 {
		if c.Kind != types.Insert {
			return fmt.Errorf("%s in the changelog of append-only table %s (it has no primary key)", c.Kind, s.rel.Name)
		}
		if s.isLate(c.Row) {
			s.late++
			return nil
		}
		s.rows[s.key(c.Row)] = c.Row
		s.appended++
		return nil
	}
	k := s.key(c.Row)
	if s.rel.Upsert {
		return s.upsert(k, c)
	}
	if s.hasPend && (c.Kind != types.UpdateAfter || k != s.pending) {
		return errors.New("-U must be followed by +U of the same key")
	}
	switch c.Kind {
	case types.Insert:
		if _, ok := s.rows[k]; ok {
			return fmt.Errorf("+I of key %s, which is live", s.keyText(c.Row))
		}
		s.rows[k] = c.Row
	case types.UpdateBefore, types.Delete:
		old, ok := s.rows[k]
		if !ok {
			return fmt.Errorf("%s of key %s, which is not live", c.Kind, s.keyText(c.Row))
		}
		if FormatRow(old) != FormatRow(c.Row) {
			return fmt.Errorf("%s (%s) does not match the live row (%s)", c.Kind, FormatRow(c.Row), FormatRow(old))
		}
		delete(s.rows, k)
		if c.Kind == types.UpdateBefore {
			s.pending, s.hasPend = k, true
		}
	case types.UpdateAfter:
		if !s.hasPend {
			return errors.New("+U without a -U before it")
		}
		s.rows[k] = c.Row
		s.hasPend = false
	}
	return nil
}

// upsert applies a change of an upsert changelog: +I and +U replace the
// key's row, live or not; -D deletes a live key; -U has no place in it.
func (s *liveState) upsert(k string, c Change) error {
	switch c.Kind {
	case types.Insert, types.UpdateAfter:
		s.rows[k] = c.Row
	case types.Delete:
		if _, ok := s.rows[k]; !ok {
			return fmt.Errorf("-D of key %s, which is not live", s.keyText(c.Row))
		}
		delete(s.rows, k)
	default:
		return fmt.Errorf("%s in the upsert changelog of %s", c.Kind, s.rel.Name)
	}
	return nil
}

// isLate applies the rule of stream.LateFilter to a row of an append-only
// table with a watermark, in changelog order: a row whose event time is
// below the largest time before it minus the delay is late; NULL is never
// late and, like ±infinity, does not raise the largest time.
func (s *liveState) isLate(r types.Row) bool {
	wm := s.rel.Watermark
	if wm == nil || r[wm.Column].IsNull() {
		return false
	}
	t := r[wm.Column].Micros()
	delay := wm.Delay.Micros + int64(wm.Delay.Days)*24*3600*1_000_000
	if s.seenTime && t < s.maxTime-delay {
		return true
	}
	if (!s.seenTime || t > s.maxTime) && t != types.TimestampInfinity && t != types.TimestampNegInfinity {
		s.maxTime, s.seenTime = t, true
	}
	return false
}

func (s *liveState) pendingUpdate() error {
	if s.hasPend {
		return errors.New("the changelog ends after a -U without its +U")
	}
	return nil
}

func (s *liveState) keyText(r types.Row) string {
	parts := make([]string, len(s.rel.PrimaryKey))
	for i, c := range s.rel.PrimaryKey {
		parts[i] = FormatRow(types.Row{r[c]})
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// snapshot returns the live rows in key order.
func (s *liveState) snapshot() []types.Row {
	keys := make([]string, 0, len(s.rows))
	for k := range s.rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]types.Row, len(keys))
	for i, k := range keys {
		out[i] = s.rows[k]
	}
	return out
}

// GenSpec parameterizes Generate.
type GenSpec struct {
	// Rows is the number of inserts over the whole changelog; Epochs the
	// number of epochs they spread over.
	Rows, Epochs int
	Seed         uint64
	// Updates and Deletes are the shares of changes that update (-U/+U)
	// or delete (-D) a live row instead of inserting one.
	Updates, Deletes float64
	// Nulls is the probability that a nullable value is NULL; Extremes
	// the probability that a value is its type's extreme (the largest and
	// smallest integers, NaN and ±Infinity, the widest NUMERIC, far
	// dates).
	Nulls, Extremes float64
}

// Generate returns a random changelog for rel that respects its primary
// key: inserts of keys that are not live (sometimes a key deleted
// earlier), updates as -U of the live row then +U of a new row with the
// same key (some columns kept, some redrawn, sometimes none changed), and
// deletes as -D of the live row. The same spec gives the same changelog.
func Generate(rel *plan.Relation, g GenSpec) [][]Change {
	if rel.Upsert {
		return upsertOf(rel, generate(rel, g))
	}
	return generate(rel, g)
}

// upsertOf turns a retract changelog of rel into the upsert changelog an
// upsert source gives for it: no -U, and a -D that names only the key
// (its other columns NULL, as a Kafka tombstone carries no value).
func upsertOf(rel *plan.Relation, epochs [][]Change) [][]Change {
	out := make([][]Change, len(epochs))
	for e, cs := range epochs {
		for _, c := range cs {
			switch c.Kind {
			case types.UpdateBefore:
				continue
			case types.Delete:
				key := make(types.Row, len(c.Row))
				for _, k := range rel.PrimaryKey {
					key[k] = c.Row[k]
				}
				c = Change{Kind: types.Delete, Row: key}
			}
			out[e] = append(out[e], c)
		}
	}
	return out
}

func generate(rel *plan.Relation, g GenSpec) [][]Change {
	if rel.Upsert {
		plain := *rel
		plain.Upsert = false
		rel = &plain
	}
	if len(rel.PrimaryKey) == 0 {
		g.Updates, g.Deletes = 0, 0
	}
	rng := rand.New(rand.NewPCG(g.Seed, 0x5eed))
	st := newLiveState(rel)
	gen := &valueGen{rng: rng, spec: g}
	isKey := make([]bool, len(rel.Columns))
	for _, c := range rel.PrimaryKey {
		isKey[c] = true
	}
	seqKey := len(rel.PrimaryKey) == 1 && isIntKind(rel.Columns[rel.PrimaryKey[0]].Type.Kind)
	next := int64(1)
	var deleted []types.Row // rows deleted, whose keys may come back
	insertsPer := float64(g.Rows) / float64(g.Epochs)
	opsPer := insertsPer / (1 - g.Updates - g.Deletes)
	out := make([][]Change, g.Epochs)
	var carry float64
	for e := range g.Epochs {
		carry += opsPer
		n := int(carry)
		carry -= float64(n)
		for range n {
			live := st.snapshot()
			r := rng.Float64()
			switch {
			case len(live) > 0 && r < g.Deletes:
				old := live[rng.IntN(len(live))]
				c := Change{Kind: types.Delete, Row: old}
				mustApply(st, c)
				out[e] = append(out[e], c)
				deleted = append(deleted, old)
			case len(live) > 0 && r < g.Deletes+g.Updates:
				old := live[rng.IntN(len(live))]
				nw := append(types.Row(nil), old...)
				for i, col := range rel.Columns {
					if !isKey[i] && rng.IntN(2) == 0 {
						nw[i] = gen.value(col)
					}
				}
				mustApply(st, Change{Kind: types.UpdateBefore, Row: old})
				mustApply(st, Change{Kind: types.UpdateAfter, Row: nw})
				out[e] = append(out[e], Change{Kind: types.UpdateBefore, Row: old}, Change{Kind: types.UpdateAfter, Row: nw})
			default:
				row := make(types.Row, len(rel.Columns))
				for i, col := range rel.Columns {
					row[i] = gen.value(col)
				}
				ok := false
				switch {
				case len(deleted) > 0 && rng.IntN(3) == 0:
					// A key that was deleted comes back.
					old := deleted[rng.IntN(len(deleted))]
					for _, c := range rel.PrimaryKey {
						row[c] = old[c]
					}
					_, live := st.rows[st.key(row)]
					ok = !live
				}
				if !ok && seqKey {
					row[rel.PrimaryKey[0]] = intDatum(rel.Columns[rel.PrimaryKey[0]].Type.Kind, next)
					next++
					ok = true
				}
				for try := 0; !ok && try < 20; try++ {
					for _, c := range rel.PrimaryKey {
						row[c] = gen.nonNull(rel.Columns[c])
					}
					_, live := st.rows[st.key(row)]
					ok = !live
				}
				if !ok {
					continue
				}
				c := Change{Kind: types.Insert, Row: row}
				mustApply(st, c)
				out[e] = append(out[e], c)
			}
		}
	}
	return out
}

func mustApply(st *liveState, c Change) {
	if err := st.apply(c); err != nil {
		panic("logictest: generated changelog breaks invariant input-keyed: " + err.Error())
	}
}

func isIntKind(k types.Kind) bool {
	return k == types.KindInt16 || k == types.KindInt32 || k == types.KindInt64
}

func intDatum(k types.Kind, v int64) types.Datum {
	switch k {
	case types.KindInt16:
		return types.NewInt16(int16(v))
	case types.KindInt32:
		return types.NewInt32(int32(v))
	}
	return types.NewInt64(v)
}

// valueGen draws column values: small domains so that groups and join
// keys collide, NULLs, and now and then the type's extremes.
type valueGen struct {
	rng  *rand.Rand
	spec GenSpec
}

var (
	genTexts = []string{"a", "b", "c", "ab", "abc", "A", "B", "", " a", "a b", "x_y", "10", "9", "é", "Ünïcode", "ß", "a%b", "O'Brien"}
	genJSON  = []string{`{"a": 1}`, `{"a": 2, "b": [1, 2]}`, `{"a": "x", "b": {"c": true}}`, `[1, "x", null]`, `[]`, `{}`,
		`"s"`, `3.5`, `null`, `{"a": null}`, `{"b": {"c": "d"}, "a": 10}`, `true`, `[{"a": 1}, {"a": 2}]`}
	genIntervals = []string{"1 day", "02:00:00", "1 mon", "30 days", "-1 days +03:00:00", "00:00:01.5", "1 year 2 mons", "00:00:00", "36:00:00", "-00:30:00"}
	genUUIDs     = []string{"00000000-0000-0000-0000-000000000000", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "ffffffff-ffff-ffff-ffff-ffffffffffff", "123e4567-e89b-12d3-a456-426614174000"}
)

func (g *valueGen) value(c plan.Column) types.Datum {
	if !c.NotNull && g.rng.Float64() < g.spec.Nulls {
		return types.Null
	}
	return g.nonNull(c)
}

func (g *valueGen) nonNull(c plan.Column) types.Datum {
	rng := g.rng
	extreme := rng.Float64() < g.spec.Extremes
	t := c.Type
	parse := func(s string) types.Datum {
		d, err := types.ParseText(t, s, time.UTC)
		if err != nil {
			panic(fmt.Sprintf("logictest: generated value %q for %s: %v", s, t, err))
		}
		return d
	}
	switch t.Kind {
	case types.KindBool:
		return types.NewBool(rng.IntN(2) == 0)
	case types.KindInt16, types.KindInt32, types.KindInt64:
		if extreme {
			bits := map[types.Kind]uint{types.KindInt16: 16, types.KindInt32: 32, types.KindInt64: 64}[t.Kind]
			hi := int64(uint64(1)<<(bits-1) - 1)
			return intDatum(t.Kind, []int64{hi, -hi - 1, hi - 1}[rng.IntN(3)])
		}
		return intDatum(t.Kind, int64(rng.IntN(16)-3))
	case types.KindFloat32, types.KindFloat64:
		if extreme {
			big := "1e300"
			if t.Kind == types.KindFloat32 {
				big = "3e38"
			}
			return parse([]string{"NaN", "Infinity", "-Infinity", big, "-0"}[rng.IntN(5)])
		}
		return parse(strconv.FormatFloat(float64(rng.IntN(41)-10)/4, 'g', -1, 64))
	case types.KindNumeric:
		scale := int(t.Scale)
		if t.Precision == 0 {
			scale = 4
		}
		if extreme && t.Precision > 0 {
			digits := strings.Repeat("9", int(t.Precision-t.Scale))
			if digits == "" {
				digits = "0"
			}
			if t.Scale > 0 {
				digits += "." + strings.Repeat("9", int(t.Scale))
			}
			if rng.IntN(2) == 0 {
				digits = "-" + digits
			}
			return parse(digits)
		}
		// A quarter-step value, written with a random number of trailing
		// zeros: equal values spelled differently.
		v := float64(rng.IntN(81)-20) / 4
		if t.Precision > 0 && t.Precision-t.Scale < 3 {
			v = math.Mod(v, 1)
		}
		s := strconv.FormatFloat(v, 'f', -1, 64)
		frac := 0
		if i := strings.IndexByte(s, '.'); i >= 0 {
			frac = len(s) - i - 1
		}
		if frac < scale {
			pad := rng.IntN(scale - frac + 1)
			if pad > 0 && frac == 0 {
				s += "."
			}
			s += strings.Repeat("0", pad)
		}
		return parse(s)
	case types.KindChar, types.KindVarchar, types.KindText:
		s := genTexts[rng.IntN(len(genTexts))]
		if t.Length > 0 && len([]rune(s)) > int(t.Length) {
			s = string([]rune(s)[:t.Length])
		}
		return parse(s)
	case types.KindDate:
		if extreme {
			return parse([]string{"0001-01-01", "9999-12-31", "1970-01-01", "1900-02-28"}[rng.IntN(4)])
		}
		return types.NewDate(int32(19783 + rng.IntN(120) - 60)) // around 2024-03-01
	case types.KindTimestamp, types.KindTimestampTZ:
		if extreme {
			return parse([]string{"1970-01-01 00:00:00", "1900-01-01 12:00:00", "2100-12-31 23:59:59.999999", "1969-12-31 23:59:59.5"}[rng.IntN(4)])
		}
		// Quarter hours over a week around the 2024 US and EU DST days.
		base := int64(1710028800_000000) // 2024-03-10 00:00:00 UTC
		micros := base + int64(rng.IntN(4*24*21)-4*24*7)*15*60*1_000_000
		if t.Kind == types.KindTimestamp {
			return types.NewTimestamp(micros)
		}
		return types.NewTimestampTZ(micros)
	case types.KindTime:
		return types.NewTime(int64(rng.IntN(96)) * 15 * 60 * 1_000_000)
	case types.KindInterval:
		return parse(genIntervals[rng.IntN(len(genIntervals))])
	case types.KindJSONB:
		return parse(genJSON[rng.IntN(len(genJSON))])
	case types.KindUUID:
		return parse(genUUIDs[rng.IntN(len(genUUIDs))])
	case types.KindBytea:
		return types.NewBytea([]byte{byte(rng.IntN(4)), byte(rng.IntN(256))})
	}
	panic("logictest: no generator for type " + t.String())
}
