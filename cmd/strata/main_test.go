package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runIn(t, nil, args...)
}

// runIn runs the command line args with in (when not nil) as standard
// input and returns what it wrote to standard output and error.
func runIn(t *testing.T, in io.Reader, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	if in != nil {
		cmd.SetIn(in)
	}
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestVersionPrintsAVersion(t *testing.T) {
	out, err := run(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "strata ") || len(strings.Fields(out)) < 2 {
		t.Fatalf("version output %q, want \"strata <version> ...\"", out)
	}
}

func TestUnknownCommandFails(t *testing.T) {
	if _, err := run(t, "no-such-command"); err == nil {
		t.Fatal("unknown sub-command succeeded")
	}
}

func TestBenchTablePrintsTheIssueKeys(t *testing.T) {
	out, err := run(t, "bench", "table", "--rows", "20000", "--keys", "2000", "--buckets", "2", "--json")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"write_rows_per_sec":`, `"scan_rows_per_sec":`, `"point_lookup_p99_us":`, `"duckdb_scan_rows_per_sec":`} {
		if !strings.Contains(out, key) {
			t.Errorf("bench table --json output lacks %s: %s", key, out)
		}
	}
}

// TestDemoListenNeedsServe: --listen or --http without --serve would be
// ignored; the demo refuses them, naming --serve, before starting.
func TestDemoListenNeedsServe(t *testing.T) {
	for _, args := range [][]string{{"demo", "--listen", "127.0.0.1:1"}, {"demo", "--http", "127.0.0.1:1"}} {
		_, err := run(t, args...)
		if err == nil || !strings.Contains(err.Error(), "add --serve") {
			t.Errorf("%v: %v, want a refusal naming --serve", args, err)
		}
	}
}
