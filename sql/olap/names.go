package olap

import (
	"fmt"
	"strings"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/sql/sqlerr"
)

// binding is how one query names one input: the temporary view names that
// resolve to it. A qualified input "dev.t1" is reachable as dev.t1 (the SQL
// text is rewritten to the single identifier "dev.t1") and, when no other
// input has the same table name, as plain t1.
type binding struct {
	input int      // index into the inputs
	views []string // temporary view names, unquoted
}

// splitName splits an input name "t1" or "dev.t1" into database and
// table, lower-cased unless written with quotes.
func splitName(name string) (db, tbl string, err error) {
	toks := lex(name)
	var parts []string
	expectName := true
	for _, t := range toks {
		switch {
		case t.kind == tokSpace:
		case expectName:
			n, ok := t.identName()
			if !ok {
				return "", "", fmt.Errorf("input name %q: %w", name, base.ErrInvalidArgument)
			}
			parts = append(parts, n)
			expectName = false
		case t.text == ".":
			expectName = true
		default:
			return "", "", fmt.Errorf("input name %q: %w", name, base.ErrInvalidArgument)
		}
	}
	switch {
	case len(parts) == 1 && !expectName:
		return "", parts[0], nil
	case len(parts) == 2 && !expectName:
		return parts[0], parts[1], nil
	}
	return "", "", fmt.Errorf("input name %q must be table or database.table: %w", name, base.ErrInvalidArgument)
}

// bindNames works out the temporary views for inputs and rewrites the
// qualified references db.table of sqlText into the quoted view name
// "db.table". A two-part name is rewritten only when db is the database of
// an input and the pair is not itself qualified (x.db.table); a table alias
// equal to a database name that is followed by a column of the same name as
// an input table would be misread (documented in doc.go).
func bindNames(inputs []Input, sqlText string) ([]binding, string, error) {
	type qual struct{ db, tbl string }
	bindings := make([]binding, len(inputs))
	plain := map[string][]int{}
	qualified := map[qual]int{}
	dbs := map[string]bool{}
	for i, in := range inputs {
		db, tbl, err := splitName(in.Name)
		if err != nil {
			return nil, "", sqlerr.Wrap(sqlerr.InvalidParameterValue, err)
		}
		bindings[i].input = i
		if db != "" {
			q := qual{db, tbl}
			if _, dup := qualified[q]; dup {
				return nil, "", sqlerr.New(sqlerr.DuplicateTable, "input %s is given twice", in.Name)
			}
			qualified[q] = i
			dbs[db] = true
			bindings[i].views = append(bindings[i].views, db+"."+tbl)
		}
		plain[tbl] = append(plain[tbl], i)
	}
	for tbl, is := range plain {
		if len(is) > 1 {
			// Plain name shared by inputs of several databases: only the
			// qualified forms resolve; two unqualified inputs clash.
			unq := 0
			for _, i := range is {
				if !strings.Contains(bindings[i].views0(), ".") {
					unq++
				}
			}
			if unq > 0 {
				return nil, "", sqlerr.New(sqlerr.DuplicateTable, "input table name %s is given twice", tbl)
			}
			continue
		}
		bindings[is[0]].views = append(bindings[is[0]].views, tbl)
	}
	if len(dbs) == 0 {
		return bindings, sqlText, nil
	}
	toks := lex(sqlText)
	for i := 0; i < len(toks); i++ {
		db, ok := toks[i].identName()
		if !ok || !dbs[db] {
			continue
		}
		if p := prevSolid(toks, i-1); p >= 0 && toks[p].text == "." {
			continue
		}
		dot := nextSolid(toks, i+1)
		if dot >= len(toks) || toks[dot].text != "." {
			continue
		}
		ti := nextSolid(toks, dot+1)
		if ti >= len(toks) {
			continue
		}
		tbl, ok := toks[ti].identName()
		if !ok {
			continue
		}
		if _, ok := qualified[qual{db, tbl}]; !ok {
			continue
		}
		toks[i].text = quoteIdent(db + "." + tbl)
		for j := i + 1; j <= ti; j++ {
			toks[j].text = ""
		}
		i = ti
	}
	return bindings, join(toks), nil
}

// views0 returns the first view name, "" if none yet.
func (b binding) views0() string {
	if len(b.views) == 0 {
		return ""
	}
	return b.views[0]
}
