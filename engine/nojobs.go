package engine

import (
	"slices"

	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/sqlerr"
)

// refuseStoppedInputs refuses (55000, object_not_in_prerequisite_state)
// to create what (a "materialized view" or a "sink") named name over
// reads when one of them, or anything it is derived from, is written by a
// job this instance does not run. Only an instance opened without its
// jobs (Options.NoJobs, strata start --no-jobs) has such jobs: a new job
// over their tables would wait forever for an epoch they never commit,
// and so would the CREATE that waits for the new job's first epoch. The
// check runs before anything is created, as the refusal of a write to a
// table whose job is stopped (writableLog).
func (e *Engine) refuseStoppedInputs(cat *catalog.Catalog, what string, name catalog.ObjectName, reads []catalog.ObjectName) error {
	if !e.opts.NoJobs {
		return nil
	}
	jobs := cat.Jobs()
	visited := map[catalog.ObjectName]bool{}
	queue := slices.Clone(reads)
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if visited[n] {
			continue
		}
		visited[n] = true
		for _, j := range jobs {
			if !slices.Contains(j.Writes, n) {
				continue
			}
			e.mu.Lock()
			_, running := e.jobs[j.Name]
			e.mu.Unlock()
			if !running {
				return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState,
					"cannot create %s %q: %q, which it reads, is written by job %s, which is not running (the instance was opened without its jobs: strata start --no-jobs)",
					what, name.Name, n.Name, j.Name)
			}
			queue = append(queue, j.Reads...)
		}
	}
	return nil
}
