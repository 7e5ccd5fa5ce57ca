package engine

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strconv"

	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/catalog"
)

// jobOptParallelism is the job option that holds the parallelism of a
// view's or a sink's stateful steps, set from Options.Parallelism when
// the job is created. A job keeps it across restarts, whatever
// Options.Parallelism the engine is started with later (invariant
// parallelism-pinned): its keyed state is checkpointed per subtask, and
// a restore into another number of subtasks would find a subtask's state
// missing (1 to 2) or leave one's behind (2 to 1). Flink restores keyed
// state into a new parallelism by key-group ranges; Strata does not yet,
// so a new --parallelism applies to the views and sinks created after it.
const jobOptParallelism = "parallelism"

// jobParallelism returns the parallelism def's stateful steps run with:
// its pinned option, or for a job created before options held it, the
// engine's.
func (e *Engine) jobParallelism(def catalog.Job) int {
	if p, err := strconv.Atoi(def.Options[jobOptParallelism]); err == nil && p >= 1 {
		return p
	}
	return e.opts.Parallelism
}

// matchCheckpoint checks job graph g of def against the latest completed
// checkpoint of def, the one it restores from: every subtask of a
// non-source vertex must find its own state there, and the checkpoint
// must hold no subtask beyond the vertex's parallelism. A job without a
// pinned parallelism (created before jobOptParallelism) whose checkpoint
// was taken at another parallelism is rebuilt at that one, and def
// returned with it pinned (in memory: the catalog is not changed). Any
// other mismatch is an error naming the vertex and both counts, rather
// than a restore that drops or misses state. A job with no checkpoint
// passes as it is.
func (e *Engine) matchCheckpoint(cat *catalog.Catalog, def catalog.Job, g *graph.Job, side *sidecar) (*graph.Job, *sidecar, catalog.Job, error) {
	m, err := e.checkpointStorage(def.Name).Latest()
	if err != nil || m == nil {
		// No checkpoint yet; or one the restore reads again and reports.
		return g, side, def, nil
	}
	vertex, want, have := checkpointShape(g, m)
	if vertex == "" {
		return g, side, def, nil
	}
	_, pinned := def.Options[jobOptParallelism]
	if !pinned && want == e.jobParallelism(def) {
		def.Options = maps.Clone(def.Options)
		if def.Options == nil {
			def.Options = map[string]string{}
		}
		def.Options[jobOptParallelism] = strconv.Itoa(have)
		if side != nil && side.close != nil {
			if err := side.close(); err != nil {
				return nil, nil, def, err
			}
		}
		if g, side, err = e.buildJob(cat, def); err != nil {
			return nil, nil, def, err
		}
		e.log.Info("job keeps the parallelism of its checkpoint", "job", def.Name, "parallelism", have, "engine parallelism", want)
		if vertex, want, have = checkpointShape(g, m); vertex == "" {
			return g, side, def, nil
		}
	}
	if side != nil && side.close != nil {
		err = side.close()
	}
	return nil, nil, def, errors.Join(fmt.Errorf("step %s runs %d subtasks but checkpoint %d holds the state of %d: the job cannot restore it at another parallelism: %w",
		vertex, want, m.Checkpoint, have, base.ErrInvalidArgument), err)
}

// checkpointStorage returns the storage of job's checkpoints, keeping the
// last two completed ones.
func (e *Engine) checkpointStorage(job string) *checkpoint.Storage {
	return checkpoint.NewStorage(checkpoint.OSFS{}, filepath.Join(e.opts.Dir, "checkpoints", job), 2)
}

// checkpointShape returns the first non-source vertex of g whose number
// of subtasks differs from the number m holds state for (vertices m holds
// nothing of, stateless ones, are skipped), with both counts; "" when
// they all agree.
func checkpointShape(g *graph.Job, m *checkpoint.Metadata) (vertex string, want, have int) {
	held := map[string]int{}
	for _, f := range m.Subtasks {
		held[f.Vertex] = max(held[f.Vertex], f.Subtask+1)
	}
	for _, v := range g.Vertices {
		if v.NewSource != nil {
			continue
		}
		if n, ok := held[v.Name]; ok && n != v.Parallelism {
			return v.Name, v.Parallelism, n
		}
	}
	return "", 0, 0
}
