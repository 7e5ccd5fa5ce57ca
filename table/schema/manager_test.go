package schema

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/fileio"
)

// countingFS counts the reading operations of a FS.
type countingFS struct {
	fileio.FS
	lists, exists, reads atomic.Int64
}

func (c *countingFS) List(dir string) ([]fileio.FileInfo, error) {
	c.lists.Add(1)
	return c.FS.List(dir)
}

func (c *countingFS) Exists(p string) (bool, error) {
	c.exists.Add(1)
	return c.FS.Exists(p)
}

func (c *countingFS) ReadFile(p string) ([]byte, error) {
	c.reads.Add(1)
	return c.FS.ReadFile(p)
}

func (c *countingFS) reset() { c.lists.Store(0); c.exists.Store(0); c.reads.Store(0) }

// counts returns lists, exists and reads since the last reset.
func (c *countingFS) counts() [3]int64 {
	return [3]int64{c.lists.Load(), c.exists.Load(), c.reads.Load()}
}

// schema0 returns a schema 0 whose columns are named by names, the first
// one the key.
func schema0(t *testing.T, names ...string) *Schema {
	t.Helper()
	var fs []Field
	for _, n := range names {
		fs = append(fs, Field{Name: n, Type: types.Int64})
	}
	s, err := New(fs, names[:1], nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// evolve commits the next schema of m with a column named name.
func evolve(t *testing.T, m *Manager, name string) *Schema {
	t.Helper()
	s, err := m.Latest()
	if err != nil {
		t.Fatal(err)
	}
	next, err := s.AddColumn(name, types.Int32)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Commit(next); err != nil {
		t.Fatal(err)
	}
	return next
}

func columns(s *Schema) []string {
	var out []string
	for _, f := range s.Fields {
		out = append(out, f.Name)
	}
	return out
}

func TestLatestListsOnce(t *testing.T) {
	fs := &countingFS{FS: fileio.NewMem()}
	if err := NewManager(fs, "t").Commit(schema0(t, "k", "v")); err != nil {
		t.Fatal(err)
	}
	m := NewManager(fs, "t")
	fs.reset()
	s, err := m.Latest()
	if err != nil || s.ID != 0 || !slices.Equal(columns(s), []string{"k", "v"}) {
		t.Fatalf("first Latest = %+v, %v", s, err)
	}
	if got := fs.counts(); got != [3]int64{1, 0, 1} {
		t.Fatalf("first Latest: lists, exists, reads = %v, want one listing and one read", got)
	}
	fs.reset()
	for range 5 {
		s2, err := m.Latest()
		if err != nil || s2 != s {
			t.Fatalf("later Latest = %+v, %v; want the decoded schema 0 again", s2, err)
		}
		ids, err := m.IDs()
		if err != nil || !slices.Equal(ids, []ID{0}) {
			t.Fatalf("IDs = %v, %v", ids, err)
		}
	}
	// Each call stats schema-0 (still there) and schema-1 (not yet).
	if got := fs.counts(); got != [3]int64{0, 20, 0} {
		t.Fatalf("10 later calls: lists, exists, reads = %v, want no listing, 2 stats a call, no read", got)
	}
}

func TestLatestSeesSchemasOfOthers(t *testing.T) {
	fs := &countingFS{FS: fileio.NewMem()}
	m1, m2 := NewManager(fs, "t"), NewManager(fs, "t")
	if err := m1.Commit(schema0(t, "k")); err != nil {
		t.Fatal(err)
	}
	if s, err := m1.Latest(); err != nil || s.ID != 0 {
		t.Fatalf("m1 Latest = %+v, %v", s, err)
	}
	evolve(t, m2, "a")
	evolve(t, m2, "b")
	fs.reset()
	s, err := m1.Latest()
	if err != nil || s.ID != 2 || !slices.Equal(columns(s), []string{"k", "a", "b"}) {
		t.Fatalf("m1 Latest after m2 evolved = %+v, %v; want schema 2 with k, a, b", s, err)
	}
	if n := fs.lists.Load(); n != 0 {
		t.Fatalf("m1 listed %d times; probing finds new schemas", n)
	}
	ids, err := m1.IDs()
	if err != nil || !slices.Equal(ids, []ID{0, 1, 2}) {
		t.Fatalf("m1 IDs = %v, %v", ids, err)
	}
	// m1 evolves after m2: its commit makes schema 3, which m2 sees.
	evolve(t, m1, "c")
	if s, err := m2.Latest(); err != nil || s.ID != 3 || !slices.Equal(columns(s), []string{"k", "a", "b", "c"}) {
		t.Fatalf("m2 Latest = %+v, %v; want schema 3", s, err)
	}
}

// dropTable removes the table's schema files, as a DROP TABLE does with
// the whole directory.
func dropTable(t *testing.T, fs fileio.FS, dir string) {
	t.Helper()
	files, err := fs.List(dir + "/" + Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := fs.Delete(dir + "/" + Dir + "/" + f.Name); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDroppedTable(t *testing.T) {
	fs := fileio.NewMem()
	m := NewManager(fs, "t")
	if err := m.Commit(schema0(t, "k", "old")); err != nil {
		t.Fatal(err)
	}
	evolve(t, m, "a")
	evolve(t, m, "b")
	if s, err := m.Latest(); err != nil || s.ID != 2 {
		t.Fatalf("Latest = %+v, %v", s, err)
	}

	dropTable(t, fs, "t")
	if s, err := m.Latest(); !errors.Is(err, base.ErrNotFound) {
		t.Fatalf("Latest of a dropped table = %+v, %v; want not found", s, err)
	}
	if ids, err := m.IDs(); err != nil || len(ids) != 0 {
		t.Fatalf("IDs of a dropped table = %v, %v", ids, err)
	}

	// Created again with fewer schemas: the new schema 0 is read, not the
	// old one this manager decoded.
	if err := NewManager(fs, "t").Commit(schema0(t, "k", "new")); err != nil {
		t.Fatal(err)
	}
	s, err := m.Latest()
	if err != nil || s.ID != 0 || !slices.Equal(columns(s), []string{"k", "new"}) {
		t.Fatalf("Latest of the re-created table = %+v, %v; want its schema 0 with k, new", s, err)
	}
	if ids, err := m.IDs(); err != nil || !slices.Equal(ids, []ID{0}) {
		t.Fatalf("IDs of the re-created table = %v, %v", ids, err)
	}
}

func TestDroppedAndCreatedAgainWhileCached(t *testing.T) {
	fs := fileio.NewMem()
	m := NewManager(fs, "t")
	if err := m.Commit(schema0(t, "k", "old")); err != nil {
		t.Fatal(err)
	}
	evolve(t, m, "a")
	if s, err := m.Latest(); err != nil || s.ID != 1 {
		t.Fatalf("Latest = %+v, %v", s, err)
	}
	// Dropped and created again between two calls: the newest known
	// schema (1) is gone, so the manager lists and forgets what it
	// decoded.
	dropTable(t, fs, "t")
	if err := NewManager(fs, "t").Commit(schema0(t, "k", "new")); err != nil {
		t.Fatal(err)
	}
	s, err := m.Get(0)
	if err != nil || !slices.Equal(columns(s), []string{"k", "old"}) {
		t.Fatalf("Get(0) before the manager looked again = %+v, %v", s, err)
	}
	s, err = m.Latest()
	if err != nil || s.ID != 0 || !slices.Equal(columns(s), []string{"k", "new"}) {
		t.Fatalf("Latest of the re-created table = %+v, %v; want its schema 0 with k, new", s, err)
	}
	if s, err := m.Get(0); err != nil || !slices.Equal(columns(s), []string{"k", "new"}) {
		t.Fatalf("Get(0) after = %+v, %v; want the new schema 0", s, err)
	}
}

func TestCommitKeepsIDsDense(t *testing.T) {
	fs := fileio.NewMem()
	m := NewManager(fs, "t")
	s0 := schema0(t, "k")
	gap := *s0
	gap.ID = 1
	if err := m.Commit(&gap); !errors.Is(err, base.ErrInvalidArgument) {
		t.Fatalf("[schema-ids-dense] schema 1 without schema 0: %v", err)
	}
	if err := m.Commit(s0); err != nil {
		t.Fatal(err)
	}
	gap.ID = 2
	if err := m.Commit(&gap); !errors.Is(err, base.ErrInvalidArgument) {
		t.Fatalf("[schema-ids-dense] schema 2 without schema 1: %v", err)
	}
	neg := *s0
	neg.ID = -1
	if err := m.Commit(&neg); !errors.Is(err, base.ErrInvalidArgument) {
		t.Fatalf("schema -1: %v", err)
	}
	if ids, err := NewManager(fs, "t").IDs(); err != nil || !slices.Equal(ids, []ID{0}) {
		t.Fatalf("refused commits wrote files: IDs = %v, %v", ids, err)
	}
	// A predecessor that another manager wrote is found with a stat.
	m2 := NewManager(fs, "t")
	s1, _ := s0.AddColumn("a", types.Int32)
	if err := m2.Commit(s1); err != nil {
		t.Fatalf("schema 1 after schema 0 of another manager: %v", err)
	}
}

func TestIDsCallerOwnsSlice(t *testing.T) {
	m := NewManager(fileio.NewMem(), "t")
	if err := m.Commit(schema0(t, "k")); err != nil {
		t.Fatal(err)
	}
	evolve(t, m, "a")
	ids, _ := m.IDs()
	ids[0], ids[1] = 7, 8
	if again, err := m.IDs(); err != nil || !slices.Equal(again, []ID{0, 1}) {
		t.Fatalf("IDs after the caller changed its copy = %v, %v", again, err)
	}
}

// TestConcurrentReadersAndEvolution runs readers of one manager against
// evolutions through it and through another manager (run with -race).
func TestConcurrentReadersAndEvolution(t *testing.T) {
	fs := fileio.NewMem()
	shared, other := NewManager(fs, "t"), NewManager(fs, "t")
	if err := shared.Commit(schema0(t, "k")); err != nil {
		t.Fatal(err)
	}
	const evolutions = 20
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	stop := make(chan struct{})
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := ID(-1)
			for {
				select {
				case <-stop:
					return
				default:
				}
				s, err := shared.Latest()
				if err != nil {
					errs <- err
					return
				}
				ids, err := shared.IDs()
				if err != nil {
					errs <- err
					return
				}
				if s.ID < last || len(s.Fields) != int(s.ID)+1 {
					errs <- fmt.Errorf("reader %d: schema %d with %d columns after schema %d", r, s.ID, len(s.Fields), last)
					return
				}
				for i, id := range ids {
					if id != ID(i) {
						errs <- fmt.Errorf("reader %d: IDs %v not dense from 0", r, ids)
						return
					}
				}
				if ids[len(ids)-1] < s.ID {
					errs <- fmt.Errorf("reader %d: IDs %v after Latest %d", r, ids, s.ID)
					return
				}
				last = s.ID
			}
		}()
	}
	for i := range evolutions {
		m := shared
		if i%2 == 1 {
			m = other
		}
		evolve(t, m, fmt.Sprintf("c%d", i))
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, m := range []*Manager{shared, other} {
		s, err := m.Latest()
		if err != nil || s.ID != evolutions || len(s.Fields) != evolutions+1 {
			t.Fatalf("Latest after the evolutions = %+v, %v", s, err)
		}
	}
}
