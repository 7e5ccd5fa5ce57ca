package service

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/store"
	"github.com/stratadb/strata/meta/version"
)

// TestRandomHistoryAcrossRestarts runs seeded random histories of commits
// and strong and weak reads over random topologies on a bbolt store,
// closing and reopening the file and the service at random points, and
// checks the meta invariants over the whole history: the epoch, every
// committed epoch and every table's strong reads never go back, related
// tables are read at one epoch, and nothing is read above its committed
// epoch.
func TestRandomHistoryAcrossRestarts(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { randomHistory(t, seed) })
	}
}

func randomHistory(t *testing.T, seed uint64) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 0xbad5eed))
	path := filepath.Join(t.TempDir(), "meta.db")
	var st *store.Bolt
	var m *Meta
	open := func() {
		var err error
		if st, err = store.OpenBolt(path); err != nil {
			t.Fatal(err)
		}
		if m, err = Open(ctx, testOptions(st)); err != nil {
			t.Fatal(err)
		}
	}
	closeAll := func() {
		_ = m.Close()
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	open()
	defer func() { closeAll() }()

	// A random topology: sources, then tables each written by a job from
	// sources and earlier tables, or by nobody.
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(m.CreateDatabase(ctx, catalog.Database{Name: "d"}))
	nSources, nTables := 1+r.IntN(3), 3+r.IntN(5)
	var nodes, tables []catalog.ObjectName
	for i := range nSources {
		n := catalog.Name("d", fmt.Sprintf("s%d", i))
		must(m.CreateSource(ctx, catalog.Source{Name: n, Connector: "gen"}))
		nodes = append(nodes, n)
	}
	for i := range nTables {
		n := catalog.Name("d", fmt.Sprintf("t%d", i))
		must(m.CreateTable(ctx, catalog.Table{Name: n, Kind: catalog.KindTable, Columns: []catalog.Column{{Name: "a", Type: types.Int64}}}))
		if r.IntN(5) > 0 {
			var reads []catalog.ObjectName
			for _, k := range r.Perm(len(nodes))[:1+r.IntN(min(2, len(nodes)))] {
				reads = append(reads, nodes[k])
			}
			must(m.RegisterJob(ctx, catalog.Job{Name: fmt.Sprintf("j%d", i), Kind: catalog.JobIngest, Reads: reads, Writes: []catalog.ObjectName{n}}))
		}
		nodes = append(nodes, n)
		tables = append(tables, n)
	}

	var lastEpoch base.Epoch
	committed := map[catalog.ObjectName]base.Epoch{}
	strong := map[catalog.ObjectName]base.Epoch{}
	restarts, waits := 0, 0
	for step := range 300 {
		cur, err := m.CurrentEpoch(ctx)
		must(err)
		if cur.Epoch < lastEpoch {
			t.Fatalf("seed %d step %d: epoch %d after %d", seed, step, cur.Epoch, lastEpoch)
		}
		lastEpoch = cur.Epoch
		switch k := r.IntN(20); {
		case k == 0:
			closeAll()
			open()
			restarts++
		case k < 10:
			tb := tables[r.IntN(len(tables))]
			e := committed[tb] + base.Epoch(r.IntN(4))
			if e > cur.Epoch {
				e = cur.Epoch
			}
			must(m.CommitEpoch(ctx, tb, e))
			c, err := m.CommittedEpoch(ctx, tb)
			must(err)
			if c.Epoch < committed[tb] {
				t.Fatalf("seed %d step %d: %s committed went back from %d to %d", seed, step, tb, committed[tb], c.Epoch)
			}
			committed[tb] = c.Epoch
		default:
			var q []catalog.ObjectName
			for _, i := range r.Perm(len(tables))[:1+r.IntN(len(tables))] {
				q = append(q, tables[i])
			}
			mode := version.Weak
			if r.IntN(3) > 0 {
				mode = version.Strong
			}
			rctx, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
			v, err := m.AcquireVersion(rctx, meta.VersionRequest{Tables: q, Mode: mode, Holder: "h", TTL: time.Minute})
			cancel()
			if errors.Is(err, context.DeadlineExceeded) && mode == version.Strong {
				waits++
				continue
			}
			must(err)
			for _, g := range v.Groups {
				for _, tb := range g {
					if v.Epochs[tb] != v.Epochs[g[0]] {
						t.Fatalf("seed %d step %d: group %v read apart: %v", seed, step, g, v.Epochs)
					}
				}
			}
			for tb, e := range v.Epochs {
				if e > committed[tb] {
					t.Fatalf("seed %d step %d: %s read at %d above its committed %d", seed, step, tb, e, committed[tb])
				}
				if mode == version.Strong {
					if e < strong[tb] {
						t.Fatalf("seed %d step %d: strong read of %s went back from %d to %d (after %d restarts)", seed, step, tb, strong[tb], e, restarts)
					}
					strong[tb] = e
				}
			}
			must(m.ReleasePin(ctx, v.Pin))
		}
	}
	t.Logf("seed %d: %d restarts, %d strong reads that had to wait, final epoch %d", seed, restarts, waits, lastEpoch)
	if restarts == 0 {
		t.Fatalf("seed %d: no restart happened", seed)
	}
}
