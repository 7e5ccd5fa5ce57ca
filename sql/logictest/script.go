package logictest

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/plan"
)

// Script is one parsed .slt file: its queries, each with the dataset
// (tables and input changelogs) in force where it appears.
type Script struct {
	// Path names the file in messages.
	Path    string
	Queries []*Query
}

// Table is a declared input relation.
type Table struct {
	Rel *plan.Relation
	// Line is where the table was declared.
	Line int
}

// Change is one changelog row.
type Change struct {
	Kind types.RowKind
	Row  types.Row
}

// Dataset is the tables and their changelogs that a run of queries reads.
// Epochs[i] of a changelog holds the changes of epoch i+1; every input is
// padded with empty epochs to the dataset's longest.
type Dataset struct {
	Tables []*Table
	Inputs map[string][][]Change
}

// NumEpochs returns the number of epochs of the longest input.
func (d *Dataset) NumEpochs() int {
	n := 0
	for _, in := range d.Inputs {
		n = max(n, len(in))
	}
	return n
}

// Table returns the table called name, or nil.
func (d *Dataset) Table(name string) *Table {
	for _, t := range d.Tables {
		if t.Rel.Name == name {
			return t
		}
	}
	return nil
}

// clone returns a copy that can take new tables and inputs without
// changing d (queries already parsed keep d).
func (d *Dataset) clone() *Dataset {
	out := &Dataset{Tables: append([]*Table(nil), d.Tables...), Inputs: map[string][][]Change{}}
	for k, v := range d.Inputs {
		out.Inputs[k] = v
	}
	return out
}

// Skip kinds: why a query is not compared.
const (
	SkipUnsupported = "unsupported" // the planner cannot run it yet
	SkipBug         = "bug"         // the view is wrong; the reason says how
)

// Query is one query block.
type Query struct {
	Line int
	SQL  string
	// Oracle, when set, is the SQL DuckDB runs instead of SQL (a dialect
	// difference: the same question spelled in DuckDB's SQL).
	Oracle string
	// Postgres, when set, is the SQL the opt-in Postgres check runs
	// instead of SQL (string_agg without ORDER BY joins in arrival order
	// there, in sort order in a view).
	Postgres string
	// Expected holds the final rows when the block gives them ("----"),
	// in the row format of the package doc, sorted.
	Expected    []string
	HasExpected bool
	// ErrCode is the SQLSTATE the statement must fail with, when set;
	// ErrPos, when not 0, the 1-based character position the error must
	// point at ("query error 42703 at 8").
	ErrCode string
	ErrPos  int
	// NoOracle says DuckDB cannot ask the same question ("query
	// nooracle"): only the expected rows are compared.
	NoOracle bool
	// Quiet requires that no epoch's output of a sink subtask both
	// retracts and adds the same row ("query quiet"): a view whose
	// result did not change emits nothing (no -U x, +U x noise).
	Quiet bool
	// Multiset runs the view as the engine stores a view without a
	// unique key whose changes retract ("query multiset"): the plan
	// grouped by all of its columns with its multiplicity
	// (planner.Multiset), read back as a downstream view reads it, each
	// row as often as its multiplicity (plan.Repeat).
	Multiset bool
	// Skip is SkipUnsupported or SkipBug when the query is not compared,
	// with SkipReason saying why.
	Skip, SkipReason string
	Data             *Dataset
	// TimeZone is the session time zone the view and the oracle run in
	// (the "timezone" directive; UTC by default).
	TimeZone *time.Location
}

// Where returns "file:line" of the query.
func (s *Script) Where(q *Query) string { return fmt.Sprintf("%s:%d", s.Path, q.Line) }

// ParseScript parses the text of an .slt file (see the package doc).
// Errors wrap base.ErrInvalidArgument and name path and line.
func ParseScript(path, text string) (*Script, error) {
	p := &scriptParser{path: path, data: &Dataset{Inputs: map[string][][]Change{}}}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		p.lines = append(p.lines, sc.Text())
	}
	if err := p.run(); err != nil {
		return nil, err
	}
	return &Script{Path: path, Queries: p.queries}, nil
}

type scriptParser struct {
	path    string
	lines   []string
	pos     int // index of the next line
	data    *Dataset
	shared  bool // data is referenced by a parsed query: clone before changing
	queries []*Query
	skip    [2]string
	zone    *time.Location
}

func (p *scriptParser) errf(line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s: %w", p.path, line, fmt.Sprintf(format, args...), base.ErrInvalidArgument)
}

