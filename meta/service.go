package meta

import (
	"context"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/epoch"
	"github.com/stratadb/strata/meta/lineage"
	"github.com/stratadb/strata/meta/version"
)

// Service is the meta service as every other part of Strata sees it; see
// the package doc for who calls what and the guarantees. All methods are
// safe for concurrent use.
type Service interface {
	// CreateDatabase adds a database to the catalog.
	CreateDatabase(ctx context.Context, db catalog.Database) error
	// DropDatabase removes an empty database.
	DropDatabase(ctx context.Context, name string) error
	// CreateTable adds a table or materialized view (Kind view, Query its
	// SQL).
	CreateTable(ctx context.Context, t catalog.Table) error
	// DropTable removes a table or view no job reads or writes; its
	// committed epoch and strong-read floor are forgotten.
	DropTable(ctx context.Context, name catalog.ObjectName) error
	// CreateSource adds an external source.
	CreateSource(ctx context.Context, s catalog.Source) error
	// DropSource removes a source no job reads.
	DropSource(ctx context.Context, name catalog.ObjectName) error
	// Catalog returns the current catalog version.
	Catalog(ctx context.Context) (*catalog.Catalog, error)

	// RegisterJob adds a job to the catalog and its edges to the lineage.
	// A cycle gives an error wrapping lineage.ErrCycle, a second writer to
	// a table one wrapping lineage.ErrSecondWriter; both name the tables
	// and jobs involved.
	RegisterJob(ctx context.Context, j catalog.Job) error
	// DropJob removes a job, its edges and its runtime state, and
	// releases its pins.
	DropJob(ctx context.Context, name string) error
	// ApplyChange applies the catalog changes of one DDL statement in
	// one transaction of the meta store (invariant meta-change-atomic):
	// every step or none. A step that is refused (a name taken, a cycle,
	// a second writer, a table still in use) refuses the whole change
	// with that step's error; a store write that fails leaves the
	// catalog, the lineage and the job states as they were.
	ApplyChange(ctx context.Context, c Change) error
	// Heartbeat reports that a job is alive, with its status and its last
	// completed checkpoint (zero if none yet).
	Heartbeat(ctx context.Context, hb Heartbeat) error
	// Job returns a job's definition and runtime state.
	Job(ctx context.Context, name string) (JobInfo, error)
	// Jobs returns every job, sorted by name.
	Jobs(ctx context.Context) ([]JobInfo, error)
	// Lineage returns what a table, view, source or job depends on and
	// what depends on it, transitively.
	Lineage(ctx context.Context, of LineageQuery) (Lineage, error)

	// CurrentEpoch returns the latest open epoch and its start time.
	CurrentEpoch(ctx context.Context) (epoch.Info, error)
	// WaitEpoch blocks until an epoch above after is open and returns the
	// latest open epoch; it returns early with ctx's error.
	WaitEpoch(ctx context.Context, after base.Epoch) (epoch.Info, error)
	// CommitEpoch reports that table has committed every change of every
	// epoch up to e. Repeats are accepted; a report below the committed
	// epoch is refused with version.ErrEpochBackwards, and a report of an
	// epoch the clock has not opened yet with base.ErrInvalidArgument.
	CommitEpoch(ctx context.Context, table catalog.ObjectName, e base.Epoch) error
	// CommittedEpoch returns a table's committed epoch (zero Epoch when
	// nothing was committed yet).
	CommittedEpoch(ctx context.Context, table catalog.ObjectName) (version.Committed, error)

	// AcquireVersion resolves a consistent version of req.Tables and pins
	// it. A strong read may wait for a related table to catch up (see
	// meta/version); it returns ctx's error, naming the laggard, when the
	// wait outlives ctx.
	AcquireVersion(ctx context.Context, req VersionRequest) (Version, error)
	// RenewPin extends a pin by ttl from now and returns the new expiry.
	RenewPin(ctx context.Context, id version.PinID, ttl time.Duration) (time.Time, error)
	// ReleasePin releases a pin; releasing an unknown or expired pin
	// gives base.ErrNotFound.
	ReleasePin(ctx context.Context, id version.PinID) error
	// PinnedEpoch returns the lowest epoch of table held by a live pin; ok
	// is false when no live pin holds the table.
	PinnedEpoch(ctx context.Context, table catalog.ObjectName) (e base.Epoch, ok bool, err error)

	// Freshness returns the freshness lag of every table and job.
	Freshness(ctx context.Context) (Freshness, error)
}

