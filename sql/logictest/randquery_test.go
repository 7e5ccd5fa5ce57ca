package logictest

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

var (
	randSeed    = flag.Uint64("randseed", 1, "seed of TestRandomQueries")
	randQueries = flag.Int("randqueries", 80, "number of queries TestRandomQueries generates")
	randRows    = flag.Int("randrows", 60, "rows inserted into each table of TestRandomQueries (over 6 epochs)")
)

// randSchema is the dataset of TestRandomQueries: two keyed changelogs
// with updates and deletes, one append-only input, values from small
// domains so that filters, groups and joins hit.
const randSchema = `
table t (id INT, k INT, g INT, v INT, n NUMERIC(8,2), s TEXT, b BOOLEAN, d DATE, ts TIMESTAMP, f DOUBLE, PRIMARY KEY (id))
table u (id INT, k INT, g INT, v INT, n NUMERIC(8,2), s TEXT, b BOOLEAN, d DATE, ts TIMESTAMP, f DOUBLE, PRIMARY KEY (id))
table w (k INT, v INT, s TEXT)
random t rows=%d epochs=6 seed=%d updates=0.3 deletes=0.15 nulls=0.15
random u rows=%d epochs=6 seed=%d updates=0.3 deletes=0.15 nulls=0.15
random w rows=%d epochs=6 seed=%d nulls=0.15

query
SELECT 1 FROM t
`

// TestRandomQueries generates queries from a small grammar (filters,
// projections with the scalar functions both engines spell alike, joins
// of every kind with residuals, GROUP BY with FILTERed and DISTINCT
// aggregates, HAVING, a view over a view) and runs each like a corpus
// query: parallelism 1 and 2, compared with DuckDB at every epoch. A
// failure prints the SQL; -randseed and -randqueries explore further.
func TestRandomQueries(t *testing.T) {
	seed := *randSeed
	n := *randRows
	s, err := ParseScript("random", fmt.Sprintf(randSchema, n, seed, n*5/6, seed+1, n*2/3, seed+2))
	if err != nil {
		t.Fatal(err)
	}
	data := s.Queries[0].Data
	db, err := OpenOracle()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r := &Runner{Oracle: db}
	if testing.Short() {
		r.Parallelisms = []int{1}
	}
	g := &queryGen{rng: rand.New(rand.NewPCG(seed, 99))}
	n = *randQueries
	if testing.Short() {
		n /= 4
	}
	script := &Script{Path: fmt.Sprintf("random(seed %d)", seed)}
	for i := range n {
		sql := g.query()
		script.Queries = append(script.Queries, &Query{Line: i + 1, SQL: sql, Oracle: g.oracle(sql), Data: data, TimeZone: s.Queries[0].TimeZone})
	}
	failed := 0
	for _, o := range r.RunScript(context.Background(), script) {
		if o.Status == Failed {
			failed++
			t.Error(o.Detail)
		}
	}
	t.Logf("%d random queries, %d failed", n, failed)
}

// colRef matches a column reference of a generated expression.
var colRef = regexp.MustCompile(`\b[tuwx]\.[a-z]`)

// queryGen writes random queries over randSchema.
type queryGen struct {
	rng *rand.Rand
	// rels are the aliases in scope and their tables.
	rels []string
	// ordered pairs the string_agg calls of the query being written with
	// their spelling for DuckDB (ORDER BY inside).
	ordered [][2]string
}

// oracle returns DuckDB's spelling of sql, the last query written.
func (g *queryGen) oracle(sql string) string {
	if len(g.ordered) == 0 {
		return ""
	}
	for _, p := range g.ordered {
		sql = strings.ReplaceAll(sql, p[0], p[1])
	}
	return sql
}

func (g *queryGen) pick(xs ...string) string { return xs[g.rng.IntN(len(xs))] }