// mutable returns the dataset to change, cloning it when queries hold it.
func (p *scriptParser) mutable() *Dataset {
	if p.shared {
		p.data = p.data.clone()
		p.shared = false
	}
	return p.data
}

// block returns the lines from the current position up to (not
// including) the next blank line or a line equal to one of stops.
func (p *scriptParser) block(stops ...string) []string {
	var out []string
	for p.pos < len(p.lines) {
		l := p.lines[p.pos]
		t := strings.TrimSpace(l)
		if t == "" {
			break
		}
		stop := false
		for _, s := range stops {
			if t == s {
				stop = true
			}
		}
		if stop {
			break
		}
		out = append(out, l)
		p.pos++
	}
	return out
}

func (p *scriptParser) run() error {
	for p.pos < len(p.lines) {
		line := p.pos + 1
		t := strings.TrimSpace(p.lines[p.pos])
		p.pos++
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		word, rest, _ := strings.Cut(t, " ")
		rest = strings.TrimSpace(rest)
		var err error
		switch word {
		case "table":
			err = p.table(line, rest)
		case "input":
			err = p.input(line, rest)
		case "random":
			err = p.random(line, rest)
		case "skipif":
			kind, reason, _ := strings.Cut(rest, " ")
			if kind != SkipUnsupported && kind != SkipBug {
				return p.errf(line, "skipif takes %q or %q, not %q", SkipUnsupported, SkipBug, kind)
			}
			if strings.TrimSpace(reason) == "" {
				return p.errf(line, "skipif %s needs a reason", kind)
			}
			p.skip = [2]string{kind, strings.TrimSpace(reason)}
		case "timezone":
			p.zone, err = time.LoadLocation(rest)
			if err != nil {
				return p.errf(line, "timezone: %v", err)
			}
		case "query":
			err = p.query(line, rest)
		default:
			return p.errf(line, "unknown directive %q", word)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// table parses "NAME (col TYPE [NOT NULL], ..., PRIMARY KEY (a, b))
// [UPSERT]".
func (p *scriptParser) table(line int, rest string) error {
	upsert := false
	if low := strings.ToLower(strings.TrimSpace(rest)); strings.HasSuffix(low, ") upsert") {
		upsert = true
		rest = strings.TrimSpace(rest)
		rest = strings.TrimSpace(rest[:len(rest)-len("upsert")])
	}
	name, body, ok := strings.Cut(rest, "(")
	name = strings.TrimSpace(name)
	if !ok || name == "" || !strings.HasSuffix(body, ")") {
		return p.errf(line, "table: want NAME (col TYPE, ..., PRIMARY KEY (...))")
	}
	rel := &plan.Relation{Name: name}
	var pk []string
	var wm string
	for _, part := range splitTop(strings.TrimSuffix(body, ")"), ',') {
		part = strings.TrimSpace(part)
		low := strings.ToLower(part)
		if strings.HasPrefix(low, "watermark for ") {
			wm = part
			continue
		}
		if strings.HasPrefix(low, "primary key") {
			inner := strings.TrimSpace(part[len("primary key"):])
			if !strings.HasPrefix(inner, "(") || !strings.HasSuffix(inner, ")") {
				return p.errf(line, "table %s: PRIMARY KEY wants (columns)", name)
			}
			for _, c := range strings.Split(inner[1:len(inner)-1], ",") {
				pk = append(pk, strings.TrimSpace(c))
			}
			continue
		}
		col, typ, ok := strings.Cut(part, " ")
		if !ok {
			return p.errf(line, "table %s: column %q has no type", name, part)
		}
		typ = strings.TrimSpace(typ)
		notNull := false
		if strings.HasSuffix(strings.ToLower(typ), " not null") {
			notNull = true
			typ = strings.TrimSpace(typ[:len(typ)-len(" not null")])
		}
		tt, err := types.ParseType(typ)
		if err != nil {
			return p.errf(line, "table %s column %s: %v", name, col, err)
		}
		rel.Columns = append(rel.Columns, plan.Column{Name: strings.ToLower(col), Type: tt, NotNull: notNull})
	}
	if wm != "" {
		w, err := parseWatermark(rel, wm)
		if err != nil {
			return p.errf(line, "table %s: %v", name, err)
		}
		rel.Watermark = w
	}
	if upsert {
		if len(pk) == 0 {
			return p.errf(line, "table %s: an upsert changelog needs a primary key", name)
		}
		rel.Upsert = true
	}
	for _, c := range pk {
		i := columnIndex(rel, c)
		if i < 0 {
			return p.errf(line, "table %s: primary key column %q is not a column", name, c)
		}
		rel.PrimaryKey = append(rel.PrimaryKey, i)
		rel.Columns[i].NotNull = true
	}
	d := p.mutable()
	for i, t := range d.Tables {
		if t.Rel.Name == name {
			d.Tables = append(d.Tables[:i:i], d.Tables[i+1:]...)
			break
		}
	}
	d.Tables = append(d.Tables, &Table{Rel: rel, Line: line})
	d.Inputs[name] = nil
	return nil
}

// parseWatermark reads "WATERMARK FOR col AS col - INTERVAL 'text'".
func parseWatermark(rel *plan.Relation, s string) (*plan.Watermark, error) {
	f := strings.Fields(s)
	if len(f) < 7 || !strings.EqualFold(f[3], "as") || f[4] != f[2] || f[5] != "-" || !strings.EqualFold(f[6], "interval") {
		return nil, fmt.Errorf("want WATERMARK FOR col AS col - INTERVAL '...', not %q", s)
	}
	c := columnIndex(rel, f[2])
	if c < 0 {
		return nil, fmt.Errorf("watermark column %q is not a column", f[2])
	}
	text := strings.TrimSpace(strings.Join(f[7:], " "))
	d, err := types.ParseText(types.Interval, strings.Trim(text, "'"), time.UTC)
	if err != nil {
		return nil, fmt.Errorf("watermark delay %s: %w", text, err)
	}
	return &plan.Watermark{Column: c, Delay: d.Interval()}, nil
}

func columnIndex(rel *plan.Relation, name string) int {
	for i, c := range rel.Columns {
		if c.Name == strings.ToLower(name) {
			return i
		}
	}
	return -1
}

// input parses a hand-written changelog block.
func (p *scriptParser) input(line int, name string) error {
	tab := p.data.Table(name)
	if tab == nil {
		return p.errf(line, "input for undeclared table %q", name)
	}
	st := newLiveState(tab.Rel)
	var epochs [][]Change
	var cur []Change
	open := false
	start := p.pos
	for i, l := range p.block() {
		ln := start + i + 1
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "#") {
			continue
		}
		if t == "epoch" {
			epochs = append(epochs, cur)
			cur, open = nil, false
			continue
		}
		kindText, vals, _ := strings.Cut(t, " ")
		kind, err := types.ParseRowKind(kindText)
		if err != nil {
			return p.errf(ln, "input %s: %v", name, err)
		}
		row, err := parseRow(tab.Rel, vals)
		if err != nil {
			return p.errf(ln, "input %s: %q: %v", name, t, err)
		}
		if err := st.apply(Change{Kind: kind, Row: row}); err != nil {
			return p.errf(ln, "input %s: %q: %v", name, t, err)
		}
		cur = append(cur, Change{Kind: kind, Row: row})
		open = true
	}
	if open {
		epochs = append(epochs, cur)
	}
	if err := st.pendingUpdate(); err != nil {
		return p.errf(line, "input %s: %v", name, err)
	}
	p.mutable().Inputs[name] = epochs
	return nil
}

// random parses "NAME rows=N epochs=E seed=S updates=F deletes=F
// [nulls=F] [extremes=F]" and generates the changelog.
func (p *scriptParser) random(line int, rest string) error {
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return p.errf(line, "random: want NAME rows=N epochs=E seed=S ...")
	}
	tab := p.data.Table(fields[0])
	if tab == nil {
		return p.errf(line, "random input for undeclared table %q", fields[0])
	}
	g := GenSpec{Rows: 20, Epochs: 5, Seed: 1, Nulls: 0.1}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return p.errf(line, "random: %q is not key=value", f)
		}
		var err error
		switch k {
		case "rows":
			g.Rows, err = strconv.Atoi(v)
		case "epochs":
			g.Epochs, err = strconv.Atoi(v)
		case "seed":
			g.Seed, err = strconv.ParseUint(v, 10, 64)
		case "updates":
			g.Updates, err = strconv.ParseFloat(v, 64)
		case "deletes":
			g.Deletes, err = strconv.ParseFloat(v, 64)
		case "nulls":
			g.Nulls, err = strconv.ParseFloat(v, 64)
		case "extremes":
			g.Extremes, err = strconv.ParseFloat(v, 64)
		default:
			return p.errf(line, "random: unknown parameter %q", k)
		}
		if err != nil {
			return p.errf(line, "random: %s: %v", k, err)
		}
	}
	if g.Rows < 0 || g.Epochs < 1 || g.Updates < 0 || g.Deletes < 0 || g.Updates+g.Deletes >= 1 {
		return p.errf(line, "random: want rows >= 0, epochs >= 1 and updates + deletes < 1")
	}
	p.mutable().Inputs[tab.Rel.Name] = Generate(tab.Rel, g)
	return nil
}

