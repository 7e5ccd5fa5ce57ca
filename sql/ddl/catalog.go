package ddl

import (
	"maps"
	"strings"

	"github.com/stratadb/strata/meta/catalog"
)

// ObjectName resolves a name as a statement writes it, "t" or "db.t", to a
// catalog name, with db as the database of an unqualified name or of one
// qualified by PostgreSQL's "public" schema. It does
// not validate the parts: catalog.ObjectName.Validate does.
func ObjectName(name, db string) catalog.ObjectName {
	if d, n, ok := strings.Cut(name, "."); ok && d != "public" {
		return catalog.Name(d, n)
	} else if ok {
		// The public schema, as PostgreSQL clients write it, is db.
		return catalog.Name(db, n)
	}
	return catalog.Name(db, name)
}

// CatalogColumns converts column definitions to the catalog's columns.
func CatalogColumns(defs []ColumnDef) []catalog.Column {
	cols := make([]catalog.Column, len(defs))
	for i, d := range defs {
		cols[i] = catalog.Column{Name: d.Name, Type: d.Type, NotNull: d.NotNull, Generated: d.Generated}
	}
	return cols
}

// Table returns the catalog table that CREATE TABLE with a column list
// defines, in database db for an unqualified name. Its options are the
// WITH options, connector settings included. The watermark and FROM
// clause are the ingest job's business and stay in the statement; a
// CREATE TABLE ... AS has no columns until its query is bound.
func (s *CreateTable) Table(db string) catalog.Table {
	return catalog.Table{
		Name:       ObjectName(s.Name, db),
		Kind:       catalog.KindTable,
		Columns:    CatalogColumns(s.Columns),
		PrimaryKey: append([]string(nil), s.PrimaryKey...),
		Options:    maps.Clone(s.With),
	}
}

// Source returns the catalog source that CREATE SOURCE defines, in
// database db for an unqualified name: the "connector" option becomes
// Connector, the other options Options.
func (s *CreateSource) Source(db string) catalog.Source {
	opts := maps.Clone(s.With)
	connector := opts["connector"]
	delete(opts, "connector")
	if len(opts) == 0 {
		opts = nil
	}
	return catalog.Source{
		Name:       ObjectName(s.Name, db),
		Connector:  connector,
		Columns:    CatalogColumns(s.Columns),
		PrimaryKey: append([]string(nil), s.PrimaryKey...),
		Options:    opts,
	}
}
