package engine

import (
	"testing"

	"github.com/stratadb/strata/meta/catalog"
)

// TestJobKind: the kind SHOW JOBS shows. A sink into a table is a sink,
// also when a catalog written before sinks into tables had their own
// kind recorded it as an ingest job; the other jobs show their kind.
func TestJobKind(t *testing.T) {
	tb := []catalog.ObjectName{catalog.Name(DefaultDatabase, "t")}
	for _, tc := range []struct {
		job  catalog.Job
		want catalog.JobKind
	}{
		{catalog.Job{Name: "sink-dev-k", Kind: catalog.JobSink, Reads: tb[:1], Writes: []catalog.ObjectName{catalog.Name(DefaultDatabase, "u")}}, catalog.JobSink},
		{catalog.Job{Name: "sink-dev-k", Kind: catalog.JobIngest, Reads: tb[:1], Writes: []catalog.ObjectName{catalog.Name(DefaultDatabase, "u")}}, catalog.JobSink},
		{catalog.Job{Name: "sink-dev-x", Kind: catalog.JobSink, Reads: tb}, catalog.JobSink},
		{catalog.Job{Name: "dml-dev-t", Kind: catalog.JobIngest, Writes: tb}, catalog.JobIngest},
		{catalog.Job{Name: "view-dev-v", Kind: catalog.JobView, Reads: tb}, catalog.JobView},
	} {
		if got := JobKind(tc.job); got != tc.want {
			t.Errorf("JobKind(%s, recorded %s) = %s, want %s", tc.job.Name, tc.job.Kind, got, tc.want)
		}
	}
}
