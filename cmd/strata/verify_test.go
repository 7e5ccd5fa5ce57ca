package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/server"
)

// TestVerifyWindowViewData verifies a HOP view of a stopped instance's
// data directory: it is recomputed by DuckDB and equal (exit 0), while an
// epoch before the view's first cannot be verified (exit 2, naming the
// first epoch) rather than differing (exit 1).
func TestVerifyWindowViewData(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := engine.Open(ctx, engine.Options{Dir: dir, EpochInterval: 20 * time.Millisecond, CheckpointInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	bid := catalog.Name(engine.DefaultDatabase, "bid")
	cols := []catalog.Column{{Name: "price", Type: types.Int64}, {Name: "date_time", Type: types.Timestamp}}
	if err := e.CreateTable(ctx, catalog.Table{Name: bid, Columns: cols}, false); err != nil {
		t.Fatal(err)
	}
	c := types.NewChunk([]types.Type{types.Int64, types.Timestamp}, 200)
	for i := range int64(200) {
		c.Append(types.Insert, types.Row{types.NewInt64(i), types.NewTimestamp(1_700_000_000_000_000 + i*310_000)})
	}
	first, err := e.Apply(ctx, bid, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Meta().WaitEpoch(ctx, first+10); err != nil {
		t.Fatal(err)
	}
	hv := catalog.Name(engine.DefaultDatabase, "hv")
	if err := e.CreateView(ctx, hv, "SELECT window_start, window_end, count(*) AS n, max(price) AS p FROM HOP(bid, date_time, INTERVAL '5' SECOND, INTERVAL '10' SECOND) GROUP BY window_start, window_end", nil, false); err != nil {
		t.Fatal(err)
	}
	start := e.ViewStartEpoch(ctx, hv)
	if err := e.WaitCommitted(ctx, hv, start); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		cmd := newRootCommand()
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append([]string{"verify", "--data", dir}, args...))
		err := cmd.Execute()
		return out.String(), err
	}
	out, err := run("hv")
	if err != nil || !strings.Contains(out, "hv: verified at epoch") || !strings.Contains(out, "recomputed by duckdb") {
		t.Fatalf("verify hv: %v\n%s", err, out)
	}
	out, err = run("hv", "--epoch", fmt.Sprint(first))
	if !errors.Is(err, errVerifyFailed) || !strings.Contains(out, fmt.Sprintf("starts at epoch %d", start)) {
		t.Fatalf("verify hv --epoch %d (view starts at %d): %v\n%s", first, start, err, out)
	}
}

// TestVerifyUnreachableIsExit2: a verify that cannot reach the views (no
// server at --http, a data directory that does not open) could not verify
// (errVerifyFailed: exit 2), which is not a difference (exit 1).
func TestVerifyUnreachableIsExit2(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for _, args := range [][]string{{"verify", "--http", addr}, {"verify", "--http", addr, "v"}, {"verify", "--data", filepath.Join(t.TempDir(), "missing", "\x00"), "v"}} {
		var out bytes.Buffer
		cmd := newRootCommand()
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(args)
		err := cmd.Execute()
		if !errors.Is(err, errVerifyFailed) || errors.Is(err, errNotVerified) {
			t.Fatalf("%v: %v; want errVerifyFailed (exit 2)", args, err)
		}
	}
}

// TestVerifyUsageErrorIsExit2: a usage error of verify (an unknown flag,
// a negative or non-numeric epoch, no view named) verified nothing: it is
// errVerifyFailed (exit 2), not a difference (exit 1), and says what was
// wrong.
func TestVerifyUsageErrorIsExit2(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"verify", "--bogus", "v"}, "unknown flag: --bogus"},
		{[]string{"verify", "--epoch", "-1", "v"}, `invalid argument "-1" for "--epoch"`},
		{[]string{"verify", "v", "--epoch=x"}, `invalid argument "x" for "--epoch"`},
		{[]string{"verify"}, "name at least one materialized view to verify"},
	} {
		var out bytes.Buffer
		cmd := newRootCommand()
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(tc.args)
		err := cmd.Execute()
		if !errors.Is(err, errVerifyFailed) || errors.Is(err, errNotVerified) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v; want errVerifyFailed (exit 2) saying %q", tc.args, err, tc.want)
		}
	}
}

