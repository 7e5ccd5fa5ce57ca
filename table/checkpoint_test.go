package table_test

import (
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/commit"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/write"
)

// A sink's checkpoint lands in the middle of epoch 3, after epoch 2's
// barrier: epochs 1-2 are prepared messages, epoch 3's rows so far are
// pending files. The process dies before the commit. A new process
// re-commits the messages, restores the writer, receives the rest of
// epoch 3 (the source replays from the checkpoint) and commits: the
// table equals an uninterrupted run.
func TestSinkRestoreMidEpoch(t *testing.T) {
	input := map[int][]op{
		1: {{types.Insert, row(1, 1, "a")}, {types.Insert, row(2, 2, "b")}},
		2: {{types.UpdateAfter, row(1, 10, "a2")}},
		3: {{types.Delete, row(2, 0, "")}, {types.Insert, row(3, 3, "c")}, {types.UpdateAfter, row(1, 100, "a3")}},
	}
	const cut = 2 // rows of epoch 3 before the checkpoint barrier
	opts := map[string]string{"bucket": "2", "write-buffer-rows": "1000"}

	// The uninterrupted run.
	ref := newTable(t, fileio.NewMem(), opts)
	rw, _ := ref.NewWriter("sink")
	for e := 1; e <= 3; e++ {
		for _, o := range input[e] {
			rw.Write(epochOf(e), o.kind, o.row)
		}
	}
	msgs, _ := rw.PrepareCommit(3)
	if _, err := ref.Commit(msgs); err != nil {
		t.Fatal(err)
	}
	want := mustRead(t, ref)

	// The run with a crash.
	fs := fileio.NewMem()
	tb := newTable(t, fs, opts)
	w, _ := tb.NewWriter("sink")
	for e := 1; e <= 2; e++ {
		for _, o := range input[e] {
			w.Write(epochOf(e), o.kind, o.row)
		}
	}
	prepared, err := w.PrepareCommit(2)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range input[3][:cut] {
		w.Write(3, o.kind, o.row)
	}
	state, err := w.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	ckMsgs, _ := commit.Marshal(prepared)
	ckState, _ := state.Marshal()
	// ... the process dies here; nothing was committed.
	if sn, _ := tb.Latest(); sn != nil {
		t.Fatal("something was committed before the crash")
	}

	tb2, err := table.Open(fs, "wh/db/t")
	if err != nil {
		t.Fatal(err)
	}
	msgs2, err := commit.Unmarshal(ckMsgs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb2.Commit(msgs2); err != nil {
		t.Fatal(err)
	}
	w2, _ := tb2.NewWriter("sink")
	st2, err := write.UnmarshalState(ckState)
	if err != nil {
		t.Fatal(err)
	}
	if err := w2.Restore(st2); err != nil {
		t.Fatal(err)
	}
	for _, o := range input[3][cut:] {
		if err := w2.Write(3, o.kind, o.row); err != nil {
			t.Fatal(err)
		}
	}
	msgs3, err := w2.PrepareCommit(3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb2.Commit(msgs3); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, tb2); got != want {
		t.Fatalf("after restore\n%s\nwant\n%s", got, want)
	}
	if ce, _ := tb2.CommittedEpoch(); ce != 3 {
		t.Fatalf("committed epoch %d", ce)
	}
	checkChangelog(t, tb2)
}
