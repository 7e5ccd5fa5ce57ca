package olap

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"github.com/stratadb/strata/internal/suggest"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/stratadb/strata/sql/sqlerr"
)

// Names in messages as PostgreSQL spells them ([error-map] in doc.go).
// DuckDB echoes an identifier as the query wrote it (ROLLUP_TEST) and
// names an unaliased select item by its text (count_star()); PostgreSQL
// folds a bare identifier to lower case (rollup_test) and names the item
// after its function (count).

// identMessages are the messages that echo identifiers of the query, each
// submatch one identifier.
var identMessages = []*regexp.Regexp{
	regexp.MustCompile(`^column "([^"]+)" does not exist`),
	regexp.MustCompile(`^column ([^". ]+)\.([^". ]+) does not exist`),
	regexp.MustCompile(`^missing FROM-clause entry for table "([^"]+)"`),
	regexp.MustCompile(`^relation "([^"]+)" does not exist`),
	regexp.MustCompile(`^column "([^"]+)" must appear in the GROUP BY clause`),
	regexp.MustCompile(`^column reference "([^"]+)" is ambiguous`),
	regexp.MustCompile(`^column "([^"]+)" specified in USING clause`),
}

// pgQueryNames rewrites the message of err, a mapped DuckDB error of
// query, with the identifiers it echoes folded as PostgreSQL folds them
// (foldName). Other errors are returned as they are.
func pgQueryNames(err error, query string) error {
	var se *sqlerr.Error
	if !errors.As(err, &se) {
		return err
	}
	for _, re := range identMessages {
		loc := re.FindStringSubmatchIndex(se.Message)
		if loc == nil {
			continue
		}
		var b strings.Builder
		last := 0
		for k := 2; k+1 < len(loc); k += 2 {
			b.WriteString(se.Message[last:loc[k]])
			b.WriteString(foldName(query, se.Message[loc[k]:loc[k+1]]))
			last = loc[k+1]
		}
		b.WriteString(se.Message[last:])
		se.Message = b.String()
		break
	}
	return err
}

// foldName is the identifier name, as DuckDB echoed it from query, as
// PostgreSQL names it: lower case when query writes it bare (Rollup_Test),
// exact when it writes it quoted ("Rollup_Test") or not at all.
func foldName(query, name string) string {
	if name == strings.ToLower(name) {
		return name
	}
	bare := false
	for _, t := range lex(query) {
		switch t.kind {
		case tokQuoted:
			if n, _ := t.identName(); n == name {
				return name
			}
		case tokIdent:
			if strings.EqualFold(t.text, name) {
				bare = true
			}
		}
	}
	if bare {
		return strings.ToLower(name)
	}
	return name
}

// PostgreSQL's hint for an unknown column ([column-hint] in doc.go) names
// the columns in scope closest to the one the query wrote, qualified by
// their relation: `Perhaps you meant to reference the column
// "orders.name".` DuckDB lists candidates by a similarity of its own
// that can rank a far name first (amount for nme), unqualified, and
// names unaliased items by their text.

// maxFuzzyDistance is the most edits PostgreSQL allows between the
// column the query wrote and one it suggests (MAX_FUZZY_DISTANCE); it
// also never suggests one that differs in more than half the characters.
const maxFuzzyDistance = 3

// fuzzyLimit is the largest edit distance at which a column is suggested
// for the written name.
func fuzzyLimit(written string) int {
	return min(maxFuzzyDistance, utf8.RuneCountInString(written)/2)
}

// scopeRel is one relation of a query's FROM clause: the name that
// qualifies its columns (its alias, else its name; "" for none) and its
// columns as PostgreSQL names them.
type scopeRel struct {
	qual string
	cols []string
}

