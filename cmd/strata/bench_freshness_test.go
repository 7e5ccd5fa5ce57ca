package main

import (
	"bufio"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchFreshnessChart runs a short freshness bench with --chart and
// --series: the JSON keeps its keys and leaves the series out, the chart
// is a PNG and the series file holds one line per measured epoch.
func TestBenchFreshnessChart(t *testing.T) {
	dir := t.TempDir()
	chart, series := filepath.Join(dir, "f.png"), filepath.Join(dir, "f.jsonl")
	out, err := run(t, "bench", "freshness", "--rate", "2000", "--warmup", "500ms", "--duration", "2500ms",
		"--json", "--chart", chart, "--chart-title", "test", "--series", series)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var res map[string]any
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "{") {
			if err := json.Unmarshal([]byte(line), &res); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
		}
	}
	for _, k := range []string{"rate", "events", "epochs", "epoch_interval_ms", "freshness_p50_ms", "freshness_p99_ms", "freshness_max_ms", "levels", "unfinished_epochs"} {
		if _, ok := res[k]; !ok {
			t.Errorf("JSON lacks %q: %v", k, res)
		}
	}
	if len(res) != 9 {
		t.Errorf("JSON has %d keys, want 9: %v", len(res), res)
	}
	if res["unfinished_epochs"] != 0.0 {
		t.Errorf("%v epochs unfinished at 2000 events/s", res["unfinished_epochs"])
	}
	f, err := os.Open(chart)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if img, err := png.Decode(f); err != nil || img.Bounds().Dx() < 500 {
		t.Fatalf("chart: %v", err)
	}
	sf, err := os.Open(series)
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	var n int
	for sc := bufio.NewScanner(sf); sc.Scan(); n++ {
		var m map[string]float64
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m["t3_ms"] < m["bid_ms"] || m["bid_ms"] <= 0 {
			t.Fatalf("series line %q: %v", sc.Text(), err)
		}
	}
	if epochs := res["epochs"].(float64); n != int(epochs) || n == 0 {
		t.Fatalf("%d series lines, %v epochs measured", n, epochs)
	}
}

