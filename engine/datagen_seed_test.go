package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/connector/datagen"
	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/store"
)

// seedColumns are the columns of the datagen tables of these tests: a
// random BIGINT first, as the report of identical tables had it.
func seedColumns() []catalog.Column {
	return []catalog.Column{{Name: "id", Type: types.Int64}, {Name: "name", Type: types.Text}}
}

// generated returns every row datagen makes for cols and opts, read here
// straight from the connector: what a table with these stored options
// must hold. It reads unpaced: without time columns the rate changes
// when rows come, not their values (datagen row-purity).
func generated(t *testing.T, cols []catalog.Column, opts map[string]string) []types.Row {
	t.Helper()
	_, conn, _ := splitOptions(opts)
	conn["rows-per-second"] = "0"
	r, err := datagen.Open(cols, conn)
	if err != nil {
		t.Fatal(err)
	}
	var rows []types.Row
	for pos := uint64(0); ; {
		c, next, err := r.Next(pos)
		if err != nil {
			t.Fatal(err)
		}
		if c == nil {
			return rows
		}
		for i := range c.Len() {
			rows = append(rows, c.Row(i))
		}
		pos = next
	}
}

// storedOptions returns the options the catalog holds for table name.
func storedOptions(t *testing.T, e *Engine, name catalog.ObjectName) map[string]string {
	t.Helper()
	cat, err := e.Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.Table(name)
	if err != nil {
		t.Fatal(err)
	}
	return tbl.Options
}

