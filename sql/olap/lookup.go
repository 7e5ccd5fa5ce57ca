package olap

// unwrapLookup rewrites LOOKUP(t) after FROM, JOIN or a comma to t: a
// view's lookup join (planner's doc, "Lookup joins") reads t by key at
// the epoch of each stream row; a one-shot query, and the recomputation
// of such a view, read t itself at the query's version, which DuckDB
// does without the wrapper ([lookup] in doc.go).
func unwrapLookup(sqlText string) string {
	toks := lex(sqlText)
	changed := false
	for i := range toks {
		if n, ok := toks[i].identName(); !ok || toks[i].kind != tokIdent || n != "lookup" {
			continue
		}
		p := prevSolid(toks, i-1)
		if p < 0 {
			continue
		}
		if prev, _ := toks[p].identName(); prev != "from" && prev != "join" && toks[p].text != "," {
			continue
		}
		open := nextSolid(toks, i+1)
		if open >= len(toks) || toks[open].text != "(" {
			continue
		}
		// The argument: names joined by dots, then ")".
		end := nextSolid(toks, open+1)
		var inner []int
		for end < len(toks) {
			if _, isName := toks[end].identName(); !isName {
				break
			}
			inner = append(inner, end)
			dot := nextSolid(toks, end+1)
			if dot >= len(toks) || toks[dot].text != "." {
				end = dot
				break
			}
			inner = append(inner, dot)
			end = nextSolid(toks, dot+1)
		}
		if len(inner) == 0 || end >= len(toks) || toks[end].text != ")" {
			continue
		}
		name := ""
		for _, k := range inner {
			name += toks[k].text
		}
		for k := i + 1; k <= end; k++ {
			toks[k] = token{kind: tokSpace}
		}
		toks[i] = token{kind: tokSpace, text: name}
		changed = true
	}
	if !changed {
		return sqlText
	}
	return join(toks)
}

// HasLookupJoin reports whether sqlText joins a table through LOOKUP(t)
// (after FROM, JOIN or a comma), the form unwrapLookup rewrites.
func HasLookupJoin(sqlText string) bool { return unwrapLookup(sqlText) != sqlText }
