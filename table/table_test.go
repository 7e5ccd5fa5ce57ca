package table_test

import (
	"errors"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/commit"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

func TestEmptyEpochsAdvanceCommittedEpoch(t *testing.T) {
	tb := newTable(t, fileio.NewMem(), nil)
	w, _ := tb.NewWriter("job")
	ids := commitEpoch(t, tb, w, 3, row(1, 1, "a"))
	if len(ids) != 1 || ids[0] != 1 {
		t.Fatalf("ids = %v", ids)
	}
	if ids := commitEpoch(t, tb, w, 7); len(ids) != 0 {
		t.Fatalf("empty epoch made snapshots %v", ids)
	}
	if ce, _ := tb.CommittedEpoch(); ce != 7 {
		t.Fatalf("committed epoch %d, want 7", ce)
	}
	rows, err := tb.ReadAtEpoch(5)
	if err != nil || dump(rows) != "(1, 1, a)" {
		t.Fatalf("read at 5: %v %v", dump(rows), err)
	}
	if rows, err := tb.ReadAtEpoch(2); err != nil || len(rows) != 0 {
		t.Fatalf("read at 2: %v %v", rows, err)
	}
	if _, err := tb.ReadAtEpoch(8); !errors.Is(err, base.ErrOutOfRange) {
		t.Fatalf("read at 8: %v", err)
	}
	// A new writer (after a restore) continues above the committed epoch.
	w2, _ := tb.NewWriter("job")
	if err := w2.Write(7, types.Insert, row(2, 2, "b")); !errors.Is(err, base.ErrInvalidArgument) {
		t.Fatalf("write into a committed epoch: %v", err)
	}
}

func TestMultiEpochPrepareMakesOneSnapshotPerEpoch(t *testing.T) {
	tb := newTable(t, fileio.NewMem(), map[string]string{"bucket": "2"})
	w, _ := tb.NewWriter("job")
	for e := base.Epoch(1); e <= 4; e++ {
		if e == 3 {
			continue
		}
		if err := w.Write(e, types.Insert, row(int64(e), 0, "x")); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := w.PrepareCommit(5)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 4 { // epochs 1, 2, 4 and the empty closing 5
		t.Fatalf("%d messages", len(msgs))
	}
	ids, err := tb.Commit(msgs)
	if err != nil || len(ids) != 3 {
		t.Fatalf("ids %v err %v", ids, err)
	}
	for i, want := range []base.Epoch{1, 2, 4} {
		sn, _ := tb.Store().Snapshots.Get(ids[i])
		if sn.Epoch != want || sn.CommitIdentifier != uint64(want) || sn.CommitUser != "job" {
			t.Fatalf("snapshot %d: epoch %d identifier %d", sn.ID, sn.Epoch, sn.CommitIdentifier)
		}
	}
	if ce, _ := tb.CommittedEpoch(); ce != 5 {
		t.Fatalf("committed epoch %d", ce)
	}
	if got := mustRead(t, tb); got != "(1, 0, x)\n(2, 0, x)\n(4, 0, x)" {
		t.Fatalf("read %q", got)
	}
}

func TestSecondWriterOnSameBucketConflicts(t *testing.T) {
	tb := newTable(t, fileio.NewMem(), nil)
	w1, _ := tb.NewWriter("job-a")
	w2, _ := tb.NewWriter("job-b")
	commitEpoch(t, tb, w1, 1, row(1, 1, "a"))
	w2.Write(1, types.Insert, row(2, 2, "b"))
	msgs, _ := w2.PrepareCommit(1)
	_, err := tb.Commit(msgs)
	if !errors.Is(err, base.ErrConflict) {
		t.Fatalf("second writer: %v", err)
	}
	if got := mustRead(t, tb); got != "(1, 1, a)" {
		t.Fatalf("table changed: %q", got)
	}
}

func TestRefusesBadInput(t *testing.T) {
	tb := newTable(t, fileio.NewMem(), nil)
	w, _ := tb.NewWriter("job")
	for name, r := range map[string]types.Row{
		"width":    {types.NewInt64(1)},
		"null key": {types.Null, types.Null, types.Null},
		"kind":     {types.NewInt64(1), types.NewText("x"), types.Null},
	} {
		if err := w.Write(1, types.Insert, r); !errors.Is(err, base.ErrInvalidArgument) {
			t.Errorf("%s: %v", name, err)
		}
	}
	agg, err := table.Create(fileio.NewMem(), "t2", testFields, []string{"k"}, map[string]string{
		"merge-engine": "aggregation", "fields.a.aggregate-function": "max"})
	if err != nil {
		t.Fatal(err)
	}
	aw, _ := agg.NewWriter("job")
	if err := aw.Write(1, types.Delete, row(1, 1, "x")); !errors.Is(err, base.ErrInvalidArgument) {
		t.Errorf("retraction into max aggregation: %v", err)
	}
	if _, err := table.Create(fileio.NewMem(), "t3", testFields, []string{"k"}, map[string]string{"merge-engine": "nope"}); !errors.Is(err, base.ErrInvalidArgument) {
		t.Errorf("unknown engine: %v", err)
	}
}

func TestAppendTable(t *testing.T) {
	tb, err := table.Create(fileio.NewMem(), "logs", testFields, nil, map[string]string{"write-buffer-rows": "3"})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := tb.NewWriter("job")
	commitEpoch(t, tb, w, 1, rowsOf(5, 0)...)
	commitEpoch(t, tb, w, 2, row(0, 9, "again"))
	rows, _ := tb.ReadLatest()
	if len(rows) != 6 || rows[5][2].Str() != "again" || rows[0][2].Str() != "v0" {
		t.Fatalf("append read %v", rows)
	}
	if err := w.Write(3, types.Delete, row(0, 0, "v0")); !errors.Is(err, base.ErrInvalidArgument) {
		t.Fatalf("delete into append table: %v", err)
	}
	// The data files are the changelog: no changelog files are written.
	if sn, err := tb.Latest(); err != nil || !sn.ChangelogManifestList.IsZero() || sn.ChangelogRecordCount != 0 {
		t.Fatalf("append table snapshot has changelog files: %+v, %v", sn, err)
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
			got = append(got, c.Kind.String()+c.Row[2].Str())
		}
	}
	if len(got) != 6 || got[5] != "+Iagain" {
		t.Fatalf("append changelog %v", got)
	}
}

func TestAddColumn(t *testing.T) {
	tb := newTable(t, fileio.NewMem(), nil)
	w, _ := tb.NewWriter("job")
	commitEpoch(t, tb, w, 1, row(1, 1, "a"))
	sc, err := tb.AddColumn("extra", types.Int32)
	if err != nil {
		t.Fatal(err)
	}
	if sc.ID != 1 || !sc.Fields[3].Nullable || sc.Fields[3].ID != 3 {
		t.Fatalf("schema %+v", sc)
	}
	if _, err := tb.AddColumn("extra", types.Int32); !errors.Is(err, base.ErrInvalidArgument) {
		t.Fatalf("duplicate column: %v", err)
	}
	w2, _ := tb.NewWriter("job")
	if err := w2.Write(2, types.Insert, types.Row{types.NewInt64(2), types.Null, types.Null, types.NewInt32(7)}); err != nil {
		t.Fatal(err)
	}
	msgs, _ := w2.PrepareCommit(2)
	if _, err := tb.Commit(msgs); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, tb); got != "(1, 1, a, NULL)\n(2, NULL, NULL, 7)" {
		t.Fatalf("read after add column: %q", got)
	}
	if rows, _ := tb.ReadSnapshot(1); dump(rows) != "(1, 1, a)" {
		t.Fatalf("old snapshot: %v", dump(rows))
	}
	// A writer opened before a change (and still the only writer) commits
	// with the older schema; the table keeps the newer one.
	t2 := newTable(t, fileio.NewMem(), nil)
	old, _ := t2.NewWriter("job")
	commitEpoch(t, t2, old, 1, row(1, 1, "a"))
	if _, err := t2.AddColumn("extra", types.Int32); err != nil {
		t.Fatal(err)
	}
	commitEpoch(t, t2, old, 2, row(2, 2, "b"))
	if sn, _ := t2.Latest(); sn.SchemaID != 1 {
		t.Fatalf("snapshot schema %d after an old writer's commit", sn.SchemaID)
	}
	if got := mustRead(t, t2); got != "(1, 1, a, NULL)\n(2, 2, b, NULL)" {
		t.Fatalf("after an old writer's commit: %q", got)
	}
}

