package table_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/commit"
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

// WriteChunk of all-insert chunks into an append table appends them
// column by column; the table it leaves is the one Write of each row
// leaves: the same rows in order, the same data files (spills at the
// same rows) and the same changelog. A chunk that does not fit the schema
// goes row by row and fails as Write does.
func TestAppendWriteChunkEqualsRows(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	opts := map[string]string{"write-buffer-rows": "4"}
	byRow, err := table.Create(fileio.NewMem(), "rows", testFields, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	byChunk, err := table.Create(fileio.NewMem(), "chunks", testFields, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	wr, _ := byRow.NewWriter("job")
	wc, _ := byChunk.NewWriter("job")
	k := int64(0)
	for e := base.Epoch(1); e <= 6; e++ {
		for range 1 + r.Intn(3) {
			c := types.NewChunk([]types.Type{types.Int64, types.Int64, types.Varchar}, 0)
			for range r.Intn(11) {
				a, s := types.NewInt64(r.Int63n(100)-50), types.NewVarchar(strings.Repeat("x", r.Intn(4))+fmt.Sprint(k))
				if r.Intn(4) == 0 {
					a = types.Null
				}
				if r.Intn(5) == 0 {
					s = types.Null
				}
				row := types.Row{types.NewInt64(k), a, s}
				k++
				c.Append(types.Insert, row)
				if err := wr.Write(e, types.Insert, row); err != nil {
					t.Fatal(err)
				}
			}
			if err := wc.WriteChunk(e, c); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range []struct {
			tb *table.Table
			w  interface {
				PrepareCommit(base.Epoch) ([]commit.Message, error)
			}
		}{{byRow, wr}, {byChunk, wc}} {
			msgs, err := p.w.PrepareCommit(e)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.tb.Commit(msgs); err != nil {
				t.Fatal(err)
			}
		}
	}
	if a, b := mustRead(t, byRow), mustRead(t, byChunk); a != b || k < 30 {
		t.Fatalf("%d rows; by row:\n%s\nby chunk:\n%s", k, a, b)
	}
	files := func(tb *table.Table) []string {
		snap, err := tb.Latest()
		if err != nil {
			t.Fatal(err)
		}
		live, err := tb.Store().LiveFiles(snap)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range live {
			out = append(out, fmt.Sprintf("rows %d seqs %d-%d", f.File.Rows, f.File.MinSeq, f.File.MaxSeq))
		}
		return out
	}
	if a, b := files(byRow), files(byChunk); fmt.Sprint(a) != fmt.Sprint(b) || len(a) < 5 {
		t.Fatalf("data files by row %v, by chunk %v", a, b)
	}
	changes := func(tb *table.Table) string {
		s, err := tb.StreamFrom(scanStart, "")
		if err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		for {
			b, ok, err := s.Next()
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				return out.String()
			}
			for _, c := range b.Changes {
				fmt.Fprintf(&out, "%d %s %v\n", b.Epoch, c.Kind, c.Row)
			}
		}
	}
	if a, b := changes(byRow), changes(byChunk); a != b {
		t.Fatalf("changelog by row:\n%s\nby chunk:\n%s", a, b)
	}

	// A NULL in a NOT NULL column fails as Write fails.
	bad := types.NewChunk([]types.Type{types.Int64, types.Int64, types.Text}, 0)
	bad.Append(types.Insert, types.Row{types.NewInt64(1000), types.Null, types.Null})
	bad.Append(types.Insert, types.Row{types.Null, types.Null, types.Null})
	err = wc.WriteChunk(7, bad)
	if want := wr.Write(7, types.Insert, types.Row{types.Null, types.Null, types.Null}); err == nil || want == nil || strings.Replace(err.Error(), "chunks", "rows", 1) != want.Error() {
		t.Fatalf("NULL in NOT NULL column: %v, want %v", err, want)
	}
	// A column of another type that holds only NULLs is accepted, as
	// Write accepts a NULL of any kind.
	nulls := types.NewChunk([]types.Type{types.Int64, types.Text, types.Text}, 0)
	nulls.Append(types.Insert, types.Row{types.NewInt64(2000), types.Null, types.NewText("n")})
	if err := wc.WriteChunk(8, nulls); err != nil {
		t.Fatalf("all-NULL column of another type: %v", err)
	}
}
