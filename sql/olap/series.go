package olap

import (
	"math"
	"strconv"
	"strings"
)

// generate_series as PostgreSQL has it ([series] in doc.go).

// aliasSeriesColumn rewrites the alias of a generate_series call at
// toks[i], if any, from s to s(s): PostgreSQL lets the alias of a
// one-column function stand for its column, DuckDB for the whole row.
func aliasSeriesColumn(toks []token, i int) {
	if n, _ := toks[i].identName(); n != "generate_series" && !strings.HasSuffix(toks[i].text, ".generate_series") {
		return
	}
	p := nextSolid(toks, i+1)
	if p >= len(toks) || toks[p].text != "(" {
		return
	}
	end := matchParen(toks, p)
	a := nextSolid(toks, end+1)
	if a < len(toks) && toks[a].kind == tokIdent && strings.EqualFold(toks[a].text, "as") {
		a = nextSolid(toks, a+1)
	}
	if a < len(toks) && toks[a].kind == tokIdent && !isKeyword(toks[a].text) {
		if n := nextSolid(toks, a+1); n >= len(toks) || toks[n].text != "(" {
			// s(s): the column is named like the alias; an index by it
			// must be an integer, not the row.
			toks[a].text = toks[a].text + "(" + toks[a].text + ")"
		}
	}
}

// seriesAsPostgres rewrites sqlText's generate_series calls in FROM
// clauses as PostgreSQL means them: an alias names the column
// (aliasSeriesColumn), and a series over integer literals that all fit
// an integer is of type integer, as PostgreSQL's generate_series(int, int)
// is, where DuckDB's is always bigint: the call becomes
// (SELECT CAST(generate_series AS INTEGER) AS generate_series FROM
// generate_series(...)). Calls with other arguments (a column, a bigint
// literal) or WITH ORDINALITY keep DuckDB's bigint.
func seriesAsPostgres(sqlText string) string {
	if !strings.Contains(strings.ToLower(sqlText), "generate_series") {
		return sqlText
	}
	toks := lex(sqlText)
	for i := range toks {
		if n, _ := toks[i].identName(); n != "generate_series" || toks[i].kind != tokIdent {
			continue
		}
		pv := prevSolid(toks, i-1)
		if pv < 0 || !inFromList(toks, pv) {
			continue
		}
		aliasSeriesColumn(toks, i)
		open := nextSolid(toks, i+1)
		if open >= len(toks) || toks[open].text != "(" {
			continue
		}
		end := matchParen(toks, open)
		if nx := nextSolid(toks, end+1); nx < len(toks) && strings.EqualFold(toks[nx].text, "with") {
			continue
		}
		if !int32Args(toks[open+1 : end]) {
			continue
		}
		toks[i].text = "(SELECT CAST(generate_series AS INTEGER) AS generate_series FROM generate_series"
		toks[end].text = "))"
	}
	return join(toks)
}

// inFromList reports whether the token at k (FROM, JOIN, LATERAL or a
// comma of a FROM list) introduces a FROM item.
func inFromList(toks []token, k int) bool {
	switch strings.ToLower(toks[k].text) {
	case "from", "join", "lateral":
		return true
	case ",":
		// A comma belongs to the FROM list when the nearest FROM or
		// SELECT before it at the same depth is a FROM.
		depth := 0
		for j := k - 1; j >= 0; j-- {
			switch strings.ToLower(toks[j].text) {
			case ")":
				depth++
			case "(":
				if depth == 0 {
					return false
				}
				depth--
			case "from":
				if depth == 0 {
					return true
				}
			case "select", "where", "group", "order", "having":
				if depth == 0 {
					return false
				}
			}
		}
	}
	return false
}

// int32Args reports whether toks (the tokens between a call's
// parentheses) are 2 or 3 integer literals, each possibly negative, that
// fit an integer.
func int32Args(toks []token) bool {
	n, sign := 0, ""
	want := true // a number is expected next
	for _, t := range toks {
		switch {
		case t.kind == tokSpace:
		case want && t.text == "-" && sign == "":
			sign = "-"
		case want && t.kind == tokNumber:
			v, err := strconv.ParseInt(sign+t.text, 10, 64)
			if err != nil || v < math.MinInt32 || v > math.MaxInt32 {
				return false
			}
			n++
			want, sign = false, ""
		case !want && t.text == ",":
			want = true
		default:
			return false
		}
	}
	return !want && (n == 2 || n == 3)
}
