package olap

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/stratadb/strata/sql/pglex"
	"github.com/stratadb/strata/sql/sqlerr"
)

// PostgreSQL's words for DuckDB's messages ([error-map] in doc.go).

// pgMessage is a DuckDB message said as PostgreSQL says it.
// toCharHint is the hint of a to_char call of the wrong shape.
const toCharHint = "to_char takes a value and a text template, as in to_char(sum(amount), '999.99') or to_char(ts, 'YYYY-MM-DD')."

type pgMessage struct {
	code, message, hint, detail string
}

// msgRule rewrites one family of DuckDB messages: m is the match of re
// against the message's first line (without DuckDB's "<Kind> Error: "
// prefix), rest the lines after it.
type msgRule struct {
	re *regexp.Regexp
	fn func(m []string, rest string) pgMessage
}

// Hints PostgreSQL gives with 42883 undefined_function.
const (
	noFunctionHint = "No function matches the given name and argument types. You might need to add explicit type casts."
	noOperatorHint = "No operator matches the given name and argument types. You might need to add explicit type casts."
)

// windowOnly are the functions that exist only as window functions: DuckDB
// calls them unknown scalar functions without OVER.
var windowOnly = map[string]bool{
	"row_number": true, "rank": true, "dense_rank": true, "percent_rank": true, "cume_dist": true,
	"ntile": true, "lag": true, "lead": true, "first_value": true, "last_value": true, "nth_value": true,
}

// castTypeNames name the physical types of DuckDB's cast messages
// ("Could not convert string 'x' to INT32"); a cast to UUID reports INT128,
// its storage, since no PostgreSQL cast reaches a 128-bit integer.
var castTypeNames = map[string]string{
	"INT8": "smallint", "INT16": "smallint", "INT32": "integer", "INT64": "bigint", "INT128": "uuid",
	"UINT8": "smallint", "UINT16": "integer", "UINT32": "bigint", "UINT64": "numeric", "UINT128": "numeric",
	"BOOL": "boolean", "FLOAT": "real", "DOUBLE": "double precision",
}

// overflowNames name the types of DuckDB's integer overflow messages as
// PostgreSQL's "<type> out of range" does.
var overflowNames = map[string]string{
	"INT8": "smallint", "INT16": "smallint", "INT32": "integer", "INT64": "bigint",
	"TINYINT": "smallint", "SMALLINT": "smallint", "INTEGER": "integer", "BIGINT": "bigint",
}

