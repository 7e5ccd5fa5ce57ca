package binder

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

// SESSION takes a partition as a last argument, positional or named, of
// one column or several; DESCRIPTOR(col) names the time column.
func TestBindSessionPartition(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want string
		part []int
	}{
		{"SELECT bidder, window_start, count(*) FROM SESSION(bid, date_time, INTERVAL '5' MINUTE, partition_by => bidder) GROUP BY 1, 2",
			`Project bidder, window_start, count(*) AS count
  Aggregate group=[bidder, window_start] aggs=[count(*)]
    SESSION(date_time, size=00:05:00, slide=00:00:00) partition=[bidder]
      Scan bid
`, []int{1}},
		{"SELECT * FROM SESSION(bid, DESCRIPTOR(date_time), INTERVAL '5' MINUTE, partition => (bidder, auction))", "", []int{1, 0}},
		{"SELECT * FROM SESSION(bid, date_time, INTERVAL '5' MINUTE, DESCRIPTOR(channel))", "", []int{3}},
		{"SELECT * FROM SESSION(bid, date_time, INTERVAL '5' MINUTE, auction)", "", []int{0}},
		{"SELECT * FROM SESSION(bid, date_time, INTERVAL '5' MINUTE)", "", nil},
		{"SELECT * FROM TUMBLE(bid, DESCRIPTOR(date_time), INTERVAL '1' MINUTE)", "", nil},
	} {
		n, err := bind(t, tc.sql)
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		if tc.want != "" {
			if got := plan.Explain(n); got != tc.want {
				t.Errorf("%s:\ngot:\n%swant:\n%s", tc.sql, got, tc.want)
			}
		}
		var w *plan.WindowTVF
		for m := n; m != nil && w == nil; {
			if x, ok := m.(*plan.WindowTVF); ok {
				w = x
				break
			}
			if len(m.Inputs()) == 0 {
				break
			}
			m = m.Inputs()[0]
		}
		if w == nil {
			t.Errorf("%s: no window TVF in\n%s", tc.sql, plan.Explain(n))
			continue
		}
		if w.Input.Schema()[w.TimeCol].Name != "date_time" {
			t.Errorf("%s: time column %d", tc.sql, w.TimeCol)
		}
		if fmt.Sprint(w.Partition) != fmt.Sprint(tc.part) {
			t.Errorf("%s: partition %v, want %v", tc.sql, w.Partition, tc.part)
		}
	}
}

func TestBindSessionPartitionErrors(t *testing.T) {
	for _, tc := range []struct {
		sql, code, msg string
		pos            int
	}{
		{"SELECT * FROM SESSION(bid, date_time, INTERVAL '5' MINUTE, partition_by => nope)", sqlerr.UndefinedColumn, `column "nope" does not exist`, 76},
		{"SELECT * FROM SESSION(bid, date_time, INTERVAL '5' MINUTE, partition_by => (auction, price + 1))", sqlerr.FeatureNotSupported, "not by expressions", 92},
		{"SELECT * FROM TUMBLE(bid, date_time, INTERVAL '5' MINUTE, partition_by => auction)", sqlerr.UndefinedFunction, "TUMBLE has no argument named partition_by", 59},
		{"SELECT * FROM SESSION(bid, date_time, gap => INTERVAL '5' MINUTE)", sqlerr.UndefinedFunction, "SESSION has no argument named gap", 39},
		{"SELECT * FROM SESSION(bid, date_time, INTERVAL '5' MINUTE, auction, bidder)", sqlerr.UndefinedFunction, "SESSION takes 3 or 4 arguments", 15},
	} {
		_, err := bind(t, tc.sql)
		e := sqlerr.From(err)
		if e == nil {
			t.Errorf("%s: no error", tc.sql)
			continue
		}
		if e.Code != tc.code || !strings.Contains(e.Message, tc.msg) || (tc.pos != 0 && e.Position != tc.pos) {
			t.Errorf("%s: got %s %q at %d, want %s %q at %d", tc.sql, e.Code, e.Message, e.Position, tc.code, tc.msg, tc.pos)
		}
	}
}

// A relation's watermark reaches the planner through the Scan, which
// keeps the catalog's Relation (the planner puts its late-data filter
// after the source of every Scan of a watermarked relation).
func TestWatermarkPassesThrough(t *testing.T) {
	wm := &plan.Watermark{Column: 5}
	wm.Delay.Micros = 5_000_000
	rel := *catalog["bid"]
	rel.Watermark = wm
	cat := testCatalog{"bid": &rel}
	for _, q := range []string{
		"SELECT auction FROM bid WHERE price > 1",
		"SELECT window_start, count(*) FROM TUMBLE(bid, date_time, INTERVAL '1' MINUTE) GROUP BY 1",
		"SELECT bidder FROM SESSION(bid, date_time, INTERVAL '1' MINUTE, partition_by => bidder)",
		"SELECT * FROM (SELECT auction, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price) AS rn FROM bid) WHERE rn = 1",
	} {
		st, err := parser.ParseOne(q)
		if err != nil {
			t.Fatal(err)
		}
		n, err := New(cat, q, nil).BindQuery(st.Node)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var scans []*plan.Scan
		var walk func(plan.Node)
		walk = func(n plan.Node) {
			if s, ok := n.(*plan.Scan); ok {
				scans = append(scans, s)
			}
			for _, c := range n.Inputs() {
				walk(c)
			}
		}
		walk(n)
		if len(scans) != 1 || scans[0].Rel.Watermark != wm {
			t.Fatalf("%s: scans %v do not carry the watermark", q, scans)
		}
	}
}
