package state

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
)

// TestHashKeysMatchesEncodedKeys checks the columnar hash against Hash64
// of each row's encoded key, over random chunks whose key columns mix the
// integer fast paths, NULLs, extreme values, and types that go through
// types.AppendKey (text, double, boolean, and a BIGINT key over an
// INTEGER column).
//
// It runs twice: with the vector kernel of 8-byte integer keys
// (hashvec_amd64.s) where the processor has it, and with the portable loop.
func TestHashKeysMatchesEncodedKeys(t *testing.T) {
	forEachHashPath(t, testHashKeysMatchesEncodedKeys)
}

// forEachHashPath runs test with the vector kernel on, where the processor
// has it, and off.
func forEachHashPath(t *testing.T, test func(t *testing.T)) {
	vector := hashVector
	t.Cleanup(func() { hashVector = vector })
	if vector {
		t.Run("vector", test)
	} else {
		t.Log("no AVX-512 kernel on this processor: the portable loop only")
	}
	hashVector = false
	t.Run("portable", test)
}

func testHashKeysMatchesEncodedKeys(t *testing.T) {
	ints := func(r *rand.Rand) int64 {
		switch r.IntN(6) {
		case 0:
			return math.MinInt64
		case 1:
			return math.MaxInt64
		case 2:
			return 0
		case 3:
			return -1
		}
		return r.Int64() >> r.IntN(64)
	}
	cols := []struct {
		col, key types.Type
		gen      func(*rand.Rand) types.Datum
	}{
		{types.Int64, types.Int64, func(r *rand.Rand) types.Datum { return types.NewInt64(ints(r)) }},
		{types.Int32, types.Int32, func(r *rand.Rand) types.Datum { return types.NewInt32(int32(ints(r))) }},
		{types.Int16, types.Int16, func(r *rand.Rand) types.Datum { return types.NewInt16(int16(ints(r))) }},
		{types.Date, types.Date, func(r *rand.Rand) types.Datum { return types.NewDate(int32(ints(r))) }},
		{types.Timestamp, types.Timestamp, func(r *rand.Rand) types.Datum { return types.NewTimestamp(ints(r)) }},
		{types.TimestampTZ, types.TimestampTZ, func(r *rand.Rand) types.Datum { return types.NewTimestampTZ(ints(r)) }},
		{types.Text, types.Text, func(r *rand.Rand) types.Datum { return types.NewText(fmt.Sprint(r.IntN(1000))) }},
		{types.Float64, types.Float64, func(r *rand.Rand) types.Datum { return types.NewFloat64(r.NormFloat64()) }},
		{types.Bool, types.Bool, func(r *rand.Rand) types.Datum { return types.NewBool(r.IntN(2) == 0) }},
		{types.Int32, types.Int64, func(r *rand.Rand) types.Datum { return types.NewInt32(int32(ints(r))) }},
	}
	r := rand.New(rand.NewPCG(1, 2))
	var hashes []uint64
	for iter := range 300 {
		width := 1 + r.IntN(3)
		var ts, keyTypes []types.Type
		var gens []func(*rand.Rand) types.Datum
		var keyCols []int
		for c := range width {
			k := cols[r.IntN(len(cols))]
			ts = append(ts, k.col)
			keyTypes = append(keyTypes, k.key)
			gens = append(gens, k.gen)
			keyCols = append(keyCols, c)
		}
		// A non-key column in front, so that key columns are not 0..n-1.
		ts = append([]types.Type{types.Int64}, ts...)
		for i := range keyCols {
			keyCols[i]++
		}
		n := r.IntN(300)
		c := types.NewChunk(ts, n)
		for range n {
			row := types.Row{types.NewInt64(r.Int64())}
			for _, g := range gens {
				if r.IntN(8) == 0 {
					row = append(row, types.Null)
				} else {
					row = append(row, g(r))
				}
			}
			c.Append(types.Insert, row)
		}
		hashes = HashKeys(c, keyCols, keyTypes, hashes)
		if len(hashes) != n {
			t.Fatalf("iteration %d: %d hashes for %d rows", iter, len(hashes), n)
		}
		for i := range n {
			key := types.EncodeKey(nil, c.Row(i), keyCols, keyTypes)
			if want := Hash64(key); hashes[i] != want {
				t.Fatalf("iteration %d row %d (%v as %v): HashKeys %#x, Hash64 of the encoded key %#x", iter, i, c.Row(i), keyTypes, hashes[i], want)
			}
			if g, want := GroupOfHash(hashes[i], 1000), KeyGroupOf(key, 1000); g != want {
				t.Fatalf("iteration %d row %d: group %d, want %d", iter, i, g, want)
			}
		}
	}
}

