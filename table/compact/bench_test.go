package compact

import (
	"fmt"
	"math/rand"
	"runtime"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/mergetree"
	"github.com/stratadb/strata/table/record"
	"github.com/stratadb/strata/table/schema"
	"github.com/stratadb/strata/table/store"
)

// BenchmarkRewrite compares the streaming rewrite with the in-memory one
// it replaced (decode every input, MergeBlocks, cut the result into
// files), on a bucket of one large level-4 run of 16 MiB files and
// level-0 runs of upserts over the same keys, inputs read from storage
// (a fresh store each time). It reports input records per second and
// the peak of the heap in use during a rewrite above what it was before
// (peak-heap-MB, sampled every few milliseconds): the in-memory rewrite's
// grows with the bucket, the streaming one's stays near (number of runs +
// 1) × TargetFileBytes ([rewrite-memory]).
func BenchmarkRewrite(b *testing.B) {
	for _, engine := range []string{"deduplicate", "partial-update"} {
		fs := fileio.NewMem()
		writer := store.New(fs, "t")
		sc, err := schema.New([]schema.Field{
			{Name: "k", Type: types.Int64}, {Name: "a", Type: types.Int64, Nullable: true}, {Name: "s", Type: types.Text, Nullable: true},
		}, []string{"k"}, map[string]string{"merge-engine": engine})
		if err != nil {
			b.Fatal(err)
		}
		if err := writer.Schemas.Commit(sc); err != nil {
			b.Fatal(err)
		}
		o, _ := schema.ParseOptions(sc)
		files, runs := benchBucket(b, writer, sc, o)
		rows := 0
		for _, r := range runs {
			rows += r.Len()
		}
		u := mergetree.Unit{OutputLevel: 4, Files: files, DropDeletes: true}
		b.Run(engine+"/streaming", func(b *testing.B) {
			peak := peakHeap(b, func() {
				st := store.New(fs, "t")
				st.CacheRows = 0 // the outputs' cache entries are not the rewrite's
				if _, err := Rewrite(st, sc, mergetree.NewFunc(sc, o), 0, u, o.TargetFileRows); err != nil {
					b.Fatal(err)
				}
			})
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(peak, "peak-heap-MB")
		})
		b.Run(engine+"/in-memory", func(b *testing.B) {
			peak := peakHeap(b, func() {
				st := store.New(fs, "t")
				st.CacheRows = 0
				blocks := make([]*record.Block, 0, len(files))
				for _, f := range files {
					blk, err := st.ReadBlockOnce(0, f, sc)
					if err != nil {
						b.Fatal(err)
					}
					blocks = append(blocks, blk)
				}
				merged := mergetree.MergeBlocks(sc.Types(), blocks, mergetree.NewFunc(sc, o), true)
				for lo := 0; lo < merged.Len(); lo += o.TargetFileRows {
					if _, err := st.WriteFile(0, "data", sc, merged.Slice(lo, min(lo+o.TargetFileRows, merged.Len())), 4, 1); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(peak, "peak-heap-MB")
		})
	}
}

// peakHeap runs op b.N times and returns the largest heap in use seen
// during a run above the heap in use before it, in MB.
func peakHeap(b *testing.B, op func()) float64 {
	var peak uint64
	for range b.N {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before, top := ms.HeapInuse, ms.HeapInuse
		done := make(chan struct{})
		sampled := make(chan uint64)
		go func() {
			top := uint64(0)
			t := time.NewTicker(2 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-done:
					sampled <- top
					return
				case <-t.C:
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					top = max(top, ms.HeapInuse)
				}
			}
		}()
		op()
		close(done)
		top = max(top, <-sampled)
		peak = max(peak, top-before)
	}
	return float64(peak) / (1 << 20)
}

// benchBucket writes 1.6M records over 1.6M keys as a level-4 run, then
// 4 level-0 runs of 50K upserts each.
func benchBucket(b *testing.B, st *store.Store, sc *schema.Schema, o schema.Options) ([]manifest.DataFile, []*record.Block) {
	r := rand.New(rand.NewSource(1))
	f := mergetree.NewFunc(sc, o)
	pad := fmt.Sprintf("%090d", 0)
	seq := base.SeqNum(0)
	var files []manifest.DataFile
	var runs []*record.Block
	for run := 0; run < 5; run++ {
		n, level := 50_000, int32(0)
		if run == 0 {
			n, level = keys, 4
		}
		kvs := make([]record.KV, n)
		for i := range kvs {
			seq++
			k := int64(i)
			if run > 0 {
				k = int64(r.Intn(keys))
			}
			row := types.Row{types.NewInt64(k), types.NewInt64(int64(seq)), types.NewText(pad)}
			kvs[i] = record.KV{Key: types.EncodeKey(nil, row, sc.KeyIndexes(), sc.KeyTypes()), Seq: seq, Kind: types.Insert, Row: row}
		}
		mergetree.SortKVs(kvs)
		blk := record.BlockOf(sc.Types(), true, mergetree.MergeSorted(kvs, f, false))
		runs = append(runs, blk)
		var lim mergetree.Limits
		if level == 4 {
			lim = mergetree.Limits{Rows: o.TargetFileRows, Bytes: TargetFileBytes}
		} else {
			lim = mergetree.Limits{Rows: blk.Len()}
		}
		// Cut the run as a rewrite would.
		_, err := mergetree.MergeRuns(sc.Types(), []mergetree.RunReader{&oneBlock{blk}}, f, false, lim, func(out *record.Block) error {
			df, err := st.WriteFile(0, "data", sc, out, level, base.Epoch(run+1))
			files = append(files, df)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	return files, runs
}

// keys is the bench bucket's number of keys, all in its level-4 run.
const keys = 1_600_000

type oneBlock struct{ blk *record.Block }

func (o *oneBlock) NextBlock() (*record.Block, error) {
	b := o.blk
	o.blk = nil
	return b, nil
}
