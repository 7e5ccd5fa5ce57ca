package compact

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/mergetree"
	"github.com/stratadb/strata/table/record"
	"github.com/stratadb/strata/table/schema"
	"github.com/stratadb/strata/table/store"
)

// bucketOf writes a bucket of nRuns sorted runs into st: the oldest a
// level-4 run of files of at most fileRows records with disjoint key
// ranges, the others level-0 files, newer and newer. Records are random
// upserts, deletes and lone -U over keys [0, keys) with a text value of
// about 100 bytes. It returns the files and the runs as blocks (for the
// in-memory merge).
func bucketOf(t *testing.T, r *rand.Rand, st *store.Store, sc *schema.Schema, o schema.Options, nRuns, perRun, keys, fileRows int) ([]manifest.DataFile, []*record.Block) {
	t.Helper()
	f := mergetree.NewFunc(sc, o)
	kinds := []types.RowKind{types.Insert, types.UpdateAfter, types.Delete, types.UpdateBefore}
	pad := strings.Repeat("p", 90)
	seq := base.SeqNum(0)
	var files []manifest.DataFile
	var runs []*record.Block
	for run := 0; run < nRuns; run++ {
		kvs := make([]record.KV, perRun)
		ks := make([]types.RowKind, perRun)
		for i := range kvs {
			seq++
			row := types.Row{types.NewInt64(int64(r.Intn(keys))), types.NewInt64(int64(r.Intn(50))), types.NewText(fmt.Sprint(pad, r.Intn(1000)))}
			if r.Intn(5) == 0 {
				row[1] = types.Null
			}
			if r.Intn(5) == 0 {
				row[2] = types.Null
			}
			ks[i] = types.Insert
			if r.Intn(3) == 0 {
				ks[i] = kinds[r.Intn(len(kinds))]
			}
			kvs[i] = record.KV{Key: types.EncodeKey(nil, row, sc.KeyIndexes(), sc.KeyTypes()), Seq: seq, Row: row}
		}
		mergetree.NormalizeInput(o, ks)
		for i := range kvs {
			kvs[i].Kind = ks[i]
		}
		mergetree.SortKVs(kvs)
		blk := record.BlockOf(sc.Types(), true, mergetree.MergeSorted(kvs, f, false))
		runs = append(runs, blk)
		level, size := int32(0), blk.Len()
		if run == 0 {
			level, size = 4, fileRows
		}
		for lo := 0; lo < blk.Len(); lo += size {
			df, err := st.WriteFile(0, "data", sc, blk.Slice(lo, min(lo+size, blk.Len())), level, base.Epoch(run+1))
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, df)
		}
	}
	return files, runs
}

