package mergetree

import (
	"fmt"
	"math/rand"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/record"
	"github.com/stratadb/strata/table/schema"
)

// randomKey returns keys that often share long prefixes and differ only in
// length or in bytes past the 16th, the cases the sort's prefix words do
// not decide on their own.
func randomKey(r *rand.Rand) []byte {
	n := []int{0, 1, 8, 9, 15, 16, 17, 24, 40}[r.Intn(9)]
	k := make([]byte, n)
	for i := range k {
		if r.Intn(4) == 0 {
			k[i] = byte(r.Intn(3))
		}
	}
	return k
}

// TestSortMergeEqualsSortThenMerge: SortMerge gives record for record what
// SortKVs followed by MergeSorted gives, for every engine, and leaves its
// input in arrival order.
func TestSortMergeEqualsSortThenMerge(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	kinds := []types.RowKind{types.Insert, types.UpdateAfter, types.Delete, types.UpdateBefore}
	for _, engine := range []schema.MergeEngine{schema.Deduplicate, schema.PartialUpdate, schema.Aggregation, schema.FirstRow} {
		s, o := testSchema(t, engine, map[string]string{"a": "sum", "b": "last_value"})
		for trial := 0; trial < 200; trial++ {
			keys := make([][]byte, 1+r.Intn(20))
			for i := range keys {
				keys[i] = randomKey(r)
			}
			in := make([]record.KV, r.Intn(200))
			for i := range in {
				row := types.Row{types.NewInt64(1), types.Null, types.Null}
				if r.Intn(3) > 0 {
					row[1] = types.NewInt64(int64(r.Intn(10)))
				}
				if r.Intn(3) > 0 {
					row[2] = types.NewText(fmt.Sprint(r.Intn(5)))
				}
				in[i] = record.KV{Key: keys[r.Intn(len(keys))], Seq: base.SeqNum(i + 1), Kind: kinds[r.Intn(4)], Row: row}
			}
			// Sequence numbers need not follow positions.
			r.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
			normalizeKVs(o, in)
			buf := record.BlockOf(s.Types(), true, in)
			for _, drop := range []bool{false, true} {
				got := SortMerge(buf, NewFunc(s, o), drop).KVs()
				sorted := append([]record.KV(nil), in...)
				SortKVs(sorted)
				want := MergeSorted(sorted, NewFunc(s, o), drop)
				if len(got) != len(want) {
					t.Fatalf("%s drop=%v: %d records, want %d", engine, drop, len(got), len(want))
				}
				for i := range got {
					g, w := got[i], want[i]
					if string(g.Key) != string(w.Key) || g.Seq != w.Seq || g.Kind != w.Kind || g.Row.String() != w.Row.String() {
						t.Fatalf("%s drop=%v record %d: got %x/%d/%s/%s, want %x/%d/%s/%s", engine, drop, i,
							g.Key, g.Seq, g.Kind, g.Row, w.Key, w.Seq, w.Kind, w.Row)
					}
				}
				for i := range in {
					if buf.Seqs[i] != in[i].Seq || string(buf.Key(i)) != string(in[i].Key) {
						t.Fatalf("SortMerge reordered its input at %d", i)
					}
				}
			}
		}
	}
}

