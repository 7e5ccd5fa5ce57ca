package engine

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/connector/filesink"
	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/sqlerr"
)

// readSinkFile decodes a file sink's file with connector/format's
// decoders: each record's row kind (field op) and row.
func readSinkFile(t *testing.T, cols []catalog.Column, f filesink.Format, data []byte) []format.Change {
	t.Helper()
	all := append([]catalog.Column{{Name: "op", Type: types.Text, NotNull: true}}, cols...)
	csv := format.NewCSV(all, ',', '"')
	var dec format.Decoder = format.NewJSON(all)
	if f == filesink.CSV {
		n := csv.RecordEnd(data)
		h, err := csv.WithHeader(data[:max(n, 0)])
		if err != nil {
			t.Fatal(err)
		}
		dec, data = h, data[n:]
	}
	var out []format.Change
	for len(data) > 0 {
		n := bytes.IndexByte(data, '\n') + 1
		if f == filesink.CSV {
			n = csv.RecordEnd(data)
		}
		if n <= 0 {
			t.Fatalf("unterminated record %q", data)
		}
		chs, err := dec.Decode(nil, data[:n])
		if err != nil || len(chs) != 1 {
			t.Fatalf("record %q: %v", data[:n], err)
		}
		kind, err := types.ParseRowKind(chs[0].Row[0].Str())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, format.Change{Kind: kind, Row: chs[0].Row[1:]})
		data = data[n:]
	}
	return out
}

