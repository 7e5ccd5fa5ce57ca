package scan_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/scan"
	"github.com/stratadb/strata/table/schema"
)

var fields = []schema.Field{
	{Name: "k", Type: types.Int64},
	{Name: "s", Type: types.Text, Nullable: true},
}

// history writes epochs of rows into tb, small write buffers and several
// buckets making each snapshot's changelog several files, and returns the
// number of rows written.
func history(t *testing.T, tb *table.Table, keyed bool) int {
	t.Helper()
	w, err := tb.NewWriter("job")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for e := base.Epoch(1); e <= 4; e++ {
		for i := 0; i < 10*int(e)+3; i++ {
			k := int64(i * 7 % 23)
			kind := types.Insert
			if !keyed {
				k = int64(n)
			}
			if err := w.Write(e, kind, types.Row{types.NewInt64(k), types.NewText(fmt.Sprintf("e%d-%d", e, i))}); err != nil {
				t.Fatal(err)
			}
			n++
		}
		msgs, err := w.PrepareCommit(e)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tb.Commit(msgs); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// fieldTypes are the column types of fields.
var fieldTypes = []types.Type{types.Int64, types.Text}

// read streams tb from pos with pieces of maxRows, opening a new stream at
// the position after every piece when resume is set (as a restored source
// does), and returns every change as one line "snapshot/offset kind row"
// and the end-of-epoch marks. With columnar, the stream gives its batches
// as chunks (Stream.Types), whose rows are listed instead.
func read(t *testing.T, tb *table.Table, pos scan.Position, maxRows int, resume, columnar bool) []string {
	t.Helper()
	s, err := tb.StreamFrom(pos, "")
	if err != nil {
		t.Fatal(err)
	}
	s.MaxRows = maxRows
	if columnar {
		s.Types = fieldTypes
	}
	var out []string
	for {
		p := s.Position()
		b, ok, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		if b.Len() > maxRows {
			t.Fatalf("piece of %d changes, MaxRows %d", b.Len(), maxRows)
		}
		if columnar {
			if len(b.Changes) != 0 {
				t.Fatalf("a stream with Types gave %d Changes", len(b.Changes))
			}
			c := b.Chunk(fieldTypes)
			if c.Len() != b.Len() {
				t.Fatalf("chunk of %d rows, batch of %d", c.Len(), b.Len())
			}
			for i := range c.Len() {
				out = append(out, fmt.Sprintf("%d/%d %s %v", b.Snapshot, p.Offset+int64(i), c.Kind(i), c.Row(i)))
			}
		}
		for i, c := range b.Changes {
			out = append(out, fmt.Sprintf("%d/%d %s %v", b.Snapshot, p.Offset+int64(i), c.Kind, c.Row))
		}
		if b.EndOfEpoch {
			out = append(out, fmt.Sprintf("end %d epoch %d", b.Snapshot, b.Epoch))
		}
		if resume {
			if s, err = tb.StreamFrom(b.Next, ""); err != nil {
				t.Fatal(err)
			}
			s.MaxRows = maxRows
			if columnar {
				s.Types = fieldTypes
			}
		}
	}
}

// TestStreamFileByFile: a snapshot's changelog spread over several files
// is read the same whatever the piece size and from any saved position,
// and a position resumes at exactly the record after it.
func TestStreamFileByFile(t *testing.T) {
	for _, keyed := range []bool{true, false} {
		t.Run(fmt.Sprintf("keyed=%v", keyed), func(t *testing.T) {
			opts := map[string]string{"write-buffer-rows": "4", "bucket": "3"}
			var pk []string
			if keyed {
				pk = []string{"k"}
			} else {
				opts = map[string]string{"write-buffer-rows": "4"}
			}
			tb, err := table.Create(fileio.NewMem(), "wh/db/t", fields, pk, opts)
			if err != nil {
				t.Fatal(err)
			}
			n := history(t, tb, keyed)
			// The case this test is about: snapshot 1's changes are in
			// several files.
			sn, err := tb.Store().Snapshots.Get(1)
			if err != nil {
				t.Fatal(err)
			}
			ref := sn.ChangelogManifestList
			if ref.IsZero() {
				ref = sn.DeltaManifestList
			}
			entries, err := tb.Store().Manifests.ReadEntries(ref)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) < 3 {
				t.Fatalf("snapshot 1 has %d files, want several", len(entries))
			}
			all := read(t, tb, scan.Position{Snapshot: 1}, 1<<20, false, false)
			var changes int
			for _, l := range all {
				if !strings.HasPrefix(l, "end ") {
					changes++
				}
			}
			if !keyed && changes != n {
				t.Fatalf("%d changes, %d rows written", changes, n)
			}
			if keyed && changes < n {
				// Every write is at least an insert or an update of its key.
				t.Fatalf("%d changes, fewer than the %d rows written", changes, n)
			}
			for _, maxRows := range []int{1, 3, 7, 50, 1 << 20} {
				for _, resume := range []bool{false, true} {
					for _, columnar := range []bool{false, true} {
						got := read(t, tb, scan.Position{Snapshot: 1}, maxRows, resume, columnar)
						if strings.Join(got, "\n") != strings.Join(all, "\n") {
							t.Fatalf("MaxRows %d resume %v columnar %v:\n%s\nwant\n%s", maxRows, resume, columnar, strings.Join(got, "\n"), strings.Join(all, "\n"))
						}
					}
				}
			}
			// From every saved position, the rest of the changelog.
			for i, l := range all {
				if strings.HasPrefix(l, "end ") {
					continue
				}
				var sn, off int64
				if _, err := fmt.Sscanf(l, "%d/%d", &sn, &off); err != nil {
					t.Fatal(err)
				}
				got := read(t, tb, scan.Position{Snapshot: base.SnapshotID(sn), Offset: off}, 5, false, i%2 == 1)
				if strings.Join(got, "\n") != strings.Join(all[i:], "\n") {
					t.Fatalf("from %d/%d:\n%s\nwant\n%s", sn, off, strings.Join(got, "\n"), strings.Join(all[i:], "\n"))
				}
			}
		})
	}
}

// TestStreamOffsetPastEnd: a position past the snapshot's changelog is
// refused, naming the snapshot.
func TestStreamOffsetPastEnd(t *testing.T) {
	tb, err := table.Create(fileio.NewMem(), "wh/db/t", fields, nil, map[string]string{"write-buffer-rows": "4"})
	if err != nil {
		t.Fatal(err)
	}
	history(t, tb, false)
	s, err := tb.StreamFrom(scan.Position{Snapshot: 1, Offset: 1000}, "")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Next()
	if err == nil || !strings.Contains(err.Error(), "snapshot 1: offset 1000 past its 13 changelog records") {
		t.Fatalf("err %v", err)
	}
}

// TestStreamTypesChecked: a stream whose Types do not match the table's
// columns, by number or family, refuses its first batch with an error
// naming the column.
func TestStreamTypesChecked(t *testing.T) {
	tb, err := table.Create(fileio.NewMem(), "wh/db/t", fields, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	history(t, tb, false)
	for _, c := range []struct {
		ts   []types.Type
		want string
	}{
		{[]types.Type{types.Int64}, "of 2 columns"},
		{[]types.Type{types.Int64, types.Float64}, "column 2"},
	} {
		s, err := tb.StreamFrom(scan.Position{Snapshot: 1}, "")
		if err != nil {
			t.Fatal(err)
		}
		s.Types = c.ts
		if _, _, err := s.Next(); !errors.Is(err, base.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Types %v: %v, want an error naming %q", c.ts, err, c.want)
		}
	}
}
