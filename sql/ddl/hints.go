package ddl

import (
	"errors"
	"regexp"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/stratadb/strata/sql/sqlerr"
)

// Hints for the syntax of other streaming systems ([dialect-hints] in
// doc.go): Flink SQL, RisingWave and Paimon write a few things Strata
// writes otherwise, and their forms are syntax errors here. The error
// keeps Postgres's code, message and position; its HINT shows Strata's
// form, built from the statement's own tokens where it can be.

// windowTVFs are the window table functions Strata has, with the
// arguments Strata takes after the table and the time column.
var windowTVFs = map[string]string{
	"tumble":   "size [, offset]",
	"hop":      "slide, size",
	"cumulate": "step, size",
	"session":  "gap [, partition column]",
}

// genericWindowHint names every window function's Strata form.
const genericWindowHint = "Strata writes window table functions without TABLE and DESCRIPTOR: FROM TUMBLE(t, col, size), HOP(t, col, slide, size), CUMULATE(t, col, step, size), SESSION(t, col, gap [, partition col])."

// withHint adds a dialect hint to a 42601 error of Postgres's parser when
// the tokens at its position are another system's syntax. Other errors,
// and errors with a hint already, are returned as they are.
func (p *parser) withHint(err error) error {
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Code != sqlerr.SyntaxError || se.Hint != "" || se.Position == 0 {
		return err
	}
	off := charToByte(p.input, se.Position)
	at := -1
	for i, t := range p.toks {
		if t.start == off {
			at = i
			break
		}
	}
	if at < 0 {
		return err
	}
	hint := p.windowHint(at)
	if hint == "" {
		hint = p.procTimeHint(at)
	}
	if hint == "" {
		hint = p.flinkClauseHint(at)
	}
	if hint == "" {
		hint = p.unsupportedClauseHint(at)
	}
	if hint == "" {
		hint = p.flinkDDLHint(at)
	}
	if hint == "" {
		hint = p.backtickHint(at)
	}
	if hint == "" {
		return err
	}
	c := *se
	c.Hint = hint
	return &c
}

// windowHint recognises Flink's window table functions near token at,
// `FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(date_time), INTERVAL '10'
// SECOND))`, and returns Strata's form of the call, `FROM TUMBLE(bid,
// date_time, INTERVAL '10' SECOND)`; the general forms when the call does
// not have the positional shape.
func (p *parser) windowHint(at int) string {
	for j := max(at-2, 0); j <= at+2 && j+2 < len(p.toks); j++ {
		fn := p.toks[j].word()
		if _, ok := windowTVFs[fn]; !ok || p.toks[j+1].kind != tokLParen {
			continue
		}
		end := p.closing(j + 1)
		if end < 0 {
			return genericWindowHint
		}
		flinkish := false
		for k := j + 2; k < end; k++ {
			if w := p.toks[k].word(); w == "table" || w == "descriptor" {
				flinkish = true
			}
		}
		if !flinkish {
			continue
		}
		if call := p.strataWindowCall(fn, j+2, end); call != "" {
			return "Strata writes window table functions without TABLE and DESCRIPTOR: FROM " + call + "."
		}
		return genericWindowHint
	}
	return ""
}

// closing returns the index of the parenthesis that closes the one at
// open, or -1.
func (p *parser) closing(open int) int {
	depth := 0
	for k := open; k < len(p.toks); k++ {
		switch p.toks[k].kind {
		case tokLParen:
			depth++
		case tokRParen:
			depth--
			if depth == 0 {
				return k
			}
		case tokSemi:
			return -1
		}
	}
	return -1
}

