package service

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/store"
)

// faultStore fails the Apply of a batch that writes a job record, as a
// store write that fails or a process that dies during it would: with
// inside set, the batch reaches the inner store with a reserved key
// added, so that the bbolt transaction fails after some of its puts.
type faultStore struct {
	store.Store
	inside bool
	failed int
}

var errInjected = errors.New("injected store failure")

func (f *faultStore) Apply(ctx context.Context, b store.Batch) error {
	for k := range b.Puts {
		if !strings.HasPrefix(k, prefixJob) {
			continue
		}
		f.failed++
		if !f.inside {
			return errInjected
		}
		bad := store.Batch{Puts: map[string][]byte{}, Deletes: b.Deletes}
		for k, v := range b.Puts {
			bad.Puts[k] = v
		}
		bad.Puts["\x00format"] = []byte("x") // reserved: refused inside the transaction
		if err := f.Store.Apply(ctx, bad); err == nil {
			panic("a batch with a reserved key was applied")
		}
		return errInjected
	}
	return f.Store.Apply(ctx, b)
}

// TestApplyChangeAllOrNothingOnStoreFailure checks invariant
// meta-change-atomic against a store write that fails: the view and its
// job are both absent, in the running service and after a restart, on
// the memory store and (failing inside the bbolt transaction) on bbolt.
func TestApplyChangeAllOrNothingOnStoreFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T) (store.Store, func() store.Store)
	}{
		{"memory", func(*testing.T) (store.Store, func() store.Store) {
			m := store.NewMemory()
			return m, func() store.Store { return m.Reopen() }
		}},
		{"bolt", func(t *testing.T) (store.Store, func() store.Store) {
			path := filepath.Join(t.TempDir(), "meta.db")
			b, err := store.OpenBolt(path)
			if err != nil {
				t.Fatal(err)
			}
			return b, func() store.Store {
				b, err := store.OpenBolt(path)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = b.Close() })
				return b
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			inner, reopen := tc.open(t)
			fs := &faultStore{Store: inner, inside: tc.name == "bolt"}
			m := openT(t, testOptions(fs))
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			name := func(s string) catalog.ObjectName { return catalog.Name("shop", s) }
			cols := []catalog.Column{{Name: "id", Type: types.Int64, NotNull: true}}
			must(m.CreateDatabase(ctx, catalog.Database{Name: "shop"}))
			must(m.CreateTable(ctx, catalog.Table{Name: name("t"), Kind: catalog.KindTable, Columns: cols, PrimaryKey: []string{"id"}}))
			change := meta.Change{
				CreateTables: []catalog.Table{{Name: name("v"), Kind: catalog.KindView, Columns: cols, PrimaryKey: []string{"id"}, Query: "SELECT id FROM t"}},
				RegisterJobs: []catalog.Job{{Name: "view-v", Kind: catalog.JobView, Reads: []catalog.ObjectName{name("t")}, Writes: []catalog.ObjectName{name("v")}}},
			}
			if err := m.ApplyChange(ctx, change); !errors.Is(err, errInjected) {
				t.Fatalf("ApplyChange with a failing store = %v", err)
			}
			if fs.failed != 1 {
				t.Fatalf("%d failed writes, want 1: the change was not one write", fs.failed)
			}
			check := func(m *Meta, when string) {
				t.Helper()
				c, err := m.Catalog(ctx)
				must(err)
				_, terr := c.Table(name("v"))
				_, jerr := c.Job("view-v")
				if !errors.Is(terr, base.ErrNotFound) || !errors.Is(jerr, base.ErrNotFound) {
					t.Fatalf("%s: view %v, job %v; want neither", when, terr, jerr)
				}
				if _, err := m.Job(ctx, "view-v"); !errors.Is(err, base.ErrNotFound) {
					t.Fatalf("%s: job state %v", when, err)
				}
			}
			check(m, "after the failure")
			must(m.Close())
			must(inner.Close())
			st := reopen()
			m = openT(t, testOptions(st))
			check(m, "after a restart")
			// The same change goes through once the store works.
			must(m.ApplyChange(ctx, change))
			c, err := m.Catalog(ctx)
			must(err)
			if _, err := c.Table(name("v")); err != nil {
				t.Fatal(err)
			}
			if info, err := m.Job(ctx, "view-v"); err != nil || info.Status != meta.JobCreated {
				t.Fatalf("job after the retry = %+v, %v", info, err)
			}
		})
	}
}
