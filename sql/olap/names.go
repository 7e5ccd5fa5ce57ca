package olap

import (
	"fmt"
	"strings"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/sql/pglex"
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

// splitName splits a relation name "t1" or "dev.t1" into database and
// table, folded as PostgreSQL folds bare identifiers (pglex.FoldIdent) unless
// written with quotes. It reads SQL syntax (a regclass literal); input
// names are exact and go through inputName.
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

// inputName splits an Input.Name, as ReferencedTables returns it, into
// database and table: "t1" or "dev.t1", each part exact (already folded,
// so "MixedCase" is the table created as "MixedCase"), split at the first
// dot as the engine resolves it.
func inputName(name string) (db, tbl string, err error) {
	db, tbl, ok := strings.Cut(name, ".")
	if !ok {
		db, tbl = "", name
	}
	if tbl == "" || ok && db == "" || strings.Contains(tbl, ".") {
		return "", "", fmt.Errorf("input name %q must be table or database.table: %w", name, base.ErrInvalidArgument)
	}
	return db, tbl, nil
}

// duckFold is how DuckDB compares names of views: ASCII letters without
// regard to case, "even when quoted"; other characters exactly.
func duckFold(name string) string { return pglex.FoldIdent(name) }

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
		db, tbl, err := inputName(in.Name)
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
	renamed := distinctViews(bindings)
	if len(dbs) == 0 && len(renamed) == 0 {
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
	if len(renamed) > 0 {
		renameRefs(toks, renamed)
	}
	return bindings, join(toks), nil
}

// distinctViews gives views whose names DuckDB would take for one
// ("MixedCase" and mixedcase: DuckDB compares names without regard to
// ASCII case) internal names of their own, so that each input still binds
// to its own relation; it returns the renames, SQL name -> internal name.
// The first view of each such group keeps its name.
func distinctViews(bindings []binding) map[string]string {
	byFold := map[string][]string{}
	var folds []string
	for _, b := range bindings {
		for _, v := range b.views {
			f := duckFold(v)
			if _, ok := byFold[f]; !ok {
				folds = append(folds, f)
			}
			byFold[f] = append(byFold[f], v)
		}
	}
	renamed := map[string]string{}
	for _, f := range folds {
		for k, v := range byFold[f][1:] {
			renamed[v] = fmt.Sprintf("%s (input %d)", f, k+2)
		}
	}
	for i := range bindings {
		for j, v := range bindings[i].views {
			if r, ok := renamed[v]; ok {
				bindings[i].views[j] = r
			}
		}
	}
	return renamed
}

// renameRefs rewrites every name token that denotes a renamed view to the
// view's internal name, except where it follows a dot (a column or a
// qualified name of something else) or precedes "(" (a function). A
// column named exactly as such a table and used unqualified would be
// misread (doc.go, known gaps); inputs whose names DuckDB tells apart are
// never rewritten.
func renameRefs(toks []token, renamed map[string]string) {
	for i := range toks {
		n, ok := toks[i].identName()
		if !ok || toks[i].text == "" {
			continue
		}
		r, ok := renamed[n]
		if !ok {
			continue
		}
		if p := prevSolid(toks, i-1); p >= 0 && toks[p].text == "." {
			continue
		}
		if nx := nextSolid(toks, i+1); nx < len(toks) && toks[nx].text == "(" {
			continue
		}
		toks[i].text = quoteIdent(r)
	}
}

// views0 returns the first view name, "" if none yet.
func (b binding) views0() string {
	if len(b.views) == 0 {
		return ""
	}
	return b.views[0]
}