// Change is the catalog change of one DDL statement that touches more
// than one object: CREATE TABLE with its ingest job, CREATE MATERIALIZED
// VIEW with its view job, CREATE SINK ... INTO (the table's writer
// swapped), a DROP statement with every object it names, their CASCADE
// dependents and the jobs that write them (engine's drop plan; jobs kept
// but changed, such as a table's DML writer given back, are registered in
// the same change). Its steps run in the order
// of the fields: jobs dropped, tables dropped, tables created, jobs
// registered; each step sees the catalog the earlier ones made. A table
// created by a change and the job that writes it therefore appear
// together, or neither does, whatever instant the process dies at; this
// is the atomic DDL of RisingWave's catalog manager, which commits a
// streaming job and its table in one meta-store transaction.
type Change struct {
	// DropJobs are removed with their edges, runtime state and pins, as
	// DropJob does.
	DropJobs []string `json:"drop_jobs,omitempty"`
	// DropTables are removed with their committed epochs and floors, as
	// DropTable does; no job left by the change may read or write them.
	DropTables []catalog.ObjectName `json:"drop_tables,omitempty"`
	// CreateTables are added, as CreateTable does.
	CreateTables []catalog.Table `json:"create_tables,omitempty"`
	// RegisterJobs are added in state CREATED, as RegisterJob does.
	RegisterJobs []catalog.Job `json:"register_jobs,omitempty"`
}

// JobStatus is a job's lifecycle state, as Flink names job states.
type JobStatus string

// Job states.
const (
	// JobCreated: registered, no heartbeat yet.
	JobCreated JobStatus = "CREATED"
	// JobRunning: processing.
	JobRunning JobStatus = "RUNNING"
	// JobRestarting: recovering from a failure from its last checkpoint.
	JobRestarting JobStatus = "RESTARTING"
	// JobFailed: stopped by an error, or its heartbeats stopped.
	JobFailed JobStatus = "FAILED"
	// JobFinished: a bounded job that reached its end.
	JobFinished JobStatus = "FINISHED"
)

// Valid reports whether s is one of the job states.
func (s JobStatus) Valid() bool {
	switch s {
	case JobCreated, JobRunning, JobRestarting, JobFailed, JobFinished:
		return true
	}
	return false
}

// Heartbeat is a job's periodic report.
type Heartbeat struct {
	Job    string    `json:"job"`
	Status JobStatus `json:"status"`
	// Checkpoint is the job's last completed checkpoint (zero if none).
	// It never goes backwards; a lower value is refused.
	Checkpoint base.CheckpointID `json:"checkpoint"`
	// Reason explains a FAILED status.
	Reason string `json:"reason,omitempty"`
}

// JobInfo is a job's definition and runtime state.
type JobInfo struct {
	Job            catalog.Job       `json:"job"`
	Status         JobStatus         `json:"status"`
	LastCheckpoint base.CheckpointID `json:"last_checkpoint"`
	// LastHeartbeat is when the last heartbeat arrived (zero if none since
	// the service started).
	LastHeartbeat time.Time `json:"last_heartbeat"`
	// Lost is true when no heartbeat arrived for the heartbeat timeout;
	// Status is then JobFailed and the job's pins are released.
	Lost   bool   `json:"lost"`
	Reason string `json:"reason,omitempty"`
}

// LineageQuery names what to ask the lineage about: a table, view or
// source (Node), or a job (Job). Exactly one is set.
type LineageQuery struct {
	Node *catalog.ObjectName `json:"node,omitempty"`
	Job  string              `json:"job,omitempty"`
}

// Lineage is what a node or job depends on and what depends on it.
type Lineage struct {
	Upstream   lineage.Set `json:"upstream"`
	Downstream lineage.Set `json:"downstream"`
}

// VersionRequest asks for a consistent version of Tables.
type VersionRequest struct {
	Tables []catalog.ObjectName `json:"tables"`
	Mode   version.Mode         `json:"mode"`
	// Holder names who reads: a session id, or a job name (then the pin is
	// released when the job is lost or dropped).
	Holder string `json:"holder"`
	// TTL is how long the pin lives without renewal; zero means the
	// service's default.
	TTL time.Duration `json:"ttl"`
}

// Version is a consistent version and the pin that holds it.
type Version struct {
	Epochs map[catalog.ObjectName]base.Epoch `json:"epochs"`
	// Groups are the sets of tables read at one epoch.
	Groups  [][]catalog.ObjectName `json:"groups"`
	Pin     version.PinID          `json:"pin"`
	Expires time.Time              `json:"expires"`
}

// Freshness is the freshness lag of every table and job (DESIGN.md
// vocabulary "freshness lag").
type Freshness struct {
	// Now is the time the lags are measured at.
	Now    time.Time        `json:"now"`
	Tables []TableFreshness `json:"tables"`
	Jobs   []JobFreshness   `json:"jobs"`
}

// TableFreshness is one table's lag: Now minus the start time of its
// committed epoch.
type TableFreshness struct {
	Table     catalog.ObjectName `json:"table"`
	Committed base.Epoch         `json:"committed"`
	// Known is false when nothing was committed yet, or the start time of
	// the committed epoch is unknown; Lag is then zero.
	Known bool          `json:"known"`
	Lag   time.Duration `json:"lag"`
}

// JobFreshness is the lag a job adds over its inputs: the lag of the
// tables it writes minus the largest lag among the tables it reads
// (sources count as lag zero), never below zero.
type JobFreshness struct {
	Job      string        `json:"job"`
	Known    bool          `json:"known"`
	AddedLag time.Duration `json:"added_lag"`
}
