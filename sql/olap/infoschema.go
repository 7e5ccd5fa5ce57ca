package olap

import (
	"github.com/stratadb/strata/internal/types"
)

// infoSchemaTables builds information_schema.schemata, .tables and
// .columns for objects, as PostgreSQL fills them: tables and plain views
// are listed, materialized views are not (PostgreSQL leaves them out of
// information_schema). They live in the emulated catalog's schema as
// information_schema_<name>; rewriteCatalog maps information_schema.<name>
// there.
func infoSchemaTables(objects []TableInfo, owner string) []catalogTable {
	schemata := catalogTable{name: "information_schema_schemata", cols: "catalog_name VARCHAR, schema_name VARCHAR, schema_owner VARCHAR, default_character_set_catalog VARCHAR, default_character_set_schema VARCHAR, default_character_set_name VARCHAR, sql_path VARCHAR"}
	tables := catalogTable{name: "information_schema_tables", cols: "table_catalog VARCHAR, table_schema VARCHAR, table_name VARCHAR, table_type VARCHAR, self_referencing_column_name VARCHAR, reference_generation VARCHAR, user_defined_type_catalog VARCHAR, user_defined_type_schema VARCHAR, user_defined_type_name VARCHAR, is_insertable_into VARCHAR, is_typed VARCHAR, commit_action VARCHAR"}
	columns := catalogTable{name: "information_schema_columns", cols: "table_catalog VARCHAR, table_schema VARCHAR, table_name VARCHAR, column_name VARCHAR, ordinal_position INTEGER, column_default VARCHAR, is_nullable VARCHAR, data_type VARCHAR, character_maximum_length INTEGER, character_octet_length INTEGER, numeric_precision INTEGER, numeric_precision_radix INTEGER, numeric_scale INTEGER, datetime_precision INTEGER, interval_type VARCHAR, interval_precision INTEGER, udt_catalog VARCHAR, udt_schema VARCHAR, udt_name VARCHAR, is_identity VARCHAR, is_generated VARCHAR, is_updatable VARCHAR"}
	seen := map[[2]string]bool{}
	for _, o := range objects {
		db, sch := o.Database, o.Schema
		if db == "" {
			db = "dev"
		}
		if sch == "" {
			sch = "public"
		}
		if k := [2]string{db, sch}; !seen[k] {
			seen[k] = true
			schemata.rows = append(schemata.rows, []any{db, sch, owner, nil, nil, nil, nil})
		}
		kind := o.Kind
		if kind == "" {
			kind = KindTable
		}
		if kind == KindMaterializedView {
			continue
		}
		tableType, insertable := "BASE TABLE", "YES"
		if kind == KindView {
			tableType, insertable = "VIEW", "NO"
		}
		tables.rows = append(tables.rows, []any{db, sch, o.Name, tableType, nil, nil, nil, nil, nil, insertable, "NO", nil})
		for i, c := range o.Columns {
			nullable := "YES"
			if c.NotNull || contains(o.PrimaryKey, c.Name) {
				nullable = "NO"
			}
			oid, _ := typeOID(c.Type)
			var charLen, octetLen, prec, radix, scale, dtPrec any
			switch c.Type.Kind {
			case types.KindChar, types.KindVarchar:
				if c.Type.Length > 0 {
					charLen, octetLen = int(c.Type.Length), 4*int(c.Type.Length)
				} else {
					octetLen = 1073741824
				}
			case types.KindText:
				octetLen = 1073741824
			case types.KindInt16:
				prec, radix, scale = 16, 2, 0
			case types.KindInt32:
				prec, radix, scale = 32, 2, 0
			case types.KindInt64:
				prec, radix, scale = 64, 2, 0
			case types.KindFloat32:
				prec, radix = 24, 2
			case types.KindFloat64:
				prec, radix = 53, 2
			case types.KindNumeric:
				radix = 10
				if c.Type.Precision > 0 {
					prec, scale = int(c.Type.Precision), int(c.Type.Scale)
				}
			case types.KindDate:
				dtPrec = 0
			case types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
				dtPrec = int(c.Type.Precision)
			case types.KindInterval:
				dtPrec = 6
			}
			var udt string
			for _, t := range pgTypes {
				if t.oid == oid {
					udt = t.name
				}
			}
			columns.rows = append(columns.rows, []any{db, sch, o.Name, c.Name, i + 1, nil, nullable, dataType(oid), charLen, octetLen,
				prec, radix, scale, dtPrec, nil, nil, db, "pg_catalog", udt, "NO", "NEVER", insertable})
		}
	}
	return []catalogTable{schemata, tables, columns}
}

// dataType is information_schema's data_type: format_type without the
// modifier.
func dataType(oid int64) string {
	for _, t := range pgTypes {
		if t.oid == oid {
			return t.fmt
		}
	}
	return "USER-DEFINED"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
