package graph

import (
	"fmt"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// Partitioning says how an edge routes rows.
type Partitioning uint8

// The partitionings.
const (
	Forward Partitioning = iota + 1
	Hash
	Broadcast
)

// String returns "forward", "hash" or "broadcast".
func (p Partitioning) String() string {
	switch p {
	case Forward:
		return "forward"
	case Hash:
		return "hash"
	case Broadcast:
		return "broadcast"
	}
	return fmt.Sprintf("Partitioning(%d)", uint8(p))
}

// Vertex is one operator or source of a job. Exactly one of NewSource and
// NewOperator is set; each is called once per subtask per attempt (a
// restart makes fresh instances).
type Vertex struct {
	Name        string
	Parallelism int
	NewSource   func(subtask int) operator.Source
	NewOperator func(subtask int) operator.Operator
}

// Edge joins vertex From to vertex To as To's logical input Input.
type Edge struct {
	From, To     string
	Input        int
	Partitioning Partitioning
	// KeyColumns and KeyTypes give, for Hash, the columns whose
	// memcomparable encoding (types.AppendKey) is the key, and their types.
	KeyColumns []int
	KeyTypes   []types.Type
}

// Job is a dataflow job.
type Job struct {
	Name string
	// MaxParallelism is the number of key groups (default 128), the upper
	// bound of any vertex's parallelism, fixed for the job's lifetime.
	MaxParallelism int
	Vertices       []Vertex
	Edges          []Edge
}

// DefaultMaxParallelism is the number of key groups when Job leaves it 0.
const DefaultMaxParallelism = 128

// MaxPar returns the job's number of key groups.
func (j *Job) MaxPar() int {
	if j.MaxParallelism == 0 {
		return DefaultMaxParallelism
	}
	return j.MaxParallelism
}

// Vertex returns the vertex called name, or nil.
func (j *Job) Vertex(name string) *Vertex {
	for i := range j.Vertices {
		if j.Vertices[i].Name == name {
			return &j.Vertices[i]
		}
	}
	return nil
}

// InEdges returns the edges into name ordered by Input.
func (j *Job) InEdges(name string) []Edge {
	var out []Edge
	for input := 0; ; input++ {
		found := false
		for _, e := range j.Edges {
			if e.To == name && e.Input == input {
				out = append(out, e)
				found = true
			}
		}
		if !found {
			return out
		}
	}
}

// OutEdges returns the edges out of name in declaration order.
func (j *Job) OutEdges(name string) []Edge {
	var out []Edge
	for _, e := range j.Edges {
		if e.From == name {
			out = append(out, e)
		}
	}
	return out
}

// Validate checks the job (see the package doc).
func (j *Job) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("job %q: %s: %w", j.Name, fmt.Sprintf(format, args...), base.ErrInvalidArgument)
	}
	maxPar := j.MaxPar()
	if maxPar < 1 || maxPar > state.MaxParallelismLimit {
		return bad("max parallelism %d outside 1..%d", maxPar, state.MaxParallelismLimit)
	}
	if len(j.Vertices) == 0 {
		return bad("no vertices")
	}
	seen := map[string]bool{}
	for _, v := range j.Vertices {
		if v.Name == "" || seen[v.Name] {
			return bad("vertex name %q empty or repeated", v.Name)
		}
		seen[v.Name] = true
		if v.Parallelism < 1 || v.Parallelism > maxPar {
			return bad("vertex %q parallelism %d outside 1..%d", v.Name, v.Parallelism, maxPar)
		}
		if (v.NewSource == nil) == (v.NewOperator == nil) {
			return bad("vertex %q needs exactly one of NewSource and NewOperator", v.Name)
		}
	}
	inputs := map[string]map[int]bool{}
	for _, e := range j.Edges {
		from, to := j.Vertex(e.From), j.Vertex(e.To)
		if from == nil || to == nil {
			return bad("edge %s->%s names a missing vertex", e.From, e.To)
		}
		if to.NewSource != nil {
			return bad("edge %s->%s goes into a source", e.From, e.To)
		}
		if inputs[e.To] == nil {
			inputs[e.To] = map[int]bool{}
		}
		if e.Input < 0 || inputs[e.To][e.Input] {
			return bad("edge %s->%s input %d negative or repeated", e.From, e.To, e.Input)
		}
		inputs[e.To][e.Input] = true
		switch e.Partitioning {
		case Forward:
			if from.Parallelism != to.Parallelism {
				return bad("forward edge %s->%s joins parallelism %d to %d", e.From, e.To, from.Parallelism, to.Parallelism)
			}
		case Hash:
			if len(e.KeyColumns) == 0 || len(e.KeyColumns) != len(e.KeyTypes) {
				return bad("hash edge %s->%s needs key columns with their types", e.From, e.To)
			}
		case Broadcast:
		default:
			return bad("edge %s->%s has no partitioning", e.From, e.To)
		}
	}
	for _, v := range j.Vertices {
		n := len(inputs[v.Name])
		if v.NewOperator != nil && n == 0 {
			return bad("operator %q has no input", v.Name)
		}
		for i := range n {
			if !inputs[v.Name][i] {
				return bad("vertex %q inputs are not numbered 0..%d", v.Name, n-1)
			}
		}
	}
	// Acyclic: Kahn's algorithm.
	indeg := map[string]int{}
	for _, e := range j.Edges {
		indeg[e.To]++
	}
	var ready []string
	for _, v := range j.Vertices {
		if indeg[v.Name] == 0 {
			ready = append(ready, v.Name)
		}
	}
	done := 0
	for len(ready) > 0 {
		v := ready[0]
		ready = ready[1:]
		done++
		for _, e := range j.OutEdges(v) {
			if indeg[e.To]--; indeg[e.To] == 0 {
				ready = append(ready, e.To)
			}
		}
	}
	if done != len(j.Vertices) {
		return bad("the edges form a cycle")
	}
	return nil
}