var msgRules = []msgRule{
	{regexp.MustCompile(`^Referenced column "(.+)" not found in FROM clause`), func(m []string, rest string) pgMessage {
		out := pgMessage{code: sqlerr.UndefinedColumn, message: `column "` + m[1] + `" does not exist`}
		// The candidates DuckDB lists, when the query's scope is not
		// known (pgColumnHint): the closest as PostgreSQL judges.
		var rel scopeRel
		rel.cols = candidateColumns(rest)
		out.hint = closestColumnHint(strings.ToLower(m[1]), []scopeRel{rel})
		return out
	}},
	{regexp.MustCompile(`^Referenced column "(.+)" was not found because the FROM clause is missing`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.UndefinedColumn, message: `column "` + m[1] + `" does not exist`}
	}},
	{regexp.MustCompile(`^(?:Values list|Table|Binding) "(.+)" does not have a column named "(.+)"`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.UndefinedColumn, message: "column " + m[1] + "." + m[2] + " does not exist"}
	}},
	{regexp.MustCompile(`^Referenced table "(.+)" not found`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.UndefinedTable, message: `missing FROM-clause entry for table "` + m[1] + `"`}
	}},
	{regexp.MustCompile(`^(?:Scalar |Aggregate |Table |Macro |Pragma )?Function with name "?([^"!\s]+)"? does not exist`), func(m []string, _ string) pgMessage {
		name := strings.ToLower(m[1])
		if windowOnly[name] {
			return pgMessage{code: sqlerr.WrongObjectType, message: "window function " + name + " requires an OVER clause"}
		}
		return pgMessage{code: sqlerr.UndefinedFunction, message: "function " + name + " does not exist", hint: noFunctionHint}
	}},
	{regexp.MustCompile(`^(?:Table|View) with name "?([^"!\s]+)"? does not exist`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.UndefinedTable, message: `relation "` + m[1] + `" does not exist`}
	}},
	{regexp.MustCompile(`^Type with name "?([^"!\s]+)"? does not exist`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.UndefinedObject, message: `type "` + strings.ToLower(m[1]) + `" does not exist`}
	}},
	{regexp.MustCompile(`^Schema with name "?([^"!\s]+)"? does not exist`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.InvalidSchemaName, message: `schema "` + m[1] + `" does not exist`}
	}},
	{regexp.MustCompile(`^column "?(.+?)"? must appear in the GROUP BY clause or (?:must be part of|be used in) an aggregate function`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.GroupingError, message: `column "` + m[1] + `" must appear in the GROUP BY clause or be used in an aggregate function`}
	}},
	{regexp.MustCompile(`^No function matches the given name and argument types '(.+)'`), func(m []string, _ string) pgMessage {
		name, args, ok := splitCall(m[1])
		if !ok {
			return pgMessage{code: sqlerr.UndefinedFunction, message: "function " + pgTypeWords(m[1]) + " does not exist", hint: noFunctionHint}
		}
		if isOperator(name) {
			return pgMessage{code: sqlerr.UndefinedFunction, message: "operator does not exist: " + operatorCall(name, args), hint: noOperatorHint}
		}
		if strings.EqualFold(name, "strata_to_char_check") && len(args) == 2 {
			// to_char's template check (pgfuncs.go): its first argument
			// is the template; the value's type is not in the message.
			return pgMessage{code: sqlerr.UndefinedFunction, message: "function to_char(any, " + pgTypeName(args[0]) + ") does not exist", hint: toCharHint}
		}
		return pgMessage{code: sqlerr.UndefinedFunction, message: "function " + functionCall(name, args) + " does not exist", hint: noFunctionHint}
	}},
	{regexp.MustCompile(`^Macro (\w+)\(\) does not support the supplied arguments`), func(m []string, _ string) pgMessage {
		name := strings.ToLower(m[1])
		hint := noFunctionHint
		if name == "to_char" {
			hint = toCharHint
		}
		return pgMessage{code: sqlerr.UndefinedFunction, message: "function " + name + " does not exist with these arguments", hint: hint}
	}},
	{regexp.MustCompile(`^Could not choose a best candidate function for the function call "(.+)"`), func(m []string, _ string) pgMessage {
		name, args, ok := splitCall(m[1])
		if ok && isOperator(name) {
			return pgMessage{code: sqlerr.AmbiguousFunction, message: "operator is not unique: " + operatorCall(name, args),
				hint: "Could not choose a best candidate operator. You might need to add explicit type casts."}
		}
		return pgMessage{code: sqlerr.AmbiguousFunction, message: "function " + functionCall(name, args) + " is not unique",
			hint: "Could not choose a best candidate function. You might need to add explicit type casts."}
	}},
	{regexp.MustCompile(`^Cannot compare values of type (.+) and (.+) in IN/ANY/ALL clause`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.UndefinedFunction, message: "operator does not exist: " + pgTypeName(m[1]) + " = " + pgTypeName(m[2]), hint: noOperatorHint}
	}},
	{regexp.MustCompile(`^Could not convert string ['"](.*)['"] to (\S+?)(?: when casting from source column .*)?$`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.InvalidTextRepresentation, message: "invalid input syntax for type " + castTypeName(m[2]) + `: "` + m[1] + `"`}
	}},
	{regexp.MustCompile(`^invalid (date|timestamp|time) field format: "(.*)", expected format`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.InvalidDatetimeFormat, message: "invalid input syntax for type " + m[1] + `: "` + m[2] + `"`}
	}},
	{regexp.MustCompile(`^(?:date|time|timestamp) field value out of range: "(.*?)"`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.DatetimeFieldOverflow, message: `date/time field value out of range: "` + m[1] + `"`}
	}},
	{regexp.MustCompile(`^Date out of range: (.*)`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.DatetimeFieldOverflow, message: "date field value out of range: " + m[1]}
	}},
	{regexp.MustCompile(`^Overflow in (?:\w+ )?of (\w+)`), func(m []string, _ string) pgMessage {
		if n, ok := overflowNames[m[1]]; ok {
			return pgMessage{code: sqlerr.NumericValueOutOfRange, message: n + " out of range"}
		}
		return pgMessage{code: sqlerr.NumericValueOutOfRange, message: "numeric field overflow"}
	}},
	{regexp.MustCompile(`^Type (\S+) with value (.+) can't be cast because the value is out of range for the destination type (\S+)`), func(m []string, _ string) pgMessage {
		if n, ok := overflowNames[m[3]]; ok {
			return pgMessage{code: sqlerr.NumericValueOutOfRange, message: n + " out of range"}
		}
		return pgMessage{code: sqlerr.NumericValueOutOfRange, message: "value " + m[2] + " is out of range for type " + castTypeName(m[3])}
	}},
	{regexp.MustCompile(`^Casting value "(.*)" to type (.+) failed: value is out of range`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.NumericValueOutOfRange, message: "numeric field overflow", detail: "The value " + m[1] + " does not fit " + pgTypeName(m[2]) + "."}
	}},
	{regexp.MustCompile(`^Type (\S+) with value '(.*)' can't be cast to the destination type (.+?)(?: when casting from source column .*)?$`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.InvalidTextRepresentation, message: "invalid input syntax for type " + pgTypeName(m[3]) + `: "` + m[2] + `"`}
	}},
	{regexp.MustCompile(`^Failed to cast value to numerical: (.*?)(?: when casting from source column .*)?$`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.InvalidTextRepresentation, message: `invalid input syntax for type numeric: "` + m[1] + `"`}
	}},
	{regexp.MustCompile(`^Cannot mix values of type (.+) and (.+) in (COALESCE|CASE) (?:operator|expression)`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.DatatypeMismatch, message: m[3] + " types " + pgTypeName(m[1]) + " and " + pgTypeName(m[2]) + " cannot be matched"}
	}},
	{regexp.MustCompile(`^Unimplemented type for cast \((.+) -> (.+)\)`), func(m []string, _ string) pgMessage {
		return pgMessage{code: "42846", message: "cannot cast type " + pgTypeName(m[1]) + " to " + pgTypeName(m[2])}
	}},
	{regexp.MustCompile(`^Malformed JSON`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.InvalidTextRepresentation, message: "invalid input syntax for type json"}
	}},
	{regexp.MustCompile(`^Ambiguous reference to column name "(.+?)"`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.AmbiguousColumn, message: `column reference "` + m[1] + `" is ambiguous`}
	}},
	{regexp.MustCompile(`^Ambiguous reference to table "(.+?)"`), func(m []string, _ string) pgMessage {
		return pgMessage{code: "42712", message: `table name "` + m[1] + `" specified more than once`}
	}},
	{regexp.MustCompile(`^Duplicate CTE name "(.+?)"`), func(m []string, _ string) pgMessage {
		return pgMessage{code: "42712", message: `WITH query name "` + m[1] + `" specified more than once`}
	}},
	{regexp.MustCompile(`^extract specifier "(.+)" not recognized`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.InvalidParameterValue, message: `unit "` + m[1] + `" not recognized`}
	}},
	{regexp.MustCompile(`^LIMIT/OFFSET cannot be negative`), func(m []string, _ string) pgMessage {
		return pgMessage{code: "2201W", message: "LIMIT and OFFSET must not be negative"}
	}},
	{regexp.MustCompile(`^(ORDER|GROUP) (?:BY )?term out of range - should be between 1 and (\d+)`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.InvalidColumnReference, message: m[1] + " BY position is not in select list", hint: "The select list has " + m[2] + " columns."}
	}},
	{regexp.MustCompile(`^Column "(.+)" does not exist on (left|right) side of join`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.UndefinedColumn, message: `column "` + m[1] + `" specified in USING clause does not exist in ` + m[2] + " table"}
	}},
	{regexp.MustCompile(`^SELECT locking clause is not supported`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.FeatureNotSupported, message: "SELECT ... FOR UPDATE and FOR SHARE are not supported",
			hint: "Every read sees one consistent version of committed epochs and locks nothing; drop the locking clause."}
	}},
	{regexp.MustCompile(`^More than one row returned by a subquery used as an expression`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.CardinalityViolation, message: "more than one row returned by a subquery used as an expression"}
	}},
	{regexp.MustCompile(`^Subquery returns \d+ columns - expected 1`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.SyntaxError, message: "subquery must return only one column"}
	}},
	{regexp.MustCompile(`^Function "(.+)" is a table function but it was used as a scalar function`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.WrongObjectType, message: "function " + m[1] + " returns a table: call it in the FROM clause"}
	}},
	{regexp.MustCompile(`^Set operations can only apply to expressions with the same number of result columns`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.SyntaxError, message: "each UNION, INTERSECT or EXCEPT query must have the same number of columns"}
	}},
	{regexp.MustCompile(`^aggregate function calls cannot be nested`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.GroupingError, message: "aggregate function calls cannot be nested"}
	}},
	{regexp.MustCompile(`^(WHERE|JOIN|GROUP BY) clause cannot contain aggregates`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.GroupingError, message: "aggregate functions are not allowed in " + m[1]}
	}},
	{regexp.MustCompile(`^(missing \)|missing \]|unexpected \)|trailing \\|invalid escape sequence|invalid character class(?: range)?|invalid nested repetition operator|missing argument to repetition operator|bad repetition operator|invalid repeat count|invalid named capture group|invalid perl operator)`), func(m []string, _ string) pgMessage {
		// RE2's message ends with the pattern, which is the rewritten one
		// ([regex-substring]): only its kind is said.
		return pgMessage{code: sqlerr.InvalidRegularExpression, message: "invalid regular expression: " + m[1]}
	}},
	{regexp.MustCompile(`^interval cannot be 0`), func(m []string, _ string) pgMessage {
		return pgMessage{code: sqlerr.InvalidParameterValue, message: "step size cannot equal zero"}
	}},
}