// storedRows waits until table name's ingest job has read rows rows and
// returns what the table holds then.
func storedRows(t *testing.T, e *Engine, name catalog.ObjectName, rows uint64) []types.Row {
	t.Helper()
	ep := waitIngested(t, e, name, func(pos uint64) bool { return pos >= rows })
	_, got, _, err := e.ReadAt(context.Background(), name, ep)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestDatagenSeedChosenAtCreate: two datagen tables created without a
// seed get different random seeds, stored with their options, and share
// no value of their random BIGINT column (the report: every row of one
// joined every row of the other); each holds exactly the rows datagen
// makes from its stored options. The caller's options are not changed.
// An explicit seed is stored and used as given. A datagen source gets a
// seed at CREATE SOURCE too, and a view over it sees the rows of that
// seed.
func TestDatagenSeedChosenAtCreate(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	const rows = 500
	opts := map[string]string{"connector": "datagen", "rows-per-second": "0", "number-of-rows": strconv.Itoa(rows), "fields.name.length": "6"}
	given := maps.Clone(opts)
	w5, w6, w7 := catalog.Name(DefaultDatabase, "w5"), catalog.Name(DefaultDatabase, "w6"), catalog.Name(DefaultDatabase, "w7")
	for _, n := range []catalog.ObjectName{w5, w6} {
		if err := e.CreateTable(ctx, catalog.Table{Name: n, Columns: seedColumns(), Options: opts}, false); err != nil {
			t.Fatal(err)
		}
	}
	if !maps.Equal(opts, given) {
		t.Fatalf("CreateTable changed the caller's options to %v", opts)
	}
	explicit := maps.Clone(opts)
	explicit["seed"] = "7"
	if err := e.CreateTable(ctx, catalog.Table{Name: w7, Columns: seedColumns(), Options: explicit}, false); err != nil {
		t.Fatal(err)
	}
	o5, o6, o7 := storedOptions(t, e, w5), storedOptions(t, e, w6), storedOptions(t, e, w7)
	for _, o := range []map[string]string{o5, o6} {
		if _, err := strconv.ParseUint(o["seed"], 10, 64); err != nil {
			t.Fatalf("stored options %v: no chosen seed (%v)", o, err)
		}
		rest := maps.Clone(o)
		delete(rest, "seed")
		if !maps.Equal(rest, opts) {
			t.Fatalf("stored options %v: want the given ones %v and a seed", o, opts)
		}
	}
	if o5["seed"] == o6["seed"] {
		t.Fatalf("w5 and w6 got the same seed %s", o5["seed"])
	}
	if !maps.Equal(o7, explicit) {
		t.Fatalf("w7 stored %v, want the given %v", o7, explicit)
	}

	r5, r6, r7 := storedRows(t, e, w5, rows), storedRows(t, e, w6, rows), storedRows(t, e, w7, rows)
	for _, c := range []struct {
		name string
		got  []types.Row
		opts map[string]string
	}{{"w5", r5, o5}, {"w6", r6, o6}, {"w7", r7, explicit}} {
		want := generated(t, seedColumns(), c.opts)
		if len(c.got) != rows || len(want) != rows || sorted(c.got) != sorted(want) {
			t.Fatalf("%s: %d rows, not the %d datagen makes from its stored options", c.name, len(c.got), len(want))
		}
	}
	ids := map[int64]bool{}
	for _, r := range r5 {
		ids[r[0].Int64()] = true
	}
	for _, r := range r6 {
		if ids[r[0].Int64()] {
			t.Fatalf("w5 and w6 share id %d", r[0].Int64())
		}
	}
	// The explicit seed 7 gives what it gave before: not the default
	// seed's rows, nor the chosen seeds'.
	def := maps.Clone(opts)
	if sorted(r7) == sorted(generated(t, seedColumns(), def)) || sorted(r7) == sorted(r5) {
		t.Fatal("w7 (seed 7) holds the rows of another seed")
	}

	// A source: the seed is chosen at CREATE SOURCE and read by the
	// view's readers.
	src, view := catalog.Name(DefaultDatabase, "gen"), catalog.Name(DefaultDatabase, "gen_all")
	srcOpts := map[string]string{"rows-per-second": "0", "number-of-rows": strconv.Itoa(rows), "fields.name.length": "6"}
	if err := e.CreateSource(ctx, catalog.Source{Name: src, Connector: "datagen", Columns: seedColumns(), Options: srcOpts}, false); err != nil {
		t.Fatal(err)
	}
	if _, ok := srcOpts["seed"]; ok {
		t.Fatalf("CreateSource changed the caller's options to %v", srcOpts)
	}
	cat, err := e.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := cat.Source(src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := strconv.ParseUint(s.Options["seed"], 10, 64); err != nil || s.Options["seed"] == o5["seed"] || s.Options["seed"] == o6["seed"] {
		t.Fatalf("source options %v: want a seed of its own (%v)", s.Options, err)
	}
	if err := e.CreateView(ctx, view, "SELECT id, name FROM gen", nil, false); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for e.SourcePosition(view, src).Position < rows {
		if time.Now().After(deadline) {
			t.Fatalf("view %s: source not consumed (at %+v)", view.Name, e.SourcePosition(view, src))
		}
		time.Sleep(10 * time.Millisecond)
	}
	consumed := e.SourcePosition(view, src).Epoch
	if err := e.WaitCommitted(ctx, view, consumed); err != nil {
		t.Fatal(err)
	}
	_, got, _, err := e.ReadAt(ctx, view, consumed)
	if err != nil {
		t.Fatal(err)
	}
	if want := generated(t, seedColumns(), s.Options); len(got) != rows || sorted(got) != sorted(want) {
		t.Fatalf("view over the source: %d rows, not the %d of its stored seed", len(got), len(want))
	}
}

// TestDatagenSeedAcrossReplayAndRestart feeds a paced datagen table
// created without a seed whose reader panics once partway: the ingest job
// restarts from its checkpoint and makes again the rows past it (a
// replay); then the engine closes while the table is still being fed and
// opens again on the same directory, and the job resumes from its
// checkpoint in the new process. The table ends with exactly the rows
// datagen makes from the options stored at CREATE, each once, and the
// rows committed before the restart are among them unchanged.
func TestDatagenSeedAcrossReplayAndRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const rows = 3000
	var armed atomic.Bool
	armed.Store(true)
	open := func() *Engine {
		// The connector keeps its name, so CREATE chooses datagen's seed.
		e, err := Open(ctx, Options{Dir: dir, EpochInterval: 20 * time.Millisecond, CheckpointInterval: 20 * time.Millisecond,
			Connectors: map[string]Connector{datagen.ConnectorName: func(t catalog.Table, opts map[string]string) ([]ingest.Reader, error) {
				r, err := datagen.Open(t.Columns, opts)
				if err != nil {
					return nil, err
				}
				return []ingest.Reader{flakyReader{r: r, armed: &armed, at: rows / 5}}, nil
			}}})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	e := open()
	defer func() { e.Close() }()
	name := catalog.Name(DefaultDatabase, "gen")
	if err := e.CreateTable(ctx, catalog.Table{Name: name, Columns: seedColumns(),
		Options: map[string]string{"connector": "datagen", "rows-per-second": "1000", "number-of-rows": strconv.Itoa(rows), "fields.name.length": "6"}}, false); err != nil {
		t.Fatal(err)
	}
	stored := storedOptions(t, e, name)
	if _, err := strconv.ParseUint(stored["seed"], 10, 64); err != nil {
		t.Fatalf("stored options %v: no chosen seed", stored)
	}
	deadline := time.Now().Add(30 * time.Second)
	for restarted := false; !restarted; {
		for _, j := range e.Jobs() {
			restarted = restarted || j.Name == ingestJobName(name) && j.Restarts > 0
		}
		if time.Now().After(deadline) {
			t.Fatal("the injected failure did not restart the ingest job")
		}
		time.Sleep(10 * time.Millisecond)
	}
	mid := waitIngested(t, e, name, func(pos uint64) bool { return pos >= rows/3 })
	_, part, _, err := e.ReadAt(ctx, name, mid)
	if err != nil {
		t.Fatal(err)
	}
	if len(part) == 0 || len(part) >= rows {
		t.Fatalf("%d rows before the restart; the test needs some, not all", len(part))
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = open()
	if again := storedOptions(t, e, name); !maps.Equal(again, stored) {
		t.Fatalf("options after the restart %v, want those stored at CREATE %v", again, stored)
	}
	all := storedRows(t, e, name, rows)
	want := generated(t, seedColumns(), stored)
	if len(all) != rows || len(want) != rows || sorted(all) != sorted(want) {
		t.Fatalf("%d rows after a replay and a restart, not the %d of the stored seed, each once", len(all), len(want))
	}
	have := map[string]bool{}
	for _, r := range all {
		have[r.String()] = true
	}
	for _, r := range part {
		if !have[r.String()] {
			t.Fatalf("row %v, committed before the restart, is gone", r)
		}
	}
}

// TestDatagenOldEntryKeepsDefaultSeed: a datagen table whose catalog
// entry has no seed, as CREATE TABLE stored it before it chose seeds,
// generates the default seed's rows (the ids of the report, 47461994047746694
// first), and opening the engine does not add a seed to it. The entry is
// made by creating the table while its reader makes nothing, then
// removing the seed from the catalog document in the meta store, as an
// older version wrote it.
func TestDatagenOldEntryKeepsDefaultSeed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := Open(ctx, Options{Dir: dir, EpochInterval: 20 * time.Millisecond, CheckpointInterval: 20 * time.Millisecond,
		Connectors: map[string]Connector{datagen.ConnectorName: func(catalog.Table, map[string]string) ([]ingest.Reader, error) {
			return []ingest.Reader{idleReader{}}, nil
		}}})
	if err != nil {
		t.Fatal(err)
	}
	name := catalog.Name(DefaultDatabase, "old")
	const rows = 200
	opts := map[string]string{"connector": "datagen", "rows-per-second": "0", "number-of-rows": strconv.Itoa(rows), "fields.name.length": "6"}
	if err := e.CreateTable(ctx, catalog.Table{Name: name, Columns: seedColumns(), Options: opts}, false); err != nil {
		t.Fatal(err)
	}
	if _, ok := storedOptions(t, e, name)["seed"]; !ok {
		t.Fatal("a new table got no seed")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	removeStoredOption(t, filepath.Join(dir, "meta.db"), name, "seed")

	e = openTest(t, dir)
	defer e.Close()
	if got := storedOptions(t, e, name); !maps.Equal(got, opts) {
		t.Fatalf("old entry's options after opening: %v, want %v unchanged", got, opts)
	}
	got := storedRows(t, e, name, rows)
	want := generated(t, seedColumns(), opts)
	if len(got) != rows || sorted(got) != sorted(want) {
		t.Fatalf("old entry: %d rows, not the %d of the default seed", len(got), len(want))
	}
	ids := map[int64]bool{}
	for _, r := range got {
		ids[r[0].Int64()] = true
	}
	if !ids[47461994047746694] || !ids[7075712310021170425] {
		t.Fatal("old entry: the default seed's first ids 47461994047746694 and 7075712310021170425 are missing")
	}
}

// idleReader is a Reader with nothing to read yet.
type idleReader struct{}

func (idleReader) Next(pos uint64) (*types.Chunk, uint64, error) { return nil, pos, nil }

// removeStoredOption deletes option key of table name from the catalog
// document in the bbolt meta store at path (meta/catalog/codec.md),
// leaving everything else as it was.
func removeStoredOption(t *testing.T, path string, name catalog.ObjectName, key string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	all, err := st.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(all["catalog"]))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	tables, _ := doc["tables"].([]any)
	found := false
	for _, x := range tables {
		tbl, _ := x.(map[string]any)
		if tbl["name"] != name.Database+"."+name.Name {
			continue
		}
		o, _ := tbl["options"].(map[string]any)
		if _, ok := o[key]; !ok {
			t.Fatalf("catalog entry of %s has no option %q: %v", name, key, o)
		}
		delete(o, key)
		found = true
	}
	if !found {
		t.Fatalf("no catalog entry of %s in %s", name, all["catalog"])
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var batch store.Batch
	batch.Put("catalog", b)
	if err := st.Apply(ctx, batch); err != nil {
		t.Fatal(err)
	}
}
