package demo

import (
	"context"
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
}
