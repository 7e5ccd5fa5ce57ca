package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/engine"
)

// BenchmarkFreshness runs the three-level topology at 100 ms epochs and
// checkpoints and reports the freshness of the top view t3 (p50 and p99 in
// ms, from an epoch's start to its commit in t3). Run it with
// go test -run XXX -bench Freshness -benchtime 1x ./demo/
func BenchmarkFreshness(b *testing.B) {
	for range b.N {
		res, err := Freshness(context.Background(), FreshnessConfig{
			Engine:   engine.Options{Dir: b.TempDir(), EpochInterval: 100 * time.Millisecond, CheckpointInterval: 100 * time.Millisecond},
			Rate:     10000,
			Warmup:   2 * time.Second,
			Duration: 10 * time.Second,
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.P50Ms, "p50_ms")
		b.ReportMetric(res.P99Ms, "p99_ms")
		b.ReportMetric(float64(res.Epochs), "epochs")
	}
}

// TestFreshnessMeasures runs Freshness briefly and checks that it measured
// epochs with sane figures.
func TestFreshnessMeasures(t *testing.T) {
	res, err := Freshness(context.Background(), FreshnessConfig{
		Engine:   engine.Options{Dir: t.TempDir()},
		Rate:     500,
		Warmup:   time.Second,
		Duration: 8 * time.Second, // long enough for a loaded machine
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Epochs < 1 || res.P50Ms <= 0 || res.P99Ms < res.P50Ms || res.Events == 0 {
		t.Fatalf("implausible result %+v", res)
	}
	// Every level commits an epoch after the one it reads: bid, t1, t2,
	// then t3, whose figures are the result's.
	if len(res.Levels) != 4 || res.Levels[0].Table != "bid" || res.Levels[3].Table != "t3" || res.Levels[3].P99Ms != res.P99Ms {
		t.Fatalf("levels %+v", res.Levels)
	}
	for i := 1; i < len(res.Levels); i++ {
		if res.Levels[i].P50Ms < res.Levels[i-1].P50Ms || res.Levels[i].MaxMs < res.Levels[i-1].MaxMs {
			t.Fatalf("level %s before %s: %+v", res.Levels[i].Table, res.Levels[i-1].Table, res.Levels)
		}
	}
	checkFreshnessSeries(t, res)
	checkFreshnessChart(t, res)
}

// checkFreshnessSeries: the series holds one entry per measured epoch, in
// epoch order from the first measured epoch's start, each with every
// level's measure in the topology's order; its JSON lines say the same.
func checkFreshnessSeries(t *testing.T, res FreshnessResult) {
	t.Helper()
	if len(res.Series) != res.Epochs {
		t.Fatalf("%d epochs in the series, %d measured", len(res.Series), res.Epochs)
	}
	var t3 []float64
	for i, ef := range res.Series {
		if len(ef.Ms) != len(res.Levels) {
			t.Fatalf("epoch %d: %d levels, want %d: %+v", ef.Epoch, len(ef.Ms), len(res.Levels), ef)
		}
		if i == 0 && ef.StartS != 0 || i > 0 && (ef.Epoch <= res.Series[i-1].Epoch || ef.StartS <= res.Series[i-1].StartS) {
			t.Fatalf("series out of order at %d: %+v", i, res.Series[max(0, i-1):i+1])
		}
		for l := 1; l < len(ef.Ms); l++ {
			if ef.Ms[l] < ef.Ms[l-1] {
				t.Fatalf("epoch %d: %s committed it before %s: %v", ef.Epoch, res.Levels[l].Table, res.Levels[l-1].Table, ef.Ms)
			}
		}
		if ef.Ms[0] <= 0 {
			t.Fatalf("epoch %d: bid freshness %v ms", ef.Epoch, ef.Ms[0])
		}
		t3 = append(t3, ef.Ms[len(ef.Ms)-1])
	}
	if slices.Max(t3) != res.MaxMs {
		t.Fatalf("max of t3 in the series %v, result's %v", slices.Max(t3), res.MaxMs)
	}
	var buf bytes.Buffer
	if err := WriteFreshnessSeries(&buf, res); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != len(res.Series) {
		t.Fatalf("%d JSON lines for %d epochs", len(lines), len(res.Series))
	}
	var last map[string]float64
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatalf("%q: %v", lines[len(lines)-1], err)
	}
	ef := res.Series[len(res.Series)-1]
	if last["epoch"] != float64(ef.Epoch) || math.Abs(last["t3_ms"]-ef.Ms[3]) > 0.001 || math.Abs(last["bid_ms"]-ef.Ms[0]) > 0.001 || len(last) != 6 {
		t.Fatalf("last line %q for %+v", lines[len(lines)-1], ef)
	}
}

// checkFreshnessChart: the chart of a run is a PNG of the size asked.
func checkFreshnessChart(t *testing.T, res FreshnessResult) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "freshness.png")
	if err := WriteFreshnessChart(path, "test run", res); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	// 8 by 4.5 inches at the PNG's 96 dots an inch.
	if b := img.Bounds(); b.Dx() != 768 || b.Dy() != 432 {
		t.Fatalf("chart bounds %v", b)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() < 10_000 {
		t.Fatalf("chart of %d bytes (%v)", fi.Size(), err)
	}
}

// TestWriteFreshnessChartRefuses: a chart needs a .png file and measured
// epochs whose levels match the result's.
func TestWriteFreshnessChartRefuses(t *testing.T) {
	dir := t.TempDir()
	levels := []LevelFreshness{{Table: "bid"}, {Table: "t3"}}
	good := FreshnessResult{Levels: levels, Series: []EpochFreshness{{Epoch: 3, Ms: []float64{10, 20}}, {Epoch: 4, StartS: 0.1, Ms: []float64{12, 30}}}}
	for _, c := range []struct {
		name, file, want string
		res              FreshnessResult
	}{
		{"not png", "f.svg", "want a .png file", good},
		{"no epoch", "f.png", "no epoch measured", FreshnessResult{Levels: levels}},
		{"short epoch", "f.png", "epoch 4 has 1 levels, the result 2", FreshnessResult{Levels: levels, Series: []EpochFreshness{{Epoch: 4, Ms: []float64{1}}}}},
	} {
		err := WriteFreshnessChart(filepath.Join(dir, c.file), "", c.res)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if err := WriteFreshnessChart(filepath.Join(dir, "g.png"), "", good); err != nil {
		t.Fatalf("two epochs: %v", err)
	}
}
