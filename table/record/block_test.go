package record

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"unsafe"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

var testTypes = []types.Type{types.Int64, types.Bool, types.Float64, types.Numeric, types.Text, types.Interval, types.Date}

func randomKV(r *rand.Rand, seq int) KV {
	row := types.Row{
		types.NewInt64(r.Int63n(100) - 50), types.NewBool(r.Intn(2) == 0), types.NewFloat64(r.Float64()),
		types.NewNumeric(apd.New(r.Int63n(1000), -2)), types.NewText(fmt.Sprint("t", r.Intn(9))),
		types.NewInterval(types.IntervalValue{Months: int32(r.Intn(3)), Days: -int32(r.Intn(40)), Micros: r.Int63n(1e9)}),
		types.NewDate(int32(r.Intn(1000))),
	}
	for i := range row {
		if r.Intn(5) == 0 {
			row[i] = types.Null
		}
	}
	key := make([]byte, r.Intn(12))
	r.Read(key)
	return KV{Key: key, Seq: base.SeqNum(seq), Kind: types.RowKind(r.Intn(4)), Row: row}
}

func sameKV(a, b KV) bool {
	return bytes.Equal(a.Key, b.Key) && a.Seq == b.Seq && a.Kind == b.Kind && a.Row.String() == b.Row.String()
}

// TestBlockRoundTrip: records put in a block (AppendKV, or Set into a
// block of zero records) come back unchanged from KV and KVs, and Slice,
// Gather and SameRow agree with the records they stand for.
func TestBlockRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for trial := 0; trial < 50; trial++ {
		kvs := make([]KV, r.Intn(40))
		for i := range kvs {
			kvs[i] = randomKV(r, i+1)
		}
		b := BlockOf(testTypes, true, kvs)
		set := NewBlockLen(testTypes, true, len(kvs))
		for i, kv := range kvs {
			set.Seqs[i], set.Kinds[i] = kv.Seq, kv.Kind
			set.Keys = append(set.Keys, kv.Key...)
			set.KeyOffs[i+1] = len(set.Keys)
			for c, d := range kv.Row {
				set.Set(c, i, d)
			}
		}
		got, got2 := b.KVs(), set.KVs()
		for i := range kvs {
			if !sameKV(got[i], kvs[i]) || !sameKV(got2[i], kvs[i]) || !sameKV(b.KV(i), kvs[i]) {
				t.Fatalf("record %d: %v / %v, want %v", i, got[i], got2[i], kvs[i])
			}
		}
		if len(kvs) == 0 {
			continue
		}
		lo := r.Intn(len(kvs))
		hi := lo + r.Intn(len(kvs)-lo+1)
		for i, kv := range b.Slice(lo, hi).KVs() {
			if !sameKV(kv, kvs[lo+i]) {
				t.Fatalf("slice record %d: %v, want %v", i, kv, kvs[lo+i])
			}
		}
		refs := make([]Ref, r.Intn(30))
		for i := range refs {
			refs[i] = Ref{Block: int32(r.Intn(2)), Row: int32(r.Intn(len(kvs)))}
		}
		g := NewBlock(testTypes, true, 0)
		g.Gather([]*Block{b, set}, refs)
		vals := types.NewChunk(testTypes, 0)
		GatherValues(vals, []*Block{set, b}, refs)
		for i, ref := range refs {
			want := kvs[ref.Row]
			if !sameKV(g.KV(i), want) || vals.Row(i).String() != want.Row.String() || vals.Kind(i) != types.Insert {
				t.Fatalf("gathered record %d: %v / %v, want %v", i, g.KV(i), vals.Row(i), want)
			}
			j := int(refs[r.Intn(len(refs))].Row)
			if SameRow(g, i, b, j) != equalRows(want.Row, kvs[j].Row) {
				t.Fatalf("SameRow(%v, %v) = %v", want.Row, kvs[j].Row, SameRow(g, i, b, j))
			}
		}
	}
}

// TestCompareKeys: CompareKeys orders keys as bytes.Compare does.
func TestCompareKeys(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	for range 20000 {
		a, b := make([]byte, r.Intn(14)), make([]byte, r.Intn(14))
		for i := range a {
			a[i] = byte(r.Intn(3))
		}
		for i := range b {
			b[i] = byte(r.Intn(3))
		}
		if r.Intn(3) == 0 {
			b = append(append([]byte(nil), a...), b[:r.Intn(len(b)+1)]...)
		}
		if got, want := CompareKeys(a, b), bytes.Compare(a, b); got != want {
			t.Fatalf("CompareKeys(%x, %x) = %d, want %d", a, b, got, want)
		}
	}
}

func equalRows(a, b types.Row) bool {
	for i := range a {
		if a[i].IsNull() || b[i].IsNull() {
			if a[i].IsNull() != b[i].IsNull() {
				return false
			}
			continue
		}
		if types.Compare(a[i], b[i]) != 0 {
			return false
		}
	}
	return true
}

