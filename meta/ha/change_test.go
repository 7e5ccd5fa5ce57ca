package ha

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/service"
	"github.com/stratadb/strata/meta/store/etcdstore"
	"github.com/stratadb/strata/meta/store/etcdstore/etcdtest"
)

// TestApplyChangeFencedOffWritesNothing checks invariant
// meta-change-atomic on etcd with a failure inside the write: a leader
// that lost its election key has its change refused by the etcd Txn's
// guard, and a service opened afterwards on the same keys sees neither
// the view nor its job.
func TestApplyChangeFencedOffWritesNothing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv := etcdtest.Start(t)
	cli := srv.Client(t)
	st := etcdstore.New(cli, "/change/meta/")
	sess, err := concurrency.NewSession(cli, concurrency.WithTTL(5))
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	el := concurrency.NewElection(sess, st.ElectionPrefix())
	if err := el.Campaign(ctx, "node-a"); err != nil {
		t.Fatal(err)
	}
	opts := service.Options{Store: st.Fenced(el.Key(), el.Rev()), EpochInterval: 10 * time.Millisecond}
	m, err := service.Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	name := func(s string) catalog.ObjectName { return catalog.Name("shop", s) }
	cols := []catalog.Column{{Name: "id", Type: types.Int64, NotNull: true}}
	if err := m.CreateDatabase(ctx, catalog.Database{Name: "shop"}); err != nil {
		t.Fatal(err)
	}
	if err := m.CreateTable(ctx, catalog.Table{Name: name("t"), Kind: catalog.KindTable, Columns: cols, PrimaryKey: []string{"id"}}); err != nil {
		t.Fatal(err)
	}
	if err := el.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	err = m.ApplyChange(ctx, meta.Change{
		CreateTables: []catalog.Table{{Name: name("v"), Kind: catalog.KindView, Columns: cols, PrimaryKey: []string{"id"}, Query: "SELECT id FROM t"}},
		RegisterJobs: []catalog.Job{{Name: "view-v", Kind: catalog.JobView, Reads: []catalog.ObjectName{name("t")}, Writes: []catalog.ObjectName{name("v")}}},
	})
	if !errors.Is(err, etcdstore.ErrFenced) {
		t.Fatalf("change of a fenced-off leader = %v", err)
	}
	_ = m.Close()
	m2, err := service.Open(ctx, service.Options{Store: st, EpochInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	c, err := m2.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Table(name("t")); err != nil {
		t.Fatalf("the leader's earlier table is gone: %v", err)
	}
	_, terr := c.Table(name("v"))
	_, jerr := c.Job("view-v")
	if !errors.Is(terr, base.ErrNotFound) || !errors.Is(jerr, base.ErrNotFound) {
		t.Fatalf("a fenced-off change left view %v, job %v; want neither", terr, jerr)
	}
}