// closestColumnHint is PostgreSQL's hint for the unknown column written
// among rels: the closest column within fuzzyLimit, or the two closest
// when two relations tie, qualified; "" when none is close, two of one
// relation tie or more than two tie.
func closestColumnHint(written string, rels []scopeRel) string {
	limit := fuzzyLimit(written)
	best := limit + 1
	var found []string
	var rel []int
	for i, r := range rels {
		for _, c := range r.cols {
			d := suggest.Levenshtein(written, c)
			if d > limit || d > best {
				continue
			}
			ref := c
			if r.qual != "" {
				ref = r.qual + "." + c
			}
			if d < best {
				best, found, rel = d, found[:0], rel[:0]
			}
			found, rel = append(found, ref), append(rel, i)
		}
	}
	switch {
	case len(found) == 1:
		return `Perhaps you meant to reference the column "` + found[0] + `".`
	case len(found) == 2 && rel[0] != rel[1]:
		return `Perhaps you meant to reference the column "` + found[0] + `" or the column "` + found[1] + `".`
	}
	return ""
}

// undefinedColumn reads the name of a 42703 message about an unqualified
// column.
var undefinedColumn = regexp.MustCompile(`^column "([^"]+)" does not exist$`)

// pgColumnHint gives err, a mapped DuckDB error of query run on conn, the
// hint PostgreSQL gives for an unknown column (closestColumnHint) when
// the relations in scope of the reference are known from query's syntax
// tree (columnScope); otherwise the hint from DuckDB's candidates stays.
func pgColumnHint(ctx context.Context, conn *sql.Conn, err error, query string) error {
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Code != sqlerr.UndefinedColumn {
		return err
	}
	m := undefinedColumn.FindStringSubmatch(se.Message)
	if m == nil {
		return err
	}
	if rels, ok := columnScope(ctx, conn, query, m[1]); ok {
		se.Hint = closestColumnHint(m[1], rels)
	}
	return err
}

// columnScope returns the relations of the FROM clause of the innermost
// SELECT of query that refers to the unqualified column name, ok false
// when the tree does not tell them all (a relation of unknown columns:
// a CTE, a table function without column names, a subquery with *).
func columnScope(ctx context.Context, conn *sql.Conn, query, name string) ([]scopeRel, bool) {
	node, ok := statementTree(ctx, conn, query)
	if !ok {
		return nil, false
	}
	sel := referringSelect(node, nil, name)
	if sel == nil {
		return nil, false
	}
	from, _ := sel["from_table"].(map[string]any)
	var rels []scopeRel
	if !fromRels(ctx, conn, query, from, &rels) {
		return nil, false
	}
	return rels, true
}

// referringSelect returns the innermost SELECT node at or below v (cur
// the SELECT v belongs to) with a reference to the unqualified column
// name, the first in the tree's order.
func referringSelect(v any, cur map[string]any, name string) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		if x["type"] == "SELECT_NODE" {
			cur = x
		}
		if x["class"] == "COLUMN_REF" {
			if names, _ := x["column_names"].([]any); len(names) == 1 {
				if s, _ := names[0].(string); strings.EqualFold(s, name) {
					return cur
				}
			}
		}
		for _, c := range x {
			if s := referringSelect(c, cur, name); s != nil {
				return s
			}
		}
	case []any:
		for _, c := range x {
			if s := referringSelect(c, cur, name); s != nil {
				return s
			}
		}
	}
	return nil
}

