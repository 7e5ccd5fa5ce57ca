package service

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metric descriptors. Values are computed at scrape time from the service's
// state, so they are never stale and cost nothing between scrapes.
var (
	descEpoch = prometheus.NewDesc("strata_meta_epoch_current",
		"Latest epoch opened by the epoch clock.", nil, nil)
	descInterval = prometheus.NewDesc("strata_meta_epoch_interval_seconds",
		"Configured epoch interval.", nil, nil)
	descCommitted = prometheus.NewDesc("strata_meta_table_committed_epoch",
		"Committed epoch of a table.", []string{"table"}, nil)
	descTableLag = prometheus.NewDesc("strata_meta_table_freshness_lag_seconds",
		"Now minus the start time of the table's committed epoch.", []string{"table"}, nil)
	descJobLag = prometheus.NewDesc("strata_meta_job_added_lag_seconds",
		"Freshness lag a job adds over its inputs.", []string{"job"}, nil)
	descJobStatus = prometheus.NewDesc("strata_meta_job_status",
		"1 for the job's current status.", []string{"job", "status"}, nil)
	descJobCheckpoint = prometheus.NewDesc("strata_meta_job_last_checkpoint",
		"Last completed checkpoint a job reported.", []string{"job"}, nil)
	descPins = prometheus.NewDesc("strata_meta_pins",
		"Live pins held by reads.", nil, nil)
	descRefused = prometheus.NewDesc("strata_meta_commit_refused_total",
		"Committed-epoch reports refused for going backwards.", nil, nil)
)

// Collector returns a Prometheus collector of the service's metrics;
// register it with a prometheus.Registerer.
func (m *Meta) Collector() prometheus.Collector { return collector{m} }

type collector struct{ m *Meta }

// Describe implements prometheus.Collector.
func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descEpoch, descInterval, descCommitted, descTableLag, descJobLag, descJobStatus, descJobCheckpoint, descPins, descRefused} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c collector) Collect(ch chan<- prometheus.Metric) {
	m := c.m
	cur := m.clock.Current()
	ch <- prometheus.MustNewConstMetric(descEpoch, prometheus.GaugeValue, float64(cur.Epoch))
	ch <- prometheus.MustNewConstMetric(descInterval, prometheus.GaugeValue, m.clock.Interval().Seconds())
	if err := m.lock(); err != nil {
		return
	}
	defer m.mu.Unlock()
	now := m.opts.Time.Now()
	f := m.freshnessLocked(now)
	for _, t := range f.Tables {
		ch <- prometheus.MustNewConstMetric(descCommitted, prometheus.GaugeValue, float64(t.Committed), t.Table.String())
		if t.Known {
			ch <- prometheus.MustNewConstMetric(descTableLag, prometheus.GaugeValue, t.Lag.Seconds(), t.Table.String())
		}
	}
	for _, j := range f.Jobs {
		if j.Known {
			ch <- prometheus.MustNewConstMetric(descJobLag, prometheus.GaugeValue, j.AddedLag.Seconds(), j.Job)
		}
	}
	for _, j := range m.mu.catalog.Jobs() {
		info := m.jobInfoLocked(j, now)
		ch <- prometheus.MustNewConstMetric(descJobStatus, prometheus.GaugeValue, 1, j.Name, string(info.Status))
		ch <- prometheus.MustNewConstMetric(descJobCheckpoint, prometheus.GaugeValue, float64(info.LastCheckpoint), j.Name)
	}
	live := 0
	for _, p := range m.mu.pins.All() {
		if m.livePinLocked(p, now) {
			live++
		}
	}
	ch <- prometheus.MustNewConstMetric(descPins, prometheus.GaugeValue, float64(live))
	ch <- prometheus.MustNewConstMetric(descRefused, prometheus.CounterValue, float64(m.mu.refused))
}
