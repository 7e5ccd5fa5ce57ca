package olap

import (
	"context"
	"encoding/json"
	"sort"
	"strings"

	"github.com/stratadb/strata/sql/pglex"
	"github.com/stratadb/strata/sql/sqlerr"
)

// ReferencedTables returns the tables sqlText reads, as its FROM clauses
// name them ("t1", "dev.t1"), in order of first appearance and without
// repeats, so that a session can resolve them, pick their epoch and pass
// them as inputs. It parses with DuckDB's own parser, the one that will run
// the query; names of CTEs and table functions are not tables. Each name
// is folded as PostgreSQL folds it (lower case unless quoted), read from
// the statement text at the position DuckDB reports. Syntax errors are
// 42601; a text that is not one SELECT is 0A000.
func (e *Engine) ReferencedTables(ctx context.Context, sqlText string) ([]string, error) {
	tables, _, err := e.References(ctx, sqlText)
	return tables, err
}

// References returns what ReferencedTables returns, and the lower-case
// names of the table functions sqlText calls in FROM clauses
// (generate_series), without repeats.
func (e *Engine) References(ctx context.Context, sqlText string) (tables, functions []string, err error) {
	sqlText = quoteDuckKeywords(unwrapLookup(sqlText))
	var tree string
	if err := e.db.QueryRowContext(ctx, "SELECT json_serialize_sql(?::VARCHAR)::VARCHAR", sqlText).Scan(&tree); err != nil {
		return nil, nil, mapError(err)
	}
	dec := json.NewDecoder(strings.NewReader(tree))
	dec.UseNumber()
	var root map[string]any
	if err := dec.Decode(&root); err != nil {
		return nil, nil, sqlerr.Wrap(sqlerr.InternalError, err)
	}
	if failed, _ := root["error"].(bool); failed {
		msg, _ := root["error_message"].(string)
		if typ, _ := root["error_type"].(string); typ == "parser" {
			pm, _ := translate(msg, sqlerr.SyntaxError)
			return nil, nil, &sqlerr.Error{Code: pm.code, Message: pm.message, Hint: pm.hint, Detail: pm.detail}
		}
		return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "only SELECT runs on the OLAP engine: %s", msg)
	}
	if stmts, _ := root["statements"].([]any); len(stmts) != 1 {
		return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "the OLAP engine runs one statement at a time")
	}
	var refs []tableRef
	ctes := map[string]bool{}
	fns := map[string]bool{}
	collectRefs(root, &refs, ctes, fns)
	for f := range fns {
		functions = append(functions, f)
	}
	sort.Strings(functions)
	sort.SliceStable(refs, func(i, j int) bool { return uint(refs[i].pos) < uint(refs[j].pos) }) // text order; unknown (-1) last
	var out []string
	seen := map[string]bool{}
	for _, r := range refs {
		if r.schema == "" && r.catalog == "" && ctes[duckFold(r.table)] {
			continue
		}
		name := r.spelled(sqlText)
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out, functions, nil
}

// tableRef is one BASE_TABLE node of a DuckDB syntax tree.
type tableRef struct {
	catalog, schema, table string
	pos                    int // byte offset of the name in the text, -1 if unknown
}

func collectRefs(v any, refs *[]tableRef, ctes, functions map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		if x["type"] == "BASE_TABLE" {
			r := tableRef{pos: -1}
			r.catalog, _ = x["catalog_name"].(string)
			r.schema, _ = x["schema_name"].(string)
			r.table, _ = x["table_name"].(string)
			if n, ok := x["query_location"].(json.Number); ok {
				if p, err := n.Int64(); err == nil {
					r.pos = int(p)
				}
			}
			*refs = append(*refs, r)
		}
		if x["type"] == "TABLE_FUNCTION" {
			if f, ok := x["function"].(map[string]any); ok {
				if n, ok := f["function_name"].(string); ok {
					functions[strings.ToLower(n)] = true
				}
			}
		}
		if m, ok := x["cte_map"].(map[string]any); ok {
			if entries, ok := m["map"].([]any); ok {
				for _, en := range entries {
					if kv, ok := en.(map[string]any); ok {
						if k, ok := kv["key"].(string); ok {
							ctes[duckFold(k)] = true
						}
					}
				}
			}
		}
		for _, c := range x {
			collectRefs(c, refs, ctes, functions)
		}
	case []any:
		for _, c := range x {
			collectRefs(c, refs, ctes, functions)
		}
	}
}

// spelled returns the reference as the text writes it, each part folded
// as PostgreSQL folds identifiers; if the text at the reported position
// does not hold the name, the parts DuckDB reports, lower-cased.
func (r tableRef) spelled(sqlText string) string {
	var want []string
	for _, p := range []string{r.catalog, r.schema, r.table} {
		if p != "" {
			want = append(want, p)
		}
	}
	if r.pos >= 0 && r.pos < len(sqlText) {
		toks := lex(sqlText[r.pos:])
		var parts []string
		expectName := true
		for _, t := range toks {
			if t.kind == tokSpace {
				continue
			}
			if expectName {
				n, ok := t.identName()
				if !ok {
					break
				}
				parts = append(parts, n)
				expectName = false
				continue
			}
			if t.text != "." {
				break
			}
			expectName = true
		}
		if len(parts) == len(want) && strings.EqualFold(parts[len(parts)-1], want[len(want)-1]) {
			return strings.Join(parts, ".")
		}
	}
	return pglex.FoldIdent(strings.Join(want, "."))
}
