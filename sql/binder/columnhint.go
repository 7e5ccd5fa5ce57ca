package binder

import "github.com/stratadb/strata/internal/suggest"

// maxColumnDistance is the largest edit distance at which a column is
// suggested for a mistyped name, PostgreSQL's MAX_FUZZY_DISTANCE
// (parse_relation.c).
const maxColumnDistance = 3

// columnHint returns the hint of `column "name" does not exist`: the one
// column of s (of relation qual when it is set) nearest to name,
// qualified by its relation as PostgreSQL and the OLAP engine's messages
// suggest it (`Perhaps you meant to reference the column
// "bid.auction".`), or the two nearest when two relations tie; "" when
// no column is within maxColumnDistance edits, more than half of name's
// characters would change, two columns of one relation or more than two
// are equally near.
func columnHint(s *scope, qual, name string) string {
	bestDist := maxColumnDistance + 1
	var best []scopeCol
	for _, c := range s.cols {
		if qual != "" && c.table != qual || qual == "" && c.hidden {
			continue
		}
		d := suggest.Levenshtein(name, c.name)
		if d > len([]rune(name))/2 {
			continue
		}
		switch {
		case d < bestDist:
			best, bestDist = []scopeCol{c}, d
		case d == bestDist:
			best = append(best, c)
		}
	}
	ref := func(c scopeCol) string {
		if c.table == "" {
			return c.name
		}
		return c.table + "." + c.name
	}
	switch {
	case len(best) == 1:
		return `Perhaps you meant to reference the column "` + ref(best[0]) + `".`
	case len(best) == 2 && best[0].table != best[1].table:
		return `Perhaps you meant to reference the column "` + ref(best[0]) + `" or the column "` + ref(best[1]) + `".`
	}
	return ""
}