// TestVerifyDataInUse: verify --data on a directory a running instance
// holds could not verify (exit 2) and says to verify through the running
// server with --http.
func TestVerifyDataInUse(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := engine.Open(ctx, engine.Options{Dir: dir, EpochInterval: 20 * time.Millisecond, CheckpointInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var out bytes.Buffer
	cmd := newRootCommand()
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"verify", "--data", dir, "v"})
	err = cmd.Execute()
	// As main prints it.
	want := "is locked: another strata process is using this data directory; the data directory " + dir + " is in use by a running strata server: verify through that server instead, with strata verify --http ADDR VIEW, ADDR being the server's --http address (default 127.0.0.1:8080)"
	if !errors.Is(err, errVerifyFailed) || !strings.HasSuffix(base.UserMessage(err.Error()), want) {
		t.Fatalf("verify --data %s in use: %v; want errVerifyFailed ending %q", dir, err, want)
	}
}

// TestReportVerifyNotes: a difference prints its notes and exits 1
// (errNotVerified), as a watermark's note does; a top-N view accepted
// for a tie at its cut-off prints verified with its note and exits 0.
func TestReportVerifyNotes(t *testing.T) {
	var out bytes.Buffer
	err := reportVerify(&out, []server.VerifyResponse{{View: "enriched", Epoch: 7, Rows: 1, Missing: []string{"(10, bob)"}, Extra: []string{"(10, ann)"}, By: "duckdb", Notes: []string{"the view joins a table through LOOKUP(...)"}}})
	want := "enriched: DIFFERS at epoch 7: 1 row missing, 1 extra, recomputed by duckdb\n  missing (10, bob)\n  extra   (10, ann)\n  note: the view joins a table through LOOKUP(...)\n"
	if !errors.Is(err, errNotVerified) || out.String() != want {
		t.Errorf("lookup difference: %v\n%s\nwant exit 1 and\n%s", err, out.String(), want)
	}
	out.Reset()
	err = reportVerify(&out, []server.VerifyResponse{{View: "top5", Epoch: 9, Rows: 5, OK: true, By: "duckdb", Notes: []string{"the view is a top-N (ORDER BY ... LIMIT 5) whose last rows tie"}}})
	want = "top5: verified at epoch 9 (5 rows, recomputed by duckdb)\n  note: the view is a top-N (ORDER BY ... LIMIT 5) whose last rows tie\n"
	if err != nil || out.String() != want {
		t.Errorf("top-N tie: %v\n%s\nwant exit 0 and\n%s", err, out.String(), want)
	}
}

// TestReportVerifyBoundsRows: a view with 25 missing rows and 2 extra
// prints the first 20 missing ones and how many more, and both extra ones.
func TestReportVerifyBoundsRows(t *testing.T) {
	var missing []string
	for i := range 25 {
		missing = append(missing, fmt.Sprintf("(%d)", i))
	}
	var out bytes.Buffer
	err := reportVerify(&out, []server.VerifyResponse{{View: "v", Epoch: 3, Rows: 30, Missing: missing, Extra: []string{"(100)", "(101)"}, By: "duckdb"}})
	if !errors.Is(err, errNotVerified) {
		t.Fatalf("exit: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 1+20+1+2 || lines[0] != "v: DIFFERS at epoch 3: 25 rows missing, 2 extra, recomputed by duckdb" ||
		lines[20] != "  missing (19)" || lines[21] != "  missing ... and 5 more" || lines[23] != "  extra   (101)" {
		t.Errorf("bounded report:\n%s", out.String())
	}
}

// TestVerifyRefusesNonDataDir: verify --data on a path that is not a
// Strata data directory (missing, empty, or a plain file) could not verify
// (exit 2), names the path, and creates nothing there; a mistyped path
// used to become a fresh, empty instance.
func TestVerifyRefusesNonDataDir(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(tmp, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(tmp, "nonexistent"), empty, file} {
		var out bytes.Buffer
		cmd := newRootCommand()
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs([]string{"verify", "t1", "--data", dir})
		err := cmd.Execute()
		want := dir + " is not a Strata data directory (no meta.db); start a server there first or pass the right --data"
		if code, msg := exitStatus(err); code != 2 || msg != want {
			t.Errorf("verify --data %s: exit %d %q; want exit 2 %q", dir, code, msg, want)
		}
		var left []string
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				left = append(left, e.Name())
			}
		} else if err == nil != (dir == file) {
			t.Errorf("verify --data %s: stat %v", dir, err)
		}
		if len(left) > 0 {
			t.Errorf("verify --data %s created %v", dir, left)
		}
	}
}
