package catalog

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/stratadb/strata/internal/base"
)

// Catalog is one version of the catalog: an immutable value (see the
// package doc, "Versions"). The zero Catalog is not usable; start from New.
type Catalog struct {
	version   uint64
	databases map[string]Database
	tables    map[ObjectName]Table
	sources   map[ObjectName]Source
	jobs      map[string]Job
}

// New returns the empty catalog at version 0.
func New() *Catalog {
	return &Catalog{
		databases: map[string]Database{},
		tables:    map[ObjectName]Table{},
		sources:   map[ObjectName]Source{},
		jobs:      map[string]Job{},
	}
}

// Version is the number of changes applied since New (or the version the
// catalog was restored at, see Restore).
func (c *Catalog) Version() uint64 { return c.version }

// next returns a copy at version+1; the maps are copied, the values are
// never mutated in place.
func (c *Catalog) next() *Catalog {
	return &Catalog{
		version:   c.version + 1,
		databases: maps.Clone(c.databases),
		tables:    maps.Clone(c.tables),
		sources:   maps.Clone(c.sources),
		jobs:      maps.Clone(c.jobs),
	}
}

// Database returns the named database; the error wraps base.ErrNotFound.
func (c *Catalog) Database(name string) (Database, error) {
	d, ok := c.databases[name]
	if !ok {
		return Database{}, fmt.Errorf("database %q does not exist: %w", name, base.ErrNotFound)
	}
	d.Options = maps.Clone(d.Options)
	return d, nil
}

// Table returns the named table or view; the error wraps base.ErrNotFound.
func (c *Catalog) Table(name ObjectName) (Table, error) {
	t, ok := c.tables[name]
	if !ok {
		return Table{}, fmt.Errorf("table %s does not exist: %w", name, base.ErrNotFound)
	}
	return cloneTable(t), nil
}

// Source returns the named source; the error wraps base.ErrNotFound.
func (c *Catalog) Source(name ObjectName) (Source, error) {
	s, ok := c.sources[name]
	if !ok {
		return Source{}, fmt.Errorf("source %s does not exist: %w", name, base.ErrNotFound)
	}
	return cloneSource(s), nil
}

// Job returns the named job; the error wraps base.ErrNotFound.
func (c *Catalog) Job(name string) (Job, error) {
	j, ok := c.jobs[name]
	if !ok {
		return Job{}, fmt.Errorf("job %q does not exist: %w", name, base.ErrNotFound)
	}
	return cloneJob(j), nil
}

// IsSource reports whether name is a source (not a table or view).
func (c *Catalog) IsSource(name ObjectName) bool {
	_, ok := c.sources[name]
	return ok
}

