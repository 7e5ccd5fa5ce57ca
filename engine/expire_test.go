package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
)

// TestExpirationKeepsWhatReadersNeed writes a table in many epochs under a
// view, with at most two snapshots retained, and expires: the table's old
// snapshots go, the view stays equal to its query, a view created after
// the expiration starts from the table's present content and equals it
// too, and the consumer of a dropped view is removed.
func TestExpirationKeepsWhatReadersNeed(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	tb := catalog.Name(DefaultDatabase, "hist")
	if err := e.CreateTable(ctx, catalog.Table{Name: tb, Columns: []catalog.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}},
		PrimaryKey: []string{"k"}, Options: map[string]string{"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "2"}}, false); err != nil {
		t.Fatal(err)
	}
	query := "SELECT k % 2 AS g, sum(v) AS s, count(*) AS n FROM hist GROUP BY k % 2"
	before, after := catalog.Name(DefaultDatabase, "before_expiry"), catalog.Name(DefaultDatabase, "after_expiry")
	if err := e.CreateView(ctx, before, query, nil, false); err != nil {
		t.Fatal(err)
	}
	want := map[int64]int64{}
	var last base.Epoch
	for i := range int64(8) {
		c := types.NewChunk([]types.Type{types.Int64, types.Int64}, 2)
		c.Append(types.Insert, types.Row{types.NewInt64(10 + i), types.NewInt64(i)})
		want[10+i] = i
		if i > 0 {
			c.Append(types.UpdateBefore, types.Row{types.NewInt64(10 + i - 1), types.NewInt64(i - 1)})
			c.Append(types.UpdateAfter, types.Row{types.NewInt64(10 + i - 1), types.NewInt64(100 * i)})
			want[10+i-1] = 100 * i
		}
		ep, err := e.Apply(ctx, tb, c)
		if err != nil {
			t.Fatal(err)
		}
		last = ep
	}
	for _, n := range []catalog.ObjectName{tb, before} {
		if err := e.WaitCommitted(ctx, n, last); err != nil {
			t.Fatal(err)
		}
	}
	handle, err := e.Table(tb)
	if err != nil {
		t.Fatal(err)
	}
	snaps := handle.Store().Snapshots
	ids, err := snaps.IDs()
	if err != nil || len(ids) < 8 {
		t.Fatalf("snapshots before expiration: %v, %v", ids, err)
	}
	// The view's source registers its position with the table at most
	// every consumerEvery: expiration takes the first snapshots once a
	// checkpoint after that has completed.
	deadline := time.Now().Add(10 * consumerEvery)
	for {
		if err := e.expireAll(ctx); err != nil {
			t.Fatal(err)
		}
		if ids, err = snaps.IDs(); err != nil || len(ids) == 0 {
			t.Fatalf("snapshots after expiration: %v, %v", ids, err)
		}
		if ids[0] != 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("snapshots after expiration: %v; want the first ones gone", ids)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := e.CreateView(ctx, after, query, nil, false); err != nil {
		t.Fatal(err)
	}
	wantRows := func() string {
		sums, counts := map[int64]int64{}, map[int64]int64{}
		for k, v := range want {
			sums[k%2] += v
			counts[k%2]++
		}
		var rows []types.Row
		for g := range sums {
			rows = append(rows, types.Row{types.NewInt64(g), types.NewInt64(sums[g]), types.NewInt64(counts[g])})
		}
		return sorted(rows)
	}
	// One more write after the new view exists streams into both.
	c := types.NewChunk([]types.Type{types.Int64, types.Int64}, 1)
	c.Append(types.Insert, types.Row{types.NewInt64(99), types.NewInt64(5)})
	want[99] = 5
	if last, err = e.Apply(ctx, tb, c); err != nil {
		t.Fatal(err)
	}
	for _, n := range []catalog.ObjectName{before, after} {
		if err := e.WaitCommitted(ctx, n, last); err != nil {
			t.Fatal(err)
		}
	}
	r, err := e.ReadConsistent(ctx, []catalog.ObjectName{tb, before, after}, version.Strong, "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []catalog.ObjectName{before, after} {
		if got := sorted(r.Rows[v]); got != wantRows() {
			t.Errorf("view %s at epochs %v:\n%s\nwant\n%s", v.Name, r.Version.Epochs, got, wantRows())
		}
	}
	if err := e.Drop(ctx, "materialized view", before, false, false); err != nil {
		t.Fatal(err)
	}
	if err := e.expireAll(ctx); err != nil {
		t.Fatal(err)
	}
	consumers, err := snaps.Consumers()
	if err != nil {
		t.Fatal(err)
	}
	if len(consumers) != 1 {
		t.Fatalf("consumers of %s after the drop of %s: %v, want only the job of %s", tb.Name, before.Name, consumers, after.Name)
	}
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for id := range consumers {
		if _, err := cat.Job(id); err != nil {
			t.Fatalf("consumer %s has no job: %v", id, err)
		}
	}
}
