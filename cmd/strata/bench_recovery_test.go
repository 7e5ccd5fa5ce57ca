package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stratadb/strata/bench/nexmark"
)

// TestBenchRecoveryJSON runs the recovery benchmark with a tiny state: a
// child process builds it, is killed with SIGKILL, and a second child
// recovers; the recovered view must equal its recomputation.
func TestBenchRecoveryJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	out, err := run(t, "bench", "recovery", "--json", "--state-bytes", "900000", "--bid-size", "300",
		"--epoch-interval", "50ms", "--checkpoint-interval", "100ms")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var res recoveryResult
	line := out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:]
	if err := json.Unmarshal([]byte(line), &res); err != nil {
		t.Fatalf("%q: %v\n%s", line, err, out)
	}
	if res.RecoveryMs <= 0 || res.KilledExitMs <= 0 || res.KilledExitMs > res.RecoveryMs || res.RecoveryCPUSeconds <= 0 || res.CheckpointBytes < 300_000 || res.EpochAfter <= res.EpochBefore || res.Events != (nexmark.RecoveryConfig{StateBytes: 900000, BidSize: 300}).Events() {
		t.Fatalf("recovery result %+v\n%s", res, out)
	}
	if !strings.HasPrefix(res.Verified, "ok ") {
		t.Fatalf("the recovered view does not verify: %q", res.Verified)
	}
}
