package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/store"
)

// gatedStore holds each write of committed epochs until it is let go, and
// counts those writes and the tables in each.
type gatedStore struct {
	store.Store
	entered chan int      // receives the number of tables of each held write
	release chan struct{} // lets one held write go on
	fail    error         // returned instead of writing, when set
	mu      sync.Mutex
	writes  []int
}

func (g *gatedStore) Apply(ctx context.Context, b store.Batch) error {
	n := 0
	for k := range b.Puts {
		if strings.HasPrefix(k, prefixCommit) {
			n++
		}
	}
	if n == 0 {
		return g.Store.Apply(ctx, b)
	}
	g.mu.Lock()
	g.writes = append(g.writes, n)
	fail := g.fail
	g.mu.Unlock()
	g.entered <- n
	<-g.release
	if fail != nil {
		return fail
	}
	return g.Store.Apply(ctx, b)
}

// TestCommitReportsAreGroupCommitted holds the store write of one table's
// report and sends four more meanwhile: the four go to the store in one
// write, reads do not wait for the held write, and no report is visible
// before its write is done. A write that fails fails every report in it
// and publishes none.
func TestCommitReportsAreGroupCommitted(t *testing.T) {
	ctx := context.Background()
	g := &gatedStore{Store: store.NewMemory(), entered: make(chan int, 8), release: make(chan struct{})}
	m := openT(t, testOptions(g))
	if err := m.CreateDatabase(ctx, catalog.Database{Name: "d"}); err != nil {
		t.Fatal(err)
	}
	var tables []catalog.ObjectName
	for i := range 5 {
		name := catalog.Name("d", fmt.Sprintf("t%d", i))
		if err := m.CreateTable(ctx, catalog.Table{Name: name, Kind: catalog.KindTable, Columns: []catalog.Column{{Name: "a", Type: types.Int64}}}); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if _, err := m.WaitEpoch(ctx, 1); err != nil {
		t.Fatal(err)
	}
	report := func(tb catalog.ObjectName, errs chan<- error) { errs <- m.CommitEpoch(ctx, tb, 1) }
	first := make(chan error, 1)
	go report(tables[0], first)
	if n := <-g.entered; n != 1 {
		t.Fatalf("the first write holds %d tables, want 1", n)
	}
	rest := make(chan error, 4)
	for _, tb := range tables[1:] {
		go report(tb, rest)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		m.mu.Lock()
		n := 0
		if m.mu.reports != nil {
			n = len(m.mu.reports.commits)
		}
		m.mu.Unlock()
		if n == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 4 reports gathered while the first write is held", n)
		}
		time.Sleep(time.Millisecond)
	}
	// The mutex is free while the store writes: a read answers at once,
	// and does not see the report being written.
	if c, err := m.CommittedEpoch(ctx, tables[0]); err != nil || c.Epoch != 0 {
		t.Fatalf("committed epoch of %s during its write: %+v, %v; want 0", tables[0], c, err)
	}
	g.release <- struct{}{}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if n := <-g.entered; n != 4 {
		t.Fatalf("the second write holds %d tables, want 4", n)
	}
	g.release <- struct{}{}
	for range 4 {
		if err := <-rest; err != nil {
			t.Fatal(err)
		}
	}
	for _, tb := range tables {
		if c, err := m.CommittedEpoch(ctx, tb); err != nil || c.Epoch != 1 {
			t.Fatalf("committed epoch of %s: %+v, %v; want 1", tb, c, err)
		}
	}
	if len(g.writes) != 2 {
		t.Fatalf("writes of committed epochs: %v, want 2", g.writes)
	}

	// A failed write fails its reports and publishes nothing.
	boom := errors.New("disk full")
	g.mu.Lock()
	g.fail = boom
	g.mu.Unlock()
	e, err := m.WaitEpoch(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	go func() { first <- m.CommitEpoch(ctx, tables[0], e.Epoch) }()
	<-g.entered
	g.release <- struct{}{}
	if err := <-first; !errors.Is(err, boom) || !strings.Contains(err.Error(), "committed epochs") {
		t.Fatalf("report over a failing store: %v", err)
	}
	if c, _ := m.CommittedEpoch(ctx, tables[0]); c.Epoch != 1 {
		t.Fatalf("a failed report was published: committed epoch %d", c.Epoch)
	}
}