// TestMergeTwoEqualsHeap: the two-run merge gives what the heap merge
// gives (forced by a third, empty run), for every engine, with runs that
// hold several records of a key and keys in only one of the runs.
func TestMergeTwoEqualsHeap(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	kinds := []types.RowKind{types.Insert, types.UpdateAfter, types.Delete, types.UpdateBefore}
	for _, engine := range []schema.MergeEngine{schema.Deduplicate, schema.PartialUpdate, schema.Aggregation, schema.FirstRow} {
		s, o := testSchema(t, engine, map[string]string{"a": "sum", "b": "last_value"})
		for trial := 0; trial < 200; trial++ {
			var runs [2][]record.KV
			seq := 0
			for i := 0; i < r.Intn(100); i++ {
				seq++
				row := types.Row{types.NewInt64(1), types.NewInt64(int64(r.Intn(10))), types.Null}
				w := r.Intn(2)
				runs[w] = append(runs[w], record.KV{Key: randomKey(r), Seq: base.SeqNum(seq), Kind: kinds[r.Intn(4)], Row: row})
			}
			SortKVs(runs[0])
			SortKVs(runs[1])
			for _, drop := range []bool{false, true} {
				a, b := record.BlockOf(s.Types(), true, runs[0]), record.BlockOf(s.Types(), true, runs[1])
				got := MergeBlocks(s.Types(), []*record.Block{a, b}, NewFunc(s, o), drop).KVs()
				empty := record.NewBlock(s.Types(), true, 0)
				// The heap: three runs that hold records.
				third := record.NewBlock(s.Types(), true, 0)
				third.AppendRow([]byte{0xff, 0xff, 0xff}, base.SeqNum(1000), types.Delete, types.Row{types.NewInt64(1), types.Null, types.Null})
				want := MergeBlocks(s.Types(), []*record.Block{a, b, empty, third}, NewFunc(s, o), drop).KVs()
				if len(want) > 0 && string(want[len(want)-1].Key) == "\xff\xff\xff" {
					want = want[:len(want)-1]
				}
				// The sorted merge of all records is the reference for both.
				all := append(append([]record.KV(nil), runs[0]...), runs[1]...)
				SortKVs(all)
				if ref := MergeSorted(all, NewFunc(s, o), drop); len(ref) != len(got) {
					t.Fatalf("%s drop=%v: %d records, the sorted merge has %d", engine, drop, len(got), len(ref))
				}
				if len(got) != len(want) {
					t.Fatalf("%s drop=%v: %d records, want %d", engine, drop, len(got), len(want))
				}
				for i := range got {
					g, w := got[i], want[i]
					if string(g.Key) != string(w.Key) || g.Seq != w.Seq || g.Kind != w.Kind || g.Row.String() != w.Row.String() {
						t.Fatalf("%s drop=%v record %d: got %x/%d/%s/%s, want %x/%d/%s/%s", engine, drop, i,
							g.Key, g.Seq, g.Kind, g.Row, w.Key, w.Seq, w.Kind, w.Row)
					}
				}
			}
		}
	}
}

// TestSortEntries: the quicksort orders entries as compareEntries does, on
// random, sorted, reversed and few-distinct-keys inputs, and also when its
// depth bound sends ranges to the fallback sort; so does sortBuffer's
// radix sort (depth -1).
func TestSortEntries(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for trial := 0; trial < 40; trial++ {
		n := r.Intn(5000)
		kvs := make([]record.KV, n)
		for i := range kvs {
			switch trial % 4 {
			case 0:
				kvs[i].Key = randomKey(r)
			case 1:
				kvs[i].Key = types.EncodeKey(nil, types.Row{types.NewInt64(int64(i))}, []int{0}, []types.Type{types.Int64})
			case 2:
				kvs[i].Key = types.EncodeKey(nil, types.Row{types.NewInt64(int64(n - i))}, []int{0}, []types.Type{types.Int64})
			default:
				kvs[i].Key = []byte{byte(r.Intn(3))}
			}
			kvs[i].Seq = base.SeqNum(r.Int63())
		}
		blk := record.BlockOf(nil, true, kvs)
		for _, depth := range []int{64, 1, 0, -1} {
			e := make([]sortEntry, n)
			for i := range kvs {
				e[i] = newSortEntry(kvs[i].Key, kvs[i].Seq, i)
			}
			if depth < 0 {
				sortBuffer(blk, e) // radix for n >= radixMin
			} else {
				sortEntries(blk, e, depth)
			}
			for i := 1; i < n; i++ {
				a, b := &kvs[e[i-1].idx], &kvs[e[i].idx]
				if !record.Less(a, b) {
					t.Fatalf("trial %d depth %d: entry %d (%x/%d) not before %d (%x/%d)", trial, depth, i-1, a.Key, a.Seq, i, b.Key, b.Seq)
				}
			}
		}
	}
}

// BenchmarkSortMerge measures SortMerge of a write buffer of the table
// bench's shape (64K upserts of random BIGINT keys, 100-byte rows).
func BenchmarkSortMerge(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	pad := types.NewText(strings.Repeat("x", 84))
	ts := []types.Type{types.Int64, types.Int64, types.Text}
	buf := record.NewBlock(ts, true, 1<<16)
	for i := range 1 << 16 {
		row := types.Row{types.NewInt64(int64(r.Intn(1 << 20))), types.NewInt64(int64(i)), pad}
		buf.AppendRow(types.EncodeKey(nil, row, []int{0}, ts[:1]), base.SeqNum(i+1), types.UpdateAfter, row)
	}
	f := &dedup{}
	b.ResetTimer()
	var ru0, ru1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	for range b.N {
		SortMerge(buf, f, false)
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	b.ReportMetric(float64(b.N*buf.Len())/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(b.N*buf.Len())/cpu.Seconds(), "rows/cpu-s")
}
