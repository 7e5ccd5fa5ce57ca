package testkit

import (
	"math/rand/v2"
	"testing"
)

// TestAccTableMatchesMap runs random updates of keys from a few shapes
// (arithmetic progressions like the generator's, random values, extremes)
// against a Go map through several growths.
func TestAccTableMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var tab accTable
	want := map[int64][2]int64{}
	key := func(i int) int64 {
		switch r.IntN(4) {
		case 0:
			return int64(i) * 7919 % 100000
		case 1:
			return r.Int64() - r.Int64()
		case 2:
			return int64(r.IntN(64)) << 58
		}
		return -int64(r.IntN(5000))
	}
	for i := range 200000 {
		k, v := key(i), int64(r.IntN(100))
		s := tab.find(k)
		if _, ok := want[k]; ok != (s != nil) {
			t.Fatalf("step %d: key %d present in table %v, in map %v", i, k, s != nil, ok)
		}
		if s == nil {
			s = tab.insert(k)
		}
		s.sum += v
		s.cnt++
		w := want[k]
		want[k] = [2]int64{w[0] + v, w[1] + 1}
	}
	if tab.n != len(want) {
		t.Fatalf("table holds %d keys, map %d", tab.n, len(want))
	}
	seen := 0
	for i := range tab.slots {
		s := &tab.slots[i]
		if s.flags&slotUsed == 0 {
			continue
		}
		seen++
		if w := want[s.key]; w != [2]int64{s.sum, s.cnt} {
			t.Fatalf("key %d: table (%d, %d), map %v", s.key, s.sum, s.cnt, w)
		}
	}
	if seen != len(want) || 5*tab.n > 4*len(tab.slots) {
		t.Fatalf("%d used slots of %d for %d keys", seen, len(tab.slots), len(want))
	}
}
