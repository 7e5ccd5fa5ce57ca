package table_test

import (
	"fmt"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/scan"
	"github.com/stratadb/strata/table/write"
)

var scanStart = scan.Position{Snapshot: 1}

func newTable(t *testing.T, fs fileio.FS, opts map[string]string) *table.Table {
	t.Helper()
	tb, err := table.Create(fs, "wh/db/t", testFields, []string{"k"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func row(k, a int64, s string) types.Row {
	return types.Row{types.NewInt64(k), types.NewInt64(a), types.NewText(s)}
}

// commitEpoch writes rows as +I in epoch e and commits them.
func commitEpoch(t *testing.T, tb *table.Table, w *write.Writer, e base.Epoch, rows ...types.Row) []base.SnapshotID {
	t.Helper()
	for _, r := range rows {
		if err := w.Write(e, types.Insert, r); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := w.PrepareCommit(e)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := tb.Commit(msgs)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func mustRead(t *testing.T, tb *table.Table) string {
	t.Helper()
	rows, err := tb.ReadLatest()
	if err != nil {
		t.Fatal(err)
	}
	return dump(rows)
}

func rowsOf(n int, base int64) []types.Row {
	var out []types.Row
	for i := range n {
		out = append(out, row(base+int64(i), int64(i), fmt.Sprintf("v%d", base+int64(i))))
	}
	return out
}

func epochOf(e int) base.Epoch { return base.Epoch(e) }

// streamChanges reads the table's changelog from its first snapshot to
// its latest, in order.
func streamChanges(t *testing.T, tb *table.Table) []scan.Change {
	t.Helper()
	s, err := tb.StreamFrom(scanStart, "")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []scan.Change
	for {
		b, ok, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		out = append(out, b.Changes...)
	}
}
