package table_test

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/commit"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/maintain"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/scan"
	"github.com/stratadb/strata/table/schema"
	"github.com/stratadb/strata/table/snapshot"
	"github.com/stratadb/strata/table/write"
)

// The history test extends the metamorphic test to the table's whole
// life: seeded histories mix epochs that only insert new keys (whose data
// file is their changelog file, [changelog-shares-data]) with updates and
// deletes of existing keys, compaction by the writer (at once or in the
// background) or by a dedicated compactor (full or not, with upgrades),
// tags, rollbacks to tags, expiration with a small retention, writer
// restarts (from a checkpoint taken inside an epoch) and re-commits. After
// every step the latest read equals the model; every so often, and after
// every expiration, so does the read of every retained snapshot and tag,
// each retained snapshot's changelog turns its predecessor's content into
// its own, and the table's directories hold exactly the files that the
// retained snapshots and tags name: none missing, none left over.

type historyConfig struct {
	engine                           schema.MergeEngine
	buckets, buffer, target, trigger int
	compaction, dedicated, async     bool
	expire                           bool
}

func (c historyConfig) String() string {
	return fmt.Sprintf("%s-b%d-buf%d-t%d-trig%d-c%v-d%v-a%v-e%v", c.engine, c.buckets, c.buffer, c.target, c.trigger, c.compaction, c.dedicated, c.async, c.expire)
}

// historyRun is one history's table, writer and model.
type historyRun struct {
	t    *testing.T
	cfg  historyConfig
	fs   *fileio.Mem
	tb   *table.Table
	w    *write.Writer
	r    *rand.Rand
	m    *model
	keys int64 // keys below are used; insert-only epochs take the next ones
	// states are the model's rows at the end of each epoch written, and
	// bySnap at each snapshot published (known while it is retained).
	states map[base.Epoch]map[int64]types.Row
	bySnap map[base.SnapshotID]map[int64]types.Row
	tags   map[string]base.SnapshotID
	epoch  base.Epoch
	// pending are prepared messages not committed yet.
	pending []commit.Message
	// seen counts what the history did, for the test to check that it
	// did what it is meant to test.
	seen *historySeen
}

// historySeen counts events over all histories of a test.
type historySeen struct {
	shared, upgrades, rollbacks, expirations, restarts, flushed, deltaFiles atomic.Int64
	// histories counts the histories that ran to their end.
	histories atomic.Int64
}

