package duckdb

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/internal/types"
)

func TestQueryConvertsTypes(t *testing.T) {
	db, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	cols, rows, err := db.Query(ctx, `SELECT true AS b, 7::TINYINT AS i1, -3::INTEGER AS i4, 9000000000::BIGINT AS i8,
		1.25::DOUBLE AS f8, 12.50::DECIMAL(10,2) AS d, 'héllo' AS s, '\x01\x02'::BLOB AS blob,
		DATE '2024-02-29' AS dt, TIMESTAMP '1969-12-31 23:59:59.5' AS ts, TIMESTAMPTZ '2024-01-01 00:00:00+00' AS tz,
		INTERVAL '1 month 2 days 3 seconds' AS iv, TIME '13:05:07.25' AS tm, NULL::INTEGER AS n,
		'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::UUID AS u`)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	want := []string{"t", "7", "-3", "9000000000", "1.25", "12.50", "héllo", `\x0102`, "2024-02-29",
		"1969-12-31 23:59:59.5", "2024-01-01 00:00:00+00", "1 mon 2 days 00:00:03", "13:05:07.25", "", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}
	for i, w := range want {
		got := types.FormatText(rows[0][i], nil)
		if got != w {
			t.Errorf("column %s (%s): %q, want %q", cols[i].Name, cols[i].Type, got, w)
		}
	}
	if cols[5].Type.String() != "NUMERIC(10,2)" || !rows[0][13].IsNull() {
		t.Errorf("decimal type %s, null %v", cols[5].Type, rows[0][13])
	}
}

func TestParquetRoundTrip(t *testing.T) {
	db, err := Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.parquet")
	if err := db.Exec(ctx, "COPY (SELECT range AS k, range * 2 AS v FROM range(1000)) TO '"+path+"' (FORMAT parquet)"); err != nil {
		t.Fatal(err)
	}
	_, rows, err := db.Query(ctx, "SELECT count(*), sum(v) FROM read_parquet(?)", path)
	if err != nil {
		t.Fatal(err)
	}
	if got := rows[0].String(); got != "(1000, 999000)" {
		t.Fatalf("count, sum = %s", got)
	}
}