// Databases returns every database, sorted by name.
func (c *Catalog) Databases() []Database {
	out := make([]Database, 0, len(c.databases))
	for _, d := range c.databases {
		d.Options = maps.Clone(d.Options)
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b Database) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// Tables returns every table and view, sorted by name.
func (c *Catalog) Tables() []Table {
	out := make([]Table, 0, len(c.tables))
	for _, t := range c.tables {
		out = append(out, cloneTable(t))
	}
	slices.SortFunc(out, func(a, b Table) int { return compareNames(a.Name, b.Name) })
	return out
}

// Sources returns every source, sorted by name.
func (c *Catalog) Sources() []Source {
	out := make([]Source, 0, len(c.sources))
	for _, s := range c.sources {
		out = append(out, cloneSource(s))
	}
	slices.SortFunc(out, func(a, b Source) int { return compareNames(a.Name, b.Name) })
	return out
}

// Jobs returns every job, sorted by name.
func (c *Catalog) Jobs() []Job {
	out := make([]Job, 0, len(c.jobs))
	for _, j := range c.jobs {
		out = append(out, cloneJob(j))
	}
	slices.SortFunc(out, func(a, b Job) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

func compareNames(a, b ObjectName) int {
	if c := cmp.Compare(a.Database, b.Database); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}

// CreateDatabase returns the catalog with database d added. The error
// wraps base.ErrInvalidArgument for a bad name and base.ErrConflict when
// the database exists.
func (c *Catalog) CreateDatabase(d Database) (*Catalog, error) {
	if err := ValidateName("database", d.Name); err != nil {
		return nil, err
	}
	if _, ok := c.databases[d.Name]; ok {
		return nil, fmt.Errorf("database %q already exists: %w", d.Name, base.ErrConflict)
	}
	n := c.next()
	d.Options = maps.Clone(d.Options)
	d.Version = n.version
	n.databases[d.Name] = d
	return n, nil
}

// DropDatabase returns the catalog without the named database. The error
// wraps base.ErrNotFound when it does not exist and base.ErrConflict while
// it holds tables or sources (invariant catalog-references).
func (c *Catalog) DropDatabase(name string) (*Catalog, error) {
	if _, err := c.Database(name); err != nil {
		return nil, err
	}
	for tn := range c.tables {
		if tn.Database == name {
			return nil, fmt.Errorf("database %q still holds table %s: %w", name, tn, base.ErrConflict)
		}
	}
	for sn := range c.sources {
		if sn.Database == name {
			return nil, fmt.Errorf("database %q still holds source %s: %w", name, sn, base.ErrConflict)
		}
	}
	n := c.next()
	delete(n.databases, name)
	return n, nil
}

// checkNewObject checks that name's database exists and that no table,
// view or source already has the name.
func (c *Catalog) checkNewObject(what string, name ObjectName) error {
	if _, ok := c.databases[name.Database]; !ok {
		return fmt.Errorf("%s %s: database %q does not exist: %w", what, name, name.Database, base.ErrNotFound)
	}
	if t, ok := c.tables[name]; ok {
		return fmt.Errorf("%s %s: a %s of that name already exists: %w", what, name, t.Kind, base.ErrConflict)
	}
	if _, ok := c.sources[name]; ok {
		return fmt.Errorf("%s %s: a source of that name already exists: %w", what, name, base.ErrConflict)
	}
	return nil
}

// CreateTable returns the catalog with table or view t added. The error
// wraps base.ErrInvalidArgument (see Table.Validate), base.ErrNotFound for a
// missing database and base.ErrConflict for a taken name.
func (c *Catalog) CreateTable(t Table) (*Catalog, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if err := c.checkNewObject(string(t.Kind), t.Name); err != nil {
		return nil, err
	}
	n := c.next()
	t = cloneTable(t)
	t.Version = n.version
	n.tables[t.Name] = t
	return n, nil
}

// DropTable returns the catalog without the named table or view. The error
// wraps base.ErrNotFound when it does not exist and base.ErrConflict while a
// job reads or writes it (invariant catalog-references).
func (c *Catalog) DropTable(name ObjectName) (*Catalog, error) {
	if _, err := c.Table(name); err != nil {
		return nil, err
	}
	if err := c.checkUnused("table", name); err != nil {
		return nil, err
	}
	n := c.next()
	delete(n.tables, name)
	return n, nil
}

// CreateSource returns the catalog with source s added; errors as
// CreateTable.
func (c *Catalog) CreateSource(s Source) (*Catalog, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := c.checkNewObject("source", s.Name); err != nil {
		return nil, err
	}
	n := c.next()
	s = cloneSource(s)
	s.Version = n.version
	n.sources[s.Name] = s
	return n, nil
}

// DropSource returns the catalog without the named source; errors as
// DropTable.
func (c *Catalog) DropSource(name ObjectName) (*Catalog, error) {
	if _, err := c.Source(name); err != nil {
		return nil, err
	}
	if err := c.checkUnused("source", name); err != nil {
		return nil, err
	}
	n := c.next()
	delete(n.sources, name)
	return n, nil
}

func (c *Catalog) checkUnused(what string, name ObjectName) error {
	for _, j := range c.Jobs() {
		if slices.Contains(j.Reads, name) {
			return fmt.Errorf("%s %s is read by job %q: %w", what, name, j.Name, base.ErrConflict)
		}
		if slices.Contains(j.Writes, name) {
			return fmt.Errorf("%s %s is written by job %q: %w", what, name, j.Name, base.ErrConflict)
		}
	}
	return nil
}

// CreateJob returns the catalog with job j added. Every object j reads must
// be a table, view or source of the catalog and every object it writes a
// table or view (invariant catalog-references); an ingest job writes plain
// tables, a view job writes views. Cycles and second writers are the lineage
// graph's to refuse. The error wraps base.ErrInvalidArgument,
// base.ErrNotFound or base.ErrConflict (a job of that name exists).
func (c *Catalog) CreateJob(j Job) (*Catalog, error) {
	if err := j.Validate(); err != nil {
		return nil, err
	}
	if _, ok := c.jobs[j.Name]; ok {
		return nil, fmt.Errorf("job %q already exists: %w", j.Name, base.ErrConflict)
	}
	for _, r := range j.Reads {
		_, isTable := c.tables[r]
		_, isSource := c.sources[r]
		if !isTable && !isSource {
			return nil, fmt.Errorf("job %q reads %s, which is neither a table nor a source: %w", j.Name, r, base.ErrNotFound)
		}
	}
	for _, w := range j.Writes {
		if _, isSource := c.sources[w]; isSource {
			return nil, fmt.Errorf("job %q writes %s, which is a source; jobs write tables: %w", j.Name, w, base.ErrInvalidArgument)
		}
		t, ok := c.tables[w]
		if !ok {
			return nil, fmt.Errorf("job %q writes table %s, which does not exist: %w", j.Name, w, base.ErrNotFound)
		}
		if j.Kind == JobView && t.Kind != KindView {
			return nil, fmt.Errorf("view job %q writes %s, which is a plain table, not a materialized view: %w", j.Name, w, base.ErrInvalidArgument)
		}
		if (j.Kind == JobIngest || j.Kind == JobSink) && t.Kind != KindTable {
			return nil, fmt.Errorf("%s job %q writes %s, which is a materialized view: %w", j.Kind, j.Name, w, base.ErrInvalidArgument)
		}
	}
	n := c.next()
	j = cloneJob(j)
	j.Version = n.version
	n.jobs[j.Name] = j
	return n, nil
}

// DropJob returns the catalog without the named job; the error wraps
// base.ErrNotFound when it does not exist.
func (c *Catalog) DropJob(name string) (*Catalog, error) {
	if _, err := c.Job(name); err != nil {
		return nil, err
	}
	n := c.next()
	delete(n.jobs, name)
	return n, nil
}
