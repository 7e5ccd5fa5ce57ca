package filesink_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/connector/filesink"
	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/dataflow/testkit"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/service"
	"github.com/stratadb/strata/meta/store"
)

var cols = []catalog.Column{{Name: "id", Type: types.Int64, NotNull: true}, {Name: "v", Type: types.Text}, {Name: "amount", Type: types.Numeric}}

func colTypes() []types.Type { return format.Types(cols) }

// readBack decodes a sink file with connector/format's decoders: the row
// kinds from the op field, the rows from the columns.
func readBack(t *testing.T, f filesink.Format, data []byte) []format.Change {
	t.Helper()
	all := append([]catalog.Column{{Name: "op", Type: types.Text, NotNull: true}}, cols...)
	var dec format.Decoder
	switch f {
	case filesink.CSV:
		csv := format.NewCSV(all, ',', '"')
		n := csv.RecordEnd(data)
		if n < 0 {
			t.Fatalf("no header in %q", data)
		}
		h, err := csv.WithHeader(data[:n])
		if err != nil {
			t.Fatal(err)
		}
		dec, data = h, data[n:]
	case filesink.JSON:
		dec = format.NewJSON(all)
	}
	var out []format.Change
	for len(data) > 0 {
		n := bytes.IndexByte(data, '\n') + 1
		if f == filesink.CSV {
			n = format.NewCSV(all, ',', '"').RecordEnd(data)
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

func num(t *testing.T, s string) types.Datum {
	d, err := types.ParseText(types.Numeric, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestEncodeReadsBack writes awkward values (NULL and the empty string,
// commas, quotes, line breaks, exact decimals) in both formats and reads
// them back with connector/format: the same kinds and values.
func TestEncodeReadsBack(t *testing.T) {
	c := types.NewChunk(colTypes(), 5)
	c.Append(types.Insert, types.Row{types.NewInt64(1), types.NewText(""), num(t, "1.50")})
	c.Append(types.UpdateBefore, types.Row{types.NewInt64(1), types.NewText(""), num(t, "1.50")})
	c.Append(types.UpdateAfter, types.Row{types.NewInt64(1), types.Null, num(t, "-12345678901234567890.000001")})
	c.Append(types.Insert, types.Row{types.NewInt64(2), types.NewText("a,\"b\"\nc"), types.Null})
	c.Append(types.Delete, types.Row{types.NewInt64(2), types.NewText("a,\"b\"\nc"), types.Null})
	want := c.String()
	for _, f := range []filesink.Format{filesink.CSV, filesink.JSON} {
		enc := filesink.NewEncoder(cols, f, "op")
		b := enc.Header(nil)
		for i := range c.Len() {
			b = enc.Append(b, c.Kind(i), c.Row(i))
		}
		got := format.AppendChanges(nil, colTypes(), readBack(t, f, b)).String()
		if got != want {
			t.Fatalf("%s:\n%s\nread back as\n%s\nwant\n%s", f, b, got, want)
		}
	}
	enc := filesink.NewEncoder(cols, filesink.CSV, "op")
	if got := string(enc.Append(enc.Header(nil), c.Kind(2), c.Row(2))); got != "op,id,v,amount\n+U,1,,-12345678901234567890.000001\n" {
		t.Fatalf("csv: %q", got)
	}
	enc = filesink.NewEncoder(cols, filesink.JSON, "op")
	if got := string(enc.Append(nil, c.Kind(0), c.Row(0))); got != `{"op": "+I", "id": 1, "v": "", "amount": 1.50}`+"\n" {
		t.Fatalf("json: %q", got)
	}
}

func TestOptions(t *testing.T) {
	o, err := filesink.ParseOptions(map[string]string{"connector": "file", "path": "/x", "format": "JSON", "op.field": "kind"})
	if err != nil || o != (filesink.Options{Dir: "/x", Format: filesink.JSON, OpField: "kind"}) {
		t.Fatalf("%+v %v", o, err)
	}
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"format": "csv"}, `"path" (the directory to write) is required`},
		{map[string]string{"path": "/x", "format": "avro"}, `is not csv or json`},
		{map[string]string{"path": "/x", "topic": "t"}, `unknown option "topic"`},
		{map[string]string{"path": "/x", "connector": "kafka"}, `is not file`},
	} {
		_, err := filesink.ParseOptions(tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, base.ErrInvalidArgument) {
			t.Errorf("%v: %v, want %q", tc.opts, err, tc.want)
		}
	}
	_, err = filesink.NewSink(filesink.Config{Options: filesink.Options{Dir: "/x", OpField: "v"}, Name: "k", Columns: cols})
	if err == nil || !strings.Contains(err.Error(), `column "v" has the name of the field`) {
		t.Fatalf("op field clash: %v", err)
	}
	if _, err := filesink.NewSink(filesink.Config{Options: o, Name: "../k", Columns: cols}); !errors.Is(err, base.ErrInvalidArgument) {
		t.Fatalf("bad name: %v", err)
	}
}

func chunkOf(kind types.RowKind, ids ...int64) *types.Chunk {
	c := types.NewChunk(colTypes(), len(ids))
	for _, id := range ids {
		c.Append(kind, types.Row{types.NewInt64(id), types.NewText(fmt.Sprint("v", id)), types.Null})
	}
	return c
}

func listDir(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasSuffix(n, ".tmp") {
			n = n[:strings.LastIndexByte(n[:len(n)-4], '.')] + ".<token>.tmp"
		}
		names = append(names, n)
	}
	return strings.Join(names, "\n")
}

// TestSinkRecovers walks the sink through a failed attempt by hand:
// attempt 1 prepares epochs 5 to 7 (7 empty) and dies with epoch 5 in a
// completed checkpoint; attempt 2 re-commits epoch 5 twice, and its first
// prepare, of epoch 6, removes what attempt 1 left under epoch 6.
func TestSinkRecovers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	o := filesink.Options{Dir: dir, Format: filesink.CSV}
	if _, err := filesink.NewSink(filesink.Config{Options: o, Name: "k", Columns: cols}); err != nil {
		t.Fatal(err)
	}
	// The directory must exist: a Prepare into a missing one fails.
	s0, _ := filesink.NewSink(filesink.Config{Options: o, Name: "k", Columns: cols})
	if _, err := s0.Prepare(0, 4, []*types.Chunk{chunkOf(types.Insert, 1)}); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("prepare into a missing directory: %v", err)
	}
	if err := filesink.CreateDir(o); err != nil {
		t.Fatal(err)
	}
	attempt := func() *filesink.Sink {
		s, err := filesink.NewSink(filesink.Config{Options: o, Name: "k", Columns: cols})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s1 := attempt()
	descs := map[base.Epoch][]byte{}
	for e := base.Epoch(5); e <= 7; e++ {
		var chunks []*types.Chunk
		if e < 7 {
			chunks = []*types.Chunk{chunkOf(types.Insert, int64(e)*10, int64(e)*10+1)}
		}
		d, err := s1.Prepare(0, e, chunks)
		if err != nil {
			t.Fatal(err)
		}
		descs[e] = d
	}
	if got, want := listDir(t, dir), ".k-00000000000000000005-000.csv.<token>.tmp\n.k-00000000000000000006-000.csv.<token>.tmp"; got != want {
		t.Fatalf("after attempt 1:\n%s\nwant\n%s", got, want)
	}
	s2 := attempt()
	for range 2 {
		if err := s2.Commit(0, 5, descs[5]); err != nil {
			t.Fatalf("re-commit of epoch 5: %v", err)
		}
	}
	d6, err := s2.Prepare(0, 6, []*types.Chunk{chunkOf(types.Insert, 66), chunkOf(types.Delete, 50)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Commit(0, 6, d6); err != nil {
		t.Fatal(err)
	}
	if err := s2.Commit(0, 7, descs[7]); err != nil {
		t.Fatal(err)
	}
	if got, want := listDir(t, dir), "k-00000000000000000005-000.csv\nk-00000000000000000006-000.csv"; got != want {
		t.Fatalf("after attempt 2:\n%s\nwant\n%s", got, want)
	}
	b, err := os.ReadFile(filepath.Join(dir, "k-00000000000000000006-000.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "op,id,v,amount\n+I,66,v66,\n-D,50,v50,\n" {
		t.Fatalf("epoch 6 file: %q", b)
	}
	// Attempt 1's file of epoch 6 was swept; committing its descriptor
	// changes nothing, since attempt 2's file holds the epoch.
	if err := s2.Commit(0, 6, descs[6]); err != nil {
		t.Fatalf("re-commit over a committed epoch: %v", err)
	}
	if err := s2.Commit(1, 8, []byte(`{"temp": ".gone.tmp", "file": "k-00000000000000000008-001.csv", "changes": 3}`)); !errors.Is(err, base.ErrNotFound) {
		t.Fatalf("commit of a vanished file: %v", err)
	}
}

// changeLog is a growing input of transactions of changes to keyed rows:
// inserts, updates (-U and +U in one transaction) and deletes.
type changeLog struct {
	txns  [][]format.Change
	mu    sync.Mutex
	avail int
}

func newChangeLog(seed uint64, txns, keys int) *changeLog {
	rng := rand.New(rand.NewPCG(seed, 3))
	live := map[int64]types.Row{}
	l := &changeLog{}
	n := 0
	for range txns {
		var tx []format.Change
		for range 1 + rng.IntN(3) {
			n++
			k := int64(rng.IntN(keys))
			amount, _ := types.ParseText(types.Numeric, fmt.Sprintf("%d.%02d", n, n%100), nil)
			row := types.Row{types.NewInt64(k), types.NewText(fmt.Sprintf("v%d, \"%d\"", n, n)), amount}
			old, ok := live[k]
			switch {
			case !ok:
				tx = append(tx, format.Change{Kind: types.Insert, Row: row})
				live[k] = row
			case rng.IntN(4) == 0:
				tx = append(tx, format.Change{Kind: types.Delete, Row: old})
				delete(live, k)
			default:
				tx = append(tx, format.Change{Kind: types.UpdateBefore, Row: old}, format.Change{Kind: types.UpdateAfter, Row: row})
				live[k] = row
			}
		}
		l.txns = append(l.txns, tx)
	}
	return l
}

// Next implements ingest.Reader: the position is the transaction number.
func (l *changeLog) Next(pos uint64) (*types.Chunk, uint64, error) {
	l.mu.Lock()
	avail := l.avail
	l.mu.Unlock()
	if pos >= uint64(avail) {
		return nil, pos, nil
	}
	return format.AppendChanges(nil, colTypes(), l.txns[pos]), pos + 1, nil
}

// feed makes the transactions available, two a millisecond, so that they
// spread over many epochs.
func (l *changeLog) feed() {
	for i := 1; i <= len(l.txns); i++ {
		l.mu.Lock()
		l.avail = i
		l.mu.Unlock()
		if i%2 == 0 {
			time.Sleep(time.Millisecond)
		}
	}
}

// failAfterCommit fails a subtask right after a commit succeeded, so that
// restores re-commit epochs that are committed already.
type failAfterCommit struct {
	operator.Committer
	in *testkit.Injector
}

func (f failAfterCommit) Commit(subtask int, e base.Epoch, desc []byte) error {
	if err := f.Committer.Commit(subtask, e, desc); err != nil {
		return err
	}
	f.in.Maybe("after commit")
	return nil
}

// TestSinkExactlyOnce runs a changelog through an ingest source into two
// file sinks, CSV with two subtasks (hashed by key) and JSON with one,
// under 5 ms epochs, 3 ms checkpoints and 16 injected failures, some
// right after a commit. Reading the committed files back in name order
// must then give every change up to the position where the source closed
// the last epoch exactly once, in order per key (in total order for the
// single subtask), and no temporary file may be left of an epoch that is
// committed.
func TestSinkExactlyOnce(t *testing.T) {
	ctx := context.Background()
	svc, err := service.Open(ctx, service.Options{Store: store.NewMemory(), EpochInterval: 5 * time.Millisecond, HeartbeatTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	log := newChangeLog(9, 400, 50)
	go log.feed()
	start, err := svc.CurrentEpoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	until := start.Epoch + 200
	var lastPos atomic.Uint64
	in := testkit.NewInjector(21, 16, 20, time.Millisecond, 4*time.Millisecond)
	root := t.TempDir()
	for _, f := range []filesink.Format{filesink.CSV, filesink.JSON} {
		if err := filesink.CreateDir(filesink.Options{Dir: filepath.Join(root, string(f))}); err != nil {
			t.Fatal(err)
		}
	}
	sink := func(f filesink.Format) func(int) operator.Operator {
		return func(int) operator.Operator {
			s, err := filesink.NewSink(filesink.Config{Options: filesink.Options{Dir: filepath.Join(root, string(f)), Format: f}, Name: "k", Columns: cols})
			if err != nil {
				panic(err)
			}
			return testkit.Failing{Operator: operator.NewTwoPhaseCommitSink(failAfterCommit{s, in}), In: in, Where: "sink " + string(f)}
		}
	}
	job := &graph.Job{Name: "to-files",
		Vertices: []graph.Vertex{
			{Name: "src", Parallelism: 1, NewSource: func(int) operator.Source {
				return ingest.New(ingest.Config{Reader: log, Clock: svc, Name: "changes", StartEpoch: start.Epoch, UntilEpoch: until, Hold: in.Pending,
					OnClose: func(p ingest.Pair) {
						if p.Epoch == until {
							lastPos.Store(p.Position)
						}
					}})
			}},
			{Name: "csv", Parallelism: 2, NewOperator: sink(filesink.CSV)},
			{Name: "json", Parallelism: 1, NewOperator: sink(filesink.JSON)},
		},
		Edges: []graph.Edge{
			{From: "src", To: "csv", Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: []types.Type{types.Int64}},
			{From: "src", To: "json", Partitioning: graph.Forward},
		},
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	err = task.Run(rctx, job, task.Options{Policy: barrier.PolicyUnaligned, CheckpointInterval: 3 * time.Millisecond,
		TolerableFailures: 1000, Storage: checkpoint.NewStorage(checkpoint.OSFS{}, t.TempDir(), 2),
		Restart: task.RestartStrategy{MaxAttempts: 1000, Delay: time.Millisecond},
		OnEvent: func(e task.Event) {
			if e.Kind == task.CheckpointCompleted {
				in.CheckpointCompleted()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if in.Failed() < 16 {
		t.Fatalf("only %d failures", in.Failed())
	}
	end := lastPos.Load()
	if end < 100 {
		t.Fatalf("the source read only %d transactions", end)
	}
	var want []format.Change
	for _, tx := range log.txns[:end] {
		want = append(want, tx...)
	}
	perKey := func(chs []format.Change) map[int64]string {
		m := map[int64]string{}
		for _, ch := range chs {
			m[ch.Row[0].Int64()] += ch.Kind.String() + " " + ch.Row.String() + "\n"
		}
		return m
	}
	for _, f := range []filesink.Format{filesink.CSV, filesink.JSON} {
		dir := filepath.Join(root, string(f))
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var got []format.Change
		files := 0
		lastCommitted := map[int]base.Epoch{}
		var temps []filesink.Name
		for _, ent := range ents { // ReadDir sorts by name: epoch order
			n, ok := filesink.ParseName("k", ent.Name())
			if !ok {
				t.Fatalf("%s: unexpected file %s", dir, ent.Name())
			}
			if n.Temp {
				temps = append(temps, n)
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, ent.Name()))
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, readBack(t, f, b)...)
			files++
			lastCommitted[n.Subtask] = max(lastCommitted[n.Subtask], n.Epoch)
		}
		for _, n := range temps {
			if n.Epoch <= lastCommitted[n.Subtask] {
				t.Errorf("%s: a temporary file of epoch %d subtask %d is left, and the subtask committed epoch %d", f, n.Epoch, n.Subtask, lastCommitted[n.Subtask])
			}
		}
		g, w := perKey(got), perKey(want)
		for k := range w {
			if g[k] != w[k] {
				t.Fatalf("%s key %d:\n got %s\nwant %s", f, k, g[k], w[k])
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d changes in the files, want %d", f, len(got), len(want))
		}
		if f == filesink.JSON && !slices.EqualFunc(got, want, func(a, b format.Change) bool { return a.Kind == b.Kind && a.Row.String() == b.Row.String() }) {
			t.Fatalf("json: the files do not replay the changelog in order")
		}
		t.Logf("%s: %d changes in %d files, each once; %d temporary files of uncommitted epochs", f, len(got), files, len(temps))
	}
	t.Logf("%d failures; %d of %d transactions read", in.Failed(), end, len(log.txns))
}
