package olap

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
)

// evWindow resolves every call as a window over ev(k, ts) with the given
// kind and sizes, recording the calls it is given.
func evWindow(w Window, calls *[]string) func(string) (Window, error) {
	return func(call string) (Window, error) {
		*calls = append(*calls, call)
		if strings.HasPrefix(strings.ToLower(call), "session") {
			return Window{}, errors.New("no session")
		}
		w.Columns, w.TimeColumn = []string{"k", "ts"}, 1
		return w, nil
	}
}

func TestWindowTVFsAsSQLText(t *testing.T) {
	w := Window{Kind: Tumble, Size: 60_000_000}
	for _, c := range []struct {
		in, call, alias string
		changed         bool
	}{
		{in: "SELECT * FROM TUMBLE(ev, ts, INTERVAL '1' MINUTE)", call: "TUMBLE(ev, ts, INTERVAL '1' MINUTE)", alias: ") AS ev", changed: true},
		{in: "SELECT w.k FROM tumble(ev, ts, INTERVAL '1' MINUTE) AS w", call: "tumble(ev, ts, INTERVAL '1' MINUTE)", alias: ") AS w", changed: true},
		{in: "SELECT x.a FROM t JOIN Tumble(ev, ts, '1 minute') x(a, b, c, d) ON true", call: "Tumble(ev, ts, '1 minute')", alias: ") x(a, b, c, d)", changed: true},
		// Not in a FROM list: a column or function named so stays.
		{in: "SELECT tumble(1) FROM t", changed: false},
		{in: "SELECT hop FROM t", changed: false},
	} {
		var calls []string
		out, changed, err := WindowTVFsAsSQL(c.in, evWindow(w, &calls))
		if err != nil || changed != c.changed {
			t.Fatalf("%s: changed %v, %v", c.in, changed, err)
		}
		if !changed {
			if out != c.in || len(calls) != 0 {
				t.Errorf("%s: rewritten to %s (calls %q)", c.in, out, calls)
			}
			continue
		}
		if len(calls) != 1 || calls[0] != c.call || !strings.Contains(out, c.alias) || strings.Contains(strings.ToLower(out), "tumble(") {
			t.Errorf("%s: calls %q, out %s", c.in, calls, out)
		}
	}
	var calls []string
	if _, _, err := WindowTVFsAsSQL("SELECT * FROM SESSION(ev, ts, INTERVAL '1' MINUTE)", evWindow(w, &calls)); err == nil {
		t.Errorf("SESSION: the resolver's error was not returned")
	}
	if _, _, err := WindowTVFsAsSQL("SELECT * FROM HOP(ev, ts, INTERVAL '7' SECOND, INTERVAL '10' SECOND)", evWindow(Window{Kind: Hop, Slide: 7_000_000, Size: 10_000_000}, &calls)); err == nil {
		t.Errorf("HOP with a size not a multiple of its slide: no error")
	}
}

