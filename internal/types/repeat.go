package types

// AppendRepeated adds row i of src counts[i] times at the end of v, for
// each i < len(counts), slice by slice, as that many Appends of src's
// datum i would (a window expansion that copies each input row once per
// window). src must have at least len(counts) rows and be of v's family
// (Append's rule); another family panics, as Append does. Negative
// counts count as zero.
func (v *Vector) AppendRepeated(src *Vector, counts []int32) {
	if family(src.Type.Kind) != family(v.Type.Kind) {
		panic("types: Vector.AppendRepeated of a " + src.Type.String() + " column to a " + v.Type.String() + " column")
	}
	v.Nulls = appendRepeated(v.Nulls, src.Nulls, counts)
	switch family(v.Type.Kind) {
	case famBool, famInt, famDate, famTime, famTimestamp, famTimestampTZ:
		v.Ints = appendRepeated(v.Ints, src.Ints, counts)
	case famInterval:
		v.Ints = appendRepeated(v.Ints, src.Ints, counts)
		v.Aux = appendRepeated(v.Aux, src.Aux, counts)
	case famFloat:
		v.Floats = appendRepeated(v.Floats, src.Floats, counts)
	case famNumeric:
		v.Decimals = appendRepeated(v.Decimals, src.Decimals, counts)
	case famString, famBytes, famUUID, famJSONB:
		v.Strs = appendRepeated(v.Strs, src.Strs, counts)
	default:
		panic("types: Vector of unsupported type " + v.Type.String())
	}
}

func appendRepeated[T any](dst, src []T, counts []int32) []T {
	total := 0
	for _, n := range counts {
		total += int(max(n, 0))
	}
	if cap(dst)-len(dst) < total {
		grown := make([]T, len(dst), len(dst)+total)
		copy(grown, dst)
		dst = grown
	}
	for i, n := range counts {
		x := src[i]
		for range n {
			dst = append(dst, x)
		}
	}
	return dst
}

// IntFamily reports whether values of kind k are held in a Vector's Ints
// alone, one int64 per value whose equality is the value's: BOOLEAN, the
// integers, DATE, TIME, TIMESTAMP and TIMESTAMPTZ (not INTERVAL, which
// also uses Aux).
func IntFamily(k Kind) bool {
	switch family(k) {
	case famBool, famInt, famDate, famTime, famTimestamp, famTimestampTZ:
		return true
	}
	return false
}
