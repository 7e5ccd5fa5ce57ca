package lineage

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/catalog"
)

// Name is a node of the graph: a table, view or source.
type Name = catalog.ObjectName

// Error markers. Both wrap base.ErrConflict: the registration conflicts
// with jobs already registered.
var (
	// ErrCycle marks a job whose edges would close a cycle
	// (invariant lineage-acyclic).
	ErrCycle = fmt.Errorf("lineage: cycle: %w", base.ErrConflict)
	// ErrSecondWriter marks a job that would write a table another job
	// writes (invariant lineage-one-writer).
	ErrSecondWriter = fmt.Errorf("lineage: second writer: %w", base.ErrConflict)
)

type job struct {
	reads, writes []Name
}

// Graph is the lineage of jobs, tables and sources. The zero Graph is not
// usable; start from New.
type Graph struct {
	jobs    map[string]job
	writer  map[Name]string          // node -> the job that writes it
	readers map[Name]map[string]bool // node -> jobs that read it
	// roots caches Roots; cleared on every change.
	roots map[Name][]Name
}

// New returns an empty graph.
func New() *Graph {
	return &Graph{
		jobs:    map[string]job{},
		writer:  map[Name]string{},
		readers: map[Name]map[string]bool{},
		roots:   map[Name][]Name{},
	}
}

// Clone returns an independent copy of g.
func (g *Graph) Clone() *Graph {
	c := New()
	for name, j := range g.jobs {
		c.insert(name, j)
	}
	return c
}

func (g *Graph) insert(name string, j job) {
	g.jobs[name] = j
	for _, w := range j.writes {
		g.writer[w] = name
	}
	for _, r := range j.reads {
		if g.readers[r] == nil {
			g.readers[r] = map[string]bool{}
		}
		g.readers[r][name] = true
	}
	clear(g.roots)
}

// AddJob registers job name reading reads and writing writes. It refuses,
// leaving g unchanged, a job name already registered (base.ErrConflict), a
// second writer to a node (ErrSecondWriter, naming the node and both jobs)
// and a job that would close a cycle (ErrCycle, naming the cycle node by
// node with the job on each edge).
func (g *Graph) AddJob(name string, reads, writes []Name) error {
	if _, ok := g.jobs[name]; ok {
		return fmt.Errorf("job %q is already in the lineage: %w", name, base.ErrConflict)
	}
	for _, w := range writes {
		if other, ok := g.writer[w]; ok {
			return fmt.Errorf("job %q cannot write %s: job %q already writes it; a table has one writer: %w", name, w, other, ErrSecondWriter)
		}
	}
	for _, w := range writes {
		for _, r := range reads {
			if w == r {
				return fmt.Errorf("job %q reads and writes %s, a cycle %s -> job %q -> %s: %w", name, w, w, name, w, ErrCycle)
			}
		}
		// A path w -> ... -> r through existing jobs plus the new edge
		// r -> w closes a cycle.
		if path := g.pathDown(w, reads); path != nil {
			return fmt.Errorf("job %q reading %s and writing %s would close a cycle %s -> job %q -> %s: %w",
				name, path.to(), w, path.String(), name, w, ErrCycle)
		}
	}
	g.insert(name, job{reads: slices.Clone(reads), writes: slices.Clone(writes)})
	return nil
}

// RemoveJob removes job name and its edges; the error wraps base.ErrNotFound
// when it is not registered.
func (g *Graph) RemoveJob(name string) error {
	j, ok := g.jobs[name]
	if !ok {
		return fmt.Errorf("job %q is not in the lineage: %w", name, base.ErrNotFound)
	}
	delete(g.jobs, name)
	for _, w := range j.writes {
		delete(g.writer, w)
	}
	for _, r := range j.reads {
		delete(g.readers[r], name)
		if len(g.readers[r]) == 0 {
			delete(g.readers, r)
		}
	}
	clear(g.roots)
	return nil
}

// path is a walk through the graph: nodes[i] -> jobs[i] -> nodes[i+1].
type path struct {
	nodes []Name
	jobs  []string
}

func (p *path) to() Name { return p.nodes[len(p.nodes)-1] }

func (p *path) String() string {
	var b strings.Builder
	for i, n := range p.nodes {
		if i > 0 {
			fmt.Fprintf(&b, " -> job %q -> ", p.jobs[i-1])
		}
		b.WriteString(n.String())
	}
	return b.String()
}

