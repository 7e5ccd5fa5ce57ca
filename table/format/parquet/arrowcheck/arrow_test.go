package arrowcheck

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/format/parquet"
	"github.com/stratadb/strata/table/schema"
)

var fields = []schema.Field{
	{Name: "k", Type: types.Int64},
	{Name: "n", Type: types.Int32, Nullable: true},
	{Name: "s", Type: types.Text, Nullable: true},
	{Name: "f", Type: types.Float64, Nullable: true},
	{Name: "b", Type: types.Bool, Nullable: true},
	{Name: "d", Type: types.Date, Nullable: true},
	{Name: "ts", Type: types.Timestamp, Nullable: true},
	{Name: "u", Type: types.UUID, Nullable: true},
	{Name: "num", Type: types.Numeric, Nullable: true},
}

func TestArrowOpensEveryFile(t *testing.T) {
	fs := fileio.NewMem()
	tb, err := table.Create(fs, "wh/db/t", fields, []string{"k"}, map[string]string{
		"bucket": "3", "write-buffer-rows": "7", "num-sorted-run.compaction-trigger": "2"})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := tb.NewWriter("job")
	r := rand.New(rand.NewSource(5))
	kinds := []types.RowKind{types.Insert, types.UpdateAfter, types.Delete}
	for e := base.Epoch(1); e <= 12; e++ {
		for range 20 {
			k := r.Intn(40)
			row := types.Row{types.NewInt64(int64(k)), types.NewInt32(int32(r.Intn(100))), types.NewText(fmt.Sprint("s", r.Intn(9))),
				types.NewFloat64(r.Float64()), types.NewBool(r.Intn(2) == 0), types.NewDate(int32(r.Intn(20000))),
				types.NewTimestamp(int64(r.Intn(1 << 40))), types.NewUUID([16]byte{byte(k)}), types.Null}
			if r.Intn(4) == 0 {
				row[2] = types.Null
			}
			if err := w.Write(e, kinds[r.Intn(3)], row); err != nil {
				t.Fatal(err)
			}
		}
		msgs, err := w.PrepareCommit(e)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tb.Commit(msgs); err != nil {
			t.Fatal(err)
		}
	}
	sc, _ := tb.Schema()
	dirs, _ := fs.ListDirs("wh/db/t")
	checked := 0
	for _, d := range dirs {
		if !strings.HasPrefix(d, "bucket-") {
			continue
		}
		files, _ := fs.List("wh/db/t/" + d)
		for _, f := range files {
			p := "wh/db/t/" + d + "/" + f.Name
			data, _ := fs.ReadFile(p)
			ours, err := parquet.Decode(p, data, sc, sc)
			if err != nil {
				t.Fatal(err)
			}
			tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(data), nil, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
			if err != nil {
				t.Fatalf("arrow cannot open %s: %v", p, err)
			}
			if tbl.NumRows() != int64(len(ours)) {
				t.Fatalf("%s: arrow reads %d rows, we wrote %d", p, tbl.NumRows(), len(ours))
			}
			col := func(name string) arrow.Array {
				idx := tbl.Schema().FieldIndices(name)
				if len(idx) != 1 {
					t.Fatalf("%s: column %s missing in %s", p, name, tbl.Schema())
				}
				ch := tbl.Column(idx[0]).Data()
				if len(ch.Chunks()) != 1 {
					t.Fatalf("%s: %d chunks", p, len(ch.Chunks()))
				}
				return ch.Chunk(0)
			}
			keys := col("k").(*array.Int64)
			seqs := col(parquet.SeqColumn).(*array.Int64)
			kindsCol := col(parquet.KindColumn)
			strs := col("s").(*array.String)
			dates := col("d").(*array.Date32)
			tss := col("ts").(*array.Timestamp)
			for i, kv := range ours {
				if keys.Value(i) != kv.Row[0].Int64() || seqs.Value(i) != int64(kv.Seq) {
					t.Fatalf("%s row %d: key/seq %d/%d, want %d/%d", p, i, keys.Value(i), seqs.Value(i), kv.Row[0].Int64(), kv.Seq)
				}
				if got := fmt.Sprint(kindsCol.GetOneForMarshal(i)); got != fmt.Sprint(int(kv.Kind)) {
					t.Fatalf("%s row %d: value kind %s, want %d", p, i, got, kv.Kind)
				}
				if kv.Row[2].IsNull() != strs.IsNull(i) || (!strs.IsNull(i) && strs.Value(i) != kv.Row[2].Str()) {
					t.Fatalf("%s row %d: s differs", p, i)
				}
				if int32(dates.Value(i)) != kv.Row[5].Date() || int64(tss.Value(i)) != kv.Row[6].Micros() {
					t.Fatalf("%s row %d: date/timestamp differ", p, i)
				}
			}
			if ts := tbl.Schema().Field(tbl.Schema().FieldIndices("ts")[0]).Type.(*arrow.TimestampType); ts.Unit != arrow.Microsecond || ts.TimeZone != "" {
				t.Fatalf("%s: ts read as %s, want a zone-less microsecond timestamp", p, ts)
			}
			tbl.Release()
			checked++
		}
	}
	if checked < 20 {
		t.Fatalf("only %d files checked", checked)
	}
	t.Logf("%d files opened by arrow", checked)
}
