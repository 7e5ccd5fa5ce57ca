package ddl

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/sqlerr"
)

// columns turns the column list of a CreateStmt into column definitions
// and a primary key. what ("table", "source") and name appear in errors.
// toks are the statement's tokens, used to point errors at a key column.
//
// Accepted per column: a type, NOT NULL, NULL, PRIMARY KEY and, on a
// table's TIMESTAMPTZ column, GENERATED ALWAYS AS (proctime()) STORED
// (generated); per table: PRIMARY KEY (cols). Everything else Postgres
// allows there (DEFAULT, CHECK, UNIQUE, REFERENCES, COLLATE, other
// generation expressions, identity columns, LIKE) is refused with 0A000
// at its position.
func (p *parser) columns(cs *pg_query.CreateStmt, toks []token, what, name string) ([]ColumnDef, []string, error) {
	var cols []ColumnDef
	index := map[string]int{}
	var pk []string
	var pkCon *pg_query.Constraint
	setPK := func(con *pg_query.Constraint, keys []string) error {
		if pkCon != nil {
			return p.errAt(int(con.GetLocation()), invalidTableDefinition, "multiple primary keys for %s %q are not allowed", what, name)
		}
		pkCon, pk = con, keys
		return nil
	}
	for _, el := range cs.GetTableElts() {
		switch {
		case el.GetColumnDef() != nil:
			cd := el.GetColumnDef()
			loc := int(cd.GetLocation())
			if _, dup := index[cd.GetColname()]; dup {
				return nil, nil, p.errAt(loc, sqlerr.DuplicateColumn, "column %q specified more than once", cd.GetColname())
			}
			t, err := p.columnType(cd)
			if err != nil {
				return nil, nil, err
			}
			if cd.GetCollClause() != nil {
				return nil, nil, p.errAt(int(cd.GetCollClause().GetLocation()), sqlerr.FeatureNotSupported, "COLLATE on column %q is not supported", cd.GetColname())
			}
			if cd.GetCompression() != "" || cd.GetStorageName() != "" {
				return nil, nil, p.errAt(loc, sqlerr.FeatureNotSupported, "COMPRESSION and STORAGE on column %q are not supported", cd.GetColname())
			}
			col := ColumnDef{Name: cd.GetColname(), Type: t, Pos: p.pos(loc)}
			explicitNull := false
			for _, cn := range cd.GetConstraints() {
				con := cn.GetConstraint()
				switch con.GetContype() {
				case pg_query.ConstrType_CONSTR_NOTNULL:
					if explicitNull {
						return nil, nil, p.errAt(int(con.GetLocation()), sqlerr.SyntaxError, "conflicting NULL/NOT NULL declarations for column %q of %s %q", col.Name, what, name)
					}
					col.NotNull = true
				case pg_query.ConstrType_CONSTR_NULL:
					if col.NotNull {
						return nil, nil, p.errAt(int(con.GetLocation()), sqlerr.SyntaxError, "conflicting NULL/NOT NULL declarations for column %q of %s %q", col.Name, what, name)
					}
					explicitNull = true
				case pg_query.ConstrType_CONSTR_PRIMARY:
					if explicitNull {
						return nil, nil, p.errAt(int(con.GetLocation()), sqlerr.SyntaxError, "conflicting NULL/NOT NULL declarations for column %q of %s %q", col.Name, what, name)
					}
					if err := setPK(con, []string{col.Name}); err != nil {
						return nil, nil, err
					}
				case pg_query.ConstrType_CONSTR_GENERATED:
					if err := p.generated(con, &col, what, name); err != nil {
						return nil, nil, err
					}
				default:
					return nil, nil, p.errAt(int(con.GetLocation()), sqlerr.FeatureNotSupported, "%s constraint on column %q is not supported", constraintName(con), col.Name)
				}
			}
			index[col.Name] = len(cols)
			cols = append(cols, col)
		case el.GetConstraint() != nil:
			con := el.GetConstraint()
			if con.GetContype() != pg_query.ConstrType_CONSTR_PRIMARY {
				return nil, nil, p.errAt(int(con.GetLocation()), sqlerr.FeatureNotSupported, "%s constraint is not supported", constraintName(con))
			}
			if len(con.GetIncluding()) > 0 || len(con.GetOptions()) > 0 || con.GetIndexspace() != "" {
				return nil, nil, p.errAt(int(con.GetLocation()), sqlerr.FeatureNotSupported, "PRIMARY KEY index options are not supported")
			}
			var keys []string
			for _, k := range con.GetKeys() {
				keys = append(keys, k.GetString_().GetSval())
			}
			if err := setPK(con, keys); err != nil {
				return nil, nil, err
			}
		case el.GetTableLikeClause() != nil:
			return nil, nil, p.errAt(int(el.GetTableLikeClause().GetRelation().GetLocation()), sqlerr.FeatureNotSupported, "LIKE in a column list is not supported")
		default:
			return nil, nil, p.errAt(toks[0].start, sqlerr.FeatureNotSupported, "%s in a column list is not supported", kindName(el))
		}
	}
	// The key's columns exist, appear once, and are NOT NULL.
	seen := map[string]int{}
	for _, k := range pk {
		seen[k]++
		i, ok := index[k]
		if !ok {
			return nil, nil, p.errAt(p.keyOffset(toks, pkCon, k, 1), sqlerr.UndefinedColumn, "column %q named in key does not exist", k)
		}
		if seen[k] > 1 {
			return nil, nil, p.errAt(p.keyOffset(toks, pkCon, k, seen[k]), sqlerr.DuplicateColumn, "column %q appears twice in primary key constraint", k)
		}
		if cols[i].Generated != "" {
			return nil, nil, p.errAt(p.keyOffset(toks, pkCon, k, 1), sqlerr.FeatureNotSupported,
				"generated column %q cannot be part of the primary key of %s %q: its value is the time a row was ingested, not part of its identity", k, what, name)
		}
		cols[i].NotNull = true
	}
	return cols, pk, nil
}