// TestRewriteStreamsSameAsInMemory ([rewrite-memory],
// [compaction-preserves-reads]): a rewrite of many runs whose records are
// far larger than one output file's limit gives exactly the records of
// the in-memory merge of the runs (keys, sequence numbers, kinds and
// values), under the deduplicate, partial-update and aggregation engines,
// keeping retractions below the top level and dropping them at it; its
// files keep to the limits, in key order with disjoint ranges (one sorted
// run), and the merge held at most two decoded files per chain.
func TestRewriteStreamsSameAsInMemory(t *testing.T) {
	engines := []map[string]string{
		{"merge-engine": "deduplicate"},
		{"merge-engine": "partial-update"},
		{"merge-engine": "aggregation", "fields.a.aggregate-function": "sum", "fields.s.aggregate-function": "last_value"},
	}
	r := rand.New(rand.NewSource(42))
	for _, opts := range engines {
		for _, drop := range []bool{false, true} {
			fs := fileio.NewMem()
			writer := store.New(fs, "t")
			sc, err := schema.New([]schema.Field{
				{Name: "k", Type: types.Int64}, {Name: "a", Type: types.Int64, Nullable: true}, {Name: "s", Type: types.Text, Nullable: true},
			}, []string{"k"}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := writer.Schemas.Commit(sc); err != nil {
				t.Fatal(err)
			}
			o, _ := schema.ParseOptions(sc)
			files, runs := bucketOf(t, r, writer, sc, o, 12, 3000, 8000, 700)
			f := mergetree.NewFunc(sc, o)
			want := mergetree.MergeBlocks(sc.Types(), runs, f, drop)
			var inBytes int
			for _, run := range runs {
				inBytes += run.Bytes()
			}
			lim := mergetree.Limits{Rows: 5000, Bytes: 32 << 10}
			if inBytes < 50*lim.Bytes {
				t.Fatalf("input of %d bytes is not far larger than the output limit %d", inBytes, lim.Bytes)
			}
			// A fresh handle: inputs are decoded from storage, not found in
			// the writer's cache.
			st := store.New(fs, "t")
			u := mergetree.Unit{OutputLevel: 4, Files: files, DropDeletes: drop}
			res, stats, err := rewrite(st, sc, f, 0, u, lim, false)
			if err != nil {
				t.Fatal(err)
			}
			out := res.After
			name := fmt.Sprintf("%s drop=%v", opts["merge-engine"], drop)
			got := record.NewBlock(sc.Types(), true, 0)
			for i, df := range out {
				blk, err := st.ReadBlock(0, df, sc)
				if err != nil {
					t.Fatal(err)
				}
				if df.Level != 4 || df.Rows > int64(lim.Rows) || df.Rows == 0 {
					t.Fatalf("%s: file %d: level %d, %d rows", name, i, df.Level, df.Rows)
				}
				if i > 0 && bytes.Compare(out[i-1].MaxKey, df.MinKey) >= 0 {
					t.Fatalf("%s: file %d overlaps the one before", name, i)
				}
				got.Gather([]*record.Block{blk}, refsOf(blk.Len()))
			}
			if len(out) < 20 {
				t.Fatalf("%s: %d output files for %d input bytes at %d bytes a file", name, len(out), inBytes, lim.Bytes)
			}
			if err := sameRecords(got, want); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			chains := len(Chains(files))
			if chains != 12 || stats.MaxHeld > 2*chains {
				t.Fatalf("%s: %d chains, held %d decoded files at once", name, chains, stats.MaxHeld)
			}
			// A batch of records past the limit at most.
			if stats.MaxOutBytes > lim.Bytes+1024*200 {
				t.Fatalf("%s: an output block of %d bytes, limit %d", name, stats.MaxOutBytes, lim.Bytes)
			}
			if drop {
				for i, k := range got.Kinds {
					if k.IsRetract() {
						t.Fatalf("%s: record %d is a %s at the top level", name, i, k)
					}
				}
			}
		}
	}
}

func refsOf(n int) []record.Ref {
	refs := make([]record.Ref, n)
	for i := range refs {
		refs[i].Row = int32(i)
	}
	return refs
}

// sameRecords compares two blocks record by record.
func sameRecords(got, want *record.Block) error {
	if got.Len() != want.Len() {
		return fmt.Errorf("%d records, want %d", got.Len(), want.Len())
	}
	g, w := got.KVs(), want.KVs()
	for i := range w {
		if !bytes.Equal(g[i].Key, w[i].Key) || g[i].Seq != w[i].Seq || g[i].Kind != w[i].Kind || g[i].Row.String() != w[i].Row.String() {
			return fmt.Errorf("record %d: %v %d %s %s, want %v %d %s %s", i, g[i].Key, g[i].Seq, g[i].Kind, g[i].Row, w[i].Key, w[i].Seq, w[i].Kind, w[i].Row)
		}
	}
	return nil
}

// TestChains: files are split into as few chains of disjoint, ordered key
// ranges as their overlaps allow; empty files are left out.
func TestChains(t *testing.T) {
	file := func(name string, lo, hi byte, rows int64) manifest.DataFile {
		return manifest.DataFile{Name: name, MinKey: []byte{lo}, MaxKey: []byte{hi}, Rows: rows}
	}
	for _, tc := range []struct {
		files []manifest.DataFile
		want  string
	}{
		{nil, ""},
		{[]manifest.DataFile{file("a", 5, 9, 1), file("b", 0, 4, 1), file("c", 10, 12, 1)}, "b,a,c"},
		{[]manifest.DataFile{file("a", 0, 9, 1), file("b", 0, 9, 1), file("c", 3, 4, 1)}, "a | b | c"},
		// Touching ranges share a key: they cannot follow each other.
		{[]manifest.DataFile{file("a", 0, 5, 1), file("b", 5, 9, 1)}, "a | b"},
		{[]manifest.DataFile{file("l0", 2, 8, 1), file("x", 0, 3, 1), file("y", 4, 6, 1), file("z", 7, 9, 1), file("e", 0, 0, 0)}, "x,y,z | l0"},
	} {
		var parts []string
		for _, c := range Chains(tc.files) {
			var names []string
			for _, f := range c {
				names = append(names, f.Name)
			}
			parts = append(parts, strings.Join(names, ","))
		}
		if got := strings.Join(parts, " | "); got != tc.want {
			t.Errorf("Chains(%v) = %q, want %q", tc.files, got, tc.want)
		}
	}
}
