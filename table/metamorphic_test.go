package table_test

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/commit"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/maintain"
	"github.com/stratadb/strata/table/schema"
)

// The metamorphic test (pebble metamorphic/ style): seeded random
// histories of upserts, deletes, lone -U, partial updates, empty epochs,
// batched commits and dedicated compactions run under several
// configurations; every batch read must equal a simple in-memory model,
// and the changelog read from snapshot 1 and applied to an empty map must
// equal the batch read at every snapshot.

var testFields = []schema.Field{
	{Name: "k", Type: types.Int64},
	{Name: "a", Type: types.Int64, Nullable: true},
	{Name: "s", Type: types.Text, Nullable: true},
}

type op struct {
	kind types.RowKind
	row  types.Row
}

// model is the in-memory oracle of one merge engine.
type model struct {
	engine schema.MergeEngine
	rows   map[int64]types.Row
}

func (m *model) apply(o op) {
	k := o.row[0].Int64()
	cur, ok := m.rows[k]
	switch m.engine {
	case schema.Deduplicate:
		if o.kind.IsAdd() {
			m.rows[k] = o.row
		} else {
			delete(m.rows, k)
		}
	case schema.PartialUpdate:
		switch {
		case o.kind == types.Delete:
			delete(m.rows, k)
		case o.kind == types.UpdateBefore:
		case !ok:
			m.rows[k] = o.row
		default:
			n := cur.Copy()
			for i := 1; i < len(n); i++ {
				if !o.row[i].IsNull() {
					n[i] = o.row[i]
				}
			}
			m.rows[k] = n
		}
	case schema.Aggregation:
		if !ok {
			cur = types.Row{o.row[0], types.Null, types.Null}
		} else {
			cur = cur.Copy()
		}
		retract := o.kind.IsRetract()
		if v := o.row[1]; !v.IsNull() {
			d := v.Int64()
			if retract {
				d = -d
			}
			if cur[1].IsNull() {
				cur[1] = types.NewInt64(d)
			} else {
				cur[1] = types.NewInt64(cur[1].Int64() + d)
			}
		}
		if retract {
			cur[2] = types.Null
		} else {
			cur[2] = o.row[2]
		}
		m.rows[k] = cur
	case schema.FirstRow:
		if !ok && o.kind.IsAdd() {
			m.rows[k] = o.row
		}
	}
}

func (m *model) dump() string {
	var rows []types.Row
	for _, r := range m.rows {
		rows = append(rows, r)
	}
	return dump(rows)
}

func dump(rows []types.Row) string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.String()
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func randomOp(r *rand.Rand, engine schema.MergeEngine, keys int) op {
	k := types.NewInt64(int64(r.Intn(keys)))
	a := types.NewInt64(int64(r.Intn(100) - 20))
	s := types.NewText(fmt.Sprintf("s%d", r.Intn(50)))
	if engine == schema.PartialUpdate && r.Intn(2) == 0 {
		if r.Intn(2) == 0 {
			a = types.Null
		} else {
			s = types.Null
		}
	}
	row := types.Row{k, a, s}
	switch p := r.Intn(10); {
	case p < 5:
		return op{types.Insert, row}
	case p < 7:
		return op{types.UpdateAfter, row}
	case p < 9:
		return op{types.Delete, row}
	default:
		return op{types.UpdateBefore, row}
	}
}

type config struct {
	buckets, buffer, target, trigger int
	compaction                       bool // compaction by the writer
	dedicated                        bool // compaction by a separate compactor (writer write-only)
	expire                           bool // expire all but the latest snapshot now and then
	async                            bool // the writer compacts in the background
}

func (c config) String() string {
	return fmt.Sprintf("b%d-buf%d-t%d-trig%d-c%v-d%v-e%v-a%v", c.buckets, c.buffer, c.target, c.trigger, c.compaction, c.dedicated, c.expire, c.async)
}

// steps is the number of epochs of one history.
const steps = 32

