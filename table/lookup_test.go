package table_test

import (
	"errors"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/scan"
)

func TestLookup(t *testing.T) {
	tb := newTable(t, fileio.NewMem(), map[string]string{"bucket": "4", "write-only": "true"})
	w, _ := tb.NewWriter("job")
	commitEpoch(t, tb, w, 1, rowsOf(50, 0)...)
	w.Write(2, types.Delete, row(7, 0, ""))
	w.Write(2, types.UpdateAfter, row(8, 80, "eight"))
	msgs, _ := w.PrepareCommit(2)
	tb.Commit(msgs)
	for k, want := range map[int64]string{3: "(3, 3, v3)", 7: "", 8: "(8, 80, eight)", 99: ""} {
		got, err := tb.Lookup(types.Row{types.NewInt64(k)})
		if err != nil {
			t.Fatal(err)
		}
		s := ""
		if got != nil {
			s = got.String()
		}
		if s != want {
			t.Errorf("lookup %d = %q, want %q", k, s, want)
		}
	}
	if _, err := tb.Lookup(types.Row{}); !errors.Is(err, base.ErrInvalidArgument) {
		t.Errorf("lookup without key: %v", err)
	}
}

func TestStreamNeedsChangelog(t *testing.T) {
	tb, err := table.Create(fileio.NewMem(), "t", testFields, []string{"k"}, map[string]string{"changelog-producer": "none"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.StreamFrom(scan.Position{}, ""); !errors.Is(err, base.ErrInvalidArgument) {
		t.Fatalf("stream without changelog: %v", err)
	}
}

// The input producer stores the rows as written: exact when the input is
// a full changelog.
func TestInputChangelogProducer(t *testing.T) {
	tb, err := table.Create(fileio.NewMem(), "t", testFields, []string{"k"}, map[string]string{"changelog-producer": "input"})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := tb.NewWriter("job")
	w.Write(1, types.Insert, row(1, 1, "a"))
	w.Write(1, types.UpdateBefore, row(1, 1, "a"))
	w.Write(1, types.UpdateAfter, row(1, 2, "b"))
	msgs, _ := w.PrepareCommit(1)
	tb.Commit(msgs)
	s, _ := tb.StreamFrom(scan.Position{}, "")
	b, ok, err := s.Next()
	if err != nil || !ok || len(b.Changes) != 3 || b.Changes[1].Kind != types.UpdateBefore || b.Changes[2].Row[2].Str() != "b" {
		t.Fatalf("input changelog %+v %v", b.Changes, err)
	}
}
