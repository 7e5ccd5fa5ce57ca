package parser

import (
	"errors"
	"strings"
	"sync"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"

	"github.com/stratadb/strata/sql/sqlerr"
)

// Statement is one parsed statement of an input.
type Statement struct {
	// Node is the statement's parse tree (a CreateStmt, SelectStmt, ...).
	Node *pg_query.Node
	// SQL is the statement's own text, without the separating semicolon.
	SQL string
	// Offset is the byte offset of SQL in the whole input; tree locations
	// are relative to the whole input, not to SQL.
	Offset int
}

// Parse parses input, which may hold several statements separated by
// semicolons, and returns them in order. Empty statements are dropped. A
// syntax error is a *sqlerr.Error with code 42601 and its position.
func Parse(input string) ([]Statement, error) {
	tree, err := pg_query.Parse(input)
	if err != nil {
		return nil, syntaxError(input, err)
	}
	out := make([]Statement, 0, len(tree.Stmts))
	for _, raw := range tree.Stmts {
		start := int(raw.StmtLocation)
		end := len(input)
		if raw.StmtLen > 0 {
			end = start + int(raw.StmtLen)
		}
		if start < 0 || start > end || end > len(input) {
			start, end = 0, len(input)
		}
		text := strings.TrimSpace(input[start:end])
		out = append(out, Statement{Node: raw.Stmt, SQL: text, Offset: start})
	}
	return out, nil
}

// ParseOne parses input that must hold exactly one statement.
func ParseOne(input string) (Statement, error) {
	stmts, err := Parse(input)
	if err != nil {
		return Statement{}, err
	}
	switch len(stmts) {
	case 0:
		return Statement{}, sqlerr.New(sqlerr.SyntaxError, "empty statement")
	case 1:
		return stmts[0], nil
	}
	return Statement{}, sqlerr.New(sqlerr.SyntaxError, "expected one statement, got %d", len(stmts))
}

func syntaxError(input string, err error) error {
	var pe *pgparser.Error
	if errors.As(err, &pe) {
		e := sqlerr.New(sqlerr.SyntaxError, "%s", pe.Message)
		if pe.Cursorpos > 0 {
			e = e.WithPosition(pe.Cursorpos)
		}
		return e
	}
	return sqlerr.Wrap(sqlerr.SyntaxError, err)
}

// treeVersion is the parse-tree format version of the linked libpg_query,
// which Deparse must state.
var treeVersion = sync.OnceValue(func() int32 {
	tree, err := pg_query.Parse("SELECT 1")
	if err != nil {
		panic("parser: libpg_query cannot parse SELECT 1: " + err.Error())
	}
	return tree.Version
})

// Position converts a 0-based byte offset into input (a parse tree
// Location) to the 1-based character position Postgres reports; a negative
// offset (unknown) gives 0.
func Position(input string, offset int) int {
	if offset < 0 {
		return 0
	}
	if offset > len(input) {
		offset = len(input)
	}
	return utf8.RuneCountInString(input[:offset]) + 1
}

// Deparse renders a parse tree back to SQL text (for EXPLAIN and for storing
// a view's normalized definition).
func Deparse(node *pg_query.Node) (string, error) {
	tree := &pg_query.ParseResult{Version: treeVersion(), Stmts: []*pg_query.RawStmt{{Stmt: node}}}
	return pg_query.Deparse(tree)
}
