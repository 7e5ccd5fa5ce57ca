package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stratadb/strata/meta/catalog"
)

// A drop intent is the durable list of what one DROP statement removes,
// written before the statement stops anything and removed once its
// cleanup is done ([drop-atomic], drop.go). It lets the next start finish
// the cleanup of a DROP that died after its catalog change: the catalog
// is the truth, so the replay removes the files of the intent's tables
// and the checkpoints and state of its jobs only when the catalog no
// longer holds them. A DROP that died before its change names objects
// the catalog still holds, whose files the replay leaves alone; so does
// a table or job created again of the same name since. Every removal is
// idempotent, so a replay that dies is replayed again.
//
// Format (version 1): DIR/drops/drop-<random>.json, JSON
//
//	{"version": 1, "tables": ["db.name", ...], "jobs": ["view-db-name", ...],
//	 "sources": [{"source": "db.name", "options": {...}, "keep_publication": true}]}
//
// sources (optional, added later within version 1: an older reader
// ignores it and leaves only the upstream slot behind) names the
// postgres-cdc sources a DROP SOURCE removes; the replay drops their
// replication slots upstream when the catalog no longer holds them
// (dropsource.go).
//
// written to drop-<random>.tmp, synced, renamed and the directory synced,
// so a reader sees the whole intent or none; a .tmp file is an intent
// that never became durable (its DROP stopped nothing), removed on sight.
type dropIntent struct {
	Version int            `json:"version"`
	Tables  []string       `json:"tables"`
	Jobs    []string       `json:"jobs"`
	Sources []upstreamDrop `json:"sources,omitempty"`
}

// dropIntentVersion is the version of the intent format this code
// writes and reads.
const dropIntentVersion = 1

// dropIntentsDir is where the intents live, under the data directory.
func (e *Engine) dropIntentsDir() string { return filepath.Join(e.opts.Dir, "drops") }

// writeDropIntent makes the intent of a DROP of tables and jobs durable
// and returns its path.
func (e *Engine) writeDropIntent(tables []catalog.ObjectName, jobs []string) (string, error) {
	in := dropIntent{Version: dropIntentVersion, Jobs: jobs}
	for _, t := range tables {
		in.Tables = append(in.Tables, t.String())
	}
	return e.saveDropIntent(in)
}

// writeSourceDropIntent makes the intent of a DROP SOURCE that removes
// up durable and returns its path.
func (e *Engine) writeSourceDropIntent(up upstreamDrop) (string, error) {
	return e.saveDropIntent(dropIntent{Version: dropIntentVersion, Sources: []upstreamDrop{up}})
}

// saveDropIntent writes in durably and returns its path.
func (e *Engine) saveDropIntent(in dropIntent) (string, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return "", err
	}
	dir := e.dropIntentsDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("drop intent: %w", err)
	}
	f, err := os.CreateTemp(dir, "drop-*.tmp")
	if err != nil {
		return "", fmt.Errorf("drop intent: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close())
	path := strings.TrimSuffix(tmp, ".tmp") + ".json"
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("drop intent: %w", err)
	}
	return path, nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// finishDropIntent removes the intent at path once its DROP's cleanup is
// done. While a table of it waits for its readers' pins
// ([drop-after-readers]) the intent stays, for the next start to finish
// that removal if this process does not.
func (e *Engine) finishDropIntent(path string, tables []catalog.ObjectName) error {
	e.mu.Lock()
	waiting := slices.ContainsFunc(tables, func(t catalog.ObjectName) bool { _, ok := e.pendingRemovals[t]; return ok })
	e.mu.Unlock()
	if waiting {
		return nil
	}
	return os.Remove(path)
}

// replayDropIntents finishes the cleanup of every DROP whose intent is
// left (one that died, or whose tables were pinned when the process
// stopped), at start-up, before any job starts or any statement runs.
func (e *Engine) replayDropIntents(ctx context.Context) error {
	ents, err := os.ReadDir(e.dropIntentsDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("drop intents: %w", err)
	}
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return err
	}
	e.ddl.Lock()
	defer e.ddl.Unlock()
	var errs []error
	for _, ent := range ents {
		path := filepath.Join(e.dropIntentsDir(), ent.Name())
		switch {
		case strings.HasSuffix(ent.Name(), ".tmp"):
			errs = append(errs, os.Remove(path))
			continue
		case !strings.HasSuffix(ent.Name(), ".json"):
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("drop intent %s: %w", path, err))
			continue
		}
		var in dropIntent
		if err := json.Unmarshal(b, &in); err != nil || in.Version != dropIntentVersion {
			errs = append(errs, fmt.Errorf("drop intent %s: not an intent of version %d (%v)", path, dropIntentVersion, err))
			continue
		}
		var tables []catalog.ObjectName
		var ierrs []error
		for _, s := range in.Tables {
			n, err := catalog.ParseObjectName(s)
			if err != nil {
				ierrs = append(ierrs, fmt.Errorf("drop intent %s: %w", path, err))
				continue
			}
			if _, err := cat.Table(n); err == nil {
				continue // not dropped, or created again since
			}
			tables = append(tables, n)
			ierrs = append(ierrs, e.dropStorage(n))
		}
		for _, j := range in.Jobs {
			if _, err := cat.Job(j); err == nil {
				continue
			}
			ierrs = append(ierrs, e.forgetJob(j))
		}
		for _, up := range in.Sources {
			n, err := catalog.ParseObjectName(up.Source)
			if err != nil {
				ierrs = append(ierrs, fmt.Errorf("drop intent %s: %w", path, err))
				continue
			}
			if cat.IsSource(n) {
				continue // not dropped, or created again since
			}
			// An upstream that cannot be reached is logged with the slot
			// to drop by hand (dropUpstream), and the intent goes.
			_ = e.dropUpstream(ctx, up)
		}
		if err := errors.Join(ierrs...); err != nil {
			errs = append(errs, err)
			continue
		}
		if len(tables) > 0 {
			e.log.Info("finished the cleanup of a DROP cut short", "intent", path, "tables", in.Tables)
		}
		errs = append(errs, e.finishDropIntent(path, tables))
	}
	return errors.Join(errs...)
}
