package olap

import (
	"strconv"
	"strings"

	"github.com/stratadb/strata/sql/sqlerr"
)

// rewriteCatalog turns PostgreSQL catalog SQL into SQL DuckDB runs over the
// emulated catalog in DuckDB schema schema ([catalog-rewrite] in doc.go).
func rewriteCatalog(sqlText, schema string, objects []TableInfo) (string, error) {
	q := quoteIdent(schema)
	toks := lex(sqlText)
	done := map[int]bool{}
	drop := func(from, to int) {
		for k := from; k <= to; k++ {
			toks[k].text = ""
		}
	}
	isIdent := func(i int, name string) bool {
		if i < 0 || i >= len(toks) {
			return false
		}
		n, ok := toks[i].identName()
		return ok && toks[i].kind == tokIdent && n == name
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind == tokSpace || t.text == "" {
			continue
		}
		// OPERATOR(pg_catalog.op) -> op
		if isIdent(i, "operator") {
			p := nextSolid(toks, i+1)
			if p < len(toks) && toks[p].text == "(" {
				end := p + 1
				for end < len(toks) && toks[end].text != ")" {
					end++
				}
				if end < len(toks) {
					op := ""
					for k := p + 1; k < end; k++ {
						if toks[k].kind == tokPunct && toks[k].text != "." {
							op = toks[k].text
						}
					}
					drop(i, end)
					toks[i].text = op
					i = end
					continue
				}
			}
		}
		// COLLATE [pg_catalog.]name -> nothing
		if isIdent(i, "collate") {
			j := nextSolid(toks, i+1)
			if isIdent(j, "pg_catalog") {
				if d := nextSolid(toks, j+1); d < len(toks) && toks[d].text == "." {
					j = nextSolid(toks, d+1)
				}
			}
			if j < len(toks) && (toks[j].kind == tokIdent || toks[j].kind == tokQuoted) {
				drop(i, j)
				i = j
				continue
			}
		}
		// ::[pg_catalog.]type
		if t.text == ":" && i+1 < len(toks) && toks[i+1].text == ":" {
			j := nextSolid(toks, i+2)
			if isIdent(j, "pg_catalog") {
				if d := nextSolid(toks, j+1); d < len(toks) && toks[d].text == "." {
					drop(j, d)
					j = nextSolid(toks, d+1)
				}
			}
			tn, ok := toks[j].identName()
			if !ok {
				continue
			}
			switch tn {
			case "oid", "regproc", "regprocedure", "xid", "cid", "tid":
				toks[j].text = "BIGINT"
			case "regclass", "regtype", "regnamespace", "regrole":
				start := operandStart(toks, i-1)
				if start < 0 {
					return "", sqlerr.New(sqlerr.SyntaxError, "catalog query: cannot find the operand of ::%s", tn)
				}
				operand := join(toks[start:i])
				var repl string
				switch {
				case tn == "regclass" && toks[start].kind == tokString && start == prevSolid(toks, i-1):
					lit := strings.Trim(strings.TrimSpace(operand), "'")
					oid, err := regclassIn(lit, objects)
					if err != nil {
						return "", err
					}
					repl = strconv.FormatInt(oid, 10)
				case tn == "regclass":
					repl = "(SELECT relname FROM " + q + ".pg_class WHERE oid = (" + operand + "))"
				case tn == "regtype":
					repl = q + ".format_type((" + operand + "), NULL)"
				case tn == "regnamespace":
					repl = "(SELECT nspname FROM " + q + ".pg_namespace WHERE oid = (" + operand + "))"
				default:
					repl = "(SELECT rolname FROM " + q + ".pg_roles WHERE oid = (" + operand + "))"
				}
				drop(start, j)
				toks[start].text = repl
			}
			i = j
			continue
		}
		// information_schema.name -> schema.information_schema_name
		if isIdent(i, "information_schema") {
			if p := prevSolid(toks, i-1); p >= 0 && toks[p].text == "." {
				continue
			}
			d := nextSolid(toks, i+1)
			if d < len(toks) && toks[d].text == "." {
				n := nextSolid(toks, d+1)
				if name, ok := toks[n].identName(); ok && catalogRelations["information_schema_"+name] {
					drop(i, d)
					toks[n].text = q + ".information_schema_" + name
					done[n] = true
					i = n
					continue
				}
			}
		}
		// pg_catalog.name -> schema.name for emulated objects, name otherwise
		if isIdent(i, "pg_catalog") {
			if p := prevSolid(toks, i-1); p >= 0 && toks[p].text == "." {
				continue
			}
			d := nextSolid(toks, i+1)
			if d < len(toks) && toks[d].text == "." {
				n := nextSolid(toks, d+1)
				name, ok := toks[n].identName()
				if ok {
					drop(i, d)
					if catalogRelations[name] || catalogFuncs[name] {
						toks[n].text = q + "." + toks[n].text
					}
					done[n] = true // qualified: the next rules leave the name alone
					i = n - 1
					continue
				}
			}
		}
		// unqualified emulated relations and functions
		if name, ok := t.identName(); ok && !done[i] && t.kind == tokIdent && (catalogRelations[name] || catalogFuncs[name]) {
			p := prevSolid(toks, i-1)
			n := nextSolid(toks, i+1)
			qualified := p >= 0 && (toks[p].text == "." || strings.EqualFold(toks[p].text, "as"))
			followedByDot := n < len(toks) && toks[n].text == "."
			call := n < len(toks) && toks[n].text == "("
			if !qualified && !followedByDot && (catalogRelations[name] && !call || catalogFuncs[name] && call) {
				toks[i].text = q + "." + t.text
			}
			continue
		}
		// '{a,b}' array literals compared with lists -> [a, b]
		if t.kind == tokString && strings.HasPrefix(t.text, "'{") && strings.HasSuffix(t.text, "}'") {
			p, n := prevSolid(toks, i-1), nextSolid(toks, i+1)
			isCmp := func(k int) bool {
				return k >= 0 && k < len(toks) && (toks[k].text == "=" || toks[k].text == "<>" || toks[k].text == "!=")
			}
			if isCmp(p) || isCmp(n) {
				body := t.text[2 : len(t.text)-2]
				simple := true
				for _, c := range body {
					if !(c >= '0' && c <= '9' || c == ',' || c == '-') {
						simple = false
					}
				}
				if simple {
					toks[i].text = "[" + body + "]"
				}
			}
			continue
		}
		aliasSeriesColumn(toks, i)
	}
	return regexLiterals(join(toks)), nil
}