// query parses "query [error CODE]", the SQL, optional "duckdb" and
// "postgres" sections and an optional "----" section of expected rows.
func (p *scriptParser) query(line int, rest string) error {
	q := &Query{Line: line, Data: p.data, Skip: p.skip[0], SkipReason: p.skip[1], TimeZone: p.zone}
	if q.TimeZone == nil {
		q.TimeZone = time.UTC
	}
	p.skip = [2]string{}
	p.shared = true
	for f := strings.Fields(rest); len(f) > 0; f = f[1:] {
		switch {
		case f[0] == "error" && len(f) > 1:
			q.ErrCode = f[1]
			f = f[1:]
			if len(f) > 2 && f[1] == "at" {
				pos, err := strconv.Atoi(f[2])
				if err != nil || pos < 1 {
					return p.errf(line, "query error %s at: want a position, not %q", q.ErrCode, f[2])
				}
				q.ErrPos = pos
				f = f[2:]
			}
		case f[0] == "nooracle":
			q.NoOracle = true
		case f[0] == "quiet":
			q.Quiet = true
		case f[0] == "multiset":
			q.Multiset = true
		default:
			return p.errf(line, "query takes \"nooracle\", \"quiet\", \"multiset\" or \"error SQLSTATE [at POSITION]\", not %q", rest)
		}
	}
	q.SQL = strings.Join(p.block("----", "duckdb", "postgres"), "\n")
	if q.SQL == "" {
		return p.errf(line, "query without SQL")
	}
	for p.pos < len(p.lines) {
		switch strings.TrimSpace(p.lines[p.pos]) {
		case "duckdb":
			p.pos++
			q.Oracle = strings.Join(p.block("----", "postgres"), "\n")
			continue
		case "postgres":
			p.pos++
			q.Postgres = strings.Join(p.block("----", "duckdb"), "\n")
			continue
		case "----":
			p.pos++
			q.HasExpected = true
			for _, r := range p.block() {
				q.Expected = append(q.Expected, strings.TrimSpace(r))
			}
		}
		break
	}
	if q.ErrCode != "" && q.HasExpected {
		return p.errf(line, "a query that must fail has no expected rows")
	}
	if q.NoOracle && (!q.HasExpected || q.Oracle != "") {
		return p.errf(line, "a nooracle query needs expected rows and no duckdb section")
	}
	p.queries = append(p.queries, q)
	return nil
}