func TestCorruptionIsNamed(t *testing.T) {
	fs := fileio.NewMem()
	tb := newTable(t, fs, nil)
	w, _ := tb.NewWriter("job")
	commitEpoch(t, tb, w, 1, row(1, 1, "a"))
	sn, _ := tb.Latest()
	live, _ := tb.Store().LiveFiles(sn)
	dataPath := tb.Store().DataPath(live[0].Bucket, live[0].File.Name)

	fs2 := fileio.NewMem()
	// A fresh Table (no caches) over a copy with a flipped byte.
	copyAll(t, fs, fs2)
	fs2.Corrupt(dataPath, 10)
	t2, _ := table.Open(fs2, "wh/db/t")
	if _, err := t2.ReadLatest(); !errors.Is(err, base.ErrChecksum) || !contains(err, dataPath) || !contains(err, "snapshot 1") {
		t.Fatalf("corrupt data file: %v", err)
	}
	fs3 := fileio.NewMem()
	copyAll(t, fs, fs3)
	fs3.Delete(dataPath)
	t3, _ := table.Open(fs3, "wh/db/t")
	if _, err := t3.ReadLatest(); !errors.Is(err, base.ErrNotFound) || !contains(err, dataPath) {
		t.Fatalf("missing data file: %v", err)
	}
	fs4 := fileio.NewMem()
	copyAll(t, fs, fs4)
	snapPath := tb.Store().Snapshots.Path(1)
	b, _ := fs4.ReadFile(snapPath)
	fs4.Truncate(snapPath, len(b)-20)
	t4, _ := table.Open(fs4, "wh/db/t")
	if _, err := t4.ReadLatest(); !errors.Is(err, base.ErrCorruption) || !contains(err, snapPath) {
		t.Fatalf("truncated snapshot: %v", err)
	}
	fs5 := fileio.NewMem()
	copyAll(t, fs, fs5)
	sc, _ := tb.Schema()
	bad := *sc
	bad.Version = 99
	enc, _ := fileio.EncodeJSON(&bad)
	fs5.WriteFile("wh/db/t/schema/schema-0", enc)
	if _, err := table.Open(fs5, "wh/db/t"); !errors.Is(err, base.ErrCorruption) || !contains(err, "version 99") {
		t.Fatalf("unknown schema version: %v", err)
	}
}

func TestCommitMessageRoundTrip(t *testing.T) {
	tb := newTable(t, fileio.NewMem(), nil)
	w, _ := tb.NewWriter("job")
	w.Write(1, types.Insert, row(1, 1, "a"))
	w.SetWatermark(1234)
	msgs, _ := w.PrepareCommit(1)
	b, err := commit.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	back, err := commit.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Commit(back); err != nil {
		t.Fatal(err)
	}
	sn, _ := tb.Latest()
	if sn.Watermark == nil || *sn.Watermark != 1234 || sn.TotalRecordCount != 1 || sn.ChangelogRecordCount != 1 {
		t.Fatalf("snapshot %+v", sn)
	}
	if _, err := commit.Unmarshal([]byte(`[{"version":9}]`)); !errors.Is(err, base.ErrCorruption) {
		t.Fatalf("bad version: %v", err)
	}
	_ = schema.Deduplicate
}
