package olap

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/stratadb/strata/internal/types"
)

// RelKind is the kind of relation a TableInfo describes, as pg_class's
// relkind spells it.
type RelKind string

// Relation kinds.
const (
	KindTable            RelKind = "r"
	KindView             RelKind = "v"
	KindMaterializedView RelKind = "m"
)

// ColumnInfo is one column of a TableInfo.
type ColumnInfo struct {
	Name    string
	Type    types.Type
	NotNull bool
}

// TableInfo describes one relation for the pg_catalog emulation.
type TableInfo struct {
	// Schema is the namespace psql shows ("public" if empty).
	Schema string
	Name   string
	// Kind is table, view or materialized view (table if empty).
	Kind    RelKind
	Columns []ColumnInfo
	// PrimaryKey names the key columns in key order; it shows as an index
	// "<name>_pkey" and a PRIMARY KEY constraint.
	PrimaryKey []string
	// NullableKey says that a key column may hold NULL (a materialized
	// view's key derived from nullable columns, such as a FULL JOIN's or a
	// GROUP BY key with NULLs, where NULL keys form one group): the key
	// then shows as a UNIQUE NULLS NOT DISTINCT index and constraint
	// "<name>_key" (PostgreSQL 15's form for that), not a primary key, and
	// key columns show their own nullability instead of NOT NULL.
	NullableKey bool
	// Owner is the owner's role name ("strata" if empty).
	Owner string
	// ViewDef is a view's SELECT, for pg_get_viewdef.
	ViewDef string
	// Database is the database the relation belongs to ("dev" if empty);
	// pg_database lists the distinct ones.
	Database string
	// SizeBytes is the relation's size for pg_table_size and \dt+ (0 if
	// unknown).
	SizeBytes int64
}

// Object ids of the emulated catalog ([catalog-oids]): the namespaces
// pg_catalog (11) and public (2200) and the role 10 keep PostgreSQL's
// fixed ids; other namespaces, relations, indexes and constraints are
// numbered from 16384 in the order of the TableInfo list (CatalogQuery
// sorts it by name), so a relation's oid is the same in every catalog
// built from the same objects.
const (
	oidPgCatalog   = 11
	oidPublic      = 2200
	oidOwner       = 10
	oidHeap        = 2
	oidBtree       = 403
	oidFirstObject = 16384
)

// pgType is one row of the emulated pg_type.
type pgType struct {
	oid  int64
	name string // typname
	fmt  string // format_type without modifier
}

var pgTypes = []pgType{
	{16, "bool", "boolean"}, {17, "bytea", "bytea"}, {20, "int8", "bigint"}, {21, "int2", "smallint"},
	{23, "int4", "integer"}, {25, "text", "text"}, {700, "float4", "real"}, {701, "float8", "double precision"},
	{1042, "bpchar", "character"}, {1043, "varchar", "character varying"}, {1082, "date", "date"},
	{1083, "time", "time without time zone"}, {1114, "timestamp", "timestamp without time zone"},
	{1184, "timestamptz", "timestamp with time zone"}, {1186, "interval", "interval"},
	{1700, "numeric", "numeric"}, {2950, "uuid", "uuid"}, {3802, "jsonb", "jsonb"},
}

// typeOID returns the pg_type oid and typmod of t, as PostgreSQL stores
// them in pg_attribute.
func typeOID(t types.Type) (oid, typmod int64) {
	typmod = -1
	switch t.Kind {
	case types.KindBool:
		return 16, -1
	case types.KindBytea:
		return 17, -1
	case types.KindInt64:
		return 20, -1
	case types.KindInt16:
		return 21, -1
	case types.KindInt32:
		return 23, -1
	case types.KindText:
		return 25, -1
	case types.KindFloat32:
		return 700, -1
	case types.KindFloat64:
		return 701, -1
	case types.KindChar:
		return 1042, int64(t.Length) + 4
	case types.KindVarchar:
		if t.Length > 0 {
			typmod = int64(t.Length) + 4
		}
		return 1043, typmod
	case types.KindDate:
		return 1082, -1
	case types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
		if t.Precision != types.MaxTimestampPrecision {
			typmod = int64(t.Precision)
		}
		return map[types.Kind]int64{types.KindTime: 1083, types.KindTimestamp: 1114, types.KindTimestampTZ: 1184}[t.Kind], typmod
	case types.KindInterval:
		return 1186, -1
	case types.KindNumeric:
		if t.Precision > 0 {
			typmod = int64(t.Precision)<<16 | int64(t.Scale) + 4
		}
		return 1700, typmod
	case types.KindUUID:
		return 2950, -1
	case types.KindJSONB:
		return 3802, -1
	}
	return 25, -1
}