// splitTop splits s on sep outside parentheses and single quotes.
func splitTop(s string, sep byte) []string {
	var out []string
	depth, start, quoted := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == sep && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// parseRow parses "v, v, ..." (NULL, a 'quoted' string with a doubled
// quote for a quote, or a bare word) into a row of rel's column types.
func parseRow(rel *plan.Relation, text string) (types.Row, error) {
	parts := splitTop(text, ',')
	if len(parts) != len(rel.Columns) {
		return nil, fmt.Errorf("%d values for %d columns", len(parts), len(rel.Columns))
	}
	row := make(types.Row, len(parts))
	for i, part := range parts {
		v := strings.TrimSpace(part)
		if strings.EqualFold(v, "null") {
			if rel.Columns[i].NotNull {
				return nil, fmt.Errorf("NULL in NOT NULL column %s", rel.Columns[i].Name)
			}
			continue
		}
		if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
			v = strings.ReplaceAll(v[1:len(v)-1], "''", "'")
		}
		d, err := types.ParseText(rel.Columns[i].Type, v, time.UTC)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", rel.Columns[i].Name, err)
		}
		row[i] = d
	}
	return row, nil
}

// FormatRow renders a row in the expected-rows format: values as
// Postgres's text output (time zone UTC), NULL as NULL, joined by "|".
func FormatRow(r types.Row) string { return formatRowIn(r, time.UTC) }

// formatRowIn is FormatRow with TIMESTAMPTZ values shown in loc.
func formatRowIn(r types.Row, loc *time.Location) string {
	parts := make([]string, len(r))
	for i, d := range r {
		if d.IsNull() {
			parts[i] = "NULL"
			continue
		}
		parts[i] = types.FormatText(d, loc)
	}
	return strings.Join(parts, "|")
}
