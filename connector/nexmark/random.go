package nexmark

import (
	"math"
	"math/bits"
)

// rng is the pseudo-random stream of one event: SplitMix64 (Steele, Lea and
// Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014)
// started from a state that mixes the generator's seed with the event
// number, so that event n's content depends only on (seed, n) (invariant
// event-purity in doc.go). The reference generators seed java.util.Random
// with the event id for the same reason; SplitMix64 is faster and its
// streams for nearby event numbers are unrelated because the start state is
// itself mixed.
type rng struct{ s uint64 }

const golden = 0x9E3779B97F4A7C15

// mix64 is SplitMix64's output function, a bijective 64-bit mixer.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// seedMix turns a user seed into the value every event stream mixes in.
func seedMix(seed uint64) uint64 { return mix64(seed ^ 0x6E65786D61726B21) }

// eventRNG returns the stream of event (or row) n under a mixed seed.
func eventRNG(mixed, n uint64) rng {
	return rng{s: mix64(mixed ^ mix64(n*0xD1B54A32D192ED03+golden))}
}

func (r *rng) next() uint64 {
	r.s += golden
	return mix64(r.s)
}

// intn returns a value in [0, n) for n > 0 (Lemire's multiply-shift; the
// bias is below n/2^64, far under anything a test can see).
func (r *rng) intn(n uint64) uint64 {
	hi, _ := bits.Mul64(r.next(), n)
	return hi
}

// float returns a value in [0, 1) with 53 random bits.
func (r *rng) float() float64 { return float64(r.next()>>11) * 0x1p-53 }

// price returns a price in cents, log-uniform between 1.00 and 1,000,000.00
// as the reference's PriceGenerator: round(10^(6u) * 100) for u uniform
// in [0, 1).
func (r *rng) price() int64 {
	return int64(math.Round(math.Exp(r.float()*6*math.Ln10) * 100))
}

// minStringLength is the shortest random string the reference generates
// before trimming.
const minStringLength = 3

// appendString appends a random string of 3 to maxLen-1 characters: each
// character is, with probability 1/13, special, else a lower-case letter;
// leading and trailing spaces are then dropped (the reference's
// StringsGenerator.nextString and its trim). One 64-bit draw yields seven
// characters: the draw is read as base-338 digits (338 = 13*26), a digit
// below 26 is the special character and any other a letter.
func (r *rng) appendString(dst []byte, maxLen int, special byte) []byte {
	n := minStringLength + int(r.intn(uint64(maxLen-minStringLength)))
	start := len(dst)
	var x uint64
	left := 0
	for range n {
		if left == 0 {
			x, left = r.next(), 7
		}
		hi, lo := bits.Mul64(x, 13*26)
		x = lo
		left--
		if hi < 26 {
			dst = append(dst, special)
		} else {
			dst = append(dst, 'a'+byte(hi%26))
		}
	}
	if special == ' ' {
		// Trim spaces at both ends, in place.
		s := dst[start:]
		i, j := 0, len(s)
		for i < j && s[i] == ' ' {
			i++
		}
		for j > i && s[j-1] == ' ' {
			j--
		}
		if i > 0 {
			copy(s, s[i:j])
		}
		dst = dst[:start+j-i]
	}
	return dst
}

// appendLetters appends exactly n random lower-case letters, twelve per
// 64-bit draw (the draw's base-26 digits, taken from the top).
func (r *rng) appendLetters(dst []byte, n int) []byte {
	start := len(dst)
	dst = grow(dst, n)
	out := dst[start:]
	for i := 0; i < n; {
		x := r.next()
		for k := 0; k < 12 && i < n; k++ {
			hi, lo := bits.Mul64(x, 26)
			x = lo
			out[i] = 'a' + byte(hi)
			i++
		}
	}
	return dst
}

// extraLen returns the length of the padding string that brings a record
// whose other fields measure current bytes to avg bytes on average: the
// reference's StringsGenerator.nextExtra draws it uniformly from
// [d - δ, d + δ) with d = avg - current and δ = round(d/5); none when the
// record is larger than avg already.
func (r *rng) extraLen(current, avg int) int {
	if current > avg {
		return 0
	}
	d := avg - current
	delta := int(math.Round(float64(d) * 0.2))
	if delta == 0 {
		return d
	}
	return d - delta + int(r.intn(uint64(2*delta)))
}

// grow extends b by n bytes (contents unspecified) and returns it.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), 2*cap(b)+n)
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}
