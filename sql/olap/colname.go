package olap

import (
	"strings"

	"github.com/stratadb/strata/sql/pglex"
)

// pgColumnName renames a DuckDB result column the way PostgreSQL names an
// unaliased select item ([column-names] in doc.go): DuckDB names an
// expression by its text ("count_star()", "sum(v)", "(a + 1)") where
// PostgreSQL uses the function's name ("count", "sum") or "?column?".
// Names that look like identifiers (user aliases, column names) are kept.
func pgColumnName(name string) string {
	if name == "count_star()" {
		return "count"
	}
	if i := strings.IndexByte(name, '('); i > 0 && strings.HasSuffix(name, ")") && plainName(name[:i]) {
		fn := strings.ToLower(name[:i])
		if j := strings.LastIndexByte(fn, '.'); j >= 0 {
			fn = fn[j+1:]
		}
		if fn == avgMacroName {
			return "avg"
		}
		if fn == "cast" || fn == "try_cast" || fn == "regexp_full_match" || fn == "list_value" || strings.HasPrefix(fn, "strata_") {
			// casts and DuckDB's spellings of operators and literals
			return "?column?"
		}
		return fn
	}
	for _, c := range name {
		if strings.ContainsRune("()+-*/%<>=!|&~^,'\"[]:", c) {
			return "?column?"
		}
	}
	return name
}

// plainName reports whether s is a possibly qualified identifier.
func plainName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !pglex.IsIdentChar(s[i]) && s[i] != '.' {
			return false
		}
	}
	return pglex.IsIdentStart(s[0])
}
