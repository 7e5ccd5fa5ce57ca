package mergetree

import (
	"bytes"
	"math/rand"
	"slices"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/record"
)

// TestBlockIteratorOrder walks runs of keys of every length from 0 to 12
// bytes, drawn from a few byte values (0 among them, so that keys are often
// prefixes of one another and share their first 8 bytes), and checks that
// the records come out in (key, seq) order under bytes.Compare, each key's
// together, none lost.
func TestBlockIteratorOrder(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	type rec struct {
		key []byte
		seq base.SeqNum
	}
	for round := range 50 {
		var all []rec
		var runs []*record.Block
		seq := base.SeqNum(0)
		for range 1 + r.Intn(6) {
			var recs []rec
			for range r.Intn(200) {
				k := make([]byte, r.Intn(13))
				for i := range k {
					k[i] = []byte{0, 1, 0x7f, 0xff}[r.Intn(4)]
				}
				seq++
				recs = append(recs, rec{k, seq})
			}
			slices.SortFunc(recs, func(a, b rec) int {
				if c := bytes.Compare(a.key, b.key); c != 0 {
					return c
				}
				return int(a.seq) - int(b.seq)
			})
			blk := record.NewBlock([]types.Type{types.Int64}, true, len(recs))
			for _, x := range recs {
				blk.AppendRow(x.key, x.seq, types.Insert, types.Row{types.NewInt64(int64(x.seq))})
			}
			runs = append(runs, blk)
			all = append(all, recs...)
		}
		slices.SortFunc(all, func(a, b rec) int {
			if c := bytes.Compare(a.key, b.key); c != 0 {
				return c
			}
			return int(a.seq) - int(b.seq)
		})
		it := NewBlockIterator(runs)
		var got []rec
		var prev []byte
		for {
			group := it.NextKey(nil)
			if len(group) == 0 {
				break
			}
			key := runs[group[0].Block].Key(int(group[0].Row))
			if prev != nil && bytes.Compare(prev, key) >= 0 {
				t.Fatalf("round %d: key %x after %x", round, key, prev)
			}
			prev = key
			for _, g := range group {
				b := runs[g.Block]
				if !bytes.Equal(b.Key(int(g.Row)), key) {
					t.Fatalf("round %d: group of %x holds %x", round, key, b.Key(int(g.Row)))
				}
				got = append(got, rec{b.Key(int(g.Row)), b.Seqs[g.Row]})
			}
		}
		if len(got) != len(all) {
			t.Fatalf("round %d: %d records, want %d", round, len(got), len(all))
		}
		for i := range all {
			if !bytes.Equal(got[i].key, all[i].key) || got[i].seq != all[i].seq {
				t.Fatalf("round %d, record %d: %x/%d, want %x/%d", round, i, got[i].key, got[i].seq, all[i].key, all[i].seq)
			}
		}
	}
}