// formatType is PostgreSQL's format_type(oid, typmod) for the types above.
func formatType(oid, typmod int64) string {
	base := ""
	for _, t := range pgTypes {
		if t.oid == oid {
			base = t.fmt
		}
	}
	if base == "" {
		return "???"
	}
	if typmod < 0 {
		if oid == 1042 {
			return "character(1)"
		}
		return base
	}
	switch oid {
	case 1042, 1043:
		return fmt.Sprintf("%s(%d)", base, typmod-4)
	case 1700:
		return fmt.Sprintf("numeric(%d,%d)", (typmod-4)>>16, (typmod-4)&0xffff)
	case 1083:
		return fmt.Sprintf("time(%d) without time zone", typmod)
	case 1114:
		return fmt.Sprintf("timestamp(%d) without time zone", typmod)
	case 1184:
		return fmt.Sprintf("timestamp(%d) with time zone", typmod)
	}
	return base
}

// catalogTable is one emulated catalog relation: DDL column list and rows.
type catalogTable struct {
	name string
	cols string
	rows [][]any
}

// catalogFunctions are the macros every emulated catalog defines; psql's
// queries call them qualified (pg_catalog.f) or not. Each is created with
// "CREATE MACRO <schema>.<name>" + the text, where $S stands for the
// schema.
var catalogFunctions = []struct{ name, def string }{
	{"pg_get_userbyid", "(r) AS (SELECT rolname FROM $S.pg_roles WHERE oid = r)"},
	// Visible: in a schema of PostgreSQL's default search_path (public,
	// pg_catalog), so \dt and \d NAME leave strata_catalog's relations
	// out unless named with their schema, as PostgreSQL does for any
	// schema not on the path.
	{"pg_table_is_visible", "(r) AS coalesce((SELECT strata_vn.nspname IN ('public', 'pg_catalog') FROM $S.pg_class strata_vc JOIN $S.pg_namespace strata_vn ON strata_vn.oid = strata_vc.relnamespace WHERE strata_vc.oid = r), false)"},
	{"pg_type_is_visible", "(r) AS true"},
	{"format_type", "(t, m) AS coalesce((SELECT name FROM $S.strata_format f WHERE f.typid = t AND f.typmod = coalesce(m, -1)), (SELECT name FROM $S.strata_format f WHERE f.typid = t AND f.typmod = -1), '???')"},
	{"pg_get_expr", "(e, r) AS NULL::VARCHAR, (e, r, p) AS NULL::VARCHAR"},
	{"pg_get_indexdef", "(i) AS (SELECT strata_def FROM $S.pg_index WHERE indexrelid = i), (i, c, p) AS (SELECT strata_def FROM $S.pg_index WHERE indexrelid = i)"},
	{"pg_get_constraintdef", "(c) AS (SELECT strata_def FROM $S.pg_constraint WHERE oid = c), (c, p) AS (SELECT strata_def FROM $S.pg_constraint WHERE oid = c)"},
	{"pg_get_viewdef", "(v) AS (SELECT strata_viewdef FROM $S.pg_class WHERE oid = v), (v, p) AS (SELECT strata_viewdef FROM $S.pg_class WHERE oid = v)"},
	{"pg_relation_is_publishable", "(r) AS false"},
	{"pg_get_statisticsobjdef_columns", "(o) AS NULL::VARCHAR"},
	{"obj_description", "(o) AS NULL::VARCHAR, (o, c) AS NULL::VARCHAR"},
	{"col_description", "(o, n) AS NULL::VARCHAR"},
	{"shobj_description", "(o, c) AS NULL::VARCHAR"},
	{"array_upper", "(l, d) AS len(l)"},
	{"pg_encoding_to_char", "(e) AS 'UTF8'"},
	{"current_schema", "() AS 'public'"},
	{"pg_is_other_temp_schema", "(n) AS false"},
	{"pg_get_ruledef", "(r) AS NULL::VARCHAR, (r, p) AS NULL::VARCHAR"},
	{"pg_get_triggerdef", "(r) AS NULL::VARCHAR, (r, p) AS NULL::VARCHAR"},
	{"pg_table_size", "(r) AS (SELECT strata_size FROM $S.pg_class WHERE oid = r)"},
	{"pg_relation_size", "(r) AS (SELECT strata_size FROM $S.pg_class WHERE oid = r)"},
	{"pg_total_relation_size", "(r) AS (SELECT strata_size FROM $S.pg_class WHERE oid = r)"},
	{"pg_get_function_result", "(f) AS NULL::VARCHAR"},
	{"pg_get_function_arguments", "(f) AS NULL::VARCHAR"},
	{"pg_get_function_identity_arguments", "(f) AS NULL::VARCHAR"},
	{"pg_function_is_visible", "(f) AS true"},
	{"pg_size_pretty", "(b) AS CASE WHEN b IS NULL THEN NULL WHEN abs(b) < 10240 THEN b::VARCHAR || ' bytes' WHEN abs(b) < 10485760 THEN ((b + 512) // 1024)::VARCHAR || ' kB' WHEN abs(b) < 10737418240 THEN ((b + 524288) // 1048576)::VARCHAR || ' MB' ELSE ((b + 536870912) // 1073741824)::VARCHAR || ' GB' END"},
}