// generated checks a column's GENERATED ALWAYS AS (expr) STORED clause
// (the Postgres grammar itself insists on ALWAYS and STORED) and marks the
// column a processing-time column. Only a table's TIMESTAMPTZ column
// generated by proctime() (or now() or current_timestamp, which mean the
// same there) is accepted: the ingest step stamps each row with the wall
// clock once and the table stores it, as RisingWave's `AS PROCTIME()`
// column. Other expressions are 0A000, another type 42804.
func (p *parser) generated(con *pg_query.Constraint, col *ColumnDef, what, name string) error {
	loc := int(con.GetLocation())
	if what != "table" {
		return p.errAt(loc, sqlerr.FeatureNotSupported, "generated column %q is not supported in a %s; declare it on a table", col.Name, what)
	}
	if col.Generated != "" {
		return p.errAt(loc, sqlerr.SyntaxError, "multiple generation clauses specified for column %q of %s %q", col.Name, what, name)
	}
	if !isProcTime(con.GetRawExpr()) {
		at := loc
		if l := exprLocation(con.GetRawExpr()); l >= 0 {
			at = l
		}
		return p.errAt(at, sqlerr.FeatureNotSupported, "generation expression of column %q is not supported: only proctime() (the time the row is ingested) is", col.Name)
	}
	if col.Type.Kind != types.KindTimestampTZ {
		return p.errAt(loc, sqlerr.DatatypeMismatch, "column %q is of type %s but proctime() is of type timestamp with time zone; declare it TIMESTAMPTZ", col.Name, col.Type)
	}
	col.Generated = catalog.GeneratedProcTime
	return nil
}

// isProcTime reports whether n is proctime(), now() or current_timestamp
// without precision (pg_catalog-qualified names too).
func isProcTime(n *pg_query.Node) bool {
	if f := n.GetFuncCall(); f != nil {
		var parts []string
		for _, x := range f.GetFuncname() {
			parts = append(parts, x.GetString_().GetSval())
		}
		if len(parts) == 2 && parts[0] == "pg_catalog" {
			parts = parts[1:]
		}
		return len(parts) == 1 && (parts[0] == "proctime" || parts[0] == "now") &&
			len(f.GetArgs()) == 0 && !f.GetAggStar() && !f.GetAggDistinct() && f.GetOver() == nil &&
			len(f.GetAggOrder()) == 0 && f.GetAggFilter() == nil && !f.GetFuncVariadic()
	}
	if v := n.GetSqlvalueFunction(); v != nil {
		return v.GetOp() == pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP
	}
	return false
}

// exprLocation is the offset of a generation expression, -1 when unknown.
func exprLocation(n *pg_query.Node) int {
	switch {
	case n.GetFuncCall() != nil:
		return int(n.GetFuncCall().GetLocation())
	case n.GetSqlvalueFunction() != nil:
		return int(n.GetSqlvalueFunction().GetLocation())
	case n.GetAConst() != nil:
		return int(n.GetAConst().GetLocation())
	case n.GetColumnRef() != nil:
		return int(n.GetColumnRef().GetLocation())
	case n.GetAExpr() != nil:
		return int(n.GetAExpr().GetLocation())
	case n.GetTypeCast() != nil:
		return int(n.GetTypeCast().GetLocation())
	}
	return -1
}

