package write

import (
	"bytes"
	"math/rand"
	"sort"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/record"
)

// TestSeekKey checks the galloping seek against a binary search over the
// rest of the run, for every start position and for keys below, between,
// equal to and above the run's keys.
func TestSeekKey(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	run := record.NewBlock(nil, true, 0)
	for v := 0; v < 300; v++ {
		if r.Intn(3) == 0 {
			continue
		}
		for range 1 + r.Intn(3) { // repeated keys, as in a run of several versions
			run.AppendRow([]byte{byte(v >> 8), byte(v)}, 0, types.Insert, nil)
		}
	}
	for p := range run.Len() {
		for v := 0; v < 302; v++ {
			key := []byte{byte(v >> 8), byte(v)}
			if bytes.Compare(run.Key(p), key) >= 0 {
				continue // seekKey is called only when run[p] < key
			}
			want := p + sort.Search(run.Len()-p, func(i int) bool { return bytes.Compare(run.Key(p+i), key) >= 0 })
			if got := seekKey(run, p, key); got != want {
				t.Fatalf("seekKey(p=%d, key=%x) = %d, want %d", p, key, got, want)
			}
		}
	}
}
