package version

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/lineage"
)

// refModel is an independent, deliberately naive re-implementation of
// lineage constraints, relation and consistent versions, straight from the
// definitions in DESIGN.md: recomputed from scratch on every question.
type refModel struct {
	jobs      []refJob
	committed map[Name]base.Epoch
	floors    map[Name]base.Epoch
}

type refJob struct {
	name          string
	reads, writes []Name
}

func (m *refModel) writer(n Name) *refJob {
	for i := range m.jobs {
		if slices.Contains(m.jobs[i].writes, n) {
			return &m.jobs[i]
		}
	}
	return nil
}

// roots collects the nodes without writer (or whose writer reads nothing)
// upstream of n, n included if it is one.
func (m *refModel) roots(n Name, into map[Name]bool) {
	w := m.writer(n)
	if w == nil || len(w.reads) == 0 {
		into[n] = true
		return
	}
	for _, r := range w.reads {
		m.roots(r, into)
	}
}

func (m *refModel) related(a, b Name) bool {
	ra, rb := map[Name]bool{}, map[Name]bool{}
	m.roots(a, ra)
	m.roots(b, rb)
	for r := range ra {
		if rb[r] {
			return true
		}
	}
	return false
}

// reaches reports whether to is downstream of from (or equal).
func (m *refModel) reaches(from, to Name) bool {
	if from == to {
		return true
	}
	for _, j := range m.jobs {
		if slices.Contains(j.reads, from) {
			for _, w := range j.writes {
				if m.reaches(w, to) {
					return true
				}
			}
		}
	}
	return false
}

// addJob returns the error class the registration must get: "second
// writer", "cycle" or "" (accepted, and added).
func (m *refModel) addJob(j refJob) string {
	for _, w := range j.writes {
		if m.writer(w) != nil {
			return "second writer"
		}
	}
	for _, w := range j.writes {
		for _, r := range j.reads {
			if m.reaches(w, r) {
				return "cycle"
			}
		}
	}
	m.jobs = append(m.jobs, j)
	return ""
}

// read returns the epochs of a read, or wait=true when a strong read must
// wait; a strong read that does not wait raises the floors.
func (m *refModel) read(tables []Name, mode Mode) (epochs map[Name]base.Epoch, wait bool) {
	// Components by merging any two that hold a related pair, until stable.
	var comps [][]Name
	for _, t := range tables {
		if !slices.ContainsFunc(comps, func(c []Name) bool { return slices.Contains(c, t) }) {
			comps = append(comps, []Name{t})
		}
	}
	for merged := true; merged; {
		merged = false
	search:
		for i := range comps {
			for j := i + 1; j < len(comps); j++ {
				for _, a := range comps[i] {
					for _, b := range comps[j] {
						if m.related(a, b) {
							comps[i] = append(comps[i], comps[j]...)
							comps = slices.Delete(comps, j, j+1)
							merged = true
							break search
						}
					}
				}
			}
		}
	}
	epochs = map[Name]base.Epoch{}
	for _, c := range comps {
		e := base.Epoch(1<<63 - 1)
		for _, t := range c {
			e = min(e, m.committed[t])
		}
		for _, t := range c {
			if mode == Strong && m.floors[t] > e {
				return nil, true
			}
			epochs[t] = e
		}
	}
	if mode == Strong {
		for t, e := range epochs {
			m.floors[t] = max(m.floors[t], e)
		}
	}
	return epochs, false
}

// system is the real code under test: a lineage graph and a tracker.
type system struct {
	g  *lineage.Graph
	tr *Tracker
}

func (s *system) read(tables []Name, mode Mode) (map[Name]base.Epoch, bool) {
	r := s.tr.Resolve(s.g.Groups(tables), mode)
	if r.Wait != nil {
		return nil, true
	}
	s.tr.RaiseFloors(r.RaiseFloors)
	return r.Epochs, false
}

func errorClass(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, lineage.ErrSecondWriter):
		return "second writer"
	case errors.Is(err, lineage.ErrCycle):
		return "cycle"
	}
	return "other: " + err.Error()
}

func randomSubset(r *rand.Rand, from []Name, lo, hi int) []Name {
	n := lo + r.IntN(hi-lo+1)
	perm := r.Perm(len(from))
	var out []Name
	for _, i := range perm[:min(n, len(from))] {
		out = append(out, from[i])
	}
	return out
}