// strataWindowCall rewrites the arguments toks[from:end] of a Flink
// window function call, `TABLE t [PARTITION BY k], DESCRIPTOR(col), rest`,
// as Strata's `FN(t, col, rest [, k])`; "" when they have another shape.
func (p *parser) strataWindowCall(fn string, from, end int) string {
	args := p.splitArgs(from, end)
	if len(args) < 3 {
		return ""
	}
	tbl := args[0]
	if len(tbl) < 2 || p.toks[tbl[0]].word() != "table" {
		return ""
	}
	tblEnd := len(tbl)
	partition := ""
	for k := 1; k+1 < len(tbl); k++ {
		if p.toks[tbl[k]].word() == "partition" && p.toks[tbl[k+1]].word() == "by" {
			tblEnd = k
			partition = p.text(tbl[k+2:])
			break
		}
	}
	desc := args[1]
	if len(desc) < 4 || p.toks[desc[0]].word() != "descriptor" || p.toks[desc[1]].kind != tokLParen || p.toks[desc[len(desc)-1]].kind != tokRParen {
		return ""
	}
	parts := []string{p.text(tbl[1:tblEnd]), p.text(desc[2 : len(desc)-1])}
	for _, a := range args[2:] {
		parts = append(parts, p.text(a))
	}
	if partition != "" {
		if fn != "session" {
			return ""
		}
		parts = append(parts, partition)
	}
	for _, s := range parts {
		if s == "" {
			return ""
		}
	}
	return strings.ToUpper(fn) + "(" + strings.Join(parts, ", ") + ")"
}

// splitArgs cuts the token indexes [from, end) at the commas outside
// parentheses.
func (p *parser) splitArgs(from, end int) [][]int {
	var out [][]int
	var cur []int
	depth := 0
	for k := from; k < end; k++ {
		switch p.toks[k].kind {
		case tokLParen:
			depth++
		case tokRParen:
			depth--
		case tokComma:
			if depth == 0 {
				out = append(out, cur)
				cur = nil
				continue
			}
		}
		cur = append(cur, k)
	}
	return append(out, cur)
}

// text returns the input from the first to the last of the token indexes
// idx, as written; "" for none.
func (p *parser) text(idx []int) string {
	if len(idx) == 0 {
		return ""
	}
	return p.input[p.toks[idx[0]].start:p.toks[idx[len(idx)-1]].end]
}

// procTimeHint recognises RisingWave's and Flink's processing-time column,
// `p_time TIMESTAMPTZ AS PROCTIME()` or `p_time AS PROCTIME()`, at token
// at (the AS) and returns Strata's form of the column.
func (p *parser) procTimeHint(at int) string {
	if at+3 >= len(p.toks) || p.toks[at].word() != "as" || p.toks[at+1].word() != "proctime" || p.toks[at+2].kind != tokLParen || p.toks[at+3].kind != tokRParen {
		return ""
	}
	name := "p_time"
	depth := 0
	for k := at - 1; k >= 0; k-- {
		t := p.toks[k]
		if t.kind == tokRParen {
			depth++
			continue
		}
		if depth == 0 && (t.kind == tokComma || t.kind == tokLParen) {
			if k+1 < at {
				name = p.toks[k+1].text
			}
			break
		}
		if t.kind == tokLParen {
			depth--
		}
	}
	return "Strata writes a processing-time column as " + name + " TIMESTAMPTZ GENERATED ALWAYS AS (proctime()) STORED."
}

// optionNameHint is the hint of a syntax error at a '-' inside an option
// name (Paimon's and Flink's merge-engine): such a name is quoted. key is
// the index of the option name's first token under c.
func (p *parser) optionNameHint(c *cursor, key int) string {
	if c.peek().kind != tokMinus {
		return ""
	}
	var b strings.Builder
	for k := key; k < len(c.toks)-1; k++ {
		t := c.toks[k]
		if t.kind != tokMinus && t.kind != tokDot && !t.isLabel() && t.kind != pg_query.Token_ICONST {
			break
		}
		b.WriteString(strings.ToLower(t.text))
	}
	return "An option name that holds a dash is quoted: '" + b.String() + "' = ... (dotted names such as nexmark.table need no quotes)."
}

