package olap

import "strings"

// avgMacroName is the macro the OLAP engine computes avg of integers with
// ([avg-numeric] in doc.go).
const avgMacroName = "strata_avg"

// avgScale is the scale of avg of integers: the 16 fractional digits
// PostgreSQL prints for a mean between 1 and 9999.
const avgScale = 16

// avgIntBody is avg over an integer column x as PostgreSQL computes it,
// exactly: sum (DuckDB's HUGEINT, exact) divided by count, rounded half
// away from zero at avgScale digits, as DECIMAL(38,16) (a bigint mean has
// at most 19 integer digits). The division runs in integers (quotient,
// then the remainder's fractional digits), since DuckDB divides DECIMAL
// values in DOUBLE PRECISION. No rows (sum NULL) give NULL.
const avgIntBody = `CASE WHEN sum(x) < 0 THEN -(%[1]s) ELSE (%[1]s) END`

// avgIntMagnitude is |sum| / count at avgScale digits, rounded half up.
const avgIntMagnitude = `(abs(sum(x)::HUGEINT) // count(x))::DECIMAL(38,16)` +
	` + ((abs(sum(x)::HUGEINT) % count(x) * 20000000000000000 + count(x)) // (2 * count(x)))::DECIMAL(18,0)` +
	` * 0.0000000000000001`

// avgMacro defines strata_avg with one overload per integer type and one
// for the rest, which is DuckDB's avg (DOUBLE PRECISION for floats and
// DECIMAL, an INTERVAL for intervals).
func avgMacro() string {
	body := strings.ReplaceAll(avgIntBody, "%[1]s", avgIntMagnitude)
	return "CREATE MACRO " + avgMacroName + "(x TINYINT) AS " + body +
		", (x SMALLINT) AS " + body + ", (x INTEGER) AS " + body + ", (x BIGINT) AS " + body +
		", (x) AS avg(x)"
}

// avgAsNumeric renames each plain call avg(expr) of sqlText to
// strata_avg(expr) ([avg-numeric]): a call whose argument starts with
// DISTINCT or ALL, or that is followed by OVER, FILTER or WITHIN (a
// window or a filtered aggregate, which a macro cannot be), keeps
// DuckDB's avg.
func avgAsNumeric(sqlText string) string {
	if !strings.Contains(strings.ToLower(sqlText), "avg") {
		return sqlText
	}
	toks := lex(sqlText)
	changed := false
	for i, t := range toks {
		if t.kind != tokIdent || !strings.EqualFold(t.text, "avg") {
			continue
		}
		if p := prevSolid(toks, i-1); p >= 0 && toks[p].text == "." {
			continue
		}
		open := nextSolid(toks, i+1)
		if open >= len(toks) || toks[open].text != "(" {
			continue
		}
		if a := nextSolid(toks, open+1); a < len(toks) && toks[a].kind == tokIdent {
			if w, _ := toks[a].identName(); w == "distinct" || w == "all" {
				continue
			}
		}
		depth, end := 0, -1
		for k := open; k < len(toks) && end < 0; k++ {
			if toks[k].kind != tokPunct {
				continue
			}
			depth += strings.Count(toks[k].text, "(") - strings.Count(toks[k].text, ")")
			if depth <= 0 {
				end = k
			}
		}
		if end < 0 {
			continue
		}
		if a := nextSolid(toks, end+1); a < len(toks) && toks[a].kind == tokIdent {
			if w, _ := toks[a].identName(); w == "over" || w == "filter" || w == "within" {
				continue
			}
		}
		toks[i].text = avgMacroName
		changed = true
	}
	if !changed {
		return sqlText
	}
	return join(toks)
}
