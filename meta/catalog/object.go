package catalog

import (
	"fmt"
	"maps"
	"slices"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// Database is a namespace of tables, views and sources.
type Database struct {
	Name    string            `json:"name"`
	Options map[string]string `json:"options,omitempty"`
	// Version is the catalog version that created the database; the
	// catalog sets it.
	Version uint64 `json:"version"`
}

// Column is one column of a table or source schema.
type Column struct {
	Name string     `json:"name"`
	Type types.Type `json:"type"` // JSON: its SQL spelling, e.g. "NUMERIC(10,2)"
	// NotNull refuses NULL values; primary-key columns are always NOT NULL.
	NotNull bool `json:"not_null,omitempty"`
	// Generated says who fills the column: empty for a column rows carry,
	// GeneratedProcTime for a processing-time column, which the step that
	// writes rows into the table fills (the ingest job, INSERT) and which
	// is then stored like any other column.
	Generated string `json:"generated,omitempty"`
}

// GeneratedProcTime marks a processing-time column (DDL `GENERATED ALWAYS
// AS (proctime()) STORED`, RisingWave's `AS PROCTIME()`): a TIMESTAMPTZ
// that holds the wall-clock time at which its row was ingested, stamped
// once and stored, so that every reader sees the same value. Only a plain
// table's non-key columns may carry it.
const GeneratedProcTime = "proctime"

// IsGenerated reports whether the table's writer, not the row's producer,
// fills c.
func (c Column) IsGenerated() bool { return c.Generated != "" }

// TableKind tells a plain table from a materialized view.
type TableKind string

// Table kinds.
const (
	// KindTable is a table written by ingest jobs or inserts.
	KindTable TableKind = "table"
	// KindView is a materialized view: a table written by the view job that
	// maintains Query.
	KindView TableKind = "view"
)

// Table is a table or a materialized view of the table store.
type Table struct {
	Name    ObjectName `json:"name"`
	Kind    TableKind  `json:"kind"`
	Columns []Column   `json:"columns"`
	// PrimaryKey lists column names; empty for an append table.
	PrimaryKey []string `json:"primary_key,omitempty"`
	// Options are the table store's options (bucket count, merge engine,
	// ...), passed through as text.
	Options map[string]string `json:"options,omitempty"`
	// Query is the SQL text of a materialized view; empty for KindTable.
	Query string `json:"query,omitempty"`
	// Version is the catalog version that created the table.
	Version uint64 `json:"version"`
}

// Validate checks the table's name, kind, columns (named safely, unique,
// valid types) and primary key (existing, unique columns, NOT NULL in a
// plain table; a view grouped by a nullable column has NULL as a key
// value). The
// error wraps base.ErrInvalidArgument and names the table and the column.
func (t *Table) Validate() error {
	what := "table"
	if t.Kind == KindView {
		what = "materialized view"
	}
	if err := t.Name.Validate(what); err != nil {
		return err
	}
	switch t.Kind {
	case KindTable:
		if t.Query != "" {
			return fmt.Errorf("table %s: a plain table has no query: %w", t.Name, base.ErrInvalidArgument)
		}
	case KindView:
		if t.Query == "" {
			return fmt.Errorf("materialized view %s has no query: %w", t.Name, base.ErrInvalidArgument)
		}
	default:
		return fmt.Errorf("table %s: unknown kind %q: %w", t.Name, t.Kind, base.ErrInvalidArgument)
	}
	cols, err := validateColumns(t.Name, t.Columns)
	if err != nil {
		return err
	}
	for _, c := range t.Columns {
		switch {
		case c.Generated == "":
		case c.Generated != GeneratedProcTime:
			return fmt.Errorf("table %s: column %q: unknown generation %q: %w", t.Name, c.Name, c.Generated, base.ErrInvalidArgument)
		case t.Kind != KindTable:
			return fmt.Errorf("materialized view %s: column %q cannot be generated: %w", t.Name, c.Name, base.ErrInvalidArgument)
		case c.Type.Kind != types.KindTimestampTZ:
			return fmt.Errorf("table %s: processing-time column %q must be TIMESTAMPTZ, not %s: %w", t.Name, c.Name, c.Type, base.ErrInvalidArgument)
		case slices.Contains(t.PrimaryKey, c.Name):
			return fmt.Errorf("table %s: processing-time column %q cannot be part of the primary key: %w", t.Name, c.Name, base.ErrInvalidArgument)
		case len(t.PrimaryKey) > 0 && t.Options["changelog-producer"] == "input":
			// An update or delete from the input carries a new stamp, not
			// the stored one it replaces; the changelog must come from the
			// stored rows (lookup, the default).
			return fmt.Errorf("table %s: processing-time column %q needs a changelog-producer other than 'input' on a table with a primary key: %w", t.Name, c.Name, base.ErrInvalidArgument)
		}
	}
	seen := map[string]bool{}
	for _, k := range t.PrimaryKey {
		i, ok := cols[k]
		if !ok {
			return fmt.Errorf("table %s: primary key column %q does not exist: %w", t.Name, k, base.ErrInvalidArgument)
		}
		if seen[k] {
			return fmt.Errorf("table %s: primary key names column %q twice: %w", t.Name, k, base.ErrInvalidArgument)
		}
		seen[k] = true
		if !t.Columns[i].NotNull && t.Kind != KindView {
			return fmt.Errorf("table %s: primary key column %q must be NOT NULL: %w", t.Name, k, base.ErrInvalidArgument)
		}
	}
	return nil
}

func validateColumns(owner ObjectName, columns []Column) (map[string]int, error) {
	if len(columns) == 0 {
		return nil, fmt.Errorf("%s has no columns: %w", owner, base.ErrInvalidArgument)
	}
	idx := make(map[string]int, len(columns))
	for i, c := range columns {
		if err := ValidateName("column", c.Name); err != nil {
			return nil, fmt.Errorf("%s: %w", owner, err)
		}
		if _, dup := idx[c.Name]; dup {
			return nil, fmt.Errorf("%s: column %q appears twice: %w", owner, c.Name, base.ErrInvalidArgument)
		}
		if c.Type.Kind == types.KindUnknown {
			return nil, fmt.Errorf("%s: column %q has no type: %w", owner, c.Name, base.ErrInvalidArgument)
		}
		if err := c.Type.Validate(); err != nil {
			return nil, fmt.Errorf("%s: column %q: %w", owner, c.Name, err)
		}
		idx[c.Name] = i
	}
	return idx, nil
}

// Source is an external stream that is not stored: a Kafka topic, a
// Postgres CDC slot, a generator. Connector names the connector package;
// Options configure it.
type Source struct {
	Name      ObjectName `json:"name"`
	Connector string     `json:"connector"`
	Columns   []Column   `json:"columns,omitempty"`
	// PrimaryKey is the key a source's changes are keyed by, when its
	// definition declares one; the engine decides which connectors may
	// have one (a source read directly by views has none: its changes
	// are inserts only).
	PrimaryKey []string          `json:"primary_key,omitempty"`
	Options    map[string]string `json:"options,omitempty"`
	// Version is the catalog version that created the source.
	Version uint64 `json:"version"`
}

// Validate checks the source's name, connector and columns (a source may
// leave its schema to the connector, so columns may be empty).
func (s *Source) Validate() error {
	if err := s.Name.Validate("source"); err != nil {
		return err
	}
	if err := ValidateName("connector", s.Connector); err != nil {
		return fmt.Errorf("source %s: %w", s.Name, err)
	}
	idx := map[string]int{}
	if len(s.Columns) > 0 {
		var err error
		if idx, err = validateColumns(s.Name, s.Columns); err != nil {
			return err
		}
	}
	for _, k := range s.PrimaryKey {
		if _, ok := idx[k]; !ok {
			return fmt.Errorf("source %s: primary key column %q is not a column of the source: %w", s.Name, k, base.ErrInvalidArgument)
		}
	}
	for _, c := range s.Columns {
		if c.IsGenerated() {
			return fmt.Errorf("source %s: column %q cannot be generated (only a table's can): %w", s.Name, c.Name, base.ErrInvalidArgument)
		}
	}
	return nil
}

// JobKind tells ingest, view and sink jobs apart.
type JobKind string

// Job kinds (DESIGN.md vocabulary).
const (
	// JobIngest reads sources and writes tables: a table's connector, its
	// DML (INSERT, UPDATE, DELETE) or a CDC source's tables.
	JobIngest JobKind = "ingest"
	// JobView reads tables and writes a materialized view's table.
	JobView JobKind = "view"
	// JobSink runs a query's changelog out of the tables and views it
	// reads: into an external system (a Kafka topic, a Postgres table,
	// files), writing no table of the catalog, or, for CREATE SINK ...
	// INTO, into one plain table that it then writes in place of the
	// table's DML job (FLIP-276's ETL job).
	JobSink JobKind = "sink"
)

// Job is the catalog's record of a streaming job: what it reads and what it
// writes. Its runtime state (status, heartbeats, checkpoints) belongs to the
// meta service, not the catalog.
type Job struct {
	Name string  `json:"name"`
	Kind JobKind `json:"kind"`
	// Reads lists the sources and tables the job reads.
	Reads []ObjectName `json:"reads,omitempty"`
	// Writes lists the tables the job writes (usually one).
	Writes []ObjectName `json:"writes"`
	// Options are the job's settings (parallelism, checkpoint interval,
	// ...), passed through as text.
	Options map[string]string `json:"options,omitempty"`
	// Version is the catalog version that created the job.
	Version uint64 `json:"version"`
}

// Validate checks the job's name, kind and edges on their own (no
// duplicates, at least one write); Catalog.CreateJob checks that the named
// objects exist and have the right kinds.
func (j *Job) Validate() error {
	if err := ValidateName("job", j.Name); err != nil {
		return err
	}
	switch {
	case j.Kind != JobIngest && j.Kind != JobView && j.Kind != JobSink:
		return fmt.Errorf("job %q: unknown kind %q: %w", j.Name, j.Kind, base.ErrInvalidArgument)
	case j.Kind == JobSink && len(j.Writes) > 1:
		return fmt.Errorf("sink job %q writes %d tables; a sink writes an external system or one table: %w", j.Name, len(j.Writes), base.ErrInvalidArgument)
	case j.Kind == JobSink && len(j.Reads) == 0:
		return fmt.Errorf("sink job %q reads nothing: %w", j.Name, base.ErrInvalidArgument)
	case j.Kind != JobSink && len(j.Writes) == 0:
		return fmt.Errorf("job %q writes no table: %w", j.Name, base.ErrInvalidArgument)
	}
	// A job that reads what it writes is a cycle of length one: the
	// lineage graph refuses it and names it as such.
	for _, edge := range []struct {
		what  string
		names []ObjectName
	}{{"reads", j.Reads}, {"writes", j.Writes}} {
		seen := map[ObjectName]bool{}
		for _, n := range edge.names {
			if err := n.Validate("object"); err != nil {
				return fmt.Errorf("job %q %s: %w", j.Name, edge.what, err)
			}
			if seen[n] {
				return fmt.Errorf("job %q %s %s twice: %w", j.Name, edge.what, n, base.ErrInvalidArgument)
			}
			seen[n] = true
		}
	}
	return nil
}

func cloneTable(t Table) Table {
	t.Columns = slices.Clone(t.Columns)
	t.PrimaryKey = slices.Clone(t.PrimaryKey)
	t.Options = maps.Clone(t.Options)
	return t
}

func cloneSource(s Source) Source {
	s.Columns = slices.Clone(s.Columns)
	s.PrimaryKey = slices.Clone(s.PrimaryKey)
	s.Options = maps.Clone(s.Options)
	return s
}

func cloneJob(j Job) Job {
	j.Reads = slices.Clone(j.Reads)
	j.Writes = slices.Clone(j.Writes)
	j.Options = maps.Clone(j.Options)
	return j
}
