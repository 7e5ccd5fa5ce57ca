package types

import (
	"bytes"
	"math"
	"math/big"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"pgregory.net/rapid"
)

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

// TestRowCodecRoundTrip: DecodeRow(AppendRow(r)) is r, value for value and
// representation for representation, for rows of every type.
func TestRowCodecRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ts := rapid.SliceOfN(genType(), 0, 8).Draw(t, "types")
		row := make(Row, len(ts))
		for i, ty := range ts {
			row[i] = genDatum(ty).Draw(t, "datum")
		}
		prefix := rapid.SliceOfN(rapid.Byte(), 0, 4).Draw(t, "prefix")
		enc := AppendRow(append([]byte(nil), prefix...), row, ts)
		if !bytes.Equal(enc[:len(prefix)], prefix) {
			t.Fatalf("AppendRow overwrote dst")
		}
		got, rest, err := DecodeRow(enc[len(prefix):], ts)
		if err != nil {
			t.Fatalf("DecodeRow: %v", err)
		}
		if len(rest) != 0 {
			t.Fatalf("DecodeRow left %d bytes", len(rest))
		}
		for i := range row {
			if !identical(row[i], got[i]) {
				t.Fatalf("column %d (%s): wrote %s, read %s", i, ts[i], row[i], got[i])
			}
		}
	})
}

// identical reports whether a and b are the same value in the same
// representation (stricter than Compare: 1.0 and 1.00 differ, -0 and 0
// differ; NaNs are identical when their bits are).
func identical(a, b Datum) bool {
	if a.kind != b.kind || a.i != b.i || a.aux != b.aux || a.s != b.s {
		return false
	}
	if math.Float64bits(a.f) != math.Float64bits(b.f) {
		return false
	}
	if (a.dec == nil) != (b.dec == nil) {
		return false
	}
	if a.dec != nil {
		return a.dec.Form == b.dec.Form && a.dec.Negative == b.dec.Negative &&
			(a.dec.Form != apd.Finite || (a.dec.Exponent == b.dec.Exponent && a.dec.Coeff.Cmp(&b.dec.Coeff) == 0))
	}
	return true
}

// TestKeyEncodingOrder: for two datums of one type, the byte order of their
// keys is their Compare order, NULL first (invariant keyenc-order); values
// Compare calls equal have identical keys (invariant keyenc-canonical).
func TestKeyEncodingOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ty := genType().Draw(t, "type")
		a := genDatum(ty).Draw(t, "a")
		var b Datum
		if rapid.IntRange(0, 3).Draw(t, "variant") == 0 {
			b = genEqualVariant(a).Draw(t, "b")
		} else {
			b = genDatum(ty).Draw(t, "b")
		}
		ka, kb := AppendKey(nil, a, ty), AppendKey(nil, b, ty)
		if want, got := sign(Compare(a, b)), sign(bytes.Compare(ka, kb)); want != got {
			t.Fatalf("%s: Compare(%s, %s) = %d but key order %d\nkeys %x\n     %x", ty, a, b, want, got, ka, kb)
		}
		// Descending keys reverse the order.
		da, db := AppendKeyOrdered(nil, a, ty, Descending), AppendKeyOrdered(nil, b, ty, Descending)
		if want, got := -sign(Compare(a, b)), sign(bytes.Compare(da, db)); want != got {
			t.Fatalf("%s: descending key order %d, want %d for %s vs %s", ty, got, want, a, b)
		}
	})
}

// TestKeyEncodingDecode: a key decodes to a value Compare calls equal to the
// original, re-encodes to the same bytes, and consumes exactly its bytes.
func TestKeyEncodingDecode(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ty := genType().Draw(t, "type")
		d := genDatum(ty).Draw(t, "d")
		order := rapid.SampledFrom([]KeyOrder{Ascending, Descending}).Draw(t, "order")
		tail := rapid.SliceOfN(rapid.Byte(), 0, 5).Draw(t, "tail")
		key := AppendKeyOrdered(nil, d, ty, order)
		got, rest, err := DecodeKeyOrdered(append(append([]byte(nil), key...), tail...), ty, order)
		if err != nil {
			t.Fatalf("%s %s: DecodeKey: %v", ty, d, err)
		}
		if !bytes.Equal(rest, tail) {
			t.Fatalf("%s %s: rest %x, want %x", ty, d, rest, tail)
		}
		if Compare(got, d) != 0 {
			t.Fatalf("%s: decoded %s, want %s", ty, got, d)
		}
		if again := AppendKeyOrdered(nil, got, ty, order); !bytes.Equal(again, key) {
			t.Fatalf("%s %s: re-encoded %x, want %x", ty, d, again, key)
		}
	})
}