// flinkClauseHint recognises two Flink clauses at token at: `PRIMARY KEY
// (id) NOT ENFORCED` (at the ENFORCED) and a temporal join's `FOR
// SYSTEM_TIME AS OF` (at the FOR or the SYSTEM_TIME, where Postgres's
// parser stops), and returns Strata's form.
func (p *parser) flinkClauseHint(at int) string {
	if at < 1 {
		return ""
	}
	prev, cur := p.toks[at-1].word(), p.toks[at].word()
	if cur == "for" && at+1 < len(p.toks) && p.toks[at+1].word() == "system_time" {
		prev, cur = cur, "system_time" // Postgres's parser stopped at the FOR
	}
	switch {
	case prev == "not" && cur == "enforced":
		return "Strata's PRIMARY KEY takes no NOT ENFORCED: write PRIMARY KEY (...). A table's key is its upsert key: an INSERT of an existing key replaces the row."
	case prev == "for" && cur == "system_time":
		return "Strata writes a lookup (temporal) join as JOIN LOOKUP(t) AS alias ON alias.key = ..., which reads t at each row's epoch; a whole query reads an older version with AS OF EPOCH n at its end."
	}
	return ""
}

// Hint texts of unsupportedClauseHint.
const (
	matchRecognizeHint    = "MATCH_RECOGNIZE (Flink's complex event processing, CEP) is not supported in Strata."
	emitOnWindowCloseHint = "Strata has no EMIT ON WINDOW CLOSE; drop the clause. A window view's rows are updated every epoch while their window fills, and over a table with a WATERMARK a window's state is freed once the watermark has passed it, its last row staying in the view."
)

// unsupportedClauseHint recognises clauses of other systems that Strata
// has no form of, at or just before token at: Flink's MATCH_RECOGNIZE
// (Postgres's parser takes the keyword for an alias and stops inside its
// parentheses) and RisingWave's EMIT ON WINDOW CLOSE, and says so.
func (p *parser) unsupportedClauseHint(at int) string {
	for k := at; k >= max(at-3, 0); k-- {
		if p.toks[k].word() == "match_recognize" {
			return matchRecognizeHint
		}
	}
	if p.toks[at].word() == "emit" && at+3 < len(p.toks) && p.toks[at+1].word() == "on" && p.toks[at+2].word() == "window" && p.toks[at+3].word() == "close" {
		return emitOnWindowCloseHint
	}
	if p.flinkSet(at) {
		return flinkSetHint
	}
	return ""
}

// stmtStart returns the index of the first token of the statement that
// holds token at: the one after the last semicolon before it.
func (p *parser) stmtStart(at int) int {
	for k := at - 1; k >= 0; k-- {
		if p.toks[k].kind == tokSemi {
			return k + 1
		}
	}
	return 0
}

// flinkSet reports whether token at, where Postgres's parser stopped,
// is in the name of Flink's SET: quoted (SET 'key' = 'value') or
// unquoted with a dash (SET execution.runtime-mode = streaming), which
// Postgres's SET does not take.
func (p *parser) flinkSet(at int) bool {
	s := p.stmtStart(at)
	if p.toks[s].word() != "set" {
		return false
	}
	if at == s+1 && (p.toks[at].kind == pg_query.Token_SCONST || at+1 < len(p.toks) && p.toks[at+1].kind == tokDot) {
		// 'key', or a dotted key whose first part is a reserved word
		// (table.exec.mini-batch.enabled).
		return true
	}
	if p.toks[at].kind != tokMinus {
		return false
	}
	// Only a name's labels, dots and dashes between SET and the dash.
	for k := s + 1; k < at; k++ {
		if t := p.toks[k]; t.kind != tokDot && t.kind != tokMinus && !t.isLabel() {
			return false
		}
	}
	return at > s+1
}

