package engine

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/stratadb/strata/dataflow/state/pebble"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/sqlerr"
)

// jobOptStateBackend is the job option (and CREATE MATERIALIZED VIEW
// option) naming the keyed-state backend of a view's job: "heap" (the
// default, absent from the job's options) keeps state in memory, "pebble"
// in a Pebble LSM on local disk under <data>/state/<job>/, for state
// larger than memory (Flink's state.backend.type: hashmap or rocksdb).
// The option is fixed when the view is created: a checkpoint of one
// backend does not restore into the other.
const jobOptStateBackend = "state.backend"

// stateBackendOption reads a view's state.backend option: "" for the heap
// backend (no option kept), "pebble", or an error naming the value.
func stateBackendOption(view string, v string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "heap", "hashmap", "memory":
		return "", nil
	case "pebble", "rocksdb", "disk":
		return "pebble", nil
	}
	return "", sqlerr.New(sqlerr.InvalidParameterValue, "materialized view %s: invalid value %q for option %s: expected 'heap' (state in memory, the default; also 'hashmap' or 'memory') or 'pebble' (state on local disk, for state larger than memory; also 'rocksdb' or 'disk')", view, v, jobOptStateBackend)
}

// stateDir is the working directory of job's on-disk keyed state.
func (e *Engine) stateDir(job string) string {
	return filepath.Join(e.opts.Dir, "state", job)
}

// stateBackend returns the state backend of job def, and clears the
// working directory of an on-disk backend: what a previous run left there
// is a copy of a checkpoint, which the restore reads again.
func (e *Engine) stateBackend(def catalog.Job) (task.StateBackend, error) {
	if def.Options[jobOptStateBackend] != "pebble" {
		return task.HeapBackend{}, nil
	}
	dir := e.stateDir(def.Name)
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	return pebble.Factory{Dir: dir}, nil
}