// pathDown returns a shortest path from start downstream to any of
// targets, or nil.
func (g *Graph) pathDown(start Name, targets []Name) *path {
	type step struct {
		from Name
		job  string
	}
	prev := map[Name]step{start: {}}
	queue := []Name{start}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if slices.Contains(targets, n) {
			p := &path{nodes: []Name{n}}
			for n != start {
				s := prev[n]
				p.nodes = append(p.nodes, s.from)
				p.jobs = append(p.jobs, s.job)
				n = s.from
			}
			slices.Reverse(p.nodes)
			slices.Reverse(p.jobs)
			return p
		}
		for _, jn := range sortedKeys(g.readers[n]) {
			for _, w := range g.jobs[jn].writes {
				if _, seen := prev[w]; !seen {
					prev[w] = step{from: n, job: jn}
					queue = append(queue, w)
				}
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Writer returns the job that writes node n, if any.
func (g *Graph) Writer(n Name) (string, bool) {
	j, ok := g.writer[n]
	return j, ok
}

// Jobs returns the registered job names, sorted.
func (g *Graph) Jobs() []string {
	out := make([]string, 0, len(g.jobs))
	for name := range g.jobs {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// Edges returns what job name reads and writes; ok is false when the job is
// not registered.
func (g *Graph) Edges(name string) (reads, writes []Name, ok bool) {
	j, ok := g.jobs[name]
	return slices.Clone(j.reads), slices.Clone(j.writes), ok
}

// Set is a set of nodes and jobs, each sorted.
type Set struct {
	Nodes []Name   `json:"nodes"`
	Jobs  []string `json:"jobs"`
}

func (s *Set) sort() {
	slices.SortFunc(s.Nodes, compareNames)
	slices.Sort(s.Jobs)
}

func compareNames(a, b Name) int {
	if c := cmp.Compare(a.Database, b.Database); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

// Upstream returns every node and job that n depends on, transitively,
// without n itself.
func (g *Graph) Upstream(n Name) Set {
	return g.walkUp([]Name{n}, map[Name]bool{n: true}, nil)
}

// Downstream returns every node and job that depends on n, transitively,
// without n itself.
func (g *Graph) Downstream(n Name) Set {
	return g.walkDown([]Name{n}, map[Name]bool{n: true}, nil)
}

// UpstreamOfJob returns every node the job reads, transitively, and the
// jobs that write them. The error wraps base.ErrNotFound.
func (g *Graph) UpstreamOfJob(name string) (Set, error) {
	j, ok := g.jobs[name]
	if !ok {
		return Set{}, fmt.Errorf("job %q is not in the lineage: %w", name, base.ErrNotFound)
	}
	seen := map[Name]bool{}
	for _, r := range j.reads {
		seen[r] = true
	}
	return g.walkUp(j.reads, seen, slices.Clone(j.reads)), nil
}

// DownstreamOfJob returns every node the job writes, transitively, and the
// jobs that read them. The error wraps base.ErrNotFound.
func (g *Graph) DownstreamOfJob(name string) (Set, error) {
	j, ok := g.jobs[name]
	if !ok {
		return Set{}, fmt.Errorf("job %q is not in the lineage: %w", name, base.ErrNotFound)
	}
	seen := map[Name]bool{}
	for _, w := range j.writes {
		seen[w] = true
	}
	return g.walkDown(j.writes, seen, slices.Clone(j.writes)), nil
}

func (g *Graph) walkUp(queue []Name, seen map[Name]bool, nodes []Name) Set {
	out := Set{Nodes: nodes}
	jobs := map[string]bool{}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		jn, ok := g.writer[n]
		if !ok || jobs[jn] {
			continue
		}
		jobs[jn] = true
		out.Jobs = append(out.Jobs, jn)
		for _, r := range g.jobs[jn].reads {
			if !seen[r] {
				seen[r] = true
				out.Nodes = append(out.Nodes, r)
				queue = append(queue, r)
			}
		}
	}
	out.sort()
	return out
}

func (g *Graph) walkDown(queue []Name, seen map[Name]bool, nodes []Name) Set {
	out := Set{Nodes: nodes}
	jobs := map[string]bool{}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for jn := range g.readers[n] {
			if jobs[jn] {
				continue
			}
			jobs[jn] = true
			out.Jobs = append(out.Jobs, jn)
			for _, w := range g.jobs[jn].writes {
				if !seen[w] {
					seen[w] = true
					out.Nodes = append(out.Nodes, w)
					queue = append(queue, w)
				}
			}
		}
	}
	out.sort()
	return out
}

// Roots returns the roots upstream of n, sorted: {n} itself when no job
// writes n, else the roots of everything its writer reads. A writer that
// reads nothing (a generator) makes n its own root.
func (g *Graph) Roots(n Name) []Name {
	if r, ok := g.roots[n]; ok {
		return r
	}
	jn, ok := g.writer[n]
	if !ok || len(g.jobs[jn].reads) == 0 {
		g.roots[n] = []Name{n}
		return g.roots[n]
	}
	var out []Name
	for _, r := range g.jobs[jn].reads {
		// Recursion depth is bounded by the longest path, and the graph is
		// acyclic (invariant lineage-acyclic).
		out = append(out, g.Roots(r)...)
	}
	slices.SortFunc(out, compareNames)
	out = slices.Compact(out)
	g.roots[n] = out
	return out
}

// Related reports whether a and b share a root.
func (g *Graph) Related(a, b Name) bool {
	ra, rb := g.Roots(a), g.Roots(b)
	for _, r := range ra {
		if _, found := slices.BinarySearchFunc(rb, r, compareNames); found {
			return true
		}
	}
	return false
}

// Groups partitions tables into the connected components of the relation
// "shares a root" restricted to tables: the sets of tables a consistent read
// must read at one epoch. Groups are sorted, and sorted by their first table;
// duplicates in tables are dropped.
func (g *Graph) Groups(tables []Name) [][]Name {
	tables = slices.Clone(tables)
	slices.SortFunc(tables, compareNames)
	tables = slices.Compact(tables)
	parent := make([]int, len(tables))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	owner := map[Name]int{} // root -> first table holding it
	for i, t := range tables {
		for _, r := range g.Roots(t) {
			if j, ok := owner[r]; ok {
				parent[find(i)] = find(j)
			} else {
				owner[r] = i
			}
		}
	}
	byRep := map[int][]Name{}
	var reps []int
	for i, t := range tables {
		rep := find(i)
		if _, ok := byRep[rep]; !ok {
			reps = append(reps, rep)
		}
		byRep[rep] = append(byRep[rep], t)
	}
	out := make([][]Name, 0, len(reps))
	for _, rep := range reps {
		out = append(out, byRep[rep])
	}
	slices.SortFunc(out, func(a, b []Name) int { return compareNames(a[0], b[0]) })
	return out
}