// fromRels appends the relations of the FROM item ref of query to rels
// and reports whether it could tell all their columns.
func fromRels(ctx context.Context, conn *sql.Conn, query string, ref map[string]any, rels *[]scopeRel) bool {
	if ref == nil {
		return true
	}
	alias, _ := ref["alias"].(string)
	named := columnAliases(ref)
	switch ref["type"] {
	case "EMPTY", "EMPTY_FROM":
		return true
	case "JOIN":
		l, _ := ref["left"].(map[string]any)
		r, _ := ref["right"].(map[string]any)
		return fromRels(ctx, conn, query, l, rels) && fromRels(ctx, conn, query, r, rels)
	case "BASE_TABLE":
		tbl, _ := ref["table_name"].(string)
		parts := []string{}
		for _, k := range []string{"catalog_name", "schema_name"} {
			if s, _ := ref[k].(string); s != "" {
				parts = append(parts, quoteIdent(s))
			}
		}
		parts = append(parts, quoteIdent(tbl))
		rows, err := conn.QueryContext(ctx, "SELECT * FROM "+strings.Join(parts, ".")+" LIMIT 0")
		if err != nil {
			return false // a CTE's name, or a relation DuckDB cannot read
		}
		cols, err := rows.Columns()
		_ = rows.Close()
		if err != nil {
			return false
		}
		if alias == "" {
			// PostgreSQL qualifies by the relation's name without its
			// schema; an input written dev.t is bound as the view
			// "dev.t" ([names-per-query]).
			alias = tbl[strings.LastIndexByte(tbl, '.')+1:]
		}
		*rels = append(*rels, scopeRel{qual: foldName(query, alias), cols: renamed(cols, named)})
		return true
	case "SUBQUERY":
		sq, _ := ref["subquery"].(map[string]any)
		node, _ := sq["node"].(map[string]any)
		var cols []string
		for _, item := range selectList(node) {
			m, ok := item.(map[string]any)
			if !ok || m["class"] == "STAR" || m["class"] == "COLUMNS" {
				return false
			}
			cols = append(cols, figureName(m))
		}
		*rels = append(*rels, scopeRel{qual: foldName(query, alias), cols: renamed(cols, named)})
		return true
	case "TABLE_FUNCTION":
		if len(named) == 0 {
			return false
		}
		*rels = append(*rels, scopeRel{qual: foldName(query, alias), cols: named})
		return true
	}
	return false
}

// columnAliases returns the column names a FROM item's alias gives
// (x(a, b)).
func columnAliases(ref map[string]any) []string {
	l, _ := ref["column_name_alias"].([]any)
	out := make([]string, 0, len(l))
	for _, v := range l {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// renamed is cols with the first len(named) renamed as named says.
func renamed(cols, named []string) []string {
	for i := range min(len(cols), len(named)) {
		cols[i] = named[i]
	}
	return cols
}

// isRelationName reports whether name is the name or alias of a relation
// in some FROM clause of query and a select list of query has it as an
// item of its own: a whole-row reference.
func isRelationName(ctx context.Context, conn *sql.Conn, query, name string) bool {
	var tree string
	if err := conn.QueryRowContext(ctx, "SELECT json_serialize_sql(?::VARCHAR)::VARCHAR", query).Scan(&tree); err != nil {
		return false
	}
	var root any
	if err := json.Unmarshal([]byte(tree), &root); err != nil {
		return false
	}
	return hasRelation(root, name) && hasBareItem(root, name)
}

// hasBareItem reports whether some select list of the syntax tree v has
// an item that is the unqualified column reference name, not renamed.
func hasBareItem(v any, name string) bool {
	return treeHas(v, func(x map[string]any) bool {
		l, _ := x["select_list"].([]any)
		for _, item := range l {
			m, _ := item.(map[string]any)
			alias, _ := m["alias"].(string)
			names, _ := m["column_names"].([]any)
			if m["class"] == "COLUMN_REF" && len(names) == 1 && (alias == "" || strings.EqualFold(alias, name)) {
				if s, _ := names[0].(string); strings.EqualFold(s, name) {
					return true
				}
			}
		}
		return false
	})
}

// hasRelation reports whether the syntax tree v has a FROM item called
// name (by its alias, or a table by its name).
func hasRelation(v any, name string) bool {
	return treeHas(v, func(x map[string]any) bool {
		switch x["type"] {
		case "BASE_TABLE", "SUBQUERY", "TABLE_FUNCTION":
			alias, _ := x["alias"].(string)
			if alias == "" && x["type"] == "BASE_TABLE" {
				tbl, _ := x["table_name"].(string)
				alias = tbl[strings.LastIndexByte(tbl, '.')+1:]
			}
			return strings.EqualFold(alias, name)
		}
		return false
	})
}

// treeHas reports whether match holds for a node of the syntax tree v, v
// itself or any below it.
func treeHas(v any, match func(map[string]any) bool) bool {
	switch x := v.(type) {
	case map[string]any:
		if match(x) {
			return true
		}
		for _, c := range x {
			if treeHas(c, match) {
				return true
			}
		}
	case []any:
		for _, c := range x {
			if treeHas(c, match) {
				return true
			}
		}
	}
	return false
}
