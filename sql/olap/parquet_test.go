package olap

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

// appendFields has a column of every type DuckDB reads from the data files
// itself ([append-parquet]).
var appendFields = []schema.Field{
	{Name: "id", Type: types.Int64},
	{Name: "b", Type: types.Bool, Nullable: true},
	{Name: "i2", Type: types.Int16, Nullable: true},
	{Name: "i4", Type: types.Int32, Nullable: true},
	{Name: "f4", Type: types.Float32, Nullable: true},
	{Name: "f8", Type: types.Float64, Nullable: true},
	{Name: "n", Type: types.Type{Kind: types.KindNumeric, Precision: 12, Scale: 3}, Nullable: true},
	{Name: "s", Type: types.Text, Nullable: true},
	{Name: "u", Type: types.Type{Kind: types.KindUUID}, Nullable: true},
	{Name: "by", Type: types.Type{Kind: types.KindBytea}, Nullable: true},
	{Name: "d", Type: types.Type{Kind: types.KindDate}, Nullable: true},
	{Name: "tm", Type: types.Type{Kind: types.KindTime}, Nullable: true},
	{Name: "ts", Type: types.Type{Kind: types.KindTimestamp}, Nullable: true},
	{Name: "tz", Type: types.Type{Kind: types.KindTimestampTZ}, Nullable: true},
}

func appendRow(id int64) types.Row {
	r := types.Row{i64(id)}
	if id%5 == 4 { // every column but id NULL
		for range len(appendFields) - 1 {
			r = append(r, types.Null)
		}
		return r
	}
	ts, d := id*86_400_123_457-3_000_000_000_000, int32(id*37-900)
	switch id % 7 {
	case 1:
		ts, d = types.TimestampInfinity, types.DateInfinity
	case 2:
		ts, d = types.TimestampNegInfinity, types.DateNegInfinity
	}
	return append(r, types.NewBool(id%2 == 0), types.NewInt16(int16(id*3-100)), types.NewInt32(int32(id*1000-70000)),
		types.NewFloat32(float32(id)/3), types.NewFloat64(float64(id)*1.25e-3),
		num(fmt.Sprintf("%d.%03d", id*17-400, id%1000)), txt(fmt.Sprintf("ü-%d-\"q'", id)),
		types.NewUUID([16]byte{byte(id), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, byte(id * 3)}),
		types.NewBytea([]byte{0, byte(id), 255}), types.NewDate(d), types.NewTime(id*1_000_003%86_400_000_000),
		types.NewTimestamp(ts), types.NewTimestampTZ(ts))
}

// TestAppendTablesAreReadFromTheirParquetFiles checks that an append table
// on local disk is queried through DuckDB's Parquet reader over its data
// files (no rows held in the cache) with exactly the answers of the same
// table loaded row by row from an in-memory file system, at every epoch,
// including NULLs, ±infinity dates and timestamps and NUMERIC; and that a
// damaged data file fails the query with a checksum error naming it.
func TestAppendTablesAreReadFromTheirParquetFiles(t *testing.T) {
	dir := t.TempDir()
	e, err := Open(Options{Threads: 2, ParquetDirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	local, err := fileio.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	var tables [2]*table.Table
	for i, fs := range []fileio.FS{local, fileio.NewMem()} {
		if tables[i], err = table.Create(fs, "wh/dev/events", appendFields, nil, nil); err != nil {
			t.Fatal(err)
		}
		w, _ := tables[i].NewWriter("w")
		id := int64(0)
		for ep := base.Epoch(1); ep <= 3; ep++ {
			var changes []change
			for range 40 * int(ep) {
				changes = append(changes, ins(appendRow(id)))
				id++
			}
			commitEpoch(t, tables[i], w, ep, changes...)
		}
	}
	const q = "SELECT *, epoch_us(ts) AS ts_us FROM events ORDER BY id"
	for ep := base.Epoch(0); ep <= 3; ep++ {
		got := mustQuery(t, e, []Input{{Name: "events", Table: tables[0], Epoch: ep}}, q)
		want := mustQuery(t, e, []Input{{Name: "events", Table: tables[1], Epoch: ep}}, q)
		if text(got.Rows) != text(want.Rows) {
			t.Fatalf("epoch %d: read from the Parquet files:\n%s\nloaded:\n%s", ep, text(got.Rows), text(want.Rows))
		}
		if n := []int{0, 40, 120, 240}[ep]; len(got.Rows) != n {
			t.Fatalf("epoch %d: %d rows, want %d", ep, len(got.Rows), n)
		}
		for i, c := range got.Columns {
			if c.Type.Kind != want.Columns[i].Type.Kind {
				t.Errorf("column %s: type %s, loaded %s", c.Name, c.Type, want.Columns[i].Type)
			}
		}
	}
	if !strings.Contains(text(mustQuery(t, e, []Input{{Name: "events", Table: tables[0], Epoch: 3}},
		"SELECT ts::VARCHAR, d::VARCHAR FROM events WHERE id IN (1, 2) ORDER BY id").Rows), "infinity|infinity\n-infinity|-infinity") {
		t.Errorf("infinite timestamps and dates not read as infinity")
	}
	views := 0
	e.views.Range(func(any, any) bool { views++; return true })
	if views == 0 {
		t.Fatal("no query read the local table's Parquet files")
	}

	// Damage one data file of the local table: a query at a snapshot not
	// cached yet fails with a checksum error naming the file.
	var damaged string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && damaged == "" && strings.HasSuffix(p, ".parquet") && strings.Contains(p, "data-") {
			damaged = p
		}
		return nil
	})
	data, err := os.ReadFile(damaged)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x40
	if err := os.WriteFile(damaged, data, 0o644); err != nil {
		t.Fatal(err)
	}
	w, _ := tables[0].NewWriter("w2")
	commitEpoch(t, tables[0], w, 4, ins(appendRow(1000)))
	_, err = e.Query(t.Context(), []Input{{Name: "events", Table: tables[0], Epoch: 4}}, q, QueryOptions{})
	if sqlerr.Code(err) != sqlerr.DataCorrupted || !strings.Contains(err.Error(), filepath.Base(damaged)) {
		t.Fatalf("query over a damaged file: %v (%s)", err, sqlerr.Code(err))
	}
}