func runHistory(t *testing.T, engine schema.MergeEngine, cfg config, seed int64) {
	opts := map[string]string{
		"bucket": fmt.Sprint(cfg.buckets), "merge-engine": string(engine),
		"write-buffer-rows": fmt.Sprint(cfg.buffer), "target-file-rows": fmt.Sprint(cfg.target),
		"num-sorted-run.compaction-trigger": fmt.Sprint(cfg.trigger), "write-only": fmt.Sprint(!cfg.compaction),
	}
	if engine == schema.Aggregation {
		opts["fields.a.aggregate-function"] = schema.AggSum
		opts["fields.s.aggregate-function"] = schema.AggLastValue
	}
	fs := fileio.NewMem()
	tb, err := table.Create(fs, "wh/db/t", testFields, []string{"k"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.expire {
		tb.Store().CacheRows = 0 // every read goes to storage, where expiration deletes
	}
	w, err := tb.NewWriter("job-1")
	if err != nil {
		t.Fatal(err)
	}
	w.SetAsyncCompaction(cfg.async)
	r := rand.New(rand.NewSource(seed))
	m := &model{engine: engine, rows: map[int64]types.Row{}}
	atEpoch := map[base.Epoch]string{}
	var pending []commit.Message
	epoch := base.Epoch(0)
	for step := 0; step < steps; step++ {
		epoch++
		n := r.Intn(12)
		if r.Intn(6) == 0 {
			n = 0 // an epoch that changes nothing
		}
		for range n {
			o := randomOp(r, engine, 25)
			if err := w.Write(epoch, o.kind, o.row); err != nil {
				t.Fatalf("epoch %d: write: %v", epoch, err)
			}
			m.apply(o)
		}
		atEpoch[epoch] = m.dump()
		if r.Intn(3) == 0 && step < steps-1 {
			continue // prepare several epochs at once later
		}
		msgs, err := w.PrepareCommit(epoch)
		if err != nil {
			t.Fatal(err)
		}
		// Messages survive a round trip through a checkpoint.
		b, err := commit.Marshal(msgs)
		if err != nil {
			t.Fatal(err)
		}
		if msgs, err = commit.Unmarshal(b); err != nil {
			t.Fatal(err)
		}
		pending = append(pending, msgs...)
		if r.Intn(4) == 0 && step < steps-1 {
			continue // commit later, as a late checkpoint completion
		}
		if _, err := tb.Commit(pending); err != nil {
			t.Fatalf("epoch %d: commit: %v", epoch, err)
		}
		// A re-commit after a restore adds nothing.
		if ids, err := tb.Commit(pending); err != nil || len(ids) != 0 {
			t.Fatalf("epoch %d: re-commit: ids %v err %v", epoch, ids, err)
		}
		pending = nil
		if cfg.dedicated && r.Intn(4) == 0 {
			if _, err := tb.Compact("compactor", r.Intn(2) == 0); err != nil {
				t.Fatalf("epoch %d: compact: %v", epoch, err)
			}
		}
		if cfg.expire && r.Intn(3) == 0 {
			if _, err := maintain.Expire(tb.Store(), maintain.ExpireOptions{RetainMin: 1, RetainMax: 1}); err != nil {
				t.Fatalf("epoch %d: expire: %v", epoch, err)
			}
		}
		got, err := tb.ReadLatest()
		if err != nil {
			t.Fatal(err)
		}
		if g, want := dump(got), m.dump(); g != want {
			t.Fatalf("epoch %d: read\n%s\nwant\n%s", epoch, g, want)
		}
		if ce, _ := tb.CommittedEpoch(); ce != epoch {
			t.Fatalf("committed epoch %d, want %d", ce, epoch)
		}
	}
	w.WaitCompaction()
	// [orphans-unreferenced]: removing every unreferenced file changes no
	// read below, at any snapshot.
	if _, err := tb.OrphanFiles(0, false); err != nil {
		t.Fatal(err)
	}
	tb.Store().CacheRows = 0
	if got, err := tb.ReadLatest(); err != nil || dump(got) != m.dump() {
		t.Fatalf("after orphan cleanup: %v\n%s\nwant\n%s", err, dump(got), m.dump())
	}
	if cfg.expire {
		return // older snapshots are gone: reads at old epochs and the full changelog are not available
	}
	for e := base.Epoch(1); e <= epoch; e++ {
		got, err := tb.ReadAtEpoch(e)
		if err != nil {
			t.Fatal(err)
		}
		if g := dump(got); g != atEpoch[e] {
			t.Fatalf("read at epoch %d:\n%s\nwant\n%s", e, g, atEpoch[e])
		}
	}
	if _, err := tb.ReadAtEpoch(epoch + 1); err == nil {
		t.Fatal("read above the committed epoch passed")
	}
	checkChangelog(t, tb)
}

// checkChangelog applies the changelog from snapshot 1 to an empty map and
// compares it with the batch read at the end of every epoch.
func checkChangelog(t *testing.T, tb *table.Table) {
	t.Helper()
	s, err := tb.StreamFrom(scanStart, "")
	if err != nil {
		t.Fatal(err)
	}
	s.MaxRows = 7
	applied := map[int64]types.Row{}
	for n := 0; ; n++ {
		b, ok, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if n%3 == 2 {
			// Resume from the stored position, as a restored source does.
			if s, err = tb.StreamFrom(b.Next, ""); err != nil {
				t.Fatal(err)
			}
			s.MaxRows = 7
		}
		for _, c := range b.Changes {
			k := c.Row[0].Int64()
			switch c.Kind {
			case types.Insert, types.UpdateAfter:
				if _, dup := applied[k]; dup {
					t.Fatalf("snapshot %d: %s for present key %d", b.Snapshot, c.Kind, k)
				}
				applied[k] = c.Row
			default:
				old, ok := applied[k]
				if !ok || dump([]types.Row{old}) != dump([]types.Row{c.Row}) {
					t.Fatalf("snapshot %d: %s %v retracts %v", b.Snapshot, c.Kind, c.Row, old)
				}
				delete(applied, k)
			}
		}
		if b.EndOfEpoch {
			want, err := tb.ReadSnapshot(b.Snapshot)
			if err != nil {
				t.Fatal(err)
			}
			var got []types.Row
			for _, r := range applied {
				got = append(got, r)
			}
			if dump(got) != dump(want) {
				t.Fatalf("changelog through snapshot %d:\n%s\nwant\n%s", b.Snapshot, dump(got), dump(want))
			}
		}
	}
}

func TestMetamorphic(t *testing.T) {
	configs := []config{
		{buckets: 1, buffer: 1000, target: 1000, trigger: 5, compaction: false},
		{buckets: 3, buffer: 2, target: 3, trigger: 2, compaction: true},
		{buckets: 2, buffer: 5, target: 1000, trigger: 5, compaction: true},
		{buckets: 1, buffer: 1, target: 2, trigger: 1, compaction: true},
		{buckets: 2, buffer: 3, target: 4, trigger: 3, dedicated: true},
		{buckets: 2, buffer: 3, target: 4, trigger: 2, dedicated: true, expire: true},
		{buckets: 3, buffer: 4, target: 5, trigger: 2, compaction: true, expire: true},
		{buckets: 3, buffer: 2, target: 3, trigger: 2, compaction: true, async: true},
		{buckets: 1, buffer: 1, target: 2, trigger: 1, compaction: true, async: true, expire: true},
	}
	engines := []schema.MergeEngine{schema.Deduplicate, schema.PartialUpdate, schema.Aggregation, schema.FirstRow}
	for _, engine := range engines {
		for _, cfg := range configs {
			for seed := int64(1); seed <= 2; seed++ {
				t.Run(fmt.Sprintf("%s/%s/seed%d", engine, cfg, seed), func(t *testing.T) {
					t.Parallel()
					runHistory(t, engine, cfg, seed)
				})
			}
		}
	}
}