// TestWindowTVFsAsSQLRun runs the subqueries over a relation given by
// value, with times before and after 1970 and a NULL, against windows
// worked out by hand.
func TestWindowTVFsAsSQLRun(t *testing.T) {
	e, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	ts := func(s string) types.Datum {
		tm, err := time.Parse("2006-01-02 15:04:05", s)
		if err != nil {
			t.Fatal(err)
		}
		return types.NewTimestamp(tm.UnixMicro())
	}
	rel := Relation{Name: "ev", Columns: []Column{{Name: "k", Type: types.Int64}, {Name: "ts", Type: types.Timestamp}},
		Rows: []types.Row{
			{types.NewInt64(1), ts("2024-01-01 10:07:30")},
			{types.NewInt64(2), ts("1969-12-31 23:59:50")},
			{types.NewInt64(3), types.Null},
		}}
	for _, c := range []struct {
		w    Window
		want string
	}{
		{Window{Kind: Tumble, Size: 300_000_000, Offset: 60_000_000},
			"(1, 2024-01-01 10:06:00, 2024-01-01 10:11:00)\n(2, 1969-12-31 23:56:00, 1970-01-01 00:01:00)"},
		{Window{Kind: Hop, Slide: 300_000_000, Size: 600_000_000},
			"(1, 2024-01-01 10:00:00, 2024-01-01 10:10:00)\n(1, 2024-01-01 10:05:00, 2024-01-01 10:15:00)\n(2, 1969-12-31 23:50:00, 1970-01-01 00:00:00)\n(2, 1969-12-31 23:55:00, 1970-01-01 00:05:00)"},
		{Window{Kind: Cumulate, Slide: 300_000_000, Size: 900_000_000},
			"(1, 2024-01-01 10:00:00, 2024-01-01 10:10:00)\n(1, 2024-01-01 10:00:00, 2024-01-01 10:15:00)\n(2, 1969-12-31 23:45:00, 1970-01-01 00:00:00)"},
	} {
		var calls []string
		q, _, err := WindowTVFsAsSQL("SELECT k, window_start, window_end FROM TUMBLE(ev, ts, INTERVAL '1' SECOND) ORDER BY k, window_start, window_end", evWindow(c.w, &calls))
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.QueryRelations(ctx, []Relation{rel}, q, QueryOptions{})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var got []string
		for _, r := range res.Rows {
			got = append(got, r.String())
		}
		if g := strings.Join(got, "\n"); g != c.want {
			t.Errorf("%s:\n%s\nwant\n%s", c.w.Kind, g, c.want)
		}
		if res.Columns[1].Type.Kind != types.KindTimestamp || res.Columns[2].Name != "window_end" {
			t.Errorf("%s: columns %v", c.w.Kind, res.Columns)
		}
	}
}

// TestWindowTVFsAsSQLSession runs a SESSION subquery, with and without a
// partition, against sessions worked out by hand: a row less than the gap
// after the one before it joins its session.
func TestWindowTVFsAsSQLSession(t *testing.T) {
	e, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	at := func(hms string) types.Datum {
		tm, err := time.Parse("15:04:05", hms)
		if err != nil {
			t.Fatal(err)
		}
		return types.NewTimestamp(tm.UnixMicro())
	}
	rel := Relation{Name: "ev", Columns: []Column{{Name: "k", Type: types.Int64}, {Name: "ts", Type: types.Timestamp}},
		Rows: []types.Row{
			{types.NewInt64(1), at("10:07:30")},
			{types.NewInt64(2), at("10:10:00")},
			{types.NewInt64(1), at("10:17:00")}, // exactly the gap after 10:12: a new session
			{types.NewInt64(2), at("10:12:00")},
			{types.NewInt64(3), types.Null},
		}}
	for _, c := range []struct {
		part []int
		want string
	}{
		{nil, "(1, 10:07:30, 10:17:00)\n(1, 10:17:00, 10:22:00)\n(2, 10:07:30, 10:17:00)\n(2, 10:07:30, 10:17:00)"},
		{[]int{0}, "(1, 10:07:30, 10:12:30)\n(1, 10:17:00, 10:22:00)\n(2, 10:10:00, 10:17:00)\n(2, 10:10:00, 10:17:00)"},
	} {
		w := Window{Kind: Session, Columns: []string{"k", "ts"}, TimeColumn: 1, Size: 300_000_000, Partition: c.part}
		q, _, err := WindowTVFsAsSQL("SELECT k, CAST(window_start AS TIME) AS s, CAST(window_end AS TIME) AS e FROM SESSION(ev, ts, INTERVAL '5' MINUTE) ORDER BY k, s, e",
			func(string) (Window, error) { return w, nil })
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.QueryRelations(context.Background(), []Relation{rel}, q, QueryOptions{})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var got []string
		for _, r := range res.Rows {
			got = append(got, r.String())
		}
		if g := strings.Join(got, "\n"); g != c.want {
			t.Errorf("partition %v:\n%s\nwant\n%s", c.part, g, c.want)
		}
	}
}
