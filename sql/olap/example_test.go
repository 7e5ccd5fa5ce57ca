package olap_test

import (
	"context"
	"fmt"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/olap"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

// A session asks which tables a SELECT reads, picks one epoch for them
// (here: the table's committed epoch; a server asks the meta service for
// the consistent version), and runs the query at that epoch. A later
// commit does not change what a query at the earlier epoch sees.
func Example() {
	tb, _ := table.Create(fileio.NewMem(), "warehouse/dev/accounts",
		[]schema.Field{{Name: "id", Type: types.Int64}, {Name: "balance", Type: types.Int64, Nullable: true}},
		[]string{"id"}, nil)
	w, _ := tb.NewWriter("job-1/sink")
	w.Write(1, types.Insert, types.Row{types.NewInt64(1), types.NewInt64(100)})
	w.Write(1, types.Insert, types.Row{types.NewInt64(2), types.NewInt64(50)})
	msgs, _ := w.PrepareCommit(1)
	tb.Commit(msgs)

	e, _ := olap.Open(olap.Options{})
	defer e.Close()
	ctx := context.Background()
	sql := "SELECT count(*), sum(balance) / count(*) AS mean FROM dev.accounts"
	names, _ := e.ReferencedTables(ctx, sql)
	epoch, _ := tb.CommittedEpoch()
	fmt.Println("reads", names, "at epoch", epoch)

	w.Write(2, types.UpdateAfter, types.Row{types.NewInt64(2), types.NewInt64(70)})
	msgs, _ = w.PrepareCommit(2)
	tb.Commit(msgs)

	for _, ep := range []base.Epoch{1, 2} {
		res, err := e.Query(ctx, []olap.Input{{Name: "dev.accounts", Table: tb, Epoch: ep}}, sql, olap.QueryOptions{})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("epoch", ep, res.Columns[0].Name, res.Rows[0][0], res.Columns[1].Name, res.Rows[0][1])
	}
	_, err := e.Query(ctx, []olap.Input{{Name: "dev.accounts", Table: tb, Epoch: 2}}, "SELECT 1 / (count(*) - 2) FROM accounts", olap.QueryOptions{})
	fmt.Println(err)
	// Output:
	// reads [dev.accounts] at epoch 1
	// epoch 1 count 2 mean 75
	// epoch 2 count 2 mean 85
	// division by zero
}