// translate says a DuckDB message (prefix and statement echo removed) as
// PostgreSQL does. ok is false for messages no rule knows: those keep
// their text with DuckDB's type names replaced by PostgreSQL's, only their
// first line, and code.
func translate(msg, code string) (pgMessage, bool) {
	first, rest, _ := strings.Cut(msg, "\n")
	first = strings.TrimSpace(first)
	for _, r := range msgRules {
		if m := r.re.FindStringSubmatch(first); m != nil {
			return r.fn(m, rest), true
		}
	}
	first = strings.TrimSuffix(first, "!")
	return pgMessage{code: code, message: pgTypeWords(first)}, false
}

// candidateColumns returns the columns DuckDB's "Candidate bindings:"
// line in s lists, best first, each as PostgreSQL names it: an unaliased
// select item by its function's name (count_star() is count,
// pgColumnName), a qualifier kept. Items PostgreSQL names ?column? (an
// operator's or a cast's text) cannot be referenced and are left out.
func candidateColumns(s string) []string {
	_, after, ok := strings.Cut(s, "Candidate bindings:")
	if !ok {
		return nil
	}
	line, _, _ := strings.Cut(after, "\n")
	var out []string
	for {
		_, rest, ok := strings.Cut(line, `"`)
		if !ok {
			return out
		}
		word, rest, ok := strings.Cut(rest, `"`)
		if !ok {
			return out
		}
		line = rest
		qual, col := "", word
		if i := strings.IndexByte(word, '.'); i > 0 && i < strings.IndexByte(word+"(", '(') {
			qual, col = word[:i+1], word[i+1:]
		}
		if col = pgColumnName(col); col != "?column?" {
			out = append(out, qual+col)
		}
	}
}