func copyRows(m map[int64]types.Row) map[int64]types.Row {
	out := make(map[int64]types.Row, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func dumpMap(m map[int64]types.Row) string {
	rows := make([]types.Row, 0, len(m))
	for _, r := range m {
		rows = append(rows, r)
	}
	return dump(rows)
}

func (h *historyRun) newWriter() {
	w, err := h.tb.NewWriter("job-1")
	if err != nil {
		h.t.Fatal(err)
	}
	w.SetAsyncCompaction(h.cfg.async)
	h.w = w
}

// commit commits msgs (twice: the second adds nothing) and records the
// model's state at each new snapshot.
func (h *historyRun) commit(msgs []commit.Message) {
	h.t.Helper()
	ids, err := h.tb.Commit(msgs)
	if err != nil {
		h.t.Fatalf("epoch %d: commit: %v", h.epoch, err)
	}
	if again, err := h.tb.Commit(msgs); err != nil || len(again) != 0 {
		h.t.Fatalf("epoch %d: re-commit: %v %v", h.epoch, again, err)
	}
	h.record(ids)
}

// record notes the model's state at snapshots ids.
func (h *historyRun) record(ids []base.SnapshotID) {
	h.t.Helper()
	for _, id := range ids {
		sn, err := h.tb.Store().Snapshots.Get(id)
		if err != nil {
			h.t.Fatal(err)
		}
		h.count(sn)
		switch sn.CommitKind {
		case snapshot.Append:
			st, ok := h.states[sn.Epoch]
			if !ok {
				h.t.Fatalf("snapshot %d of epoch %d: no model state", id, sn.Epoch)
			}
			h.bySnap[id] = st
		default:
			prev, ok := h.bySnap[id-1]
			if !ok {
				h.t.Fatalf("snapshot %d (%s): no state of its parent", id, sn.CommitKind)
			}
			h.bySnap[id] = prev
		}
	}
}

// count notes upgrades and shared changelog files in sn, and whether
// its base list names a manifest file.
func (h *historyRun) count(sn *snapshot.Snapshot) {
	h.t.Helper()
	io := h.tb.Store().Manifests
	delta, err := io.ReadEntries(sn.DeltaManifestList)
	if err != nil {
		h.t.Fatal(err)
	}
	deleted := map[manifest.Key]bool{}
	for _, e := range delta {
		if e.Kind == manifest.Delete {
			deleted[e.Key()] = true
		} else if deleted[e.Key()] {
			h.seen.upgrades.Add(1)
		}
	}
	if metas, err := io.ReadList(sn.DeltaManifestList); err != nil {
		h.t.Fatal(err)
	} else if len(metas) > 0 && !metas[0].Inline() {
		h.seen.deltaFiles.Add(1)
	}
	cl, err := io.ReadEntries(sn.ChangelogManifestList)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, e := range cl {
		if strings.HasPrefix(e.File.Name, "data-") {
			h.seen.shared.Add(1)
		}
	}
	metas, err := io.ReadList(sn.BaseManifestList)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, m := range metas {
		if !m.Inline() {
			h.seen.flushed.Add(1)
			break
		}
	}
}

// writeEpoch writes the rows of the next epoch: only inserts of new keys,
// or random operations on keys used so far; sometimes it checkpoints the
// writer inside the epoch and restarts it from the checkpoint.
func (h *historyRun) writeEpoch() {
	h.epoch++
	n := h.r.Intn(10)
	insertOnly := h.r.Intn(3) == 0
	if insertOnly && h.r.Intn(2) == 0 {
		n = min(n, h.cfg.buffer) // one file per bucket: a shared changelog
	}
	if h.r.Intn(8) == 0 {
		n = 0
	}
	restartAt := -1
	if h.r.Intn(6) == 0 {
		restartAt = h.r.Intn(n + 1)
	}
	for i := range n {
		if i == restartAt {
			h.restartInEpoch()
		}
		var o op
		if insertOnly {
			k := h.keys
			h.keys++
			o = op{types.Insert, types.Row{types.NewInt64(k), types.NewInt64(int64(h.r.Intn(100))), types.NewText(fmt.Sprintf("n%d", k))}}
		} else {
			o = randomOp(h.r, h.cfg.engine, int(h.keys)+3)
			if k := o.row[0].Int64(); k >= h.keys {
				h.keys = k + 1
			}
		}
		if err := h.w.Write(h.epoch, o.kind, o.row); err != nil {
			h.t.Fatalf("epoch %d: write: %v", h.epoch, err)
		}
		h.m.apply(o)
	}
	h.states[h.epoch] = copyRows(h.m.rows)
}

// restartInEpoch checkpoints the writer inside the current epoch, drops
// it, and restores a new one from the checkpoint, as a job restored from
// a checkpoint taken in the middle of an epoch.
func (h *historyRun) restartInEpoch() {
	h.t.Helper()
	h.seen.restarts.Add(1)
	st, err := h.w.Checkpoint()
	if err != nil {
		h.t.Fatal(err)
	}
	// The restored job re-commits the messages of its checkpoint first.
	if len(h.pending) > 0 {
		h.commit(h.pending)
		h.pending = nil
	}
	b, err := st.Marshal()
	if err != nil {
		h.t.Fatal(err)
	}
	if st, err = write.UnmarshalState(b); err != nil {
		h.t.Fatal(err)
	}
	h.w.WaitCompaction() // its result is lost with the writer: orphans
	h.newWriter()
	if err := h.w.Restore(st); err != nil {
		h.t.Fatal(err)
	}
}

func (h *historyRun) checkLatest(what string) {
	h.t.Helper()
	got, err := h.tb.ReadLatest()
	if err != nil {
		h.t.Fatalf("epoch %d: %s: read: %v", h.epoch, what, err)
	}
	if g, want := dump(got), h.m.dump(); g != want {
		h.t.Fatalf("epoch %d: %s: read\n%s\nwant\n%s", h.epoch, what, g, want)
	}
}

// checkAll checks every retained snapshot and tag against the model,
// every retained snapshot's changelog, and the files of the table.
func (h *historyRun) checkAll(what string, files bool) {
	h.t.Helper()
	// A fresh handle: no cache of this run's table helps it.
	tb, err := table.Open(h.fs, "wh/db/t")
	if err != nil {
		h.t.Fatal(err)
	}
	tb.Store().CacheRows = 0
	st := tb.Store()
	ids, err := st.Snapshots.IDs()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, id := range ids {
		want, ok := h.bySnap[id]
		if !ok {
			h.t.Fatalf("%s: snapshot %d is unknown to the model", what, id)
		}
		got, err := tb.ReadSnapshot(id)
		if err != nil {
			h.t.Fatalf("epoch %d: %s: read of snapshot %d: %v", h.epoch, what, id, err)
		}
		if g, w := dump(got), dumpMap(want); g != w {
			h.t.Fatalf("epoch %d: %s: snapshot %d reads\n%s\nwant\n%s", h.epoch, what, id, g, w)
		}
		if prev, ok := h.bySnap[id-1]; ok && id > ids[0] {
			h.checkChangelog(tb, id, prev, want, what)
		}
	}
	tags, err := st.Snapshots.Tags()
	if err != nil {
		h.t.Fatal(err)
	}
	for name, sn := range tags {
		rows, err := scan.Read(st, sn)
		if err != nil {
			h.t.Fatalf("epoch %d: %s: read of tag %s: %v", h.epoch, what, name, err)
		}
		if g, w := dump(rows), dumpMap(h.bySnap[h.tags[name]]); g != w {
			h.t.Fatalf("epoch %d: %s: tag %s reads\n%s\nwant\n%s", h.epoch, what, name, g, w)
		}
	}
	if files {
		h.checkFiles(st, ids, tags, what)
	}
}

// checkChangelog applies snapshot id's changelog to prev and compares the
// result with want. Streams skip snapshots other than APPEND ones, whose
// content must then equal their parent's.
func (h *historyRun) checkChangelog(tb *table.Table, id base.SnapshotID, prev, want map[int64]types.Row, what string) {
	h.t.Helper()
	s, err := tb.StreamFrom(scan.Position{Snapshot: id}, "")
	if err != nil {
		h.t.Fatal(err)
	}
	s.MaxRows = 5
	applied := copyRows(prev)
	sn, err := tb.Store().Snapshots.Get(id)
	if err != nil {
		h.t.Fatal(err)
	}
	if sn.CommitKind != snapshot.Append {
		if sn.CommitKind == snapshot.Compact && dumpMap(prev) != dumpMap(want) {
			h.t.Fatalf("epoch %d: %s: compaction snapshot %d changes the content", h.epoch, what, id)
		}
		return
	}
	for {
		b, ok, err := s.Next()
		if err != nil {
			h.t.Fatalf("epoch %d: %s: changelog of snapshot %d: %v", h.epoch, what, id, err)
		}
		if !ok || b.Snapshot != id {
			h.t.Fatalf("epoch %d: %s: changelog of snapshot %d ends without its end (%v, snapshot %d)", h.epoch, what, id, ok, b.Snapshot)
		}
		for _, c := range b.Changes {
			k := c.Row[0].Int64()
			switch c.Kind {
			case types.Insert, types.UpdateAfter:
				if old, dup := applied[k]; dup {
					h.t.Fatalf("epoch %d: %s: snapshot %d: %s %v for present key (%v)", h.epoch, what, id, c.Kind, c.Row, old)
				}
				applied[k] = c.Row
			default:
				old, ok := applied[k]
				if !ok || dump([]types.Row{old}) != dump([]types.Row{c.Row}) {
					h.t.Fatalf("epoch %d: %s: snapshot %d: %s %v retracts %v", h.epoch, what, id, c.Kind, c.Row, old)
				}
				delete(applied, k)
			}
		}
		if b.EndOfEpoch {
			break
		}
	}
	if g, w := dumpMap(applied), dumpMap(want); g != w {
		h.t.Fatalf("epoch %d: %s: changelog of snapshot %d gives\n%s\nwant\n%s", h.epoch, what, id, g, w)
	}
}

// checkFiles compares the files of the table's bucket and manifest
// directories with those the retained snapshots and the tags name (their
// live data files, changelog files, manifest files and list files).
func (h *historyRun) checkFiles(st interface {
	LiveFiles(*snapshot.Snapshot) ([]manifest.Entry, error)
}, ids []base.SnapshotID, tags map[string]*snapshot.Snapshot, what string) {
	h.t.Helper()
	s := h.tb.Store()
	named := map[string]bool{}
	add := func(sn *snapshot.Snapshot) {
		live, err := st.LiveFiles(sn)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, e := range live {
			named[s.DataPath(e.Bucket, e.File.Name)] = true
		}
		// The delta names the files it adds, also those that a
		// compaction of the same commit merged away at once.
		cl, err := s.Manifests.ReadEntries(sn.DeltaManifestList, sn.ChangelogManifestList)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, e := range cl {
			if e.Kind != manifest.Add {
				continue
			}
			named[s.DataPath(e.Bucket, e.File.Name)] = true
		}
		for _, ref := range []manifest.FileRef{sn.BaseManifestList, sn.DeltaManifestList, sn.ChangelogManifestList} {
			if ref.Name != "" {
				named[s.Manifests.Path(ref.Name)] = true
			}
			metas, err := s.Manifests.ReadList(ref)
			if err != nil {
				h.t.Fatal(err)
			}
			for _, m := range metas {
				if !m.Inline() {
					named[s.Manifests.Path(m.Name)] = true
				}
			}
		}
	}
	for _, id := range ids {
		sn, err := s.Snapshots.Get(id)
		if err != nil {
			h.t.Fatal(err)
		}
		add(sn)
	}
	for _, sn := range tags {
		add(sn)
	}
	present := map[string]bool{}
	dirs, err := h.fs.ListDirs(s.Dir)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, d := range dirs {
		if d != manifest.Dir && !strings.HasPrefix(d, "bucket-") {
			continue
		}
		files, err := h.fs.List(s.Dir + "/" + d)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, f := range files {
			present[s.Dir+"/"+d+"/"+f.Name] = true
		}
	}
	var missing, extra []string
	for p := range named {
		if !present[p] {
			missing = append(missing, p)
		}
	}
	for p := range present {
		if !named[p] {
			extra = append(extra, p)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		h.t.Fatalf("epoch %d: %s: files named but missing: %v", h.epoch, what, missing)
	}
	if len(extra) > 0 {
		h.t.Fatalf("epoch %d: %s: files nothing names: %v", h.epoch, what, extra)
	}
}

// inFlight reports whether files may exist that no snapshot names yet
// (or ever will): a background compaction's, or those of a writer
// dropped at a restart.
func (h *historyRun) inFlight() bool { return h.cfg.async }

func runLongHistory(t *testing.T, cfg historyConfig, seed int64, steps int, seen *historySeen) {
	opts := map[string]string{
		"bucket": fmt.Sprint(cfg.buckets), "merge-engine": string(cfg.engine),
		"write-buffer-rows": fmt.Sprint(cfg.buffer), "target-file-rows": fmt.Sprint(cfg.target),
		"num-sorted-run.compaction-trigger": fmt.Sprint(cfg.trigger), "write-only": fmt.Sprint(!cfg.compaction),
	}
	if cfg.engine == schema.Aggregation {
		opts["fields.a.aggregate-function"] = schema.AggSum
		opts["fields.s.aggregate-function"] = schema.AggLastValue
	}
	fs := fileio.NewMem()
	tb, err := table.Create(fs, "wh/db/t", testFields, []string{"k"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.expire {
		tb.Store().CacheRows = 0
	}
	h := &historyRun{t: t, cfg: cfg, fs: fs, tb: tb, r: rand.New(rand.NewSource(seed)),
		m: &model{engine: cfg.engine, rows: map[int64]types.Row{}}, states: map[base.Epoch]map[int64]types.Row{},
		bySnap: map[base.SnapshotID]map[int64]types.Row{}, tags: map[string]base.SnapshotID{}, seen: seen}
	h.states[0] = map[int64]types.Row{}
	h.newWriter()
	for step := 0; step < steps; step++ {
		h.writeEpoch()
		if h.r.Intn(3) == 0 && step < steps-1 {
			continue // prepare several epochs at once later
		}
		msgs, err := h.w.PrepareCommit(h.epoch)
		if err != nil {
			t.Fatalf("epoch %d: prepare: %v", h.epoch, err)
		}
		b, err := commit.Marshal(msgs)
		if err != nil {
			t.Fatal(err)
		}
		if msgs, err = commit.Unmarshal(b); err != nil {
			t.Fatal(err)
		}
		h.pending = append(h.pending, msgs...)
		if h.r.Intn(4) == 0 && step < steps-1 {
			continue // commit later
		}
		h.commit(h.pending)
		h.pending = nil
		h.checkLatest("commit")
		checked := false
		switch p := h.r.Intn(20); {
		case p < 5 && cfg.dedicated:
			full := h.r.Intn(3) == 0
			id, err := h.tb.Compact("compactor", full)
			if err != nil {
				t.Fatalf("epoch %d: compact (full %v): %v", h.epoch, full, err)
			}
			if id != 0 {
				h.record([]base.SnapshotID{id})
			}
			h.checkLatest(fmt.Sprintf("compaction (full %v)", full))
		case p < 8:
			ids, _ := h.tb.Store().Snapshots.IDs()
			if len(ids) == 0 {
				break
			}
			id := ids[h.r.Intn(len(ids))]
			name := fmt.Sprintf("t%d", len(h.tags))
			if err := h.tb.CreateTag(name, id); err != nil {
				t.Fatal(err)
			}
			h.tags[name] = id
		case p < 10 && len(h.tags) > 0:
			names := make([]string, 0, len(h.tags))
			for n := range h.tags {
				names = append(names, n)
			}
			sort.Strings(names)
			name := names[h.r.Intn(len(names))]
			// The writer stops for a rollback and starts again after.
			h.w.WaitCompaction()
			h.w = nil
			id, err := h.tb.RollbackToTag(name, "admin")
			if err != nil {
				t.Fatalf("epoch %d: rollback to %s: %v", h.epoch, name, err)
			}
			h.seen.rollbacks.Add(1)
			h.bySnap[id] = h.bySnap[h.tags[name]]
			h.m.rows = copyRows(h.bySnap[id])
			h.newWriter()
			h.checkLatest("rollback to " + name)
		case p < 11:
			// A restart between epochs: the new writer starts from the
			// latest snapshot.
			h.w.WaitCompaction()
			h.newWriter()
		}
		if cfg.expire && h.r.Intn(3) == 0 {
			k := 1 + h.r.Intn(3)
			res, err := maintain.Expire(h.tb.Store(), maintain.ExpireOptions{RetainMin: k, RetainMax: k})
			if err != nil {
				t.Fatalf("epoch %d: expire: %v", h.epoch, err)
			}
			h.seen.expirations.Add(int64(len(res.Expired)))
			h.checkAll("expiration", !h.inFlight())
			checked = true
		}
		if !checked && h.r.Intn(5) == 0 {
			h.checkAll("check", !h.inFlight())
		}
	}
	h.checkAll("end", !h.inFlight())
	h.seen.histories.Add(1)
}

func TestLongHistories(t *testing.T) {
	configs := []historyConfig{
		{engine: schema.Deduplicate, buckets: 1, buffer: 4, target: 6, trigger: 2, compaction: true},
		{engine: schema.Deduplicate, buckets: 2, buffer: 3, target: 4, trigger: 2, compaction: true, expire: true},
		{engine: schema.Deduplicate, buckets: 1, buffer: 5, target: 8, trigger: 3, dedicated: true, expire: true},
		{engine: schema.Deduplicate, buckets: 2, buffer: 2, target: 3, trigger: 2, dedicated: true},
		{engine: schema.Deduplicate, buckets: 1, buffer: 3, target: 5, trigger: 2, compaction: true, async: true, expire: true},
		{engine: schema.PartialUpdate, buckets: 2, buffer: 3, target: 4, trigger: 2, compaction: true, expire: true},
		{engine: schema.Deduplicate, buckets: 8, buffer: 1, target: 2, trigger: 1, compaction: true, expire: true},
		{engine: schema.Deduplicate, buckets: 8, buffer: 1, target: 2, trigger: 1, dedicated: true, expire: true},
		{engine: schema.Aggregation, buckets: 1, buffer: 4, target: 6, trigger: 2, dedicated: true, expire: true},
	}
	seeds := int64(4)
	if testing.Short() {
		seeds = 2
	}
	seen := &historySeen{}
	t.Cleanup(func() {
		t.Logf("shared changelog files %d, upgrades %d, rollbacks %d, snapshots expired %d, restarts %d, snapshots naming manifest files %d, deltas as files %d",
			seen.shared.Load(), seen.upgrades.Load(), seen.rollbacks.Load(), seen.expirations.Load(), seen.restarts.Load(), seen.flushed.Load(), seen.deltaFiles.Load())
		if t.Failed() || seen.histories.Load() < int64(len(configs))*seeds {
			return // failed, or only some histories ran (go test -run)
		}
		for what, n := range map[string]int64{"shared changelog files": seen.shared.Load(), "upgrades": seen.upgrades.Load(),
			"rollbacks": seen.rollbacks.Load(), "expirations": seen.expirations.Load(), "restarts": seen.restarts.Load(),
			"manifest files": seen.flushed.Load(), "delta manifest files": seen.deltaFiles.Load()} {
			if n == 0 {
				t.Errorf("the histories made no %s", what)
			}
		}
	})
	for _, cfg := range configs {
		for seed := int64(1); seed <= seeds; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", cfg, seed), func(t *testing.T) {
				t.Parallel()
				runLongHistory(t, cfg, seed, 40, seen)
			})
		}
	}
}
