package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestBenchNexmarkJSON runs two queries, one over processing time, and
// checks that --json prints one object per query with the keys
// and that both equal DuckDB's result.
func TestBenchNexmarkJSON(t *testing.T) {
	out, err := run(t, "bench", "nexmark", "--query", "q4,q12", "--events", "4000", "--json", "--vs-duckdb",
		"--epoch-interval", "20ms", "--checkpoint-interval", "50ms", "--dir", t.TempDir())
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var objs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		objs = append(objs, m)
	}
	if len(objs) != 2 {
		t.Fatalf("%d JSON objects, want 2:\n%s", len(objs), out)
	}
	q4 := objs[0]
	for _, k := range []string{"query", "events", "seconds", "cpu_seconds", "events_per_cpu_sec", "peak_rss_bytes", "checkpoint_p99_ms", "duckdb_seconds", "strata_over_duckdb"} {
		if _, ok := q4[k]; !ok {
			t.Errorf("q4 lacks %q: %v", k, q4)
		}
	}
	if q4["query"] != "q4" || q4["status"] != "ok" || q4["equal_to_duckdb"] != true || q4["events"] != 4000.0 {
		t.Errorf("q4: %v", q4)
	}
	if q12 := objs[1]; q12["query"] != "q12" || q12["status"] != "ok" || q12["equal_to_duckdb"] != true || q12["view_rows"] == 0.0 {
		t.Errorf("q12: %v", q12)
	}
}

// TestBenchNexmarkInputSource runs two stateless queries with --input
// source: both equal DuckDB's result and say which input they read.
func TestBenchNexmarkInputSource(t *testing.T) {
	out, err := run(t, "bench", "nexmark", "--query", "q0,q14", "--events", "3000", "--json", "--vs-duckdb", "--input", "source",
		"--epoch-interval", "20ms", "--checkpoint-interval", "50ms", "--dir", t.TempDir())
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var n int
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		n++
		if m["status"] != "ok" || m["equal_to_duckdb"] != true || m["input"] != "source" || m["events"] != 3000.0 {
			t.Errorf("%v: %v", m["query"], m)
		}
	}
	if n != 2 {
		t.Fatalf("%d JSON objects, want 2:\n%s", n, out)
	}
	if out, err := run(t, "bench", "nexmark", "--query", "q0", "--input", "pipe", "--dir", t.TempDir()); err == nil || !strings.Contains(err.Error()+out, `input "pipe"`) {
		t.Errorf("--input pipe: %v\n%s", err, out)
	}
}