// keyOffset returns the byte offset of the nth mention of column key in
// the parenthesised list of a table's PRIMARY KEY constraint, or the
// constraint's own offset when the key is not listed there (a column
// constraint).
func (p *parser) keyOffset(toks []token, con *pg_query.Constraint, key string, nth int) int {
	loc := int(con.GetLocation())
	i := 0
	for i < len(toks) && toks[i].start < loc {
		i++
	}
	for i < len(toks) && toks[i].kind != tokLParen && toks[i].kind != tokComma {
		i++
	}
	if i == len(toks) || toks[i].kind != tokLParen {
		return loc
	}
	for i++; i < len(toks) && toks[i].kind != tokRParen; i++ {
		if toks[i].isColID() && identValue(toks[i]) == key {
			if nth--; nth == 0 {
				return toks[i].start
			}
		}
	}
	return loc
}

func constraintName(con *pg_query.Constraint) string {
	s := strings.TrimPrefix(con.GetContype().String(), "CONSTR_")
	switch s {
	case "FOREIGN":
		return "FOREIGN KEY"
	case "ATTR_DEFERRABLE", "ATTR_NOT_DEFERRABLE", "ATTR_DEFERRED", "ATTR_IMMEDIATE":
		return "DEFERRABLE"
	case "IDENTITY":
		return "GENERATED AS IDENTITY"
	case "GENERATED":
		return "GENERATED ALWAYS AS"
	}
	return s
}

// columnType turns a column's TypeName into a Strata type, reading the
// names the Postgres grammar gives SQL's spellings (pg_catalog.int4 for
// INT, ...) with types.ParseType. Arrays, interval qualifiers and time
// with time zone are refused with 0A000; names types.ParseType does not
// know with 42704 undefined_object, naming the column and the type.
func (p *parser) columnType(cd *pg_query.ColumnDef) (types.Type, error) {
	tn := cd.GetTypeName()
	loc := int(tn.GetLocation())
	col := cd.GetColname()
	var parts []string
	for _, n := range tn.GetNames() {
		parts = append(parts, n.GetString_().GetSval())
	}
	if len(parts) == 2 && parts[0] == "pg_catalog" {
		parts = parts[1:]
	}
	name := strings.Join(parts, ".")
	switch name {
	case "int2":
		name = "smallint"
	case "int4":
		name = "integer"
	case "int8":
		name = "bigint"
	case "float4":
		name = "real"
	case "float8":
		name = "double precision"
	case "bpchar":
		name = "char"
	case "timestamptz":
		name = "timestamp with time zone"
	}
	var mods []string
	for _, m := range tn.GetTypmods() {
		c := m.GetAConst()
		if c == nil || c.GetIval() == nil {
			return types.Type{}, p.errAt(loc, sqlerr.SyntaxError, "type modifiers of column %q must be integer constants", col)
		}
		mods = append(mods, strconv.Itoa(int(c.GetIval().GetIval())))
	}
	spelled := name
	if len(mods) > 0 {
		if i := strings.Index(name, " with"); i >= 0 {
			spelled = name[:i] + "(" + strings.Join(mods, ",") + ")" + name[i:]
		} else {
			spelled = name + "(" + strings.Join(mods, ",") + ")"
		}
	}
	if len(tn.GetArrayBounds()) > 0 {
		return types.Type{}, p.errAt(loc, sqlerr.FeatureNotSupported, "column %q: array type %s[] is not supported", col, spelled)
	}
	if tn.GetSetof() {
		return types.Type{}, p.errAt(loc, sqlerr.FeatureNotSupported, "column %q: SETOF types are not supported", col)
	}
	switch name {
	case "interval":
		if len(mods) > 0 {
			return types.Type{}, p.errAt(loc, sqlerr.FeatureNotSupported, "column %q: INTERVAL field qualifiers and precision are not supported; use INTERVAL", col)
		}
	case "timetz":
		return types.Type{}, p.errAt(loc, sqlerr.FeatureNotSupported, "column %q: type time with time zone is not supported; use timestamptz", col)
	case "json":
		return types.Type{}, p.errAt(loc, sqlerr.FeatureNotSupported, "column %q: type json is not supported; use jsonb", col)
	}
	t, err := types.ParseType(spelled)
	if err != nil {
		if _, known := types.ParseType(name); known == nil {
			// A known type with bad modifiers: NUMERIC(2000), VARCHAR(0).
			return types.Type{}, p.errAt(loc, sqlerr.InvalidParameterValue, "column %q: %v", col, err)
		}
		return types.Type{}, p.errAt(loc, sqlerr.UndefinedObject, "column %q: type %q does not exist", col, spelled)
	}
	return t, nil
}