// TestBenchFreshnessChartFlags: a chart that cannot be written is refused
// before the bench runs.
func TestBenchFreshnessChartFlags(t *testing.T) {
	dir := t.TempDir()
	// A chart path that is a directory.
	pngDir := filepath.Join(dir, "out.png")
	if err := os.Mkdir(pngDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--chart", filepath.Join(dir, "f.svg")}, `--chart "` + filepath.Join(dir, "f.svg") + `": want a .png file`},
		{[]string{"--chart", filepath.Join(dir, "none", "f.png")}, "no directory " + filepath.Join(dir, "none")},
		{[]string{"--chart-title", "x"}, "--chart-title needs --chart"},
		{[]string{"--chart", pngDir}, `--chart "` + pngDir + `": is a directory`},
		{[]string{"--chart", "/proc/f.png"}, `--chart "/proc/f.png": cannot create files in /proc`},
		{[]string{"--series", "/proc/s.json"}, `--series "/proc/s.json": cannot create files in /proc`},
		{[]string{"--series", dir}, `--series "` + dir + `": is a directory`},
		{[]string{"--rate", "0"}, "--rate 0: the rate must be at least 1 event/s"},
		{[]string{"--duration", "0s"}, "--duration 0s: the measured time must be positive"},
		{[]string{"--duration", "-1s"}, "--duration -1s: the measured time must be positive"},
		{[]string{"--warmup", "-1s"}, "--warmup -1s: the warm-up cannot be negative"},
		{[]string{"--epoch-interval", "0s"}, "--epoch-interval 0s: must be positive"},
		{[]string{"--duration", "2s", "--epoch-interval", "1h"}, "must be shorter than --duration 2s"},
		{[]string{"--duration", "2s", "--checkpoint-interval", "2s"}, "must be shorter than --duration 2s"},
	} {
		out, err := run(t, append([]string{"bench", "freshness"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q\n%s", c.args, err, c.want, out)
		}
	}
}

// TestBenchFlagsRefused: values that would run something else than asked
// (all queries, the default event count or state size), a used data
// directory, a chart path that is not a directory, files that hold no
// Nexmark results, --from-json with flags it would ignore, intervals and
// time limits that are not positive, a bid larger than the state and a
// query directory a run would replace are refused before a benchmark
// starts, and an unknown benchmark is an error, not the help text.
func TestBenchFlagsRefused(t *testing.T) {
	used := t.TempDir()
	freshness := filepath.Join(used, "freshness.json")
	empty := filepath.Join(used, "empty.json")
	withQuery := t.TempDir()
	if err := os.Mkdir(filepath.Join(withQuery, "q5"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"bid": "", freshness: `{"freshness_p50_ms":170,"freshness_p99_ms":400}` + "\n", empty: "\n"} {
		if err := os.WriteFile(filepath.Join(used, filepath.Base(name)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"nexmark", "--query", ""}, "--query is empty"},
		{[]string{"nexmark", "--query", "q0", "--events", "0"}, "--events 0: give at least 1 event"},
		{[]string{"nexmark", "--query", "q0", "--parallelism", "0"}, "--parallelism 0: must be at least 1"},
		{[]string{"recovery", "--state-bytes", "0"}, "--state-bytes 0: the keyed state must be at least 1 byte"},
		{[]string{"recovery", "--dir", used}, `--dir "` + used + `" is not empty (it holds bid)`},
		{[]string{"nexmark", "--query", "q0", "--chart", filepath.Join(used, "c.png")}, "names the directory the charts are written into, not a .png file"},
		{[]string{"nexmark", "--from-json", freshness}, freshness + " line 1: not a result of strata bench nexmark --json"},
		{[]string{"nexmark", "--from-json", empty}, "--from-json: " + empty + " holds no result of strata bench nexmark --json"},
		{[]string{"nosuch"}, `unknown benchmark "nosuch": choose one of checkpoint, freshness, nexmark, pipeline, recovery, table`},
		{[]string{"freshnes", "--json"}, `unknown benchmark "freshnes"`},
		{[]string{"nexmark", "--query", "q0", "--epoch-interval", "0s"}, "--epoch-interval 0s: must be positive"},
		{[]string{"nexmark", "--query", "q0", "--checkpoint-interval", "-1s"}, "--checkpoint-interval -1s: must be positive"},
		{[]string{"nexmark", "--query", "q0", "--timeout", "0s"}, "--timeout 0s: must be positive"},
		{[]string{"nexmark", "--query", "q0", "--chart-title", "x"}, "--chart-title needs --chart"},
		{[]string{"nexmark", "--from-json", ""}, "--from-json is empty"},
		{[]string{"nexmark", "--from-json", freshness, "--query", "q7", "--vs-duckdb"}, "--from-json runs nothing, so --query, --vs-duckdb would be ignored"},
		{[]string{"nexmark", "--query", "q0,q5", "--dir", withQuery}, `--dir "` + withQuery + `": ` + filepath.Join(withQuery, "q5") + " exists"},
		{[]string{"recovery", "--bid-size", "0"}, "--bid-size 0: must be at least 1 byte"},
		{[]string{"recovery", "--state-bytes", "1000", "--bid-size", "2000"}, "--bid-size 2000 is larger than --state-bytes 1000"},
		{[]string{"recovery", "--epoch-interval", "0s"}, "--epoch-interval 0s: must be positive"},
		{[]string{"freshness", "--chart", filepath.Join(used, "x.png"), "--series", filepath.Join(used, "x.png")}, "--series and --chart name the same file"},
	} {
		out, err := run(t, append([]string{"bench"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q\n%s", c.args, err, c.want, out)
		}
	}
}

// TestBenchNexmarkFailedQueryExits: a query that fails (here, stopped by
// its time limit while its view is created) is reported as failed, not as
// unsupported, and fails the command.
func TestBenchNexmarkFailedQueryExits(t *testing.T) {
	out, err := run(t, "bench", "nexmark", "--query", "q0", "--events", "1000", "--timeout", "1ms", "--json")
	if err == nil || !strings.Contains(err.Error(), "1 of 1 queries did not pass: q0 failed") {
		t.Fatalf("a query stopped by its time limit: %v, want the command to fail\n%s", err, out)
	}
	if !strings.Contains(out, `"status":"failed"`) || !strings.Contains(out, "time limit 1ms") {
		t.Fatalf("result %s, want status failed naming the time limit", out)
	}
}
