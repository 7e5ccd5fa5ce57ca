package suggest

import (
	"fmt"
	"strings"

	"github.com/stratadb/strata/internal/base"
)

// MaxDistance is the largest edit distance at which a known name is
// suggested for a mistyped one.
const MaxDistance = 2

// minPrefix is the shortest name that is suggested the one known name it
// starts.
const minPrefix = 3

// Distance is the edit distance between a and b in characters: the
// Levenshtein distance (each insertion, deletion and substitution costs
// 1) where a swap of two adjacent characters also costs 1, the commonest
// typing slip ('prot' for 'port'; the optimal string alignment distance).
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// d[i][j] is the distance between ra[:i] and rb[:j].
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// Levenshtein is the Levenshtein distance between a and b in characters:
// each insertion, deletion and substitution costs 1, a swap of two
// adjacent characters 2 (PostgreSQL's varstr_levenshtein with unit costs,
// which its "Perhaps you meant" column hints use).
func Levenshtein(a, b string) int {
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

// Nearest returns the one name of known that name most likely stands for
// (the package doc says when a name is near), or "" when none is near or
// two are equally near. Case is ignored (a known name that differs from
// name only in case is suggested); name itself is never returned.
func Nearest(name string, known []string) string {
	lower := strings.ToLower(name)
	n := len([]rune(lower))
	best, bestDist, tie := "", MaxDistance+1, false
	for _, k := range known {
		if k == name {
			continue
		}
		d := Distance(lower, strings.ToLower(k))
		if d > MaxDistance || 2*d >= n {
			continue
		}
		switch {
		case d < bestDist:
			best, bestDist, tie = k, d, false
		case d == bestDist && k != best:
			tie = true
		}
	}
	if best != "" {
		if tie {
			return ""
		}
		return best
	}
	if n < minPrefix {
		return ""
	}
	for _, k := range known {
		if kl := strings.ToLower(k); len(kl) > len(lower) && strings.HasPrefix(kl, lower) {
			if best != "" && best != k {
				return ""
			}
			best = k
		}
	}
	return best
}

// UnknownOptionError is the refusal of an option that is none of a
// connector's (or the table store's) options. It wraps
// base.ErrInvalidArgument and, when a known option is near the unknown
// one, carries it as Suggestion and as its hint (SQLHint).
type UnknownOptionError struct {
	// Prefix starts the message: the thing refusing, "datagen: ", or "".
	Prefix string
	// Option is the option refused.
	Option string
	// Known lists the options taken, as the message shows them; an entry
	// holding '<' is a pattern (fields.<column>.<kind>) and is never
	// suggested.
	Known []string
	// Suggestion is the known option nearest to Option, "" when none is
	// near (Nearest).
	Suggestion string
}

// UnknownOption returns the refusal of option name, which is none of
// known: `<prefix>unknown option "name" (known: a, b, ...)`, suggesting the
// option of known (or of more, options that are taken but not listed)
// nearest to name.
func UnknownOption(prefix, name string, known []string, more ...string) *UnknownOptionError {
	cands := make([]string, 0, len(known)+len(more))
	for _, k := range known {
		if !strings.Contains(k, "<") {
			cands = append(cands, k)
		}
	}
	cands = append(cands, more...)
	return &UnknownOptionError{Prefix: prefix, Option: name, Known: known, Suggestion: Nearest(name, cands)}
}

// Error returns the message, which lists the known options; the
// suggestion is the hint's.
func (e *UnknownOptionError) Error() string {
	return fmt.Sprintf("%sunknown option %q (known: %s)", e.Prefix, e.Option, strings.Join(e.Known, ", "))
}

// Unwrap returns base.ErrInvalidArgument.
func (e *UnknownOptionError) Unwrap() error { return base.ErrInvalidArgument }

// SQLHint returns the hint of the refusal: OptionHint of the suggestion.
func (e *UnknownOptionError) SQLHint() string { return OptionHint(e.Suggestion) }

// OptionHint is the hint that suggests option name, in PostgreSQL's words
// for a mistyped option (`Perhaps you meant the option "host".`); "" for
// no name.
func OptionHint(name string) string {
	if name == "" {
		return ""
	}
	return `Perhaps you meant the option "` + name + `".`
}

// WithHint returns err carrying hint as its SQLHint; err itself when
// hint is "". The message and what err wraps are err's.
func WithHint(err error, hint string) error {
	if hint == "" {
		return err
	}
	return &hinted{err: err, hint: hint}
}

// hinted is an error with a hint of its own (WithHint).
type hinted struct {
	err  error
	hint string
}

func (h *hinted) Error() string   { return h.err.Error() }
func (h *hinted) Unwrap() error   { return h.err }
func (h *hinted) SQLHint() string { return h.hint }
