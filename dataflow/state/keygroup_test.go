package state

import (
	"fmt"
	"testing"
)

func TestRangesPartitionKeyGroups(t *testing.T) {
	for _, maxPar := range []int{1, 7, 128, 1000} {
		for p := 1; p <= maxPar && p <= 13; p++ {
			next := 0
			for i := range p {
				r := RangeOf(i, p, maxPar)
				if int(r.First) != next {
					t.Fatalf("max %d p %d subtask %d starts at %d, want %d", maxPar, p, i, r.First, next)
				}
				for g := int(r.First); g <= int(r.Last); g++ {
					if got := SubtaskOf(KeyGroup(g), maxPar, p); got != i {
						t.Fatalf("max %d p %d: group %d in range of %d but SubtaskOf says %d", maxPar, p, g, i, got)
					}
				}
				next = int(r.Last) + 1
			}
			if next != maxPar {
				t.Fatalf("max %d p %d: ranges end at %d", maxPar, p, next)
			}
		}
	}
}

func TestKeyGroupsSpread(t *testing.T) {
	const maxPar = 16
	counts := make([]int, maxPar)
	for i := range 16000 {
		counts[KeyGroupOf(fmt.Appendf(nil, "key-%d", i), maxPar)]++
	}
	for g, c := range counts {
		if c < 800 || c > 1200 {
			t.Fatalf("group %d got %d of 16000 keys; the hash does not spread", g, c)
		}
	}
	// Pinned: persisted checkpoints depend on the hash never changing.
	if got := Hash64([]byte("strata")); got != 0x5a4f965e8a9b0ac3 {
		t.Fatalf("Hash64(strata) = %#x: the key-group hash changed", got)
	}
	if got := KeyGroupOf([]byte("strata"), 128); got != 67 {
		t.Fatalf("KeyGroupOf(strata, 128) = %d, want 67", got)
	}
}
