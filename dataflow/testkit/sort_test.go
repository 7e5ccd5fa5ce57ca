package testkit

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSortRowsMatchesSlicesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var buf []sumRow
	shapes := []func() int64{
		func() int64 { return int64(r.IntN(100000)) },
		func() int64 { return r.Int64() - r.Int64() },
		func() int64 { return []int64{math.MinInt64, math.MaxInt64, 0, -1}[r.IntN(4)] },
		func() int64 { return int64(r.IntN(3000)) - 1500 },
	}
	for iter := range 200 {
		gen := shapes[iter%len(shapes)]
		seen := map[int64]bool{}
		var rows []sumRow
		for range r.IntN(5000) {
			k := gen()
			if !seen[k] {
				seen[k] = true
				rows = append(rows, sumRow{key: k, sum: k * 3, cnt: int64(len(rows))})
			}
		}
		want := slices.Clone(rows)
		slices.SortFunc(want, func(a, b sumRow) int { return cmp.Compare(a.key, b.key) })
		sortRows(rows, &buf)
		if !slices.Equal(rows, want) {
			t.Fatalf("iteration %d (%d rows): radix sort differs from slices.SortFunc", iter, len(rows))
		}
	}
}
