package service

import (
	"context"
	"fmt"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/lineage"
	"github.com/stratadb/strata/meta/store"
)

// RegisterJob implements meta.Service: the catalog checks the objects, the
// lineage refuses cycles and second writers, and the job starts CREATED.
func (m *Meta) RegisterJob(ctx context.Context, j catalog.Job) error {
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	next, err := m.mu.catalog.CreateJob(j)
	if err != nil {
		return err
	}
	g := m.mu.lineage.Clone()
	if err := g.AddJob(j.Name, j.Reads, j.Writes); err != nil {
		return err
	}
	doc, err := next.Marshal()
	if err != nil {
		return fmt.Errorf("meta service: encoding catalog for job %q: %w", j.Name, err)
	}
	rec := jobRecord{Status: meta.JobCreated}
	var b store.Batch
	b.Put(keyCatalog, doc)
	b.Put(jobKey(j.Name), mustJSON(rec))
	if err := m.apply(ctx, fmt.Sprintf("job %q", j.Name), b); err != nil {
		return err
	}
	m.mu.catalog = next
	m.mu.lineage = g
	m.mu.jobs[j.Name] = &jobState{rec: rec, lastSeen: m.opts.Time.Now()}
	m.broadcastLocked()
	return nil
}

// DropJob implements meta.Service.
func (m *Meta) DropJob(ctx context.Context, name string) error {
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	next, err := m.mu.catalog.DropJob(name)
	if err != nil {
		return err
	}
	g := m.mu.lineage.Clone()
	if err := g.RemoveJob(name); err != nil {
		panic(fmt.Sprintf("service: catalog and lineage disagree about job %q: %v", name, err))
	}
	doc, err := next.Marshal()
	if err != nil {
		return fmt.Errorf("meta service: encoding catalog for drop of job %q: %w", name, err)
	}
	var b store.Batch
	b.Put(keyCatalog, doc)
	b.Delete(jobKey(name))
	held := m.mu.pins.Held(name)
	for _, id := range held {
		b.Delete(pinKey(id))
	}
	if err := m.apply(ctx, fmt.Sprintf("drop of job %q", name), b); err != nil {
		return err
	}
	m.mu.catalog = next
	m.mu.lineage = g
	delete(m.mu.jobs, name)
	for _, id := range held {
		m.mu.pins.Remove(id)
	}
	m.broadcastLocked()
	return nil
}

// Heartbeat implements meta.Service. It persists only what changed
// (status, checkpoint, reason); a repeat costs no write.
func (m *Meta) Heartbeat(ctx context.Context, hb meta.Heartbeat) error {
	if !hb.Status.Valid() || hb.Status == meta.JobCreated {
		return fmt.Errorf("job %q: heartbeat status %q must be RUNNING, RESTARTING, FAILED or FINISHED: %w", hb.Job, hb.Status, base.ErrInvalidArgument)
	}
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	js, ok := m.mu.jobs[hb.Job]
	if !ok {
		return fmt.Errorf("heartbeat of job %q, which is not registered: %w", hb.Job, base.ErrNotFound)
	}
	if hb.Checkpoint < js.rec.Checkpoint {
		return fmt.Errorf("job %q: heartbeat reports checkpoint %d, below its last completed checkpoint %d: %w", hb.Job, hb.Checkpoint, js.rec.Checkpoint, base.ErrConflict)
	}
	now := m.opts.Time.Now()
	if m.lost(js, now) {
		// The job was lost: its pins lapsed and stay lapsed; the job comes
		// back without them.
		if err := m.dropPinsLocked(ctx, m.mu.pins.Held(hb.Job), fmt.Sprintf("pins of lost job %q", hb.Job)); err != nil {
			return err
		}
	}
	rec := jobRecord{Status: hb.Status, Checkpoint: hb.Checkpoint, Reason: hb.Reason}
	if rec != js.rec {
		var b store.Batch
		b.Put(jobKey(hb.Job), mustJSON(rec))
		if err := m.apply(ctx, fmt.Sprintf("state of job %q", hb.Job), b); err != nil {
			return err
		}
		js.rec = rec
	}
	js.lastSeen, js.lastBeat = now, now
	return nil
}

// lost says whether a job in state js is lost at now.
func (m *Meta) lost(js *jobState, now time.Time) bool {
	switch js.rec.Status {
	case meta.JobCreated, meta.JobRunning, meta.JobRestarting:
		return now.Sub(js.lastSeen) > m.opts.HeartbeatTimeout
	}
	return false
}

func (m *Meta) jobInfoLocked(j catalog.Job, now time.Time) meta.JobInfo {
	js := m.mu.jobs[j.Name]
	info := meta.JobInfo{Job: j, Status: js.rec.Status, LastCheckpoint: js.rec.Checkpoint, LastHeartbeat: js.lastBeat, Reason: js.rec.Reason}
	if m.lost(js, now) {
		info.Lost = true
		info.Status = meta.JobFailed
		info.Reason = fmt.Sprintf("no heartbeat since %s (timeout %v)", js.lastSeen.UTC().Format(time.RFC3339Nano), m.opts.HeartbeatTimeout)
	}
	return info
}

// Job implements meta.Service.
func (m *Meta) Job(_ context.Context, name string) (meta.JobInfo, error) {
	if err := m.lock(); err != nil {
		return meta.JobInfo{}, err
	}
	defer m.mu.Unlock()
	j, err := m.mu.catalog.Job(name)
	if err != nil {
		return meta.JobInfo{}, err
	}
	return m.jobInfoLocked(j, m.opts.Time.Now()), nil
}

// Jobs implements meta.Service.
func (m *Meta) Jobs(context.Context) ([]meta.JobInfo, error) {
	if err := m.lock(); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	now := m.opts.Time.Now()
	var out []meta.JobInfo
	for _, j := range m.mu.catalog.Jobs() {
		out = append(out, m.jobInfoLocked(j, now))
	}
	return out, nil
}

// Lineage implements meta.Service.
func (m *Meta) Lineage(_ context.Context, q meta.LineageQuery) (meta.Lineage, error) {
	if (q.Node == nil) == (q.Job == "") {
		return meta.Lineage{}, fmt.Errorf("lineage query must name exactly one node or job: %w", base.ErrInvalidArgument)
	}
	if err := m.lock(); err != nil {
		return meta.Lineage{}, err
	}
	defer m.mu.Unlock()
	g := m.mu.lineage
	if q.Job != "" {
		up, err := g.UpstreamOfJob(q.Job)
		if err != nil {
			return meta.Lineage{}, err
		}
		down, _ := g.DownstreamOfJob(q.Job)
		return meta.Lineage{Upstream: nonNil(up), Downstream: nonNil(down)}, nil
	}
	n := *q.Node
	if _, err := m.mu.catalog.Table(n); err != nil && !m.mu.catalog.IsSource(n) {
		return meta.Lineage{}, fmt.Errorf("lineage of %s: no table, view or source of that name: %w", n, base.ErrNotFound)
	}
	return meta.Lineage{Upstream: nonNil(g.Upstream(n)), Downstream: nonNil(g.Downstream(n))}, nil
}

func nonNil(s lineage.Set) lineage.Set {
	if s.Nodes == nil {
		s.Nodes = []catalog.ObjectName{}
	}
	if s.Jobs == nil {
		s.Jobs = []string{}
	}
	return s
}