// splitCall splits DuckDB's "name(T1, T2)" into the name and the argument
// types.
func splitCall(call string) (name string, args []string, ok bool) {
	i := strings.Index(call, "(")
	if i <= 0 || !strings.HasSuffix(call, ")") {
		return call, nil, false
	}
	name, inner := call[:i], call[i+1:len(call)-1]
	depth, start := 0, 0
	for j, r := range inner {
		switch r {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth == 0 {
				args = append(args, strings.TrimSpace(inner[start:j]))
				start = j + 1
			}
		}
	}
	if strings.TrimSpace(inner) != "" {
		args = append(args, strings.TrimSpace(inner[start:]))
	}
	return name, args, true
}

// isOperator reports whether a DuckDB function name is an operator (+, ~~).
func isOperator(name string) bool {
	return strings.IndexFunc(name, func(r rune) bool {
		return r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}) < 0
}

// operatorCall writes "text + integer" (or "- text") for an operator and
// its DuckDB argument types.
func operatorCall(op string, args []string) string {
	switch len(args) {
	case 1:
		return op + " " + pgTypeName(args[0])
	case 2:
		return pgTypeName(args[0]) + " " + op + " " + pgTypeName(args[1])
	}
	return functionCall(op, args)
}

// functionCall writes "sum(text)" for a function and its DuckDB argument
// types.
func functionCall(name string, args []string) string {
	pg := make([]string, len(args))
	for i, a := range args {
		pg[i] = pgTypeName(a)
	}
	return strings.ToLower(name) + "(" + strings.Join(pg, ", ") + ")"
}