// flinkSetHint answers Flink SQL's SET 'key' = 'value' and SET
// key.with-dash = value, configuration keys that Postgres's SET does not
// take.
const flinkSetHint = "Flink's SET 'key' = 'value' configures its jobs; Strata's are configured by the server's flags (strata start --epoch-interval, --checkpoint-interval, --parallelism) and a view's WITH options, and Strata's SET takes only session parameters, unquoted (SET timezone = 'UTC', SET consistency = ..., SET statement_timeout = '5s')."

// Hints for names of another system that Postgres's parser accepts and a
// later step refuses: a type or a column that Strata calls otherwise.
var (
	// ltzType matches the refusal of Flink's TIMESTAMP_LTZ as a type, in
	// any of its spellings (TIMESTAMP_LTZ, TIMESTAMP_LTZ(3)).
	ltzType = regexp.MustCompile(`(?i)\btype "?timestamp_ltz\b`)
	// windowTime matches the refusal of Flink's window_time column.
	windowTime = regexp.MustCompile(`(?i)^column "?(?:[a-z0-9_$]+\.)?window_time"? does not exist`)
	// undefinedFunction matches the refusal of a function and captures
	// its name: the binder's `function tumble_start(timestamp, interval)
	// does not exist` and the OLAP engine's `function tumble does not
	// exist`.
	undefinedFunction = regexp.MustCompile(`(?i)^function "?([a-z0-9_$]+)"?(?:\(.*\))? does not exist`)
	// tinyintType matches the refusal of Flink's TINYINT type.
	tinyintType = regexp.MustCompile(`(?i)\btype "?tinyint\b`)
	// paimonSystemTable matches the refusal of a Paimon system table,
	// t$snapshots and its kin.
	paimonSystemTable = regexp.MustCompile(`(?i)^relation "[^"]*\$(snapshots|schemas|options|files|manifests|partitions|buckets|tags|branches|consumers|audit_log|binlog|ro|statistics|aggregation_fields|table_indexes)" does not exist`)
)

// groupWindowFamily is the window table function of each of Flink's
// legacy group window functions (GROUP BY TUMBLE(ts, size) and its
// auxiliary functions TUMBLE_START, ...).
var groupWindowFamily = map[string]string{
	"tumble": "tumble", "tumble_start": "tumble", "tumble_end": "tumble", "tumble_rowtime": "tumble", "tumble_proctime": "tumble",
	"hop": "hop", "hop_start": "hop", "hop_end": "hop", "hop_rowtime": "hop", "hop_proctime": "hop",
	"session": "session", "session_start": "session", "session_end": "session", "session_rowtime": "session", "session_proctime": "session",
}

// groupWindowCalls are Strata's window table function calls written with
// the arguments of Flink's group window functions.
var groupWindowCalls = map[string]string{
	"tumble":  "TUMBLE(t, ts, INTERVAL '1' MINUTE)",
	"hop":     "HOP(t, ts, slide, size)",
	"session": "SESSION(t, ts, gap)",
}

// groupWindowHint is the hint for Flink's group window function fn (lower
// case), one of groupWindowFamily's names.
func groupWindowHint(fn string) string {
	family := groupWindowFamily[fn]
	up := strings.ToUpper(family)
	return "Flink's group window functions (GROUP BY " + up + "(...), " + up + "_START, " + up + "_END, " + up + "_ROWTIME) are window table functions in Strata: SELECT window_start, window_end, count(*) FROM " + groupWindowCalls[family] + " GROUP BY window_start, window_end; " + up + "_START is window_start, " + up + "_END is window_end and " + up + "_ROWTIME is window_end - INTERVAL '1' MILLISECOND."
}

// noFunctionHint is Postgres's generic hint of 42883 for a function.
const noFunctionHint = "No function matches the given name and argument types. You might need to add explicit type casts."