// TestConsistentVersionsAgainstModel runs random lineage graphs, random
// registrations (valid and invalid), random commit orders (including
// reports that go backwards) and random reads in both modes through the
// real lineage graph and tracker and through refModel, and requires the
// same answers; it also checks invariants version-consistent and
// version-strong-monotonic on the real answers directly.
func TestConsistentVersionsAgainstModel(t *testing.T) {
	const graphs, steps = 400, 250
	for seed := range uint64(graphs) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			runModel(t, seed, steps)
		})
	}
}

func runModel(t *testing.T, seed uint64, steps int) {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	nSources, nTables := 1+r.IntN(4), 2+r.IntN(10)
	var sources, tables []Name
	for i := range nSources {
		sources = append(sources, catalog.Name("db", fmt.Sprintf("s%d", i)))
	}
	for i := range nTables {
		tables = append(tables, catalog.Name("db", fmt.Sprintf("t%d", i)))
	}
	ref := &refModel{committed: map[Name]base.Epoch{}, floors: map[Name]base.Epoch{}}
	sys := &system{g: lineage.New(), tr: NewTracker(nil, nil)}
	register := func(j refJob) {
		want := ref.addJob(j)
		got := errorClass(sys.g.AddJob(j.name, j.reads, j.writes))
		if got != want {
			t.Fatalf("seed %d: AddJob(%s reads %v writes %v) = %q, model says %q", seed, j.name, j.reads, j.writes, got, want)
		}
	}
	// An acyclic base graph: table i is written from sources and lower
	// tables, or by nobody.
	for i, tb := range tables {
		if r.IntN(5) == 0 {
			continue
		}
		reads := randomSubset(r, append(slices.Clone(sources), tables[:i]...), 1, 3)
		register(refJob{name: fmt.Sprintf("j%d", i), reads: reads, writes: []Name{tb}})
	}
	// Random registrations anywhere: second writers, cycles, or fine.
	for k := range 1 + r.IntN(4) {
		all := append(slices.Clone(sources), tables...)
		register(refJob{name: fmt.Sprintf("x%d", k), reads: randomSubset(r, all, 1, 3), writes: []Name{tables[r.IntN(len(tables))]}})
	}

	strongSeen := map[Name]base.Epoch{}
	for step := range steps {
		if r.IntN(2) == 0 {
			tb := tables[r.IntN(len(tables))]
			cur := ref.committed[tb]
			e := cur + base.Epoch(r.IntN(6))
			if cur > 2 && r.IntN(8) == 0 {
				e = cur - 1 - base.Epoch(r.IntN(2)) // a stale report
			}
			changed, err := sys.tr.CheckCommit(tb, e)
			if (err != nil) != (e < cur) || (err != nil && !errors.Is(err, ErrEpochBackwards)) {
				t.Fatalf("seed %d step %d: commit %s %d over %d: err %v", seed, step, tb, e, cur, err)
			}
			if changed != (e > cur) {
				t.Fatalf("seed %d step %d: commit %s %d over %d: changed %v", seed, step, tb, e, cur, changed)
			}
			if changed {
				sys.tr.Commit(tb, Committed{Epoch: e})
				ref.committed[tb] = e
			}
			continue
		}
		q := randomSubset(r, tables, 1, len(tables))
		mode := Weak
		if r.IntN(2) == 0 {
			mode = Strong
		}
		want, wantWait := ref.read(q, mode)
		got, gotWait := sys.read(q, mode)
		if gotWait != wantWait || !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d step %d: %s read of %v = %v (wait %v), model %v (wait %v)", seed, step, mode, q, got, gotWait, want, wantWait)
		}
		for a, ea := range got {
			if c, _ := sys.tr.Committed(a); ea > c.Epoch {
				t.Fatalf("seed %d step %d: %s read above its committed epoch", seed, step, a)
			}
			for b, eb := range got {
				if ref.related(a, b) && ea != eb {
					t.Fatalf("seed %d step %d: related %s@%d and %s@%d", seed, step, a, ea, b, eb)
				}
			}
			if mode == Strong {
				if ea < strongSeen[a] {
					t.Fatalf("seed %d step %d: strong read of %s went back from %d to %d", seed, step, a, strongSeen[a], ea)
				}
				strongSeen[a] = ea
			}
		}
	}
}
