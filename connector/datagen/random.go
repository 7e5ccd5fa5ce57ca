package datagen

import "math/bits"

// rng is the pseudo-random stream of one row: SplitMix64 (Steele, Lea and
// Flood, OOPSLA 2014) started from a mix of the seed and the row number, so
// that row n depends only on (seed, n) (invariant row-purity in doc.go).
// connector/nexmark uses the same construction for its events.
type rng struct{ s uint64 }

const golden = 0x9E3779B97F4A7C15

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

func seedMix(seed uint64) uint64 { return mix64(seed ^ 0x64617461_67656E21) }

func rowRNG(mixed, n uint64) rng {
	return rng{s: mix64(mixed ^ mix64(n*0xD1B54A32D192ED03+golden))}
}

func (r *rng) next() uint64 {
	r.s += golden
	return mix64(r.s)
}

// intn returns a value in [0, n) for n > 0 (multiply-shift), and any
// value when n is 0, which stands for 2^64.
func (r *rng) intn(n uint64) uint64 {
	if n == 0 {
		return r.next()
	}
	hi, _ := bits.Mul64(r.next(), n)
	return hi
}

// float returns a value in [0, 1).
func (r *rng) float() float64 { return float64(r.next()>>11) * 0x1p-53 }

// appendLetters appends n random lower-case letters, twelve per draw.
func (r *rng) appendLetters(dst []byte, n int) []byte {
	for n > 0 {
		x := r.next()
		for k := 0; k < 12 && n > 0; k++ {
			hi, lo := bits.Mul64(x, 26)
			x = lo
			dst = append(dst, 'a'+byte(hi))
			n--
		}
	}
	return dst
}

// appendBytes appends n random bytes.
func (r *rng) appendBytes(dst []byte, n int) []byte {
	for n > 0 {
		x := r.next()
		for k := 0; k < 8 && n > 0; k++ {
			dst = append(dst, byte(x))
			x >>= 8
			n--
		}
	}
	return dst
}