// Hint texts of NameHint.
const (
	listaggHint     = "Flink's LISTAGG(x [, delimiter]) is PostgreSQL's string_agg(x, delimiter), which views and SELECT both take: write string_agg(x, ',') (the delimiter is required; LISTAGG's default is ',')."
	ltzHint         = "Flink's TIMESTAMP_LTZ (an instant, shown in the session's time zone) is Strata's TIMESTAMPTZ (timestamp with time zone): write TIMESTAMPTZ, whose precision is microseconds, and SET TIME ZONE to show it in another zone."
	dateFormatHint  = "Flink's DATE_FORMAT(ts, 'yyyy-MM-dd') is PostgreSQL's to_char(ts, 'YYYY-MM-DD'), with PostgreSQL's patterns (YYYY, MM, DD, HH24, MI, SS, MS)."
	ifHint          = "Flink's IF(c, a, b) is CASE WHEN c THEN a ELSE b END in Strata, as in PostgreSQL."
	tinyintHint     = "Strata has no TINYINT: use SMALLINT, its smallest integer type (2 bytes)."
	systemTableHint = "Paimon's system tables (t$snapshots, t$schemas, t$options, ...) are Strata's strata_catalog tables: SELECT * FROM strata_catalog.tables WHERE name = 't' gives a table's committed epoch, snapshot_id and total_records, and strata_catalog.jobs, .checkpoints and .lineage describe the jobs that write it."
	windowTimeHint  = "Strata's window table functions (TUMBLE, HOP, CUMULATE, SESSION) add the columns window_start and window_end; Flink's window_time is window_end - INTERVAL '1' MILLISECOND: group by and select window_end (or that expression) instead."
)

// NameHint adds a dialect hint to an error whose message refuses a name
// of another system ([dialect-hints] in doc.go): Flink's TIMESTAMP_LTZ
// type (`type "timestamp_ltz(3)" does not exist`, 42704), the
// window_time column of Flink's window table functions (`column
// "window_time" does not exist`, 42703), Flink's group window functions
// (TUMBLE in GROUP BY, TUMBLE_START, HOP_END, SESSION_START, ...) and
// LISTAGG (`function listagg(text, unknown) does not exist`, 42883),
// Flink's DATE_FORMAT and IF (42883), TINYINT (42704), and
// Paimon's system tables such as t$snapshots (42P01). The
// code, message and position stay; an error with a hint already (but for
// Postgres's generic hint of 42883, which a function's dialect hint
// replaces), or about something else, is returned as it is. The server calls it on every statement's error,
// whichever step (DDL, binder, the OLAP engine) refused the name.
func NameHint(err error) error {
	var se *sqlerr.Error
	if !errors.As(err, &se) {
		return err
	}
	var hint string
	switch {
	case se.Code == sqlerr.UndefinedFunction && (se.Hint == "" || se.Hint == noFunctionHint):
		m := undefinedFunction.FindStringSubmatch(se.Message)
		if m == nil {
			return err
		}
		switch fn := strings.ToLower(m[1]); {
		case groupWindowFamily[fn] != "":
			hint = groupWindowHint(fn)
		case fn == "listagg":
			hint = listaggHint
		case fn == "date_format":
			hint = dateFormatHint
		case fn == "if":
			hint = ifHint
		default:
			return err
		}
	case se.Code == sqlerr.UndefinedColumn && windowTime.MatchString(se.Message) && (se.Hint == "" || strings.HasPrefix(se.Hint, "Perhaps you meant")):
		// Flink's column, not a typo of a near one.
		hint = windowTimeHint
	case se.Hint != "":
		return err
	case se.Code == sqlerr.UndefinedObject && ltzType.MatchString(se.Message):
		hint = ltzHint
	case se.Code == sqlerr.UndefinedObject && tinyintType.MatchString(se.Message):
		hint = tinyintHint
	case se.Code == sqlerr.UndefinedTable && paimonSystemTable.MatchString(se.Message):
		hint = systemTableHint
	default:
		return err
	}
	c := *se
	c.Hint = hint
	return &c
}