// castTypeName is PostgreSQL's name of a type in a DuckDB cast message;
// DECIMAL(p,s) is numeric, as PostgreSQL names the input type.
func castTypeName(t string) string {
	if n, ok := castTypeNames[t]; ok {
		return n
	}
	if strings.HasPrefix(t, "DECIMAL(") {
		return "numeric"
	}
	return pgTypeName(t)
}

// logicalTypeNames are PostgreSQL's names of DuckDB's logical types, as
// [type-map] maps them; STRING_LITERAL and NULL are PostgreSQL's unknown.
var logicalTypeNames = map[string]string{
	"VARCHAR": "text", "STRING_LITERAL": "unknown", `"NULL"`: "unknown", "NULL": "unknown",
	"INTEGER_LITERAL": "integer", "TINYINT": "smallint", "SMALLINT": "smallint", "INTEGER": "integer",
	"BIGINT": "bigint", "HUGEINT": "numeric", "UTINYINT": "smallint", "USMALLINT": "integer",
	"UINTEGER": "bigint", "UBIGINT": "numeric", "UHUGEINT": "numeric", "BIGNUM": "numeric",
	"DECIMAL": "numeric", "FLOAT": "real", "DOUBLE": "double precision", "BOOLEAN": "boolean",
	"BLOB": "bytea", "JSON": "jsonb", "DATE": "date", "INTERVAL": "interval", "UUID": "uuid",
	"TIMESTAMP": "timestamp without time zone", "TIMESTAMP WITH TIME ZONE": "timestamp with time zone",
	"TIME": "time without time zone", "TIME WITH TIME ZONE": "time with time zone",
	"TIMESTAMP_S": "timestamp without time zone", "TIMESTAMP_MS": "timestamp without time zone",
	"TIMESTAMP_NS": "timestamp without time zone", "ANY": "anyelement",
	"INT8": "smallint", "INT16": "smallint", "INT32": "integer", "INT64": "bigint", "INT128": "numeric",
}

// pgTypeName is PostgreSQL's name of one DuckDB type: DECIMAL(10,2) is
// numeric(10,2), VARCHAR[] text[]; an unknown name is lower-cased.
func pgTypeName(t string) string {
	t = strings.TrimSpace(t)
	if elem, ok := strings.CutSuffix(t, "[]"); ok {
		return pgTypeName(elem) + "[]"
	}
	if args, ok := strings.CutPrefix(t, "DECIMAL("); ok {
		return "numeric(" + args
	}
	if n, ok := logicalTypeNames[t]; ok {
		return n
	}
	return strings.ToLower(t)
}

// typeWord finds DuckDB's type names in free text.
// DECIMAL(p,s) ends in ")", after which \b would need a word character.
var typeWord = regexp.MustCompile(`\b(?:DECIMAL\(\d+, ?\d+\)|(?:TIMESTAMP WITH TIME ZONE|TIME WITH TIME ZONE|VARCHAR|STRING_LITERAL|INTEGER_LITERAL|HUGEINT|UHUGEINT|UBIGINT|UINTEGER|USMALLINT|UTINYINT|TINYINT|BIGNUM|BLOB|INT128|INT64|INT32|INT16|INTEGER|BIGINT|SMALLINT|DOUBLE|BOOLEAN|TIMESTAMP|INTERVAL)\b)(?:\[\])?`)

// pgTypeWords replaces DuckDB's type names in free text with PostgreSQL's.
func pgTypeWords(s string) string {
	return typeWord.ReplaceAllStringFunc(s, pgTypeName)
}

// Messages that name the thing they are about, as PostgreSQL words them,
// and the shape of its reference in the query: "rel" a relation (a
// qualifier before it is taken in), "col" a column, "qual" a qualifier
// followed by a dot, "qcol" the qualified column t.c, "fn" a function
// name followed by "(".
var namedMessages = []struct {
	re   *regexp.Regexp
	kind string
}{
	{regexp.MustCompile(`^relation "([^"]+)" does not exist`), "rel"},
	{regexp.MustCompile(`^column "([^"]+)" does not exist`), "col"},
	{regexp.MustCompile(`^column ([^". ]+)\.([^". ]+) does not exist`), "qcol"},
	{regexp.MustCompile(`^missing FROM-clause entry for table "([^"]+)"`), "qual"},
	{regexp.MustCompile(`^column "([^"]+)" must appear in the GROUP BY clause`), "col"},
	{regexp.MustCompile(`^function ([^(" ]+)\(`), "fn"},
	{regexp.MustCompile(`^function ([^(" ]+) does not exist`), "fn"},
	{regexp.MustCompile(`^window function ([^(" ]+) requires an OVER clause`), "fn"},
	{regexp.MustCompile(`^invalid input syntax for type [^:"]+: "(.*)"$`), "lit"},
}

