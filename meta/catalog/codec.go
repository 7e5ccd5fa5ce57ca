package catalog

import (
	"encoding/json"
	"fmt"

	"github.com/stratadb/strata/internal/base"
)

// FormatVersion is the version of the catalog's JSON encoding (codec.md).
const FormatVersion = 1

// document is the persisted form of a Catalog (codec.md).
type document struct {
	Format    int        `json:"format"`
	Version   uint64     `json:"version"`
	Databases []Database `json:"databases"`
	Tables    []Table    `json:"tables"`
	Sources   []Source   `json:"sources"`
	Jobs      []Job      `json:"jobs"`
}

// Marshal encodes the whole catalog as one JSON document (codec.md).
// Catalogs are small and change only with DDL, so the meta service stores
// the whole document on each change rather than one record per object: one
// record is one atomic write on bbolt and on etcd, and a reader never sees
// half of a change.
func (c *Catalog) Marshal() ([]byte, error) {
	return json.Marshal(document{
		Format:    FormatVersion,
		Version:   c.version,
		Databases: c.Databases(),
		Tables:    c.Tables(),
		Sources:   c.Sources(),
		Jobs:      c.Jobs(),
	})
}

// Unmarshal decodes what Marshal wrote and checks it again object by object
// (names, schemas, references), so a catalog that would not have been
// accepted is not loaded either. Every error wraps base.ErrCorruption.
func Unmarshal(b []byte) (*Catalog, error) {
	var d document
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("catalog document does not decode: %v: %w", err, base.ErrCorruption)
	}
	if d.Format != FormatVersion {
		return nil, fmt.Errorf("catalog document has format %d, this build reads %d: %w", d.Format, FormatVersion, base.ErrCorruption)
	}
	c := New()
	var err error
	corrupt := func(err error) (*Catalog, error) {
		return nil, fmt.Errorf("catalog document at version %d: %v: %w", d.Version, err, base.ErrCorruption)
	}
	for _, db := range d.Databases {
		if c, err = c.CreateDatabase(db); err != nil {
			return corrupt(err)
		}
		c.databases[db.Name] = db
	}
	for _, t := range d.Tables {
		if c, err = c.CreateTable(t); err != nil {
			return corrupt(err)
		}
		c.tables[t.Name] = t
	}
	for _, s := range d.Sources {
		if c, err = c.CreateSource(s); err != nil {
			return corrupt(err)
		}
		c.sources[s.Name] = s
	}
	for _, j := range d.Jobs {
		if c, err = c.CreateJob(j); err != nil {
			return corrupt(err)
		}
		c.jobs[j.Name] = j
	}
	c.version = d.Version
	return c, nil
}
