package table_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/scan"
)

// Append tables keep every row in write order, across buffer spills,
// batched commits, empty epochs, a schema change and orphan cleanup; the
// changelog is the rows themselves, epoch by epoch.
func TestAppendTableHistories(t *testing.T) {
	for seed := int64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed))
			tb, err := table.Create(fileio.NewMem(), "logs", testFields, nil, map[string]string{"write-buffer-rows": fmt.Sprint(1 + r.Intn(5))})
			if err != nil {
				t.Fatal(err)
			}
			w, _ := tb.NewWriter("job")
			width := 3
			var model []string
			atEpoch := map[base.Epoch]string{}
			var byEpoch []string // changelog lines, with epoch ends
			for e := base.Epoch(1); e <= 25; e++ {
				n := r.Intn(7)
				if e == 12 {
					// Evolve the schema between epochs; a new writer picks it up.
					msgs, _ := w.PrepareCommit(e - 1)
					if _, err := tb.Commit(msgs); err != nil {
						t.Fatal(err)
					}
					if _, err := tb.AddColumn("tag", types.Text); err != nil {
						t.Fatal(err)
					}
					width = 4
					for i := range model {
						model[i] = strings.TrimSuffix(model[i], ")") + ", NULL)"
					}
					w, _ = tb.NewWriter("job")
				}
				for i := 0; i < n; i++ {
					row := types.Row{types.NewInt64(int64(r.Intn(5))), types.NewInt64(int64(e)), types.NewText(fmt.Sprint("m", e, "-", i))}
					if width == 4 {
						row = append(row, types.NewText("t"))
					}
					if err := w.Write(e, types.Insert, row); err != nil {
						t.Fatal(err)
					}
					model = append(model, row.String())
					byEpoch = append(byEpoch, "+I "+row.String())
				}
				if n > 0 {
					byEpoch = append(byEpoch, fmt.Sprint("end ", e))
				}
				atEpoch[e] = strings.Join(model, "\n")
				if r.Intn(3) == 0 && e < 25 {
					continue
				}
				msgs, err := w.PrepareCommit(e)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := tb.Commit(msgs); err != nil {
					t.Fatal(err)
				}
				rows, err := tb.ReadLatest()
				if err != nil {
					t.Fatal(err)
				}
				if got := rowsString(rows); got != atEpoch[e] {
					t.Fatalf("epoch %d:\n%s\nwant\n%s", e, got, atEpoch[e])
				}
			}
			if _, err := tb.OrphanFiles(0, false); err != nil {
				t.Fatal(err)
			}
			for e := base.Epoch(12); e <= 25; e++ {
				if sn, _ := scan.AtEpoch(tb.Store(), e); sn == nil || sn.SchemaID == 0 {
					continue // no snapshot under the new schema yet
				}
				rows, err := tb.ReadAtEpoch(e)
				if err != nil {
					t.Fatal(err)
				}
				if got := rowsString(rows); got != atEpoch[e] {
					t.Fatalf("at epoch %d:\n%s\nwant\n%s", e, got, atEpoch[e])
				}
			}
			s, _ := tb.StreamFrom(scanStart, "")
			var got []string
			for {
				b, ok, err := s.Next()
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				for _, c := range b.Changes {
					line := c.Kind.String() + " " + c.Row.String()
					if b.Epoch < 12 && len(c.Row) == 4 {
						line = c.Kind.String() + " " + c.Row[:3].String() // read under the newer schema
					}
					got = append(got, line)
				}
				if b.EndOfEpoch {
					got = append(got, fmt.Sprint("end ", b.Epoch))
				}
			}
			if strings.Join(got, "\n") != strings.Join(byEpoch, "\n") {
				t.Fatalf("changelog:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(byEpoch, "\n"))
			}
		})
	}
}

func rowsString(rows []types.Row) string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.String()
	}
	return strings.Join(out, "\n")
}
