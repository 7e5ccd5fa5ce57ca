package duckdbcheck

import (
	"database/sql"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/format/parquet"
	"github.com/stratadb/strata/table/schema"
)

func TestDuckDBOpensEveryFile(t *testing.T) {
	dir := t.TempDir()
	fs, err := fileio.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	fields := []schema.Field{
		{Name: "k", Type: types.Int64}, {Name: "s", Type: types.Text, Nullable: true},
		{Name: "d", Type: types.Date, Nullable: true}, {Name: "ts", Type: types.TimestampTZ, Nullable: true},
		{Name: "u", Type: types.UUID, Nullable: true}, {Name: "iv", Type: types.Interval, Nullable: true},
	}
	tb, err := table.Create(fs, "db/t", fields, []string{"k"}, map[string]string{
		"bucket": "2", "write-buffer-rows": "9", "num-sorted-run.compaction-trigger": "2"})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := tb.NewWriter("job")
	r := rand.New(rand.NewSource(9))
	for e := base.Epoch(1); e <= 8; e++ {
		for range 25 {
			k := r.Intn(50)
			row := types.Row{types.NewInt64(int64(k)), types.NewText(fmt.Sprint("v", r.Intn(7))), types.NewDate(int32(r.Intn(9000))),
				types.NewTimestampTZ(int64(r.Intn(1 << 40))), types.NewUUID([16]byte{byte(k), 1}), types.NewInterval(types.IntervalValue{Days: int32(k)})}
			kind := types.Insert
			if r.Intn(5) == 0 {
				kind = types.Delete
			}
			if err := w.Write(e, kind, row); err != nil {
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
	db, err := sql.Open("duckdb", "?autoinstall_known_extensions=false&autoload_known_extensions=false")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sc, _ := tb.Schema()
	paths, _ := filepath.Glob(filepath.Join(dir, "db/t/bucket-*/*.parquet"))
	if len(paths) < 10 {
		t.Fatalf("only %d files", len(paths))
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		ours, err := parquet.Decode(p, data, sc, sc)
		if err != nil {
			t.Fatal(err)
		}
		var n, sumK, sumSeq int64
		var strs string
		q := fmt.Sprintf(`SELECT count(*), coalesce(sum(k), 0), coalesce(sum(%s), 0), coalesce(string_agg(s, ',' ORDER BY %s), '') FROM read_parquet('%s')`,
			parquet.SeqColumn, parquet.SeqColumn, strings.ReplaceAll(p, "'", "''"))
		if err := db.QueryRow(q).Scan(&n, &sumK, &sumSeq, &strs); err != nil {
			t.Fatalf("duckdb cannot read %s: %v", p, err)
		}
		var wantK, wantSeq int64
		var wantS []string
		for _, kv := range ours {
			wantK += kv.Row[0].Int64()
			wantSeq += int64(kv.Seq)
		}
		sorted := append(ours[:0:0], ours...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i].Seq < sorted[j].Seq })
		for _, kv := range sorted {
			wantS = append(wantS, kv.Row[1].Str())
		}
		if n != int64(len(ours)) || sumK != wantK || sumSeq != wantSeq || strs != strings.Join(wantS, ",") {
			t.Fatalf("%s: duckdb sees %d rows, sum(k) %d, sum(seq) %d, s %q; we wrote %d, %d, %d, %q",
				p, n, sumK, sumSeq, strs, len(ours), wantK, wantSeq, strings.Join(wantS, ","))
		}
	}
	// The whole table's live rows through DuckDB equal our merge-on-read
	// after a full compaction (one file per bucket, no retractions).
	if _, err := tb.Compact("compactor", true); err != nil {
		t.Fatal(err)
	}
	rows, _ := tb.ReadLatest()
	sn, _ := tb.Latest()
	live, _ := tb.Store().LiveFiles(sn)
	var list []string
	for _, e := range live {
		list = append(list, "'"+filepath.Join(dir, tb.Store().DataPath(e.Bucket, e.File.Name))+"'")
	}
	var n int64
	if err := db.QueryRow(fmt.Sprintf("SELECT count(*) FROM read_parquet([%s]) WHERE %s IN (0, 2)", strings.Join(list, ","), parquet.KindColumn)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != int64(len(rows)) {
		t.Fatalf("duckdb counts %d live rows after full compaction, merge-on-read %d", n, len(rows))
	}
	t.Logf("%d files opened by DuckDB; %d live rows agree", len(paths), n)
}