func (g *queryGen) col(kind string) string {
	rel := g.rels[g.rng.IntN(len(g.rels))]
	cols := map[string][]string{"int": {"k", "g", "v"}, "num": {"n", "f"}, "text": {"s"}, "bool": {"b"}, "date": {"d"}, "ts": {"ts"}}[kind]
	if rel == "w" {
		cols = map[string][]string{"int": {"k", "v"}, "num": {"v"}, "text": {"s"}, "bool": {"(v > 2)"}, "date": {"(DATE '2024-03-01' + v)"},
			"ts": {"(TIMESTAMP '2024-03-10 00:00:00' + v * INTERVAL '1 hour')"}}[kind]
	}
	c := cols[g.rng.IntN(len(cols))]
	if strings.HasPrefix(c, "(") {
		return strings.Replace(c, "v", rel+".v", 1)
	}
	return rel + "." + c
}

// expr returns an expression of the kind at nesting depth.
func (g *queryGen) expr(kind string, depth int) string {
	if depth <= 0 || g.rng.IntN(3) == 0 {
		switch kind {
		case "int":
			if g.rng.IntN(5) == 0 {
				return fmt.Sprint(g.rng.IntN(7) - 2)
			}
		case "num":
			if g.rng.IntN(5) == 0 {
				return g.pick("1.5", "0.25", "-2.00")
			}
		case "text":
			if g.rng.IntN(5) == 0 {
				return g.pick("'a'", "'b'", "''")
			}
		case "bool":
			return g.pred(0)
		}
		return g.col(kind)
	}
	d := depth - 1
	switch kind {
	case "int":
		switch g.rng.IntN(12) {
		case 8:
			return g.pick("greatest", "least") + "(" + g.expr("int", d) + ", " + g.expr("int", d) + ")"
		case 9:
			return "CASE " + g.col("int") + " WHEN 1 THEN " + g.expr("int", d) + " WHEN 2 THEN 20 END"
		case 10:
			return "CAST(" + g.expr("num", d) + " AS INT)"
		case 11:
			return "position('a' in " + g.expr("text", d) + ")"
		case 0:
			return "(" + g.expr("int", d) + " + " + g.expr("int", d) + ")"
		case 1:
			return "(" + g.expr("int", d) + " - " + g.expr("int", d) + ")"
		case 2:
			return "(" + g.expr("int", d) + " / NULLIF(" + g.expr("int", d) + ", 0))"
		case 3:
			return "(" + g.expr("int", d) + " % NULLIF(" + g.expr("int", d) + ", 0))"
		case 4:
			return "abs(" + g.expr("int", d) + ")"
		case 5:
			return "COALESCE(" + g.expr("int", d) + ", " + g.expr("int", d) + ")"
		case 6:
			return "CASE WHEN " + g.pred(d) + " THEN " + g.expr("int", d) + " ELSE " + g.expr("int", d) + " END"
		case 7:
			return "CAST(extract(" + g.pick("hour", "day", "dow") + " FROM " + g.expr("ts", d) + ") AS INT)"
		default:
			return "length(" + g.expr("text", d) + ")"
		}
	case "num":
		switch g.rng.IntN(5) {
		case 0:
			return "(" + g.expr("num", d) + " + " + g.expr("int", d) + ")"
		case 1:
			return "(" + g.expr("num", d) + " * " + g.expr("int", d) + ")"
		case 2:
			// round(DOUBLE PRECISION, INTEGER) does not exist.
			return "round(CAST(" + g.expr("num", d) + " AS NUMERIC(12,4)), 1)"
		case 3:
			return "NULLIF(" + g.expr("num", d) + ", 0)"
		default:
			return "abs(" + g.expr("num", d) + ")"
		}
	case "text":
		switch g.rng.IntN(9) {
		case 5:
			return "replace(" + g.expr("text", d) + ", 'a', 'xy')"
		case 6:
			return g.pick("left", "right") + "(" + g.expr("text", d) + ", 2)"
		case 7:
			return "concat_ws('-', " + g.expr("text", d) + ", " + g.expr("int", d) + ")"
		case 8:
			return "CASE WHEN " + g.pred(d) + " THEN " + g.expr("text", d) + " END"
		case 0:
			return "(" + g.expr("text", d) + " || " + g.expr("text", d) + ")"
		case 1:
			return "lower(" + g.expr("text", d) + ")"
		case 2:
			return "substr(" + g.expr("text", d) + ", 1, 2)"
		case 3:
			return "COALESCE(" + g.expr("text", d) + ", 'none')"
		default:
			return "CAST(" + g.expr("int", d) + " AS TEXT)"
		}
	case "date":
		switch g.rng.IntN(3) {
		case 0:
			return "CAST(" + g.expr("ts", d) + " AS DATE)"
		}
		return "(" + g.col("date") + " + " + fmt.Sprint(g.rng.IntN(5)) + ")"
	case "ts":
		switch g.rng.IntN(4) {
		case 0:
			return "date_trunc('" + g.pick("hour", "day", "month") + "', " + g.expr("ts", d) + ")"
		case 1:
			return "(" + g.expr("ts", d) + " + INTERVAL '" + g.pick("90 minutes", "1 day", "-2 hours") + "')"
		case 2:
			return "CAST(" + g.col("date") + " AS TIMESTAMP)"
		}
		return g.col("ts")
	}
	return g.pred(d)
}

