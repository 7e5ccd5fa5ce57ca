package binder

// maxColumnDistance is the largest edit distance at which a column is
// suggested for a mistyped name, PostgreSQL's MAX_FUZZY_DISTANCE
// (parse_relation.c).
const maxColumnDistance = 3

// columnHint returns the hint of `column "name" does not exist`: the one
// column of s (of relation qual when it is set) nearest to name, as
// PostgreSQL and the OLAP engine's messages suggest it (`Perhaps you meant
// to reference the column "auction".`), or "" when no column is within
// maxColumnDistance edits, more than half of name's characters would
// change, or two columns are equally near. A qualified name gets a
// qualified suggestion.
func columnHint(s *scope, qual, name string) string {
	best, bestDist, tie := "", maxColumnDistance+1, false
	for _, c := range s.cols {
		if qual != "" && c.table != qual || qual == "" && c.hidden {
			continue
		}
		d := editDistance(name, c.name)
		if d > len([]rune(name))/2 {
			continue
		}
		switch {
		case d < bestDist:
			best, bestDist, tie = c.name, d, false
		case d == bestDist && c.name != best:
			tie = true
		}
	}
	if best == "" || tie {
		return ""
	}
	if qual != "" {
		best = qual + "." + best
	}
	return `Perhaps you meant to reference the column "` + best + `".`
}

// editDistance is the Levenshtein distance between a and b in characters,
// each insertion, deletion and substitution costing 1.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
