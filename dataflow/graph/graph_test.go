package graph

import (
	"errors"
	"strings"
	"testing"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

type nop struct{ operator.Base }

func (nop) Process(int, *types.Chunk) error { return nil }

type src struct{ nop }

func (src) Next() (operator.Item, error) { return operator.Item{Done: true}, nil }

func newOp(int) operator.Operator { return nop{} }
func newSrc(int) operator.Source  { return src{} }

func TestValidate(t *testing.T) {
	good := func() *Job {
		return &Job{Name: "j", Vertices: []Vertex{
			{Name: "gen", Parallelism: 2, NewSource: newSrc},
			{Name: "agg", Parallelism: 3, NewOperator: newOp},
			{Name: "sink", Parallelism: 3, NewOperator: newOp},
		}, Edges: []Edge{
			{From: "gen", To: "agg", Partitioning: Hash, KeyColumns: []int{0}, KeyTypes: []types.Type{types.Int64}},
			{From: "agg", To: "sink", Partitioning: Forward},
		}}
	}
	if err := good().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		edit func(j *Job)
		want string
	}{
		"forward-parallelism": {func(j *Job) { j.Vertices[2].Parallelism = 2 }, "forward edge agg->sink"},
		"hash-without-key":    {func(j *Job) { j.Edges[0].KeyColumns = nil }, "hash edge gen->agg"},
		"cycle": {func(j *Job) {
			j.Edges = append(j.Edges, Edge{From: "sink", To: "agg", Input: 1, Partitioning: Broadcast})
		}, "cycle"},
		"into-source":    {func(j *Job) { j.Edges = append(j.Edges, Edge{From: "agg", To: "gen", Partitioning: Broadcast}) }, "into a source"},
		"no-input":       {func(j *Job) { j.Edges = j.Edges[:1] }, `operator "sink" has no input`},
		"missing-vertex": {func(j *Job) { j.Edges[1].To = "nowhere" }, "missing vertex"},
		"parallelism":    {func(j *Job) { j.Vertices[0].Parallelism = 500 }, "parallelism 500"},
		"input-gap":      {func(j *Job) { j.Edges[1].Input = 1 }, "numbered"},
	} {
		j := good()
		tc.edit(j)
		err := j.Validate()
		if !errors.Is(err, base.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an invalid-argument error mentioning %q", name, err, tc.want)
		}
	}
}