// stringValue returns the value of a string literal token ('...',
// E'...', $$...$$).
func (t token) stringValue() (string, bool) {
	if t.kind != tokString {
		return "", false
	}
	var b strings.Builder
	switch {
	case strings.HasPrefix(t.text, "'"):
		if _, err := pglex.ScanQuoted(t.text, 1, '\'', false, &b); err != nil {
			return "", false
		}
	case strings.HasPrefix(t.text, "E'") || strings.HasPrefix(t.text, "e'"):
		if _, err := pglex.ScanQuoted(t.text, 2, '\'', true, &b); err != nil {
			return "", false
		}
	default:
		tag, end, ok := pglex.DollarQuoted(t.text)
		if !ok || end != len(t.text) {
			return "", false
		}
		return t.text[len(tag) : end-len(tag)], true
	}
	return b.String(), true
}

// NamePosition returns the 1-based character position in query of the
// relation, column or function that a PostgreSQL message names (`relation
// "orderz" does not exist`), or of the string literal whose text does not
// convert to a type (`invalid input syntax for type bigint: "abc"`), as
// PostgreSQL reports it,
// so that a client can point at it: its first occurrence as a whole
// token, never inside a string literal (for a name), a comment or a
// longer identifier; for a relation written with its schema
// (public.orderz), the schema's start. A value that comes from a table's
// rows rather than a literal of the query is found nowhere (0), as
// PostgreSQL gives such a run-time error no position. Names
// compare as PostgreSQL resolves them (bare identifiers folded to lower
// case, quoted ones exact). 0 when the message names nothing or the name
// does not occur.
func NamePosition(query, message string) int {
	for _, nm := range namedMessages {
		m := nm.re.FindStringSubmatch(message)
		if m == nil {
			continue
		}
		toks := lex(query)
		// idx[i] is the byte offset of toks[i]; sig lists the tokens
		// that are not space or comments.
		var sig []int
		idx := make([]int, len(toks))
		off := 0
		for i, t := range toks {
			idx[i] = off
			off += len(t.text)
			if t.kind != tokSpace {
				sig = append(sig, i)
			}
		}
		is := func(k int, name string) bool {
			if k < 0 || k >= len(sig) {
				return false
			}
			n, ok := toks[sig[k]].identName()
			return ok && n == name
		}
		punct := func(k int, p string) bool {
			return k >= 0 && k < len(sig) && toks[sig[k]].kind == tokPunct && toks[sig[k]].text == p
		}
		at := -1
		for k := range sig {
			switch nm.kind {
			case "rel":
				if schema, rel, ok := strings.Cut(m[1], "."); ok {
					if is(k, schema) && punct(k+1, ".") && is(k+2, rel) {
						at = k
					}
					break
				}
				if is(k, m[1]) && !punct(k+1, ".") && !punct(k+1, "(") {
					at = k
					if punct(k-1, ".") && k >= 2 {
						if _, ok := toks[sig[k-2]].identName(); ok {
							at = k - 2
						}
					}
				}
			case "col":
				if is(k, m[1]) && !punct(k+1, "(") && !punct(k+1, ".") {
					at = k
				}
			case "qcol":
				if is(k, m[1]) && punct(k+1, ".") && is(k+2, m[2]) {
					at = k
				}
			case "qual":
				if is(k, m[1]) && punct(k+1, ".") {
					at = k
				}
			case "fn":
				if is(k, strings.ToLower(m[1])) && punct(k+1, "(") {
					at = k
				}
			case "lit":
				// A string literal whose text does not convert to
				// the type it is compared with or cast to: PostgreSQL
				// places the error at the literal.
				if v, ok := toks[sig[k]].stringValue(); ok && v == m[1] {
					at = k
				}
			}
			if at >= 0 {
				return utf8.RuneCountInString(query[:idx[sig[at]]]) + 1
			}
		}
		return 0
	}
	return 0
}
