package engine

import (
	"context"
	"testing"

	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/internal/base"
)

// TestEpochOfIsTheRecordsEpoch reports three epoch closes of a DML log
// before a statement looks for its record's epoch: the answer is the first
// close at or after the record (the epoch the record is in), not the
// latest close, which a statement that looked late used to report.
func TestEpochOfIsTheRecordsEpoch(t *testing.T) {
	e := &Engine{}
	l := &dmlLog{changed: make(chan struct{})}
	for _, p := range []ingest.Pair{{Epoch: 7, Position: 10}, {Epoch: 8, Position: 20}, {Epoch: 9, Position: 30}} {
		l.closed(p)
	}
	for end, want := range map[uint64]base.Epoch{5: 7, 10: 7, 11: 8, 20: 8, 25: 9, 30: 9} {
		got, err := e.epochOf(context.Background(), l, end)
		if err != nil || got != want {
			t.Errorf("record ending at %d: epoch %d (%v), want %d", end, got, err, want)
		}
	}
	// Past the remembered history, the oldest close remembered stands in.
	for i := range closeHistory + 5 {
		l.closed(ingest.Pair{Epoch: base.Epoch(100 + i), Position: uint64(100 + i)})
	}
	if got, _ := e.epochOf(context.Background(), l, 1); got != 105 {
		t.Errorf("record before the history: epoch %d, want 105 (the oldest close remembered)", got)
	}
}
