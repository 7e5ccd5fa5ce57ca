package service

import (
	"context"
	"time"

	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
)

// Freshness implements meta.Service: per table, now minus the start time
// of its committed epoch; per job, the lag of what it writes minus the
// largest lag of what it reads (DESIGN.md vocabulary "freshness lag").
func (m *Meta) Freshness(context.Context) (meta.Freshness, error) {
	if err := m.lock(); err != nil {
		return meta.Freshness{}, err
	}
	defer m.mu.Unlock()
	return m.freshnessLocked(m.opts.Time.Now()), nil
}

type lag struct {
	known bool
	d     time.Duration
}

func (m *Meta) freshnessLocked(now time.Time) meta.Freshness {
	f := meta.Freshness{Now: now, Tables: []meta.TableFreshness{}, Jobs: []meta.JobFreshness{}}
	lags := map[catalog.ObjectName]lag{}
	for _, t := range m.mu.catalog.Tables() {
		tf := meta.TableFreshness{Table: t.Name}
		if c, ok := m.mu.tracker.Committed(t.Name); ok {
			tf.Committed = c.Epoch
			if !c.Start.IsZero() {
				tf.Known = true
				tf.Lag = max(0, now.Sub(c.Start))
			}
		}
		lags[t.Name] = lag{tf.Known, tf.Lag}
		f.Tables = append(f.Tables, tf)
	}
	for _, j := range m.mu.catalog.Jobs() {
		jf := meta.JobFreshness{Job: j.Name, Known: true}
		var out, in time.Duration
		for _, w := range j.Writes {
			l := lags[w]
			jf.Known = jf.Known && l.known
			out = max(out, l.d)
		}
		for _, r := range j.Reads {
			if m.mu.catalog.IsSource(r) {
				continue // a source is live: lag zero
			}
			l := lags[r]
			jf.Known = jf.Known && l.known
			in = max(in, l.d)
		}
		if jf.Known {
			jf.AddedLag = max(0, out-in)
		}
		f.Jobs = append(f.Jobs, jf)
	}
	return f
}