// TestOwnStringsCopiesOutOfSharedBuffers: the copy has the same values,
// none of them inside the source's buffer, and the source is unchanged; a
// run of one string in memory is copied once.
func TestOwnStringsCopiesOutOfSharedBuffers(t *testing.T) {
	src := strings.Repeat("abcdefghij", 100)
	vals := []string{src[0:3], src[10:14], src[20:25], src[30:36], src[30:36], "", src[30:36], src[31:37], src[0:3], src[31:37]}
	b := NewBlock([]types.Type{types.Int64, types.Text}, true, len(vals))
	for i, v := range vals {
		row := types.Row{types.NewInt64(int64(i)), types.NewText(v)}
		b.AppendRow([]byte{byte(i)}, base.SeqNum(i+1), types.Insert, row)
	}
	c := b.OwnStrings()
	lo := uintptr(unsafe.Pointer(unsafe.StringData(src)))
	hi := lo + uintptr(len(src))
	// One string met again among the last four distinct ones shares its
	// copy; one met again after four others is copied again.
	if s := c.Cols[1].Strs; unsafe.StringData(s[3]) != unsafe.StringData(s[6]) || unsafe.StringData(s[7]) != unsafe.StringData(s[9]) ||
		unsafe.StringData(s[0]) == unsafe.StringData(s[8]) || s[7] != "bcdefg" || s[5] != "" || s[8] != "abc" {
		t.Fatalf("repeated strings not shared, or others are: %q", s)
	}
	for i := range vals {
		if got, want := c.Cols[1].Strs[i], b.Cols[1].Strs[i]; got != want {
			t.Fatalf("row %d: %q, want %q", i, got, want)
		}
		if p := uintptr(unsafe.Pointer(unsafe.StringData(c.Cols[1].Strs[i]))); p >= lo && p < hi {
			t.Fatalf("row %d still points into the source buffer", i)
		}
		if p := uintptr(unsafe.Pointer(unsafe.StringData(b.Cols[1].Strs[i]))); vals[i] != "" && (p < lo || p >= hi) {
			t.Fatalf("row %d of the source was changed", i)
		}
	}
	if c.Cols[0].Ints[3] != 3 || string(c.Key(2)) != "\x02" || c.Seqs[1] != 2 {
		t.Fatalf("other columns not shared: %v %q %v", c.Cols[0].Ints, c.Key(2), c.Seqs)
	}
	ints := NewBlock([]types.Type{types.Int64}, false, 1)
	if ints.OwnStrings() != ints {
		t.Fatal("a block without strings was copied")
	}
}

// TestBytes: Bytes counts each record's fixed-size slots and its key and
// string bytes, so that a block of longer strings weighs exactly their
// extra bytes more, and a slice weighs its share.
func TestBytes(t *testing.T) {
	ts := []types.Type{types.Int64, types.Text}
	mk := func(pad int) *Block {
		b := NewBlock(ts, true, 0)
		for i := 0; i < 10; i++ {
			b.AppendRow([]byte{1, byte(i)}, base.SeqNum(i+1), types.Insert, types.Row{types.NewInt64(int64(i)), types.NewText(strings.Repeat("x", pad))})
		}
		return b
	}
	short, long := mk(1), mk(101)
	if d := long.Bytes() - short.Bytes(); d != 10*100 {
		t.Fatalf("10 strings 100 bytes longer weigh %d more, want 1000", d)
	}
	// kind 1 + seq 8 + key offset 8 + key 2 + (null 1 + int 8) + (null 1 + header 16 + 1 byte)
	if want := 10 * (1 + 8 + 8 + 2 + 9 + 17 + 1); short.Bytes() != want {
		t.Fatalf("Bytes = %d, want %d", short.Bytes(), want)
	}
	if got := short.Slice(2, 7).Bytes(); got != short.Bytes()/2 {
		t.Fatalf("half a block weighs %d, want %d", got, short.Bytes()/2)
	}
	if (&Block{}).Bytes() != 0 {
		t.Fatal("an empty block weighs something")
	}
}

// TestOwnStringsFrom: the strings from lo on are copied into a new buffer
// (equal values, different memory), those before lo and NULLs are left.
func TestOwnStringsFrom(t *testing.T) {
	src := strings.Repeat("abcdefgh", 4)
	b := NewBlock([]types.Type{types.Text}, false, 0)
	for i := 0; i < 4; i++ {
		b.AppendRow(nil, base.SeqNum(i+1), types.Insert, types.Row{types.NewText(src[i*8 : i*8+8])})
	}
	b.AppendRow(nil, 5, types.Insert, types.Row{types.Null})
	b.OwnStringsFrom(2)
	within := func(s string) bool {
		p, lo := uintptr(unsafe.Pointer(unsafe.StringData(s))), uintptr(unsafe.Pointer(unsafe.StringData(src)))
		return p >= lo && p < lo+uintptr(len(src))
	}
	for i, s := range b.Cols[0].Strs {
		if i < 4 && s != "abcdefgh" {
			t.Fatalf("string %d = %q", i, s)
		}
		if i < 2 && !within(s) || i >= 2 && i < 4 && within(s) {
			t.Fatalf("string %d: shares the source: %v", i, within(s))
		}
	}
	if !b.Cols[0].Nulls[4] || b.Cols[0].Strs[4] != "" {
		t.Fatal("the NULL changed")
	}
}

// TestTrim: a block grown by appending is copied into slices of its
// length, with the same records; a block without spare room is returned
// as it is.
func TestTrim(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	b := NewBlock(testTypes, true, 0)
	for i := 0; i < 100; i++ {
		kv := randomKV(r, i+1)
		b.AppendKV(&kv)
	}
	tr := b.Trim()
	if tr == b {
		t.Fatal("a grown block was not trimmed")
	}
	if cap(tr.Seqs) > 100+100/8 || cap(tr.Cols[0].Ints) > 100+100/8 || cap(tr.Cols[4].Strs) > 100+100/8 {
		t.Fatalf("trimmed capacities %d %d %d", cap(tr.Seqs), cap(tr.Cols[0].Ints), cap(tr.Cols[4].Strs))
	}
	want, got := b.KVs(), tr.KVs()
	for i := range want {
		if !sameKV(want[i], got[i]) {
			t.Fatalf("record %d: %v, want %v", i, got[i], want[i])
		}
	}
	if tr.Trim() != tr {
		t.Fatal("a trimmed block was copied again")
	}
}