// buildCatalog returns the emulated catalog tables for objects.
func buildCatalog(objects []TableInfo) []catalogTable {
	owner := "strata"
	for _, o := range objects {
		if o.Owner != "" {
			owner = o.Owner
			break
		}
	}
	nsOID := map[string]int64{"pg_catalog": oidPgCatalog, "public": oidPublic}
	next := int64(oidFirstObject)
	ns := &catalogTable{name: "pg_namespace", cols: "oid BIGINT, nspname VARCHAR, nspowner BIGINT, nspacl VARCHAR[]",
		rows: [][]any{{oidPgCatalog, "pg_catalog", oidOwner, nil}, {oidPublic, "public", oidOwner, nil}}}
	class := &catalogTable{name: "pg_class", cols: "oid BIGINT, relname VARCHAR, relnamespace BIGINT, reltype BIGINT, reloftype BIGINT, relowner BIGINT, relam BIGINT, relfilenode BIGINT, reltablespace BIGINT, relpages INTEGER, reltuples FLOAT, relallvisible INTEGER, reltoastrelid BIGINT, relhasindex BOOLEAN, relisshared BOOLEAN, relpersistence VARCHAR, relkind VARCHAR, relnatts SMALLINT, relchecks SMALLINT, relhasrules BOOLEAN, relhastriggers BOOLEAN, relhassubclass BOOLEAN, relrowsecurity BOOLEAN, relforcerowsecurity BOOLEAN, relispopulated BOOLEAN, relreplident VARCHAR, relispartition BOOLEAN, relrewrite BIGINT, relacl VARCHAR[], reloptions VARCHAR[], relpartbound VARCHAR, strata_viewdef VARCHAR, strata_size BIGINT"}
	attr := &catalogTable{name: "pg_attribute", cols: "attrelid BIGINT, attname VARCHAR, atttypid BIGINT, attstattarget INTEGER, attlen SMALLINT, attnum SMALLINT, attndims INTEGER, atttypmod INTEGER, attbyval BOOLEAN, attalign VARCHAR, attstorage VARCHAR, attcompression VARCHAR, attnotnull BOOLEAN, atthasdef BOOLEAN, atthasmissing BOOLEAN, attidentity VARCHAR, attgenerated VARCHAR, attisdropped BOOLEAN, attislocal BOOLEAN, attinhcount INTEGER, attcollation BIGINT, attacl VARCHAR[], attoptions VARCHAR[]"}
	index := &catalogTable{name: "pg_index", cols: "indexrelid BIGINT, indrelid BIGINT, indnatts SMALLINT, indnkeyatts SMALLINT, indisunique BOOLEAN, indnullsnotdistinct BOOLEAN, indisprimary BOOLEAN, indisexclusion BOOLEAN, indimmediate BOOLEAN, indisclustered BOOLEAN, indisvalid BOOLEAN, indcheckxmin BOOLEAN, indisready BOOLEAN, indislive BOOLEAN, indisreplident BOOLEAN, indkey SMALLINT[], indexprs VARCHAR, indpred VARCHAR, strata_def VARCHAR"}
	cons := &catalogTable{name: "pg_constraint", cols: "oid BIGINT, conname VARCHAR, connamespace BIGINT, contype VARCHAR, condeferrable BOOLEAN, condeferred BOOLEAN, convalidated BOOLEAN, conrelid BIGINT, contypid BIGINT, conindid BIGINT, conparentid BIGINT, confrelid BIGINT, confupdtype VARCHAR, confdeltype VARCHAR, confmatchtype VARCHAR, conislocal BOOLEAN, coninhcount INTEGER, connoinherit BOOLEAN, conkey SMALLINT[], confkey SMALLINT[], conbin VARCHAR, strata_def VARCHAR"}
	for _, o := range objects {
		schemaName := o.Schema
		if schemaName == "" {
			schemaName = "public"
		}
		nsp, ok := nsOID[schemaName]
		if !ok {
			nsp = next
			next++
			nsOID[schemaName] = nsp
			ns.rows = append(ns.rows, []any{nsp, schemaName, oidOwner, nil})
		}
		kind := o.Kind
		if kind == "" {
			kind = KindTable
		}
		relOID := next
		next++
		am := int64(oidHeap)
		if kind == KindView {
			am = 0
		}
		hasIndex := len(o.PrimaryKey) > 0 && kind != KindView
		class.rows = append(class.rows, []any{relOID, o.Name, nsp, 0, 0, oidOwner, am, relOID, 0, 0, -1.0, 0, 0,
			hasIndex, false, "p", string(kind), len(o.Columns), 0, kind == KindView, false, false, false, false, true, "d", false, 0, nil, nil, nil, nullIfEmpty(o.ViewDef), o.SizeBytes})
		keyNums := make([]int64, 0, len(o.PrimaryKey))
		for i, c := range o.Columns {
			tid, mod := typeOID(c.Type)
			notNull := c.NotNull
			for _, k := range o.PrimaryKey {
				if k == c.Name && !o.NullableKey {
					notNull = true
				}
			}
			attr.rows = append(attr.rows, []any{relOID, c.Name, tid, -1, -1, i + 1, 0, mod, false, "i", "p", "", notNull,
				false, false, "", "", false, true, 0, 0, nil, nil})
		}
		if !hasIndex {
			continue
		}
		var keyNames []string
		for _, k := range o.PrimaryKey {
			for i, c := range o.Columns {
				if c.Name == k {
					keyNums = append(keyNums, int64(i+1))
				}
			}
			keyNames = append(keyNames, quoteIdentIfNeeded(k))
		}
		idxOID, conOID := next, next+1
		next += 2
		idxName, conType, conDef, nullsClause := o.Name+"_pkey", "p", "PRIMARY KEY", ""
		if o.NullableKey {
			idxName, conType, conDef, nullsClause = o.Name+"_key", "u", "UNIQUE NULLS NOT DISTINCT", " NULLS NOT DISTINCT"
		}
		class.rows = append(class.rows, []any{idxOID, idxName, nsp, 0, 0, oidOwner, oidBtree, idxOID, 0, 0, -1.0, 0, 0,
			false, false, "p", "i", len(keyNums), 0, false, false, false, false, false, true, "n", false, 0, nil, nil, nil, nil, 0})
		def := fmt.Sprintf("CREATE UNIQUE INDEX %s ON %s.%s USING btree (%s)%s", quoteIdentIfNeeded(idxName),
			quoteIdentIfNeeded(schemaName), quoteIdentIfNeeded(o.Name), strings.Join(keyNames, ", "), nullsClause)
		index.rows = append(index.rows, []any{idxOID, relOID, len(keyNums), len(keyNums), true, o.NullableKey, !o.NullableKey, false, true,
			false, true, false, true, true, false, keyNums, nil, nil, def})
		cons.rows = append(cons.rows, []any{conOID, idxName, nsp, conType, false, false, true, relOID, 0, idxOID, 0, 0, " ", " ", " ",
			true, 0, true, keyNums, nil, nil, conDef + " (" + strings.Join(keyNames, ", ") + ")"})
	}
	db := &catalogTable{name: "pg_database", cols: "oid BIGINT, datname VARCHAR, datdba BIGINT, encoding INTEGER, datlocprovider VARCHAR, datistemplate BOOLEAN, datallowconn BOOLEAN, datconnlimit INTEGER, datcollate VARCHAR, datctype VARCHAR, daticulocale VARCHAR, datcollversion VARCHAR, datacl VARCHAR[]"}
	dbs := map[string]bool{}
	for _, o := range objects {
		name := o.Database
		if name == "" {
			name = "dev"
		}
		dbs[name] = true
	}
	if len(dbs) == 0 {
		dbs["dev"] = true
	}
	dbNames := make([]string, 0, len(dbs))
	for n := range dbs {
		dbNames = append(dbNames, n)
	}
	sort.Strings(dbNames)
	for i, n := range dbNames {
		db.rows = append(db.rows, []any{int64(1 + i), n, oidOwner, 6, "c", false, true, -1, "C.UTF-8", "C.UTF-8", nil, nil, nil})
	}
	typ := &catalogTable{name: "pg_type", cols: "oid BIGINT, typname VARCHAR, typnamespace BIGINT, typowner BIGINT, typlen SMALLINT, typbyval BOOLEAN, typtype VARCHAR, typcategory VARCHAR, typispreferred BOOLEAN, typisdefined BOOLEAN, typdelim VARCHAR, typrelid BIGINT, typelem BIGINT, typarray BIGINT, typnotnull BOOLEAN, typbasetype BIGINT, typtypmod INTEGER, typndims INTEGER, typcollation BIGINT, typdefault VARCHAR"}
	format := &catalogTable{name: "strata_format", cols: "typid BIGINT, typmod BIGINT, name VARCHAR"}
	seen := map[[2]int64]bool{}
	for _, t := range pgTypes {
		coll := int64(0)
		if t.oid == 25 || t.oid == 1042 || t.oid == 1043 {
			coll = 100
		}
		typ.rows = append(typ.rows, []any{t.oid, t.name, oidPgCatalog, oidOwner, -1, false, "b", "U", false, true, ",", 0, 0, 0, false, 0, -1, 0, coll, nil})
		format.rows = append(format.rows, []any{t.oid, -1, formatType(t.oid, -1)})
		seen[[2]int64{t.oid, -1}] = true
	}
	for _, r := range attr.rows {
		k := [2]int64{r[2].(int64), r[7].(int64)}
		if !seen[k] {
			seen[k] = true
			format.rows = append(format.rows, []any{k[0], k[1], formatType(k[0], k[1])})
		}
	}
	// The pg_catalog system views over tables, views and materialized
	// views (PostgreSQL defines them over pg_class; here they are filled
	// from the same objects).
	tables := &catalogTable{name: "pg_tables", cols: "schemaname VARCHAR, tablename VARCHAR, tableowner VARCHAR, tablespace VARCHAR, hasindexes BOOLEAN, hasrules BOOLEAN, hastriggers BOOLEAN, rowsecurity BOOLEAN"}
	views := &catalogTable{name: "pg_views", cols: "schemaname VARCHAR, viewname VARCHAR, viewowner VARCHAR, definition VARCHAR"}
	matviews := &catalogTable{name: "pg_matviews", cols: "schemaname VARCHAR, matviewname VARCHAR, matviewowner VARCHAR, tablespace VARCHAR, hasindexes BOOLEAN, ispopulated BOOLEAN, definition VARCHAR"}
	for _, o := range objects {
		schemaName := o.Schema
		if schemaName == "" {
			schemaName = "public"
		}
		switch o.Kind {
		case KindView:
			views.rows = append(views.rows, []any{schemaName, o.Name, owner, nullIfEmpty(o.ViewDef)})
		case KindMaterializedView:
			matviews.rows = append(matviews.rows, []any{schemaName, o.Name, owner, nil, len(o.PrimaryKey) > 0, true, nullIfEmpty(o.ViewDef)})
		default:
			tables.rows = append(tables.rows, []any{schemaName, o.Name, owner, nil, len(o.PrimaryKey) > 0, false, false, false})
		}
	}
	return append([]catalogTable{*ns, *class, *attr, *index, *cons, *typ, *format, *db, *tables, *views, *matviews,
		{name: "pg_am", cols: "oid BIGINT, amname VARCHAR, amhandler VARCHAR, amtype VARCHAR", rows: [][]any{{oidHeap, "heap", "heap_tableam_handler", "t"}, {oidBtree, "btree", "bthandler", "i"}}},
		{name: "pg_roles", cols: "oid BIGINT, rolname VARCHAR, rolsuper BOOLEAN, rolinherit BOOLEAN, rolcreaterole BOOLEAN, rolcreatedb BOOLEAN, rolcanlogin BOOLEAN, rolreplication BOOLEAN, rolconnlimit INTEGER, rolvaliduntil TIMESTAMPTZ, rolbypassrls BOOLEAN, rolconfig VARCHAR[]", rows: [][]any{{oidOwner, owner, true, true, true, true, true, false, -1, nil, true, nil}}},
		// No role is a member of another, and no function is defined
		// outside pg_catalog: psql's \du and \df list roles and nothing.
		{name: "pg_auth_members", cols: "oid BIGINT, roleid BIGINT, member BIGINT, grantor BIGINT, admin_option BOOLEAN, inherit_option BOOLEAN, set_option BOOLEAN"},
		{name: "pg_proc", cols: "oid BIGINT, proname VARCHAR, pronamespace BIGINT, proowner BIGINT, prolang BIGINT, procost FLOAT, prorows FLOAT, provariadic BIGINT, prosupport VARCHAR, prokind VARCHAR, prosecdef BOOLEAN, proleakproof BOOLEAN, proisstrict BOOLEAN, proretset BOOLEAN, provolatile VARCHAR, proparallel VARCHAR, pronargs SMALLINT, pronargdefaults SMALLINT, prorettype BIGINT, proargtypes BIGINT[], proallargtypes BIGINT[], proargmodes VARCHAR[], proargnames VARCHAR[], proargdefaults VARCHAR, protrftypes BIGINT[], prosrc VARCHAR, probin VARCHAR, prosqlbody VARCHAR, proconfig VARCHAR[], proacl VARCHAR[]"},
		{name: "pg_collation", cols: "oid BIGINT, collname VARCHAR, collnamespace BIGINT, collowner BIGINT, collprovider VARCHAR, collisdeterministic BOOLEAN, collencoding INTEGER, collcollate VARCHAR, collctype VARCHAR", rows: [][]any{{100, "default", oidPgCatalog, oidOwner, "d", true, -1, nil, nil}, {950, "C", oidPgCatalog, oidOwner, "c", true, -1, "C", "C"}}},
		{name: "pg_attrdef", cols: "oid BIGINT, adrelid BIGINT, adnum SMALLINT, adbin VARCHAR"},
		{name: "pg_policy", cols: "oid BIGINT, polname VARCHAR, polrelid BIGINT, polcmd VARCHAR, polpermissive BOOLEAN, polroles BIGINT[], polqual VARCHAR, polwithcheck VARCHAR"},
		{name: "pg_statistic_ext", cols: "oid BIGINT, stxrelid BIGINT, stxname VARCHAR, stxnamespace BIGINT, stxowner BIGINT, stxstattarget INTEGER, stxkeys SMALLINT[], stxkind VARCHAR[], stxexprs VARCHAR"},
		{name: "pg_publication", cols: "oid BIGINT, pubname VARCHAR, pubowner BIGINT, puballtables BOOLEAN, pubinsert BOOLEAN, pubupdate BOOLEAN, pubdelete BOOLEAN, pubtruncate BOOLEAN, pubviaroot BOOLEAN"},
		{name: "pg_publication_namespace", cols: "oid BIGINT, pnpubid BIGINT, pnnspid BIGINT"},
		{name: "pg_publication_rel", cols: "oid BIGINT, prpubid BIGINT, prrelid BIGINT, prqual VARCHAR, prattrs SMALLINT[]"},
		{name: "pg_inherits", cols: "inhrelid BIGINT, inhparent BIGINT, inhseqno INTEGER, inhdetachpending BOOLEAN"},
		{name: "pg_description", cols: "objoid BIGINT, classoid BIGINT, objsubid INTEGER, description VARCHAR"},
		{name: "pg_trigger", cols: "oid BIGINT, tgrelid BIGINT, tgparentid BIGINT, tgname VARCHAR, tgfoid BIGINT, tgtype SMALLINT, tgenabled VARCHAR, tgisinternal BOOLEAN, tgconstrrelid BIGINT, tgconstrindid BIGINT, tgconstraint BIGINT, tgdeferrable BOOLEAN, tginitdeferred BOOLEAN, tgnargs SMALLINT"},
		{name: "pg_rewrite", cols: "oid BIGINT, rulename VARCHAR, ev_class BIGINT, ev_type VARCHAR, ev_enabled VARCHAR, is_instead BOOLEAN"},
		{name: "pg_extension", cols: "oid BIGINT, extname VARCHAR, extowner BIGINT, extnamespace BIGINT, extrelocatable BOOLEAN, extversion VARCHAR"},
	}, infoSchemaTables(objects, owner)...)
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// quoteIdentIfNeeded quotes name as PostgreSQL's quote_ident does: only
// when it is not a plain lower-case identifier.
func quoteIdentIfNeeded(name string) string {
	plain := name != ""
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c == '_' || i > 0 && (c >= '0' && c <= '9' || c == '$')) {
			plain = false
		}
	}
	if plain {
		return name
	}
	return quoteIdent(name)
}

