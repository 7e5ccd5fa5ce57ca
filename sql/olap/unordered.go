package olap

import (
	"slices"
	"strings"
)

// orderSensitiveAggregates are the aggregates whose value depends on the
// order of their input rows: without ORDER BY inside the call, PostgreSQL
// leaves that order undefined, and a view's job and a recomputation of
// its query may concatenate the same elements in different orders.
var orderSensitiveAggregates = map[string]bool{"string_agg": true, "array_agg": true, "json_agg": true, "jsonb_agg": true}

// UnorderedAggregates returns the order-sensitive aggregates
// (string_agg, array_agg, json_agg, jsonb_agg) that sqlText calls without
// an ORDER BY inside the call, lower case, each once, in the order of
// their first call. Identifiers in strings, comments and quotes do not
// count.
func UnorderedAggregates(sqlText string) []string {
	toks := lex(sqlText)
	var out []string
	next := func(i int) int { // the next token that is not space, or len
		for i < len(toks) && toks[i].kind == tokSpace {
			i++
		}
		return i
	}
	for i, t := range toks {
		name := strings.ToLower(t.text)
		if t.kind != tokIdent || !orderSensitiveAggregates[name] {
			continue
		}
		j := next(i + 1)
		if j == len(toks) || toks[j].text != "(" {
			continue
		}
		depth, ordered := 0, false
		for k := j; k < len(toks); k++ {
			switch {
			case toks[k].kind == tokPunct && strings.Contains(toks[k].text, "("):
				depth += strings.Count(toks[k].text, "(") - strings.Count(toks[k].text, ")")
			case toks[k].kind == tokPunct && strings.Contains(toks[k].text, ")"):
				depth -= strings.Count(toks[k].text, ")")
			case depth == 1 && toks[k].kind == tokIdent && strings.EqualFold(toks[k].text, "order"):
				ordered = true
			}
			if depth <= 0 {
				break
			}
		}
		if !ordered && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}