// Hint texts of flinkDDLHint: Flink's and Paimon's DDL that Strata has
// no form of, each with what Strata does instead.
const (
	partitionedByHint  = "Strata's tables have buckets, not partitions: drop PARTITIONED BY and spread the rows with the bucket option, WITH (bucket = '4'), each bucket an LSM tree of its own."
	commentHint        = "Strata does not support COMMENT on a column or a table: drop the COMMENT '...' clause."
	metadataHint       = "Strata does not support METADATA columns (a connector's record timestamp, offset or headers): drop the column, or declare the time a row is ingested as ts TIMESTAMPTZ GENERATED ALWAYS AS (proctime()) STORED."
	localTimeZoneHint  = "Flink's TIMESTAMP(p) WITH LOCAL TIME ZONE (TIMESTAMP_LTZ) is Strata's TIMESTAMPTZ (timestamp with time zone): write TIMESTAMPTZ, whose precision is microseconds, and SET TIME ZONE to show it in another zone."
	nestedTypeHint     = "Strata has no ARRAY, MAP, MULTISET or ROW column types (its types are SMALLINT, INT, BIGINT, REAL, DOUBLE PRECISION, NUMERIC(p,s), BOOLEAN, TEXT, VARCHAR(n), CHAR(n), BYTEA, UUID, DATE, TIME, TIMESTAMP(p), TIMESTAMPTZ, INTERVAL and JSONB): store a nested value as JSONB."
	oneCatalogHint     = "Strata has one catalog with one database, dev (schema public), so there is no CREATE CATALOG or USE: create tables, sources and views directly, and SHOW TABLES lists them."
	backtickQuoteHint  = "Strata quotes identifiers with double quotes, as PostgreSQL does: write \"name\", not `name`."
	dynamicOptionsHint = "Strata takes no per-query table options: to read an older version, end the query with AS OF EPOCH n (strata_catalog.tables gives each table's committed epoch and snapshot_id)."
)

// AlterTableHint answers ALTER TABLE in any form, which Strata does not
// have; the server gives it to the refusal of an ALTER TABLE that parses.
const AlterTableHint = "Strata has no ALTER TABLE: a table's columns and options are fixed by its CREATE TABLE, so create a new table WITH the new options and copy the rows with INSERT INTO new SELECT * FROM t."

// nestedTypes are Flink's composite type names, written with <...>.
var nestedTypes = map[string]bool{"array": true, "map": true, "multiset": true, "row": true}

// flinkDDLHint recognises Flink's and Paimon's DDL at token at, where
// Postgres's parser stopped: PARTITIONED BY, COMMENT '...', METADATA
// columns, computed columns other than PROCTIME(), TIMESTAMP(p) WITH
// LOCAL TIME ZONE, ARRAY<...>/MAP<...>/ROW<...> types, CREATE CATALOG,
// USE, ALTER TABLE ... SET ('k' = 'v') and CREATE TABLE ... LIKE; it
// returns what Strata does instead, "" for anything else.
func (p *parser) flinkDDLHint(at int) string {
	tok := func(k int) token {
		if k < 0 || k >= len(p.toks) {
			return token{kind: eof}
		}
		return p.toks[k]
	}
	s := p.stmtStart(at)
	w := p.toks[at].word()
	switch {
	case w == "partitioned" && tok(at+1).word() == "by":
		return partitionedByHint
	case w == "comment" && tok(at+1).kind == pg_query.Token_SCONST:
		return commentHint
	case w == "metadata":
		return metadataHint
	case w == "with" && tok(at+1).word() == "local" && tok(at+2).word() == "time" && tok(at+3).word() == "zone":
		return localTimeZoneHint
	case nestedTypes[w] && tok(at+1).text == "<", p.toks[at].text == "<" && nestedTypes[tok(at-1).word()]:
		return nestedTypeHint
	case at == s && w == "use", at == s+1 && w == "catalog" && tok(s).word() == "create":
		return oneCatalogHint
	case tok(s).word() == "alter" && tok(s+1).word() == "table":
		return AlterTableHint
	case w == "like" && tok(s).word() == "create":
		if open, name := p.createColumnList(s); open == at && at+1 < len(p.toks) && p.toks[at+1].isColID() {
			other := p.toks[at+1].text
			if at+3 < len(p.toks) && p.toks[at+2].kind == tokDot {
				other = p.input[p.toks[at+1].start:p.toks[at+3].end]
			}
			return "Strata has no CREATE TABLE ... LIKE: write the columns out (SHOW CREATE TABLE " + other + " prints " + other + "'s), or copy its rows as well with CREATE TABLE " + name + " AS SELECT * FROM " + other + "."
		}
	case w == "as":
		return p.computedColumnHint(s, at)
	}
	return ""
}