// pred returns a boolean expression.
func (g *queryGen) pred(depth int) string {
	if depth > 0 {
		switch g.rng.IntN(4) {
		case 0:
			return "(" + g.pred(depth-1) + " AND " + g.pred(depth-1) + ")"
		case 1:
			return "(" + g.pred(depth-1) + " OR " + g.pred(depth-1) + ")"
		case 2:
			return "NOT " + g.pred(depth-1)
		}
	}
	switch g.rng.IntN(9) {
	case 0:
		return g.expr("int", 1) + " " + g.pick("<", "<=", "=", "<>", ">", ">=") + " " + g.expr("int", 1)
	case 1:
		return g.expr("num", 1) + " " + g.pick("<", ">", "=") + " " + g.expr("num", 0)
	case 2:
		return g.expr("text", 1) + " " + g.pick("<", "=", ">=") + " " + g.expr("text", 0)
	case 3:
		return g.col("text") + " LIKE " + g.pick("'a%'", "'%b'", "'_'")
	case 4:
		return g.expr("int", 0) + " IS " + g.pick("", "NOT ") + "NULL"
	case 5:
		return g.expr("int", 0) + " BETWEEN " + g.expr("int", 0) + " AND " + g.expr("int", 0)
	case 6:
		return g.col("int") + " IN (1, 2, 5)"
	case 7:
		return g.col("date") + " > DATE '2024-03-01'"
	case 8:
		return g.expr("ts", 1) + " " + g.pick("<", ">=") + " TIMESTAMP '2024-03-10 06:00:00'"
	}
	return g.col("bool")
}

// from picks the FROM clause and sets the aliases in scope.
func (g *queryGen) from() string {
	switch g.rng.IntN(8) {
	case 5:
		g.rels = []string{"t", "u", "w"}
		return "t " + g.pick("JOIN", "LEFT JOIN", "FULL JOIN") + " u ON t.k = u.k " + g.pick("JOIN", "LEFT JOIN", "RIGHT JOIN") + " w ON " + g.pick("u.g", "t.g", "u.v") + " = w.k"
	case 6:
		// A derived table that filters and renames, joined.
		g.rels = []string{"u"}
		p := g.pred(1)
		g.rels = []string{"t", "x"}
		return "t " + g.pick("JOIN", "LEFT JOIN", "RIGHT JOIN") + " (SELECT u.id, u.k, u.g, u.v + 1 AS v, u.n, u.s, u.b, u.d, u.ts, u.f FROM u WHERE " + p + ") AS x ON t.g = x.g"
	case 7:
		// A derived aggregate joined back.
		g.rels = []string{"t", "x"}
		return "t " + g.pick("JOIN", "LEFT JOIN", "FULL JOIN") + " (SELECT u.k, count(*) AS g, sum(u.v) AS v, max(u.n) AS n, min(u.s) AS s, bool_or(u.b) AS b, max(u.d) AS d, min(u.ts) AS ts, sum(u.f) AS f FROM u GROUP BY u.k) AS x ON t.k = x.k"
	case 0, 1:
		g.rels = []string{"t"}
		return "t"
	case 2:
		g.rels = []string{"w"}
		return "w"
	}
	right := g.pick("u", "w")
	g.rels = []string{"t", right}
	on := "t.k = " + right + ".k"
	switch g.rng.IntN(6) {
	case 0:
		// No equality: a nested-loop join.
		on = "t.k " + g.pick("<", "<>", ">=") + " " + right + ".k + 1"
	case 1:
		on = "(t.k = " + right + ".k OR t.v = " + right + ".v)"
	case 2:
		on = "t.k IS NOT DISTINCT FROM " + right + ".k"
	}
	if right == "u" && g.rng.IntN(3) == 0 {
		on += " AND t.g = u.g"
	}
	if g.rng.IntN(3) == 0 {
		// A residual over columns: a constant one folds the ON clause
		// (the corpus tests that).
		p := g.pred(0)
		for !colRef.MatchString(p) {
			p = g.pred(0)
		}
		on += " AND " + p
	}
	return "t " + g.pick("JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN") + " " + right + " ON " + on
}

