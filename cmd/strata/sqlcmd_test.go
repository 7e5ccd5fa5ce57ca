package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/server"
)

// TestSQLCommand runs `strata sql -c` and `strata sql` with a script on
// standard input against a server, and checks the aligned output.
func TestSQLCommand(t *testing.T) {
	s, err := server.Start(context.Background(), server.Options{
		Engine: engine.Options{Dir: t.TempDir(), EpochInterval: 20 * time.Millisecond, CheckpointInterval: 20 * time.Millisecond},
		Listen: "127.0.0.1:0", HTTP: "-",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	addr := s.Addr().String()
	out, err := run(t, "sql", "--addr", addr, "-c", "CREATE TABLE t (k INT PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'ann'), (22, NULL)")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out != "CREATE TABLE\nINSERT 0 2\n" {
		t.Fatalf("output %q", out)
	}
	cmd := newRootCommand()
	var buf strings.Builder
	cmd.SetOut(&buf)
	cmd.SetErr(&buf)
	cmd.SetIn(strings.NewReader("SELECT k, name FROM t ORDER BY k;\n"))
	cmd.SetArgs([]string{"sql", "--addr", addr})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	want := " k  | name\n----+------\n  1 | ann\n 22 |\n(2 rows)\n"
	if buf.String() != want {
		t.Fatalf("output\n%q\nwant\n%q", buf.String(), want)
	}
	if _, err := run(t, "sql", "--addr", addr, "-c", "SELECT nope FROM t"); err == nil || !strings.Contains(err.Error(), "42703") {
		t.Fatalf("an error: %v", err)
	}
	// A script goes on after an error, and \dt works.
	cmd = newRootCommand()
	buf.Reset()
	cmd.SetOut(&buf)
	cmd.SetErr(&buf)
	cmd.SetIn(strings.NewReader("SELECT nope FROM t;\n\\dt\nSELECT count(*) FROM t;\n"))
	cmd.SetArgs([]string{"sql", "--addr", addr})
	err = cmd.Execute()
	if err == nil || !strings.Contains(buf.String(), "ERROR:") || !strings.Contains(buf.String(), " t\n") || !strings.Contains(buf.String(), "     2\n") {
		t.Fatalf("script with an error and \\dt: %v\n%s", err, buf.String())
	}
}
