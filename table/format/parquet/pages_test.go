package parquet

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/record"
	"github.com/stratadb/strata/table/schema"
)

// directFile encodes rows of every type directChunk decodes, with NULLs in
// runs and scattered, long and empty strings, over several pages.
func directFile(t *testing.T, n int) (*schema.Schema, []byte, []record.KV) {
	t.Helper()
	s, err := schema.New([]schema.Field{
		{Name: "k", Type: types.Int64},
		{Name: "i16", Type: types.Int16, Nullable: true},
		{Name: "i32", Type: types.Int32, Nullable: true},
		{Name: "d", Type: types.Date, Nullable: true},
		{Name: "ts", Type: types.Timestamp, Nullable: true},
		{Name: "s", Type: types.Text, Nullable: true},
		{Name: "vc", Type: types.Varchar, Nullable: true},
		{Name: "f", Type: types.Float64, Nullable: true}, // not direct: the general reader's
	}, []string{"k"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(5))
	kvs := make([]record.KV, n)
	for i := range kvs {
		row := types.Row{types.NewInt64(int64(i*3 - 1000)), types.NewInt16(int16(r.Intn(1000) - 500)),
			types.NewInt32(r.Int31() - 1<<30), types.NewDate(int32(r.Intn(40000))),
			types.NewTimestamp(r.Int63()), types.NewText(strings.Repeat("ab", r.Intn(60))),
			types.NewVarchar(fmt.Sprint(r.Int63())), types.NewFloat64(r.Float64())}
		for c := 1; c < len(row); c++ {
			if (i/500)%4 == c%4 || r.Intn(10) == 0 {
				row[c] = types.Null
			}
		}
		kind := types.Insert
		if i%7 == 0 {
			kind = types.Delete
		}
		kvs[i] = record.KV{Seq: base.SeqNum(i + 1), Kind: kind, Row: row}
	}
	data, err := Encode(s, kvs)
	if err != nil {
		t.Fatal(err)
	}
	return s, data, kvs
}

// TestDirectChunk checks that directChunk decodes every column chunk of
// the types it takes (and refuses the others), and that DecodeBlock, which
// uses it, returns the rows written.
func TestDirectChunk(t *testing.T) {
	s, data, kvs := directFile(t, 20_000)
	f, err := pq.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.RowGroups()) != 1 || len(f.Metadata().RowGroups[0].Columns) != len(s.Fields)+2 {
		t.Fatalf("%d row groups", len(f.RowGroups()))
	}
	ps := f.Schema()
	ts := s.Types()
	out := record.NewBlockLen(ts, true, len(kvs))
	direct := 0
	for ci, path := range ps.Columns() {
		leaf, _ := ps.Lookup(path...)
		target := -1
		switch path[0] {
		case SeqColumn:
			target = -2
		case KindColumn:
			target = -3
		default:
			for i, fl := range s.Fields {
				if fl.Name == path[0] {
					target = i
				}
			}
		}
		err := directChunk(data, &f.Metadata().RowGroups[0].Columns[ci].MetaData, leaf.MaxDefinitionLevel, target, ts, out, 0, len(kvs))
		switch {
		case path[0] == "f":
			if !errors.Is(err, errNotDirect) {
				t.Fatalf("column f: %v, want errNotDirect", err)
			}
		case err != nil:
			t.Fatalf("column %s: %v", path[0], err)
		default:
			direct++
		}
	}
	if direct != len(s.Fields)+1 {
		t.Fatalf("%d columns decoded directly", direct)
	}
	for i, kv := range kvs {
		if out.Seqs[i] != kv.Seq || out.Kinds[i] != kv.Kind {
			t.Fatalf("row %d: seq %d kind %v, want %d %v", i, out.Seqs[i], out.Kinds[i], kv.Seq, kv.Kind)
		}
		for c := 0; c < len(ts)-1; c++ {
			if got := out.Cols[c].Get(i); types.Compare(got, kv.Row[c]) != 0 || got.IsNull() != kv.Row[c].IsNull() {
				t.Fatalf("row %d column %s: %v, want %v", i, s.Fields[c].Name, got, kv.Row[c])
			}
		}
	}
	got, err := Decode("f", data, s, s)
	if err != nil {
		t.Fatal(err)
	}
	for i, kv := range kvs {
		for c := range ts {
			if g := got[i].Row[c]; types.Compare(g, kv.Row[c]) != 0 || g.IsNull() != kv.Row[c].IsNull() {
				t.Fatalf("Decode row %d column %s: %v, want %v", i, s.Fields[c].Name, g, kv.Row[c])
			}
		}
	}
}

// TestDirectChunkCorrupt checks that damaged chunk bytes give errors (or,
// where the damage still decodes, values), never a panic.
func TestDirectChunkCorrupt(t *testing.T) {
	s, data, kvs := directFile(t, 3_000)
	f, err := pq.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	md := f.Metadata().RowGroups[0].Columns
	ps := f.Schema()
	r := rand.New(rand.NewSource(3))
	for ci, path := range ps.Columns() {
		if path[0] != "s" && path[0] != "k" && path[0] != "i32" {
			continue
		}
		leaf, _ := ps.Lookup(path...)
		target := 0
		for i, fl := range s.Fields {
			if fl.Name == path[0] {
				target = i
			}
		}
		m := md[ci].MetaData
		for range 300 {
			bad := bytes.Clone(data)
			at := m.DataPageOffset + r.Int63n(m.TotalCompressedSize)
			bad[at] ^= byte(1 + r.Intn(255))
			out := record.NewBlockLen(s.Types(), true, len(kvs))
			_ = directChunk(bad, &m, leaf.MaxDefinitionLevel, target, s.Types(), out, 0, len(kvs))
		}
		out := record.NewBlockLen(s.Types(), true, len(kvs))
		if err := directChunk(data[:m.DataPageOffset+m.TotalCompressedSize/2], &m, leaf.MaxDefinitionLevel, target, s.Types(), out, 0, len(kvs)); err == nil {
			t.Fatalf("column %s: a truncated file decoded", path[0])
		}
	}
}
