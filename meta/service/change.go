package service

import (
	"context"
	"fmt"
	"strings"

	"github.com/stratadb/strata/internal/base"

	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/store"
	"github.com/stratadb/strata/meta/version"
)

// ApplyChange implements meta.Service (invariant meta-change-atomic): the
// steps are checked against a copy of the catalog and the lineage, then
// the catalog document, the job records, pins, committed epochs and
// floors they touch go to the store in one batch (store.Store.Apply is
// all or nothing), and only then is the new state published. A refused
// step or a failed write publishes nothing.
func (m *Meta) ApplyChange(ctx context.Context, c meta.Change) error {
	if len(c.DropJobs)+len(c.DropTables)+len(c.CreateTables)+len(c.RegisterJobs) == 0 {
		return fmt.Errorf("meta service: a change with no step: %w", base.ErrInvalidArgument)
	}
	what := describeChange(c)
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	next := m.mu.catalog
	g := m.mu.lineage.Clone()
	var b store.Batch
	var err error
	var unpinned []version.PinID
	for _, name := range c.DropJobs {
		if next, err = next.DropJob(name); err != nil {
			return err
		}
		if err := g.RemoveJob(name); err != nil {
			panic(fmt.Sprintf("service: catalog and lineage disagree about job %q: %v", name, err))
		}
		b.Delete(jobKey(name))
		for _, id := range m.mu.pins.Held(name) {
			b.Delete(pinKey(id))
			unpinned = append(unpinned, id)
		}
	}
	for _, name := range c.DropTables {
		if next, err = next.DropTable(name); err != nil {
			return err
		}
		b.Delete(commitKey(name))
		b.Delete(floorKey(name))
	}
	for _, t := range c.CreateTables {
		if next, err = next.CreateTable(t); err != nil {
			return err
		}
	}
	rec := jobRecord{Status: meta.JobCreated}
	for _, j := range c.RegisterJobs {
		if next, err = next.CreateJob(j); err != nil {
			return err
		}
		if err := g.AddJob(j.Name, j.Reads, j.Writes); err != nil {
			return err
		}
		b.Put(jobKey(j.Name), mustJSON(rec))
	}
	doc, err := next.Marshal()
	if err != nil {
		return fmt.Errorf("meta service: encoding catalog for %s: %w", what, err)
	}
	b.Put(keyCatalog, doc)
	if err := m.apply(ctx, what, b); err != nil {
		return err
	}
	m.mu.catalog = next
	m.mu.lineage = g
	for _, name := range c.DropJobs {
		delete(m.mu.jobs, name)
	}
	for _, id := range unpinned {
		m.mu.pins.Remove(id)
	}
	for _, name := range c.DropTables {
		m.mu.tracker.Forget(name)
	}
	now := m.opts.Time.Now()
	for _, j := range c.RegisterJobs {
		m.mu.jobs[j.Name] = &jobState{rec: rec, lastSeen: now}
	}
	m.broadcastLocked()
	return nil
}

// describeChange names a change's steps for the store error: "change
// (drop job "a"; create table db.t; register job "b")". A refused step's
// own error names what it refuses and is returned as it is, as the single
// operations return it.
func describeChange(c meta.Change) string {
	var steps []string
	for _, j := range c.DropJobs {
		steps = append(steps, fmt.Sprintf("drop job %q", j))
	}
	for _, t := range c.DropTables {
		steps = append(steps, "drop table "+t.String())
	}
	for _, t := range c.CreateTables {
		steps = append(steps, fmt.Sprintf("create %s %s", t.Kind, t.Name))
	}
	for _, j := range c.RegisterJobs {
		steps = append(steps, fmt.Sprintf("register job %q", j.Name))
	}
	return "change (" + strings.Join(steps, "; ") + ")"
}
