package table_test

import (
	"fmt"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/commit"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/scan"
	"github.com/stratadb/strata/table/schema"
)

// A sink writes two epochs, prepares them at a checkpoint, keeps the
// messages in the checkpoint and commits them when it completes; a reader
// reads at an epoch (rows come bucket by bucket) and streams the
// changelog.
func Example() {
	tb, _ := table.Create(fileio.NewMem(), "warehouse/db/accounts",
		[]schema.Field{{Name: "id", Type: types.Int64}, {Name: "balance", Type: types.Int64, Nullable: true}},
		[]string{"id"}, map[string]string{"bucket": "4"})

	w, _ := tb.NewWriter("job-1/sink")
	w.Write(1, types.Insert, types.Row{types.NewInt64(1), types.NewInt64(100)})
	w.Write(1, types.Insert, types.Row{types.NewInt64(2), types.NewInt64(50)})
	w.Write(2, types.UpdateAfter, types.Row{types.NewInt64(1), types.NewInt64(70)})
	msgs, _ := w.PrepareCommit(3) // epoch 3 changed nothing
	stored, _ := commit.Marshal(msgs)

	restored, _ := commit.Unmarshal(stored)
	ids, _ := tb.Commit(restored)
	again, _ := tb.Commit(restored) // idempotent
	ce, _ := tb.CommittedEpoch()
	fmt.Println("snapshots", ids, "re-commit", again, "committed epoch", ce)

	rows, _ := tb.ReadAtEpoch(1)
	fmt.Println("at epoch 1:", rows)

	s, _ := tb.StreamFrom(scan.Position{Snapshot: 1}, "")
	for {
		b, ok, _ := s.Next()
		if !ok {
			break
		}
		for _, c := range b.Changes {
			fmt.Println(c.Kind, c.Row)
		}
		if b.EndOfEpoch {
			fmt.Println("epoch", b.Epoch, "complete")
		}
	}
	// Output:
	// snapshots [1 2] re-commit [] committed epoch 3
	// at epoch 1: [(2, 50) (1, 100)]
	// +I (2, 50)
	// +I (1, 100)
	// epoch 1 complete
	// -U (1, 100)
	// +U (1, 70)
	// epoch 2 complete
}
