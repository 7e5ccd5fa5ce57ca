package planner

import (
	"fmt"
	"testing"

	"github.com/stratadb/strata/internal/duckdb"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// TestUnionAllEqualsDuckDB runs UNION ALL views (inputs of equal and of
// different parallelism, a VALUES input, an aggregate over a union) and
// compares them with DuckDB.
func TestUnionAllEqualsDuckDB(t *testing.T) {
	db, err := duckdb.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	queries := []string{
		"SELECT k, v FROM t WHERE v > 2 UNION ALL SELECT k, v FROM u",
		"SELECT k, v FROM t UNION ALL SELECT k, count(*) FROM u GROUP BY k",
		"SELECT k, v FROM t UNION ALL VALUES (100, 1), (101, NULL), (100, 1)",
		"SELECT k, count(*), sum(v) FROM (SELECT k, v FROM t UNION ALL SELECT k + 1, v FROM u UNION ALL VALUES (1, 10)) x GROUP BY k",
		"SELECT id, v FROM t UNION ALL SELECT id, v FROM t",
		"SELECT k FROM t UNION ALL SELECT 42",
	}
	for seed := range uint64(3) {
		evs, live := script(seed + 40)
		evsU, liveU := script(seed + 140)
		cat := relCatalog{"t": {rel: relT, evs: evs, live: rowsOf(live)}, "u": {rel: relU, evs: evsU, live: rowsOf(liveU)}}
		loadDuck(t, db, cat)
		for _, q := range queries {
			got, job := runPlan(t, cat, bindSQL(t, cat, q), 2)
			sameRows(t, fmt.Sprintf("seed %d: %s", seed, q), got, duckRows(t, db, q), job.Explain)
		}
	}
	// A view whose only input is VALUES closes no epoch: refused.
	cat := relCatalog{}
	_, err = Build("v", bindSQL(t, cat, "VALUES (1), (2)"), &anyEndpoints{cat: cat}, Options{})
	if sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Fatalf("VALUES alone: %v", err)
	}
}

func rowsOf(live map[int64]types.Row) []types.Row {
	var out []types.Row
	for _, r := range live {
		out = append(out, r)
	}
	return out
}

func TestUnionExplain(t *testing.T) {
	cat := relCatalog{"t": {rel: relT}, "u": {rel: relU}}
	job, err := Build("v", bindSQL(t, cat, "SELECT k, v FROM t UNION ALL SELECT k, count(*) FROM u GROUP BY k UNION ALL VALUES (1, 2)"),
		&anyEndpoints{cat: cat}, Options{Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := `1-scan-t (parallelism 1, retract)
2-project k, v (parallelism 1, retract)
3-project k, v (parallelism 1, retract)
4-scan-u (parallelism 1, retract)
5-pre-aggregate keys and arguments (parallelism 1, retract)
6-aggregate [count(*)] (parallelism 2, retract)
7-project k, count(*) (parallelism 2, retract)
8-project k, count (parallelism 2, retract)
9-union UNION ALL of 2 inputs, hashed on all columns (parallelism 2, retract)
10-project k, v (parallelism 2, retract)
11-values 1 rows, bounded (parallelism 1, append-only)
12-project CAST(column1 AS BIGINT), CAST(column2 AS BIGINT) (parallelism 1, append-only)
13-union UNION ALL of 2 inputs, hashed on all columns (parallelism 2, retract)
14-sink (parallelism 2)
`
	if job.Explain != want {
		t.Fatalf("explain:\n%s\nwant:\n%s", job.Explain, want)
	}
}