// TestHashInt64KeysMatchesEncodedKeys checks HashInt64Keys, on both hash
// paths, against Hash64 of each value's encoded BIGINT key and its key
// group against KeyGroupOf, for every length from 0 to 70 (the vector
// kernel's eight-key steps and the tails after them) and for a
// 1024-value chunk, over random values, negative ones and the extremes
// included. A NULL key has no value to hash here; HashKeys replaces its
// hash, which TestHashKeysMatchesEncodedKeys checks with NULLs on both
// paths.
func TestHashInt64KeysMatchesEncodedKeys(t *testing.T) {
	forEachHashPath(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 8))
		value := func() int64 {
			switch r.IntN(8) {
			case 0:
				return math.MinInt64 + int64(r.IntN(3))
			case 1:
				return math.MaxInt64 - int64(r.IntN(3))
			case 2:
				return int64(r.IntN(5)) - 2
			case 3:
				return -int64(r.IntN(1 << 20))
			}
			return r.Int64() >> r.IntN(64) * int64(1-2*r.IntN(2))
		}
		var hashes []uint64
		for n := range 1095 {
			if n > 70 && n != 1024 {
				continue
			}
			ints := make([]int64, n)
			for i := range ints {
				ints[i] = value()
			}
			hashes = HashInt64Keys(hashes, ints)
			if len(hashes) != n {
				t.Fatalf("%d hashes of %d values", len(hashes), n)
			}
			for i, x := range ints {
				key := types.EncodeKey(nil, types.Row{types.NewInt64(x)}, []int{0}, []types.Type{types.Int64})
				if want := Hash64(key); hashes[i] != want || HashInt64Key(x) != want {
					t.Fatalf("length %d, value %d (%d): HashInt64Keys %#x, HashInt64Key %#x, Hash64 of the encoded key %#x",
						n, i, x, hashes[i], HashInt64Key(x), want)
				}
				if g, want := GroupOfHash(hashes[i], 128), KeyGroupOf(key, 128); g != want {
					t.Fatalf("length %d, value %d (%d): key group %d, want %d", n, i, x, g, want)
				}
			}
		}
	})
}

// BenchmarkHashKeysInt64 hashes a chunk of 1024 BIGINT keys, with the
// vector kernel where the processor has it and with the portable loop.
func BenchmarkHashKeysInt64(b *testing.B) {
	vector := hashVector
	defer func() { hashVector = vector }()
	for _, v := range []bool{true, false} {
		if v && !vector {
			continue
		}
		hashVector = v
		name := "portable"
		if v {
			name = "vector"
		}
		b.Run(name, benchmarkHashKeysInt64)
	}
}

func benchmarkHashKeysInt64(b *testing.B) {
	c := types.NewChunk([]types.Type{types.Int64}, 1024)
	for i := range 1024 {
		c.Append(types.Insert, types.Row{types.NewInt64(int64(i) * 7919 % 100000)})
	}
	var h []uint64
	b.SetBytes(1024)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU()
	for b.Loop() {
		h = HashKeys(c, []int{0}, []types.Type{types.Int64}, h)
	}
	b.ReportMetric(float64(threadCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// threadCPU returns the calling thread's CPU time: cpu-ns/op stays steady
// when other processes share the cores (ns/op does not).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestInt64Keys: Int64Keys hands out the key column's integers exactly
// for a key of one 8-byte integer column stored in Ints, and HashInt64Key
// of each is Hash64 of its row's encoded key.
func TestInt64Keys(t *testing.T) {
	ts := []types.Type{types.Int64, types.Int32, types.Timestamp}
	c := types.NewChunk(ts, 0)
	for _, x := range []int64{math.MinInt64, -1, 0, 1, 1 << 40, math.MaxInt64} {
		c.Append(types.Insert, types.Row{types.NewInt64(x), types.NewInt32(int32(x)), types.NewTimestamp(x)})
	}
	for _, tc := range []struct {
		cols []int
		ts   []types.Type
		ok   bool
	}{
		{[]int{0}, []types.Type{types.Int64}, true},
		{[]int{2}, []types.Type{types.Timestamp}, true},
		{[]int{1}, []types.Type{types.Int32}, false},
		{[]int{1}, []types.Type{types.Int64}, false},
		{[]int{0, 2}, []types.Type{types.Int64, types.Timestamp}, false},
	} {
		keys, ok := Int64Keys(c, tc.cols, tc.ts)
		if ok != tc.ok {
			t.Fatalf("key %v %v: Int64Keys ok=%v", tc.cols, tc.ts, ok)
		}
		if !ok {
			continue
		}
		if len(keys) != c.Len() {
			t.Fatalf("key %v: %d keys for %d rows", tc.cols, len(keys), c.Len())
		}
		for r, k := range keys {
			want := Hash64(types.EncodeKey(nil, c.Row(r), tc.cols, tc.ts))
			if got := HashInt64Key(k); got != want {
				t.Fatalf("key %v row %d: HashInt64Key %#x, Hash64 of the encoded key %#x", tc.cols, r, got, want)
			}
		}
	}
}
