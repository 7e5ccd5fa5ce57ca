package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/parser"
)

// TestIntervalJoinView: a view over an interval join of two tables with
// watermarks plans the interval join and keeps up with both tables; a row
// behind its table's watermark is dropped before it can join.
func TestIntervalJoinView(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	name := func(n string) catalog.ObjectName { return catalog.Name(DefaultDatabase, n) }
	col := func(n string, ty types.Type) catalog.Column { return catalog.Column{Name: n, Type: ty} }
	wm := map[string]string{OptionWatermarkColumn: "ts", OptionWatermarkDelay: "1m0s"}
	for _, n := range []string{"clicks", "views"} {
		tb := catalog.Table{Name: name(n), Options: wm, Columns: []catalog.Column{col("id", types.Int64), col("k", types.Int64), col("ts", types.Timestamp)}}
		if err := e.CreateTable(ctx, tb, false); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
	}
	// The join is append-only and has no key of its own: the view groups
	// by click.
	const q = "SELECT c.id AS click, count(*) AS n, min(v.id) AS first_view FROM clicks c JOIN views v ON c.k = v.k AND v.ts BETWEEN c.ts - INTERVAL '10' SECOND AND c.ts + INTERVAL '5' SECOND GROUP BY c.id"
	plan, err := e.ExplainView(ctx, DefaultDatabase, q)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "InnerIntervalJoin") || !strings.Contains(plan, "(state kept for right time - left time in [-10s, 5s])") {
		t.Fatalf("plan:\n%s", plan)
	}
	if err := e.CreateView(ctx, name("matches"), q, nil, false); err != nil {
		t.Fatal(err)
	}
	ectx := &expr.Context{}
	insert := func(text string) {
		t.Helper()
		st, err := parser.ParseOne(text)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.Insert(ctx, DefaultDatabase, st.Node.GetInsertStmt(), text, ectx, nil); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
	}
	wait := func(table string, want ...string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			r, err := e.ReadConsistent(ctx, []catalog.ObjectName{name(table)}, version.Weak, "test")
			if err != nil {
				t.Fatal(err)
			}
			got := sorted(r.Rows[name(table)])
			if got == strings.Join(want, "\n") {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s:\n%s\nwant:\n%s", table, got, strings.Join(want, "\n"))
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	insert("INSERT INTO views VALUES (1, 1, '2024-01-01 10:00:00')")
	wait("views", "(1, 1, 2024-01-01 10:00:00)")
	insert("INSERT INTO clicks VALUES (1, 1, '2024-01-01 10:00:03'), (2, 1, '2024-01-01 10:05:00')")
	wait("matches", "(1, 1, 1)")
	// Click 3 (09:59:25) is behind the clicks' watermark (10:04): it is
	// dropped, though view 2 (09:59:30, within the views' watermark
	// 09:59) is within its bounds; view 3 meets click 2.
	insert("INSERT INTO clicks VALUES (3, 1, '2024-01-01 09:59:25')")
	wait("clicks", "(1, 1, 2024-01-01 10:00:03)", "(2, 1, 2024-01-01 10:05:00)", "(3, 1, 2024-01-01 09:59:25)")
	insert("INSERT INTO views VALUES (2, 1, '2024-01-01 09:59:30'), (3, 1, '2024-01-01 10:05:04')")
	wait("matches", "(1, 1, 1)", "(2, 1, 3)")
}