// createColumnList finds, in the statement starting at token s, CREATE
// [TEMPORARY] TABLE|SOURCE [IF NOT EXISTS] name and returns the index of
// the token after the name (the column list's parenthesis when there is
// one) and the name as written; -1 when the statement is not one.
func (p *parser) createColumnList(s int) (int, string) {
	c := &cursor{p: p, toks: append(p.toks[s:len(p.toks):len(p.toks)], token{kind: eof})}
	if !c.acceptWord("create") {
		return -1, ""
	}
	if !c.acceptWord("temporary") {
		c.acceptWord("temp")
	}
	if !c.acceptWord("table") && !c.acceptWord("source") {
		return -1, ""
	}
	c.acceptWord("if", "not", "exists")
	first := c.i
	if _, _, err := c.name(); err != nil {
		return -1, ""
	}
	return s + c.i, p.input[c.toks[first].start:c.toks[c.i-1].end]
}

// computedColumnHint recognises Flink's computed column, `b AS a + 1` in
// a CREATE TABLE's column list, at token at (the AS), and returns the
// view that computes it; PROCTIME() has its own hint (procTimeHint).
func (p *parser) computedColumnHint(s, at int) string {
	open, table := p.createColumnList(s)
	if open < 0 || p.toks[open].kind != tokLParen || at < open+2 {
		return ""
	}
	// The AS must follow the element's first token, at depth 1.
	prev := p.toks[at-2]
	if prev.kind != tokComma && at-2 != open {
		return ""
	}
	if !p.toks[at-1].isColID() {
		return ""
	}
	depth := 0
	for k := open; k < at-1; k++ {
		switch p.toks[k].kind {
		case tokLParen:
			depth++
		case tokRParen:
			depth--
		}
	}
	if depth != 1 {
		return ""
	}
	end := at + 1
	for d := 0; end < len(p.toks); end++ {
		k := p.toks[end].kind
		if d == 0 && (k == tokComma || k == tokRParen || k == tokSemi) {
			break
		}
		switch k {
		case tokLParen:
			d++
		case tokRParen:
			d--
		}
	}
	expr := "expr"
	if end > at+1 {
		expr = p.input[p.toks[at+1].start:p.toks[end-1].end]
	}
	name := p.toks[at-1].text
	return "Strata's tables have no computed columns but the processing-time one (GENERATED ALWAYS AS (proctime()) STORED): drop " + name + " and compute it in a view, CREATE MATERIALIZED VIEW v AS SELECT *, " + expr + " AS " + name + " FROM " + table + "."
}

// backtickHint returns backtickQuoteHint when the statement holding token
// at quotes a name with backticks (MySQL's and Flink's quoting), which
// Postgres's scanner does not know.
func (p *parser) backtickHint(at int) string {
	for k := p.stmtStart(at); k < len(p.toks) && p.toks[k].kind != tokSemi; k++ {
		if p.toks[k].text == "`" {
			return backtickQuoteHint
		}
	}
	return ""
}
