package engine

import (
	"fmt"

	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/table/schema"
)

// checkTableOptions checks the options of a CREATE TABLE before anything
// is made or any connector opened: the table store's options (storeOpts)
// are parsed as the table store will parse them, and a connector's
// format that carries updates and deletes (connOpts) needs a primary
// key. Errors name the table:
//
//   - a bad table option value is 22023 (invalid_parameter_value), naming
//     the option and the values it takes (schema.ParseOptions), before
//     any check that combines options (merge-engine needs a PRIMARY KEY);
//   - format = 'debezium-json' (format.Format.Changelog), on any
//     connector, into a table without a primary key is 42P16
//     (invalid_table_definition): the table would refuse the first -U or
//     -D row and its job fail on it forever, as an append table takes no
//     retractions (Flink likewise refuses a changelog source without a
//     key for an upsert table).
func checkTableOptions(t catalog.Table, storeOpts, connOpts map[string]string) error {
	if _, err := schema.New(fieldsOf(t.Columns), t.PrimaryKey, storeOpts); err != nil {
		return sqlerr.Wrap(sqlerr.InvalidParameterValue, fmt.Errorf("table %s: %w", t.Name.Name, err))
	}
	if len(t.PrimaryKey) > 0 {
		return nil
	}
	if f, ok := format.ParseFormat(connOpts[format.OptFormat]); ok && f.Changelog() {
		return sqlerr.New(sqlerr.InvalidTableDefinition,
			"table %s: format %s carries updates and deletes, and a table without a PRIMARY KEY takes only inserts: declare the primary key of the records (the key of the upstream table), or use an insert-only format (json, csv)",
			t.Name.Name, f)
	}
	return nil
}
