package engine

import (
	"context"

	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/sqlerr"
)

// failingRestarts is how many restarts without progress between make a
// job "keep failing" (progress: two checkpoints completed after a restart,
// runningJob.failing): the rule waitCommitted applies to a wait, applied
// to a read (checkReadable). One restart is a transient
// failure a job recovers from on its own and does not break reads; a job
// that failed again after restarting from its checkpoint is failing on
// its input (a bad line, a row the table refuses) and will go on failing.
const failingRestarts = 2

// checkReadable fails a read of the tables and views in names when a job
// of this process upstream of one of them (its writer, the writers of the
// tables that job reads, and so on: its lineage, as waitCommitted follows
// it) keeps failing: it restarted failingRestarts times or more since its
// last completed checkpoint. The error (55000) names the relation, the job
// and the job's last error, with a hint on what ends the failures, where
// the read would otherwise return the rows committed before the failures
// as if nothing were wrong, as PostgreSQL refuses a read of an object not
// in the state it needs rather than answer from a stale one.
func (e *Engine) checkReadable(ctx context.Context, names []catalog.ObjectName) error {
	for _, n := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := e.failingUpstream(n); err != nil {
			return err
		}
	}
	return nil
}

// failingUpstream is checkReadable for one relation: nil when every job
// of its lineage made progress since its last restart but one.
func (e *Engine) failingUpstream(name catalog.ObjectName) error {
	j, failing, ok := e.firstFailing(name)
	if !ok {
		return nil
	}
	var err *sqlerr.Error
	if j.writes == name {
		err = sqlerr.New(sqlerr.ObjectNotInPrerequisiteState,
			"cannot read %s: its writer job %s keeps failing (%d restarts without progress): %v", name.Name, j.name, failing, j.cause)
	} else {
		err = sqlerr.New(sqlerr.ObjectNotInPrerequisiteState,
			"cannot read %s: job %s upstream of it (writing %s) keeps failing (%d restarts without progress): %v", name.Name, j.name, j.writes.Name, failing, j.cause)
	}
	err.Hint = failingJobHint(j)
	return err
}

// firstFailing returns the first job of name's lineage, in
// upstreamJobs' order, that keeps failing, with its restarts since its
// last checkpoint. When no job of the process keeps failing, which is
// the usual case, it answers from one pass over the jobs without walking
// the lineage.
func (e *Engine) firstFailing(name catalog.ObjectName) (jobHealth, int, bool) {
	if !e.anyFailing() {
		return jobHealth{}, 0, false
	}
	for _, h := range e.upstreamJobs(name) {
		if h.failing >= failingRestarts && h.cause != nil {
			return h, h.failing, true
		}
	}
	return jobHealth{}, 0, false
}

// anyFailing reports whether some job of this process keeps failing.
func (e *Engine) anyFailing() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, rj := range e.jobs {
		rj.mu.Lock()
		failing := rj.failing >= failingRestarts && rj.err != nil
		rj.mu.Unlock()
		if failing {
			return true
		}
	}
	return false
}