// checkFileSink replays the committed files of sink name in dir in order
// and checks, after each file (an epoch), that the replayed rows equal
// view at that epoch: every retraction finds its row, no row is added
// twice. It returns the number of files and the last epoch.
func checkFileSink(t *testing.T, e *Engine, dir, name string, f filesink.Format, view catalog.ObjectName) (int, base.Epoch) {
	t.Helper()
	cat, err := e.Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	vt, err := cat.Table(view)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := e.Table(view)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	live := map[string]int{}
	files, last := 0, base.Epoch(0)
	for _, ent := range ents { // sorted by name: epoch order
		n, ok := filesink.ParseName(name, ent.Name())
		if !ok || n.Temp {
			continue
		}
		if n.Epoch <= last {
			t.Fatalf("%s: epoch %d after epoch %d", ent.Name(), n.Epoch, last)
		}
		b, err := os.ReadFile(filepath.Join(dir, ent.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range readSinkFile(t, vt.Columns, f, b) {
			r := ch.Row.String()
			switch {
			case ch.Kind.IsAdd():
				live[r]++
				if live[r] > 1 {
					t.Fatalf("%s: %s %s is there already", ent.Name(), ch.Kind, r)
				}
			case live[r] == 0:
				t.Fatalf("%s: %s %s retracts a row that is not there", ent.Name(), ch.Kind, r)
			default:
				delete(live, r)
			}
		}
		rows, err := tb.ReadAtEpoch(n.Epoch)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for r := range live {
			got = append(got, r)
		}
		want := sorted(rows)
		if g := sortedStrings(got); g != want {
			t.Fatalf("after %s: replayed\n%s\nview %s at epoch %d:\n%s", ent.Name(), g, view.Name, n.Epoch, want)
		}
		files++
		last = n.Epoch
	}
	return files, last
}

func sortedStrings(ss []string) string {
	ss = slices.Clone(ss)
	slices.Sort(ss)
	return strings.Join(ss, "\n")
}

// TestFileSinkRestartsAndFailures writes a filter view (CSV) and an
// aggregate view (JSON) through file sinks while their table changes
// with inserts, updates and deletes; in between the engine restarts and
// the CSV sink's directory vanishes for a while, failing the sink job
// until it comes back. Replaying the committed files in order must then
// give each view at every epoch that has a file, its last file the view's
// present contents, and no temporary file may be left.
func TestFileSinkRestartsAndFailures(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	out := t.TempDir()
	csvDir, jsonDir := filepath.Join(out, "csv"), filepath.Join(out, "json")
	e := openTest(t, dir)
	defer func() { e.Close() }()
	cols := []catalog.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}}
	if err := e.CreateTable(ctx, catalog.Table{Name: tName, Columns: cols, PrimaryKey: []string{"k"}}, false); err != nil {
		t.Fatal(err)
	}
	filtered := catalog.Name(DefaultDatabase, "filtered")
	if err := e.CreateView(ctx, filtered, "SELECT k, v * 2 AS w FROM t WHERE v % 3 <> 0", nil, false); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateView(ctx, v1Name, v1Query, nil, false); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	state := map[int64]int64{}
	apply := func(n int) base.Epoch {
		t.Helper()
		ep, err := e.Apply(ctx, tName, changes(r, state, 30, n))
		if err != nil {
			t.Fatal(err)
		}
		return ep
	}
	for range 5 {
		apply(8)
	}
	// The sinks' first epochs hold the views' contents so far.
	err := e.CreateExternalSink(ctx, catalog.Name(DefaultDatabase, "tocsv"), filtered, map[string]string{"connector": "file", "path": csvDir, "format": "csv"}, false)
	if err != nil {
		t.Fatal(err)
	}
	err = e.CreateExternalSink(ctx, catalog.Name(DefaultDatabase, "tojson"), v1Name, map[string]string{"connector": "file", "path": jsonDir, "format": "json"}, false)
	if err != nil {
		t.Fatal(err)
	}
	sinks, err := e.Sinks(ctx, DefaultDatabase)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(sinks), fmt.Sprintf("[[tocsv file %s (csv)] [tojson file %s (json)]]", csvDir, jsonDir); got != want && fmt.Sprint([][2]string{sinks[1], sinks[0]}) != want {
		t.Fatalf("sinks: %s, want %s", got, want)
	}
	lineage, err := e.systemRows(ctx, "lineage")
	if err != nil {
		t.Fatal(err)
	}
	var edges []string
	for _, r := range lineage {
		if r[0].IsNull() {
			continue
		}
		edges = append(edges, r[0].Str()+"->"+r[1].Str())
	}
	sort.Strings(edges)
	if got, want := strings.Join(edges, " "), "filtered->tocsv t->filtered t->v1 v1->tojson"; got != want {
		t.Fatalf("lineage %s, want %s", got, want)
	}
	for range 10 {
		apply(4)
	}
	// The CSV directory vanishes: its sink fails on the next epoch with
	// changes and restarts until the directory is back.
	if err := os.Rename(csvDir, csvDir+".away"); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		apply(4)
		time.Sleep(50 * time.Millisecond)
	}
	failed := false
	for _, j := range e.Jobs() {
		if j.Name == "sink-dev-tocsv" && j.Restarts > 0 {
			failed = true
		}
	}
	if !failed {
		t.Fatalf("the CSV sink did not fail while its directory was missing: %+v", e.Jobs())
	}
	if err := os.Rename(csvDir+".away", csvDir); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		apply(4)
	}
	// A restart in the middle of the stream.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openTest(t, dir)
	for range 10 {
		apply(4)
	}
	// A last change that changes both views.
	state[1000] = 1
	c := types.NewChunk([]types.Type{types.Int64, types.Int64}, 1)
	c.Append(types.Insert, types.Row{types.NewInt64(1000), types.NewInt64(1)})
	last, err := e.Apply(ctx, tName, c)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		dir  string
		name string
		f    filesink.Format
		view catalog.ObjectName
	}{{csvDir, "tocsv", filesink.CSV, filtered}, {jsonDir, "tojson", filesink.JSON, v1Name}} {
		if err := e.WaitCommitted(ctx, s.view, last); err != nil {
			t.Fatal(err)
		}
		want := filesink.FileName(s.name, last, 0, s.f)
		deadline := time.Now().Add(30 * time.Second)
		for {
			if _, err := os.Stat(filepath.Join(s.dir, want)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no file %s in %s", want, s.dir)
			}
			time.Sleep(20 * time.Millisecond)
		}
		files, lastEpoch := checkFileSink(t, e, s.dir, s.name, s.f, s.view)
		if lastEpoch != last || files < 5 {
			t.Fatalf("%s: %d files up to epoch %d, want the last at epoch %d", s.name, files, lastEpoch, last)
		}
		t.Logf("%s: %d files replay %s at their epochs", s.name, files, s.view.Name)
	}
	// Dropping a sink keeps its files; the temporary files were swept.
	if err := e.DropSink(ctx, catalog.Name(DefaultDatabase, "tocsv"), false); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(csvDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, ent := range ents {
		if n, ok := filesink.ParseName("tocsv", ent.Name()); !ok || (n.Temp && n.Epoch <= last) {
			t.Errorf("file left in %s: %s", csvDir, ent.Name())
		}
	}
	// Refusals name the option.
	err = e.CreateExternalSink(ctx, catalog.Name(DefaultDatabase, "bad"), filtered, map[string]string{"connector": "file", "format": "csv"}, false)
	if sqlerr.Code(err) != sqlerr.InvalidParameterValue || !strings.Contains(err.Error(), `"path"`) {
		t.Fatalf("file sink without a path: %v", err)
	}
	err = e.CreateExternalSink(ctx, catalog.Name(DefaultDatabase, "bad"), filtered, map[string]string{"connector": "nope"}, false)
	if sqlerr.Code(err) != sqlerr.InvalidParameterValue || !strings.Contains(err.Error(), "file, kafka, postgres") {
		t.Fatalf("unknown connector: %v", err)
	}
}
