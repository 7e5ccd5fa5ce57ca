package olap

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
)

// PostgreSQL column names from DuckDB syntax trees: [column-names] in doc.go.

// statementTree returns DuckDB's syntax tree of sqlText, a single
// statement (json_serialize_sql), ok false when it does not parse as one.
func statementTree(ctx context.Context, conn *sql.Conn, sqlText string) (node map[string]any, ok bool) {
	var tree string
	if err := conn.QueryRowContext(ctx, "SELECT json_serialize_sql(?::VARCHAR)::VARCHAR", sqlText).Scan(&tree); err != nil {
		return nil, false
	}
	var root struct {
		Error      bool `json:"error"`
		Statements []struct {
			Node map[string]any `json:"node"`
		} `json:"statements"`
	}
	if err := json.Unmarshal([]byte(tree), &root); err != nil || root.Error || len(root.Statements) != 1 {
		return nil, false
	}
	return root.Statements[0].Node, true
}

// treeNames returns PostgreSQL's names for the n result columns of
// sqlText, or nil when the tree does not tell them.
func treeNames(ctx context.Context, conn *sql.Conn, sqlText string, n int) []string {
	node, ok := statementTree(ctx, conn, sqlText)
	if !ok {
		return nil
	}
	list := selectList(node)
	if len(list) != n {
		return nil
	}
	names := make([]string, n)
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok || m["class"] == "STAR" || m["class"] == "COLUMNS" {
			return nil
		}
		names[i] = figureName(m)
	}
	return names
}

// selectList returns the select list that names a query node's columns:
// its own, or the left-most of a set operation.
func selectList(node map[string]any) []any {
	for node != nil {
		switch node["type"] {
		case "SELECT_NODE":
			l, _ := node["select_list"].([]any)
			return l
		case "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE":
			node, _ = node["left"].(map[string]any)
		default:
			return nil
		}
	}
	return nil
}

// pgTypeNames are PostgreSQL's names of the types DuckDB's casts name.
var pgTypeNames = map[string]string{
	"BOOLEAN": "bool", "TINYINT": "int2", "SMALLINT": "int2", "INTEGER": "int4", "BIGINT": "int8", "HUGEINT": "numeric",
	"FLOAT": "float4", "DOUBLE": "float8", "DECIMAL": "numeric", "VARCHAR": "text", "BLOB": "bytea", "DATE": "date",
	"TIME": "time", "TIMESTAMP": "timestamp", "TIMESTAMP WITH TIME ZONE": "timestamptz", "INTERVAL": "interval",
	"UUID": "uuid",
}

// figureName names one expression node as PostgreSQL names a select item.
func figureName(m map[string]any) string {
	if alias, _ := m["alias"].(string); alias != "" {
		return alias
	}
	switch m["class"] {
	case "COLUMN_REF":
		if names, _ := m["column_names"].([]any); len(names) > 0 {
			if s, ok := names[len(names)-1].(string); ok {
				return s
			}
		}
	case "FUNCTION", "WINDOW", "AGGREGATE":
		if op, _ := m["is_operator"].(bool); op {
			return "?column?"
		}
		fn, _ := m["function_name"].(string)
		fn = strings.ToLower(fn)
		switch {
		case fn == "count_star":
			return "count"
		case fn == "list_value":
			return "array"
		case fn == avgMacroName:
			return "avg"
		case strings.HasPrefix(fn, "strata_"), fn == "regexp_full_match":
			return "?column?" // an operator DuckDB spells as a function
		case fn != "":
			return fn
		}
	case "CAST":
		if child, ok := m["child"].(map[string]any); ok {
			if n := figureName(child); n != "?column?" {
				return n
			}
		}
		if ct, ok := m["cast_type"].(map[string]any); ok {
			if id, _ := ct["id"].(string); pgTypeNames[id] != "" {
				return pgTypeNames[id]
			}
		}
	case "CASE":
		return "case"
	case "OPERATOR":
		switch m["type"] {
		case "OPERATOR_COALESCE":
			return "coalesce"
		case "OPERATOR_NULLIF":
			return "nullif"
		case "ARRAY_EXTRACT":
			if cs, _ := m["children"].([]any); len(cs) > 0 {
				if c, ok := cs[0].(map[string]any); ok {
					return figureName(c)
				}
			}
		}
	case "SUBQUERY":
		switch m["subquery_type"] {
		case "EXISTS":
			return "exists"
		case "SCALAR":
			if sq, ok := m["subquery"].(map[string]any); ok {
				node, _ := sq["node"].(map[string]any)
				if l := selectList(node); len(l) == 1 {
					if c, ok := l[0].(map[string]any); ok {
						return figureName(c)
					}
				}
			}
		}
	}
	return "?column?"
}
