package mergetree

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"unsafe"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/record"
	"github.com/stratadb/strata/table/schema"
)

// sliceReader hands out a block held in memory in slices of random sizes.
type sliceReader struct {
	blk  *record.Block
	pos  int
	r    *rand.Rand
	most int
	err  error // returned instead of the second block, when set
	n    int
}

func (s *sliceReader) NextBlock() (*record.Block, error) {
	s.n++
	if s.err != nil && s.n == 2 {
		return nil, s.err
	}
	if s.pos >= s.blk.Len() {
		return nil, nil
	}
	end := min(s.blk.Len(), s.pos+s.r.Intn(s.most+1)) // empty blocks too
	b := s.blk.Slice(s.pos, end)
	s.pos = end
	return b, nil
}

// randomRuns returns runs of records over keys [0, keys) of the test
// schema, sequence numbers unique over all runs, each run sorted by (key,
// seq) with at most one record per key unless dups; the text values are
// substrings of pool.
func randomRuns(r *rand.Rand, s *schema.Schema, o schema.Options, nRuns, n, keys int, dups bool, pool string) []*record.Block {
	kinds := []types.RowKind{types.Insert, types.UpdateAfter, types.Delete, types.UpdateBefore}
	per := make([][]record.KV, nRuns)
	for seq := 1; seq <= n; seq++ {
		k := r.Intn(keys)
		row := types.Row{types.NewInt64(int64(k)), types.Null, types.Null}
		if r.Intn(4) > 0 {
			row[1] = types.NewInt64(int64(r.Intn(100)))
		}
		if r.Intn(4) > 0 {
			at := r.Intn(len(pool) - 20)
			row[2] = types.NewText(pool[at : at+r.Intn(20)])
		}
		kind := kinds[r.Intn(len(kinds))]
		if r.Intn(2) == 0 {
			kind = types.Insert
		}
		kv := record.KV{Key: types.EncodeKey(nil, row, s.KeyIndexes(), s.KeyTypes()), Seq: base.SeqNum(seq), Kind: kind, Row: row}
		run := r.Intn(nRuns)
		per[run] = append(per[run], kv)
	}
	runs := make([]*record.Block, nRuns)
	for i, kvs := range per {
		normalizeKVs(o, kvs)
		SortKVs(kvs)
		if !dups {
			// A data file holds one record per key: the run's own merge.
			kvs = MergeSorted(kvs, NewFunc(s, o), false)
		}
		runs[i] = record.BlockOf(s.Types(), true, kvs)
	}
	return runs
}

// TestMergeRunsSameAsMergeBlocks: the streaming merge of runs handed out
// in small slices gives exactly the records of the in-memory merge (keys,
// sequence numbers, kinds and values), under every merge engine, with
// and without dropping retractions, in output blocks that keep to the
// limits, holding at most two blocks per run when runs hold one record
// per key as data files do ([sorted-run]), and with strings of its own.
// Some trials give runs several records of a key, which the merge must
// order by sequence number across blocks and runs.
func TestMergeRunsSameAsMergeBlocks(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	pool := strings.Repeat("abcdefghijklmnopqrstuvwxyz0123456789", 20)
	poolLo := uintptr(unsafe.Pointer(unsafe.StringData(pool)))
	engines := []struct {
		engine schema.MergeEngine
		aggs   map[string]string
	}{
		{schema.Deduplicate, nil},
		{schema.PartialUpdate, nil},
		{schema.Aggregation, map[string]string{"a": "sum", "b": "last_value"}},
		{schema.Aggregation, nil},
		{schema.FirstRow, nil},
	}
	for trial := 0; trial < 200; trial++ {
		e := engines[trial%len(engines)]
		s, o := testSchema(t, e.engine, e.aggs)
		drop := r.Intn(2) == 0
		nRuns := 1 + r.Intn(7)
		dups := trial%3 == 0
		runs := randomRuns(r, s, o, nRuns, r.Intn(600), 1+r.Intn(300), dups, pool)
		f := NewFunc(s, o)
		want := MergeBlocks(s.Types(), runs, f, drop).KVs()

		readers := make([]RunReader, len(runs))
		for i, run := range runs {
			readers[i] = &sliceReader{blk: run, r: r, most: 1 + r.Intn(40)}
		}
		lim := Limits{Rows: 1 + r.Intn(150)}
		if r.Intn(2) == 0 {
			lim.Bytes = 1 + r.Intn(4000)
		}
		var got []record.KV
		blocks := 0
		stats, err := MergeRuns(s.Types(), readers, f, drop, lim, func(b *record.Block) error {
			blocks++
			if b.Len() == 0 || b.Len() > lim.Rows {
				t.Fatalf("trial %d: output block of %d records, limit %d", trial, b.Len(), lim.Rows)
			}
			if lim.Bytes > 0 {
				if head := b.Slice(0, max(0, b.Len()-mergeBatch)); head.Bytes() >= lim.Bytes && head.Len() > 0 {
					t.Fatalf("trial %d: block of %d bytes rolled past the byte limit %d by more than a batch", trial, b.Bytes(), lim.Bytes)
				}
			}
			for _, v := range b.Cols[2].Strs {
				if p := uintptr(unsafe.Pointer(unsafe.StringData(v))); len(v) > 0 && p >= poolLo && p < poolLo+uintptr(len(pool)) {
					t.Fatalf("trial %d: an output string points into the input's memory", trial)
				}
			}
			got = append(got, b.KVs()...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("trial %d (%s, drop %v, %d runs): %d records, want %d", trial, e.engine, drop, nRuns, len(got), len(want))
		}
		for i := range want {
			if string(got[i].Key) != string(want[i].Key) || got[i].Seq != want[i].Seq || got[i].Kind != want[i].Kind || got[i].Row.String() != want[i].Row.String() {
				t.Fatalf("trial %d (%s, drop %v): record %d = %v %d %s %s, want %v %d %s %s", trial, e.engine, drop, i,
					got[i].Key, got[i].Seq, got[i].Kind, got[i].Row, want[i].Key, want[i].Seq, want[i].Kind, want[i].Row)
			}
		}
		if stats.Records != len(want) || stats.Blocks != blocks {
			t.Fatalf("trial %d: stats %+v, %d records in %d blocks", trial, stats, len(want), blocks)
		}
		if !dups && stats.MaxHeld > 2*nRuns {
			t.Fatalf("trial %d: held %d input blocks at once over %d runs ([stream-memory])", trial, stats.MaxHeld, nRuns)
		}
	}
}

// TestMergeRunsError: a run's read error ends the merge with that error.
func TestMergeRunsError(t *testing.T) {
	s, o := testSchema(t, schema.Deduplicate, nil)
	r := rand.New(rand.NewSource(3))
	runs := randomRuns(r, s, o, 2, 200, 50, false, strings.Repeat("x", 64))
	boom := errors.New("boom")
	readers := []RunReader{&sliceReader{blk: runs[0], r: r, most: 5, err: boom}, &sliceReader{blk: runs[1], r: r, most: 5}}
	_, err := MergeRuns(s.Types(), readers, NewFunc(s, o), true, Limits{Rows: 10}, func(*record.Block) error { return nil })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the read error", err)
	}
	failEmit := fmt.Errorf("emit: %w", base.ErrClosed)
	readers = []RunReader{&sliceReader{blk: runs[0], r: r, most: 5}}
	_, err = MergeRuns(s.Types(), readers, NewFunc(s, o), true, Limits{Rows: 10}, func(*record.Block) error { return failEmit })
	if !errors.Is(err, base.ErrClosed) {
		t.Fatalf("err = %v, want the emit error", err)
	}
}
