package state

import (
	"fmt"
	"testing"

	"github.com/stratadb/strata/internal/types"
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
	// Pinned: persisted checkpoints depend on the hash never changing
	// within a KeyGroupHash version.
	if KeyGroupHash != 2 {
		t.Fatalf("KeyGroupHash %d: pin the new version's values here", KeyGroupHash)
	}
	if got := Hash64([]byte("strata")); got != 0xad0ae9505a08df00 {
		t.Fatalf("Hash64(strata) = %#x: the key-group hash changed", got)
	}
	if got := KeyGroupOf([]byte("strata"), 128); got != 0 {
		t.Fatalf("KeyGroupOf(strata, 128) = %d, want 0", got)
	}
	key := types.EncodeKey(nil, types.Row{types.NewInt64(42)}, []int{0}, []types.Type{types.Int64})
	if got := Hash64(key); got != 0xeeb4420af74b1987 {
		t.Fatalf("Hash64(BIGINT 42) = %#x: the key-group hash changed", got)
	}
}

// TestIntegerKeyGroupsSpread checks that BIGINT keys in the shapes jobs
// use (consecutive ids, multiples of a stride, timestamps a second apart)
// spread evenly over key groups and over two subtasks.
func TestIntegerKeyGroupsSpread(t *testing.T) {
	const maxPar, n = 128, 128000
	for _, c := range []struct {
		name        string
		first, step int64
	}{{"consecutive", 0, 1}, {"stride 1024", 0, 1024}, {"negative", -n, 1}, {"seconds in microseconds", 1_700_000_000_000_000, 1_000_000}} {
		groups := make([]int, maxPar)
		subtasks := make([]int, 2)
		var key []byte
		for i := range int64(n) {
			key = types.EncodeKey(key[:0], types.Row{types.NewInt64(c.first + i*c.step)}, []int{0}, []types.Type{types.Int64})
			g := KeyGroupOf(key, maxPar)
			groups[g]++
			subtasks[SubtaskOf(g, maxPar, 2)]++
		}
		for g, k := range groups {
			if k < 850 || k > 1150 {
				t.Fatalf("%s keys: group %d got %d of %d keys", c.name, g, k, n)
			}
		}
		if d := subtasks[0] - subtasks[1]; d < -2000 || d > 2000 {
			t.Fatalf("%s keys: subtasks got %v", c.name, subtasks)
		}
	}
}