// isKeyword reports whether an identifier after a FROM item is a keyword
// rather than an alias.
func isKeyword(s string) bool {
	switch strings.ToLower(s) {
	case "where", "join", "left", "right", "inner", "outer", "cross", "full", "on", "group", "order", "limit", "union", "natural", "using", "having", "window", "offset", "except", "intersect", "with":
		return true
	}
	return false
}

// matchParen returns the index of the ")" matching the "(" at open, or the
// last token.
func matchParen(toks []token, open int) int {
	depth := 0
	for k := open; k < len(toks); k++ {
		switch toks[k].text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return len(toks) - 1
}

// operandStart returns the index of the first token of the primary
// expression that ends at token end (a literal, a possibly qualified name,
// a parenthesised expression or a function call), or -1.
func operandStart(toks []token, end int) int {
	k := prevSolid(toks, end)
	if k < 0 {
		return -1
	}
	switch toks[k].kind {
	case tokString, tokNumber:
		return k
	}
	if toks[k].text == ")" {
		depth := 0
		for ; k >= 0; k-- {
			switch toks[k].text {
			case ")":
				depth++
			case "(":
				depth--
			}
			if depth == 0 {
				break
			}
		}
		if k < 0 {
			return -1
		}
		if f := prevSolid(toks, k-1); f >= 0 && (toks[f].kind == tokIdent || toks[f].kind == tokQuoted) && !isKeyword(toks[f].text) {
			k = f
		} else {
			return k
		}
	}
	if toks[k].kind != tokIdent && toks[k].kind != tokQuoted {
		return -1
	}
	for {
		d := prevSolid(toks, k-1)
		if d < 0 || toks[d].text != "." {
			return k
		}
		n := prevSolid(toks, d-1)
		if n < 0 || toks[n].kind != tokIdent && toks[n].kind != tokQuoted {
			return k
		}
		k = n
	}
}

// regclassIn resolves a relation name, as '<name>'::regclass does, to the
// oid buildCatalog gives it.
func regclassIn(lit string, objects []TableInfo) (int64, error) {
	if n, err := strconv.ParseInt(lit, 10, 64); err == nil {
		return n, nil
	}
	schemaName, name := "", lit
	if db, tbl, err := splitName(lit); err == nil {
		schemaName, name = db, tbl
	}
	if oid, ok := catalogOIDs[name]; ok && (schemaName == "" || schemaName == "pg_catalog") {
		return oid, nil
	}
	cat := buildCatalog(objects)
	oidOf := func(v any) int64 {
		if n, ok := v.(int); ok {
			return int64(n)
		}
		return v.(int64)
	}
	nsName := map[int64]string{}
	for _, n := range cat[0].rows {
		nsName[oidOf(n[0])] = n[1].(string)
	}
	for _, t := range cat[1].rows {
		ns := nsName[oidOf(t[2])]
		// Unqualified, a name resolves on the search path (public).
		if t[1] == name && (schemaName == ns || schemaName == "" && ns == "public") {
			return t[0].(int64), nil
		}
	}
	return 0, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", lit)
}
