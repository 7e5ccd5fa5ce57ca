package olap

// duckOnlyKeywords are the words DuckDB's parser does not take as a
// column or table name unquoted (its reserved and type_function keywords,
// duckdb_keywords()) that PostgreSQL takes as names: PostgreSQL has them
// as unreserved keywords (by, at, generated, columns) or not at all. The
// keywords the two parsers both reserve are left out: PostgreSQL users
// quote those already.
var duckOnlyKeywords = map[string]bool{
	// reserved in DuckDB
	"describe": true, "lambda": true, "pivot": true, "pivot_longer": true, "pivot_wider": true,
	"qualify": true, "show": true, "summarize": true, "unpivot": true,
	// type_function in DuckDB
	"anti": true, "asof": true, "at": true, "by": true, "columns": true, "generated": true,
	"glob": true, "map": true, "positional": true, "semi": true, "struct": true,
	"try_cast": true, "unpack": true,
}

// quoteDuckKeywords quotes ([duck-keywords] in doc.go) each bare word of
// sqlText that is a name for PostgreSQL but a keyword for DuckDB
// (duckOnlyKeywords), so that DuckDB reads `SELECT by FROM px` as
// PostgreSQL does. A word stays bare where PostgreSQL's grammar makes it
// a keyword: by after GROUP, ORDER, PARTITION or FIRST (SEARCH ... FIRST
// BY), at before TIME or LOCAL (AT TIME ZONE), and any of them before
// "(" (a function call). The quoted name is the word folded to lower
// case, as PostgreSQL folds an unquoted name.
func quoteDuckKeywords(sqlText string) string {
	toks := lex(sqlText)
	changed := false
	for i, t := range toks {
		if t.kind != tokIdent {
			continue
		}
		w, _ := t.identName()
		if !duckOnlyKeywords[w] {
			continue
		}
		next := nextSolid(toks, i+1)
		nextWord := ""
		if next < len(toks) {
			if toks[next].text == "(" {
				continue
			}
			if toks[next].kind == tokIdent {
				nextWord, _ = toks[next].identName()
			}
		}
		prevWord := ""
		if p := prevSolid(toks, i-1); p >= 0 && toks[p].kind == tokIdent {
			prevWord, _ = toks[p].identName()
		}
		switch w {
		case "by":
			if prevWord == "group" || prevWord == "order" || prevWord == "partition" || prevWord == "first" {
				continue
			}
		case "at":
			if nextWord == "time" || nextWord == "local" {
				continue
			}
		}
		toks[i].text = quoteIdent(w)
		changed = true
	}
	if !changed {
		return sqlText
	}
	return join(toks)
}