// sqlLiteral writes v as a DuckDB literal.
func sqlLiteral(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return quoteString(x)
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []int64:
		parts := make([]string, len(x))
		for i, n := range x {
			parts[i] = strconv.FormatInt(n, 10)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	panic(fmt.Sprintf("olap: catalog literal of type %T", v))
}

// catalogDDL returns the statements that create the emulated catalog in
// DuckDB schema name.
func catalogDDL(name string, tables []catalogTable) []string {
	q := quoteIdent(name)
	stmts := []string{"CREATE SCHEMA " + q}
	for _, t := range tables {
		stmts = append(stmts, "CREATE TABLE "+q+"."+t.name+" ("+t.cols+")")
		if len(t.rows) == 0 {
			continue
		}
		var b strings.Builder
		b.WriteString("INSERT INTO " + q + "." + t.name + " VALUES ")
		for i, r := range t.rows {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('(')
			for j, v := range r {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString(sqlLiteral(v))
			}
			b.WriteByte(')')
		}
		stmts = append(stmts, b.String())
	}
	for _, f := range catalogFunctions {
		stmts = append(stmts, "CREATE MACRO "+q+"."+f.name+strings.ReplaceAll(f.def, "$S", q))
	}
	return stmts
}

// catalogRelations is the set of relation names each emulated catalog
// defines; catalogFuncs the macro names.
var catalogRelations, catalogFuncs = func() (map[string]bool, map[string]bool) {
	rels := map[string]bool{}
	for _, t := range buildCatalog(nil) {
		rels[t.name] = true
	}
	funcs := map[string]bool{}
	for _, f := range catalogFunctions {
		funcs[f.name] = true
	}
	return rels, funcs
}()

// CatalogQuery answers a query against pg_catalog, such as those psql
// sends for \dt, \d and \d name, over an emulated catalog that describes
// objects ([catalog-emulation] in doc.go). The result has the columns and
// values PostgreSQL would give for the same objects, within the
// emulation's limits.
func (e *Engine) CatalogQuery(ctx context.Context, objects []TableInfo, sqlText string) (*Result, error) {
	objects = append(append([]TableInfo(nil), objects...), systemRelations(ctx)...)
	sort.SliceStable(objects, func(i, j int) bool { return objects[i].Name < objects[j].Name })
	ce, err := e.catalogs.acquire(ctx, objects, func(schema string) error {
		conn, err := e.db.Conn(ctx)
		if err != nil {
			return mapError(err)
		}
		defer conn.Close()
		for _, s := range catalogDDL(schema, buildCatalog(objects)) {
			if _, err := conn.ExecContext(ctx, s); err != nil {
				return mapError(fmt.Errorf("catalog: %w", err))
			}
		}
		return nil
	})
	if err != nil {
		return nil, canceled(ctx, err)
	}
	defer e.catalogs.release(ce)
	rewritten, err := rewriteCatalog(sqlText, ce.schema, objects)
	if err != nil {
		return nil, err
	}
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	defer conn.Close()
	return runSelect(ctx, conn, rewritten, 0)
}

// IsCatalogQuery reports whether sqlText reads PostgreSQL's system
// catalogs (names pg_catalog or a pg_ relation CatalogQuery emulates), so
// that a session sends it to CatalogQuery rather than Query.
func IsCatalogQuery(sqlText string) bool {
	for _, t := range lex(sqlText) {
		n, ok := t.identName()
		if !ok {
			continue
		}
		if n == "pg_catalog" || n == "information_schema" || catalogRelations[n] && strings.HasPrefix(n, "pg_") {
			return true
		}
	}
	return false
}

// systemRelationsKey carries WithSystemRelations' relations.
type systemRelationsKey struct{}

// WithSystemRelations returns ctx carrying relations that CatalogQuery
// describes besides the objects it is given: the relations of schemas
// the caller of CatalogQuery does not list, such as the query server's
// system tables (strata_catalog.tables, ...), which psql's \d
// strata_catalog.tables then describes. Each one's Schema names its
// schema; pg_table_is_visible is false outside public and pg_catalog, so
// \dt does not list them.
func WithSystemRelations(ctx context.Context, rels []TableInfo) context.Context {
	return context.WithValue(ctx, systemRelationsKey{}, rels)
}

func systemRelations(ctx context.Context) []TableInfo {
	rels, _ := ctx.Value(systemRelationsKey{}).([]TableInfo)
	return rels
}

// catalogOIDs are PostgreSQL's fixed oids of the catalogs the emulation
// has (pg_class.dat, pg_extension.h, ...), so that psql's
// 'pg_catalog.pg_extension'::pg_catalog.regclass (\dx, comments in \d+)
// resolves as in PostgreSQL.
var catalogOIDs = map[string]int64{
	"pg_type": 1247, "pg_attribute": 1249, "pg_proc": 1255, "pg_class": 1259, "pg_authid": 1260,
	"pg_auth_members": 1261, "pg_database": 1262, "pg_am": 2601, "pg_attrdef": 2604, "pg_constraint": 2606,
	"pg_description": 2609, "pg_index": 2610, "pg_inherits": 2611, "pg_namespace": 2615, "pg_rewrite": 2618,
	"pg_trigger": 2620, "pg_extension": 3079, "pg_statistic_ext": 3381, "pg_policy": 3256, "pg_collation": 3456,
	"pg_publication": 6104, "pg_publication_rel": 6106, "pg_publication_namespace": 6237,
}