// TestCompositeKeyOrder: keys of several columns, some descending, sort as
// the rows compare column by column.
func TestCompositeKeyOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ts := rapid.SliceOfN(genType(), 1, 4).Draw(t, "types")
		orders := make([]KeyOrder, len(ts))
		for i := range orders {
			orders[i] = rapid.SampledFrom([]KeyOrder{Ascending, Descending}).Draw(t, "order")
		}
		row := func(label string) Row {
			r := make(Row, len(ts))
			for i, ty := range ts {
				r[i] = genDatum(ty).Draw(t, label)
			}
			return r
		}
		a, b := row("a"), row("b")
		if rapid.Bool().Draw(t, "share") {
			// Share a prefix so later columns decide.
			n := rapid.IntRange(0, len(ts)-1).Draw(t, "shared")
			copy(b[:n], a[:n])
		}
		want := 0
		for i := range ts {
			c := sign(Compare(a[i], b[i]))
			if orders[i] == Descending {
				c = -c
			}
			if c != 0 {
				want = c
				break
			}
		}
		var ka, kb []byte
		for i, ty := range ts {
			ka = AppendKeyOrdered(ka, a[i], ty, orders[i])
			kb = AppendKeyOrdered(kb, b[i], ty, orders[i])
		}
		if got := sign(bytes.Compare(ka, kb)); got != want {
			t.Fatalf("rows %s vs %s (%v, orders %v): key order %d, want %d", a, b, ts, orders, got, want)
		}
	})
}

// TestCompareAgainstReference checks Compare against independent reference
// orders: native Go comparison for integers and times, math/big for
// NUMERIC and INTERVAL spans, bytes for strings, Postgres's NaN rule for
// floats.
func TestCompareAgainstReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ty := genType().Draw(t, "type")
		a, b := genValue(ty).Draw(t, "a"), genValue(ty).Draw(t, "b")
		got := sign(Compare(a, b))
		want, ok := referenceCompare(a, b)
		if !ok {
			return
		}
		if got != want {
			t.Fatalf("%s: Compare(%s, %s) = %d, reference %d", ty, a, b, got, want)
		}
		if back := sign(Compare(b, a)); back != -got {
			t.Fatalf("%s: Compare not antisymmetric for %s, %s", ty, a, b)
		}
	})
}

func referenceCompare(a, b Datum) (int, bool) {
	switch a.kind {
	case KindBool, KindInt16, KindInt32, KindInt64, KindDate, KindTime, KindTimestamp, KindTimestampTZ:
		return big.NewInt(a.i).Cmp(big.NewInt(b.i)), true
	case KindFloat32, KindFloat64:
		an, bn := math.IsNaN(a.f), math.IsNaN(b.f)
		switch {
		case an || bn:
			if an && bn {
				return 0, true
			}
			if an {
				return 1, true
			}
			return -1, true
		}
		return big.NewFloat(a.f).Cmp(big.NewFloat(b.f)), true
	case KindNumeric:
		ra, okA := decimalRat(a.dec)
		rb, okB := decimalRat(b.dec)
		if !okA || !okB {
			return 0, false // specials are covered by table tests
		}
		return ra.Cmp(rb), true
	case KindVarchar, KindText, KindBytea, KindUUID:
		return bytes.Compare([]byte(a.s), []byte(b.s)), true
	case KindInterval:
		span := func(d Datum) *big.Int {
			iv := d.Interval()
			v := big.NewInt(int64(iv.Months)*30 + int64(iv.Days))
			v.Mul(v, big.NewInt(86_400_000_000))
			return v.Add(v, big.NewInt(iv.Micros))
		}
		return span(a).Cmp(span(b)), true
	}
	return 0, false
}

func decimalRat(d *apd.Decimal) (*big.Rat, bool) {
	if d.Form != apd.Finite {
		return nil, false
	}
	num := new(big.Int).Set(d.Coeff.MathBigInt())
	if d.Negative {
		num.Neg(num)
	}
	r := new(big.Rat).SetInt(num)
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs32(d.Exponent))), nil)
	if d.Exponent >= 0 {
		r.Mul(r, new(big.Rat).SetInt(scale))
	} else {
		r.Quo(r, new(big.Rat).SetInt(scale))
	}
	return r, true
}

func abs32(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}

// TestChunkRoundTrip: rows appended to a Chunk come back from Row and
// through the chunk codec identical.
func TestChunkRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ts := rapid.SliceOfN(genType(), 0, 6).Draw(t, "types")
		n := rapid.IntRange(0, 40).Draw(t, "rows")
		c := NewChunk(ts, n)
		var rows []Row
		var kinds []RowKind
		for range n {
			r := make(Row, len(ts))
			for i, ty := range ts {
				r[i] = genDatum(ty).Draw(t, "datum")
			}
			k := rapid.SampledFrom([]RowKind{Insert, UpdateBefore, UpdateAfter, Delete}).Draw(t, "kind")
			c.Append(k, r)
			rows, kinds = append(rows, r), append(kinds, k)
		}
		dec, rest, err := DecodeChunk(AppendChunk(nil, c))
		if err != nil || len(rest) != 0 {
			t.Fatalf("DecodeChunk: %v (rest %d)", err, len(rest))
		}
		for _, got := range []*Chunk{c, dec} {
			if got.Len() != n || got.Width() != len(ts) {
				t.Fatalf("chunk is %dx%d, want %dx%d", got.Len(), got.Width(), n, len(ts))
			}
			for i := range rows {
				if got.Kind(i) != kinds[i] {
					t.Fatalf("row %d kind %s, want %s", i, got.Kind(i), kinds[i])
				}
				r := got.Row(i)
				for j := range r {
					if !identical(r[j], rows[i][j]) {
						t.Fatalf("row %d col %d: %s, want %s", i, j, r[j], rows[i][j])
					}
				}
			}
		}
	})
}