func (g *queryGen) agg() string {
	var call string
	switch g.rng.IntN(10) {
	case 0:
		call = "count(*)"
	case 1:
		call = "count(" + g.expr("int", 1) + ")"
	case 2:
		call = "sum(" + g.expr(g.pick("int", "num"), 1) + ")"
	case 3:
		call = g.pick("min", "max") + "(" + g.expr(g.pick("int", "num", "text", "date", "ts"), 1) + ")"
	case 4:
		call = "avg(" + g.expr(g.pick("int", "num"), 1) + ")"
	case 5:
		call = "count(DISTINCT " + g.expr(g.pick("int", "text"), 1) + ")"
	case 6:
		call = g.pick("bool_and", "bool_or") + "(" + g.pred(1) + ")"
	case 7:
		call = "sum(DISTINCT " + g.expr("int", 0) + ")"
	case 8:
		// A view joins in the values' sort order; DuckDB is told to.
		e := g.expr("text", 1)
		call = "string_agg(" + e + ", ',')"
		if colRef.MatchString(e) {
			g.ordered = append(g.ordered, [2]string{call, "string_agg(" + e + ", ',' ORDER BY " + e + ")"})
		}
	default:
		call = "max(" + g.col("int") + ") - min(" + g.col("int") + ")"
		return call
	}
	if g.rng.IntN(4) == 0 {
		call += " FILTER (WHERE " + g.pred(0) + ")"
	}
	return call
}

func (g *queryGen) query() string {
	g.ordered = nil
	from := g.from()
	where := ""
	if g.rng.IntN(2) == 0 {
		where = " WHERE " + g.pred(1)
	}
	var sel []string
	if g.rng.IntN(2) == 0 {
		// Projection.
		for range 1 + g.rng.IntN(4) {
			sel = append(sel, g.expr(g.pick("int", "num", "text", "bool", "date", "ts"), 2))
		}
		distinct := ""
		if g.rng.IntN(5) == 0 {
			distinct = "DISTINCT "
		}
		return "SELECT " + distinct + strings.Join(sel, ", ") + " FROM " + from + where
	}
	var keys []string
	for range g.rng.IntN(3) {
		k := g.expr(g.pick("int", "text", "bool", "ts"), 1)
		if !colRef.MatchString(k) {
			// A constant key is an ordinal (integers) or refused
			// (other literals), not a group: the corpus tests those.
			k = g.col("int")
		}
		keys = append(keys, k)
	}
	sel = append(sel, keys...)
	for range 1 + g.rng.IntN(3) {
		sel = append(sel, g.agg())
	}
	q := "SELECT " + strings.Join(sel, ", ") + " FROM " + from + where
	if len(keys) > 0 {
		q += " GROUP BY " + strings.Join(keys, ", ")
		if g.rng.IntN(4) == 0 {
			q += " HAVING count(*) > 1"
		}
		if g.rng.IntN(5) == 0 {
			// A view over the grouped view.
			cols := make([]string, len(sel))
			for i := range sel {
				cols[i] = fmt.Sprintf("c%d", i)
			}
			return "SELECT c0, count(*), max(c" + fmt.Sprint(len(sel)-1) + ") FROM (" + q + ") AS q(" + strings.Join(cols, ", ") + ") GROUP BY c0"
		}
	}
	return q
}
