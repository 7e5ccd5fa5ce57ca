package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/chzyer/readline"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/cobra"
	"golang.org/x/term"
	"golang.org/x/text/width"

	"github.com/stratadb/strata/sql/ddl"
	"github.com/stratadb/strata/sql/sqlerr"
)

// sslModes are the sslmode values `strata sql` takes, libpq's.
var sslModes = []string{"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}

// sqlConnString returns the connection string of `strata sql`'s flags,
// as a postgres:// URL so that any character of a password is safe.
func sqlConnString(addr, user, password, db, sslMode, rootCert string) (string, error) {
	if !slices.Contains(sslModes, sslMode) {
		return "", fmt.Errorf("--sslmode %q is not one of %s", sslMode, strings.Join(sslModes, ", "))
	}
	if (sslMode == "verify-ca" || sslMode == "verify-full") && rootCert == "" {
		return "", fmt.Errorf("--sslmode %s checks the server's certificate: give the certificate authority with --sslrootcert FILE (or PGSSLROOTCERT)", sslMode)
	}
	u := url.URL{Scheme: "postgres", Host: addr, Path: "/" + db}
	if password != "" {
		u.User = url.UserPassword(user, password)
	} else {
		u.User = url.User(user)
	}
	q := url.Values{"sslmode": {sslMode}}
	if rootCert != "" {
		q.Set("sslrootcert", rootCert)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// envOr returns flag when it was given (set), else the environment
// variable name when it is not empty, else the first of fallback.
func envOr(name, flag string, set bool, fallback ...string) string {
	if set {
		return flag
	}
	if v := os.Getenv(name); v != "" {
		return v
	}
	if len(fallback) > 0 {
		return fallback[0]
	}
	return ""
}

// isQuit reports whether line asks to leave: psql's \q, or quit or exit
// alone on a line.
func isQuit(line string) bool {
	t := strings.TrimSpace(line)
	return t == `\q` || t == "quit" || t == "exit" || t == "quit;" || t == "exit;"
}

func newSQLCommand() *cobra.Command {
	var addr, user, db, password, sslMode, rootCert string
	var actions []sqlAction
	cmd := &cobra.Command{
		Use:   "sql",
		Short: "Run SQL against a running Strata (a small psql for people without one)",
		Long: `Run SQL against a running Strata over the Postgres wire protocol.
With -c it runs that text, with -f the file's (going on after an error,
as psql does); -c and -f may be given several times and run in the
order given, each printing its results, as in psql; otherwise it reads statements from the terminal (ending at
';') or from standard input. Results print as aligned tables. \dt, \dm,
\d and \d NAME work as in psql; \q (or quit, exit) ends the session.
Each goes on a line of its own, also between the SQL of a -c. An error
with a position shows psql's LINE n: and a caret under it.

A server started with --password-file asks for a password: give it with
--password or PGPASSWORD. --sslmode works as libpq's: disable, allow,
prefer (the default: TLS when the server offers it, started with
--tls-cert/--tls-key), require (TLS, the certificate unchecked),
verify-ca and verify-full (TLS with the certificate checked against
--sslrootcert, verify-full also checking the host name). PGSSLMODE and
PGSSLROOTCERT set their defaults.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			// The environment gives what the flags leave out, as libpq's
			// PGPASSWORD, PGSSLMODE and PGSSLROOTCERT do (read here, not as
			// flag defaults, so that --help never shows a password).
			dsn, err := sqlConnString(addr, user, envOr("PGPASSWORD", password, password != ""), db,
				envOr("PGSSLMODE", sslMode, sslMode != "", "prefer"), envOr("PGSSLROOTCERT", rootCert, rootCert != ""))
			if err != nil {
				return err
			}
			conn, err := pgconn.Connect(ctx, dsn)
			if err != nil {
				return fmt.Errorf("connect to %s: %w", addr, err)
			}
			defer conn.Close(context.Background())
			out := cmd.OutOrStdout()
			if len(actions) > 0 {
				return runActions(ctx, conn, actions, out)
			}
			in := cmd.InOrStdin()
			f, isFile := in.(*os.File)
			if !isFile || !term.IsTerminal(int(f.Fd())) {
				b, err := io.ReadAll(in)
				if err != nil {
					return err
				}
				return runScript(ctx, conn, string(b), out)
			}
			return interactive(ctx, conn, f, out)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:4566", "address of the Strata server")
	cmd.Flags().StringVarP(&user, "user", "U", "root", "user name")
	cmd.Flags().StringVarP(&db, "database", "d", "dev", "database")
	cmd.Flags().VarP(&actionFlag{list: &actions, file: false}, "command", "c", "SQL to run (may be repeated)")
	cmd.Flags().VarP(&actionFlag{list: &actions, file: true}, "file", "f", "file of SQL to run (may be repeated)")
	cmd.Flags().StringVar(&password, "password", "", "password, for a server started with --password-file (default $PGPASSWORD)")
	cmd.Flags().StringVar(&sslMode, "sslmode", "", "TLS as libpq's sslmode: disable, allow, prefer, require, verify-ca, verify-full (default $PGSSLMODE, else prefer)")
	cmd.Flags().StringVar(&rootCert, "sslrootcert", "", "certificate authority (PEM) that verify-ca and verify-full check the server's certificate against (default $PGSSLROOTCERT)")
	return cmd
}

// sqlAction is one -c or -f of `strata sql`, in command-line order.
type sqlAction struct {
	file bool   // text is a file's path, else SQL
	text string // the SQL, or the path
}

// actionFlag is the flag value of -c (file false) or -f (file true): each
// use appends to one list shared by both, so that they keep their order
// (psql's -c and -f do).
type actionFlag struct {
	list *[]sqlAction
	file bool
}

func (f *actionFlag) String() string { return "" }

func (f *actionFlag) Set(v string) error {
	*f.list = append(*f.list, sqlAction{file: f.file, text: v})
	return nil
}

func (f *actionFlag) Type() string { return "string" }

// runActions runs each -c and -f in order, as psql does: an action that
// fails prints its error and the next one runs; the command's result is
// the last action's (psql's exit status is the last one's too). A -c
// that reaches \q (or quit, exit) ends the run; in a -f it ends that
// file, as psql's \q in a script does.
func runActions(ctx context.Context, conn *pgconn.PgConn, actions []sqlAction, out io.Writer) error {
	var last error
	for i, a := range actions {
		if i > 0 && last != nil {
			var sf errScriptFailed
			if !errors.As(last, &sf) {
				printError(out, last) // a script printed its own
			}
		}
		if a.file {
			b, err := os.ReadFile(a.text)
			if err != nil {
				last = err
				continue
			}
			last = runScript(ctx, conn, string(b), out)
			continue
		}
		var quit bool
		quit, last = runCommand(ctx, conn, a.text, out)
		if quit {
			return last
		}
	}
	return last
}

// runCommand runs the text of one -c. Text that is all SQL goes to the
// server whole, as psql's -c sends it: its statements run until the
// first that fails. Text with lines that are backslash commands, \q,
// quit or exit (splitScript) runs piece by piece: the SQL between two
// such lines goes whole, each command runs in turn, and \q ends the
// text and reports quit. The first error ends the text.
//
// This goes beyond psql, whose -c is either all SQL, sent as it is, or
// one backslash command: there a \q on a later line is a syntax error of
// the server's. Strata's -c reads such lines as its scripts do.
func runCommand(ctx context.Context, conn *pgconn.PgConn, text string, out io.Writer) (quit bool, err error) {
	parts := splitScript(text)
	if !slices.ContainsFunc(parts, func(p scriptPart) bool { return p.sql == "" }) {
		return false, runSQL(ctx, conn, text, out)
	}
	var sql strings.Builder
	send := func() error {
		q := sql.String()
		sql.Reset()
		if strings.TrimSpace(q) == "" {
			return nil
		}
		return runSQL(ctx, conn, q, out)
	}
	for _, p := range parts {
		if p.sql != "" {
			sql.WriteString(p.sql)
			continue
		}
		if err := send(); err != nil {
			return false, err
		}
		if p.quit {
			return true, nil
		}
		if err := runSQL(ctx, conn, p.meta, out); err != nil {
			return false, err
		}
	}
	return false, send()
}

// interactive reads statements from a terminal with line editing and
// history (readline), sending each complete statement (ended by ';').
func interactive(ctx context.Context, conn *pgconn.PgConn, in *os.File, out io.Writer) error {
	home, _ := os.UserHomeDir()
	rl, err := readline.NewEx(&readline.Config{
		Prompt:      "dev=> ",
		HistoryFile: filepath.Join(home, ".strata_sql_history"),
		Stdin:       in,
		Stdout:      out,
	})
	if err != nil {
		return err
	}
	defer rl.Close()
	var buf strings.Builder
	for {
		if buf.Len() == 0 {
			rl.SetPrompt("dev=> ")
		} else {
			rl.SetPrompt("dev-> ")
		}
		line, err := rl.Readline()
		if errors.Is(err, readline.ErrInterrupt) {
			buf.Reset()
			continue
		}
		if err != nil { // io.EOF: Ctrl-D
			fmt.Fprintln(out)
			return nil
		}
		if buf.Len() == 0 && isQuit(line) {
			return nil
		}
		if q, ok := metaCommand(line); ok && buf.Len() == 0 {
			if err := runSQL(ctx, conn, q, out); err != nil {
				printError(out, err)
			}
			continue
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
		if complete(buf.String()) {
			if err := runSQL(ctx, conn, buf.String(), out); err != nil {
				printError(out, err)
			}
			buf.Reset()
		}
	}
}

// complete reports whether text ends with a statement terminator outside
// quotes and comments (Strata's own parser decides).
func complete(text string) bool {
	t := strings.TrimSpace(text)
	if !strings.HasSuffix(t, ";") {
		return false
	}
	_, err := ddl.Parse(t)
	var pe interface{ Error() string }
	// An unterminated string or comment is a syntax error at the end;
	// anything else is complete enough to send.
	if err != nil && errors.As(err, &pe) && strings.Contains(err.Error(), "unterminated") {
		return false
	}
	return true
}

// metaCommand turns psql's most used backslash commands into Strata's
// statements: \dt, \dm (\dv), \d NAME, \l and \dn.
func metaCommand(line string) (string, bool) {
	f := strings.Fields(strings.TrimSpace(line))
	if len(f) == 0 || !strings.HasPrefix(f[0], `\`) {
		return "", false
	}
	switch {
	case f[0] == `\dt` || f[0] == `\dt+`:
		return "SHOW TABLES", true
	case f[0] == `\dm` || f[0] == `\dv` || f[0] == `\dm+`:
		return "SHOW MATERIALIZED VIEWS", true
	case (f[0] == `\d` || f[0] == `\d+`) && len(f) == 2:
		return "DESCRIBE " + f[1], true
	case f[0] == `\d`:
		return "SELECT name, kind FROM strata_catalog.tables ORDER BY name", true
	}
	return "", false
}

// printError prints a statement's error as psql does: its severity
// ("ERROR:  ..."), and for an error that has a position in the text sent
// (queryError), that line and a caret under the position.
func printError(out io.Writer, err error) {
	var qe *queryError
	if errors.As(err, &qe) {
		fmt.Fprintln(out, qe.Error())
		return
	}
	fmt.Fprintln(out, errorText(err, ""))
}

// queryError is the error of a statement with the text that was sent for
// it, so that its position can be shown under the line that holds it.
type queryError struct {
	query string // the text sent, or parsed here
	err   error  // a *pgconn.PgError from the server, or a *sqlerr.Error of Strata's parser
}

// Error returns what psql prints for the error (errorText), on as many
// lines as it needs, without a last newline.
func (e *queryError) Error() string { return errorText(e.err, e.query) }

func (e *queryError) Unwrap() error { return e.err }

// errorText renders err as psql does: "SEVERITY:  message (SQLSTATE
// code)", then, when err has a position in query, the line that holds it
// and a caret (positionLines).
func errorText(err error, query string) string {
	var pe *pgconn.PgError
	var se *sqlerr.Error
	var head string
	pos := 0
	switch {
	case errors.As(err, &pe):
		head = fmt.Sprintf("%s:  %s (SQLSTATE %s)", pe.Severity, pe.Message, pe.Code)
		pos = int(pe.Position)
	case errors.As(err, &se):
		head = fmt.Sprintf("ERROR:  %s (SQLSTATE %s)", se.Message, se.Code)
		pos = se.Position
	default:
		return "ERROR:  " + err.Error()
	}
	if lines := positionLines(query, pos); lines != "" {
		return head + "\n" + lines
	}
	return head
}

// Widths of psql's error-position display (libpq's reportErrorPosition).
const (
	positionWidth    = 60 // screen columns of the query shown, at most
	positionRightCut = 10 // columns kept right of the caret, when the line is cut
)

// positionLines returns the two lines psql prints under an error with a
// position: "LINE n: " and the line of query that holds pos (a 1-based
// character offset, as PostgreSQL's ErrorResponse carries), then a caret
// under the character at pos. A line longer than positionWidth columns is
// cut around the caret, with "..." where it was cut. Tabs show as one
// space, wide characters take two columns, and \r, \n or \r\n ends a
// line, as in libpq. It returns "" when pos is 0 or past the end of query
// and one more character.
func positionLines(query string, pos int) string {
	loc := pos - 1 // 0-based character index
	if loc < 0 {
		return ""
	}
	chars := []rune(query)
	if loc > len(chars) {
		return ""
	}
	// col[i] is the screen column of chars[i] from the query's start;
	// [beg, end) are the characters of the line that holds loc.
	col := make([]int, len(chars)+1)
	line, beg, end := 1, 0, len(chars)
	c := 0
	for i, r := range chars {
		col[i] = c
		if r == '\r' || r == '\n' {
			if i >= loc {
				end = i
				break
			}
			if r == '\r' || i == 0 || chars[i-1] != '\r' {
				line++
			}
			beg = i + 1
		}
		c += runeColumns(r)
		col[i+1] = c
	}
	begCut, endCut := false, false
	if col[end]-col[beg] > positionWidth {
		if col[beg]+positionWidth >= col[loc]+positionRightCut {
			for col[end]-col[beg] > positionWidth {
				end--
			}
			endCut = true
		} else {
			for col[loc]+positionRightCut < col[end] {
				end--
				endCut = true
			}
			for col[end]-col[beg] > positionWidth {
				beg++
				begCut = true
			}
		}
	}
	prefix := fmt.Sprintf("LINE %d: ", line)
	if begCut {
		prefix += "..."
	}
	shown := strings.ReplaceAll(string(chars[beg:end]), "\t", " ")
	if endCut {
		shown += "..."
	}
	caret := strings.Repeat(" ", len(prefix)+col[loc]-col[beg]) + "^"
	return prefix + shown + "\n" + caret
}

// runeColumns is the number of screen columns r takes: two for East
// Asian wide and full-width characters, else one (controls and tabs
// included, as libpq counts them).
func runeColumns(r rune) int {
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// errScriptFailed is what a script with failed statements returns, after
// printing each error, so that the command exits 1 without printing the
// first one again.
type errScriptFailed struct{ failed int }

func (e errScriptFailed) Error() string { return fmt.Sprintf("%d statement(s) failed", e.failed) }

// runScript runs a script statement by statement, as psql -f does:
// backslash commands on their own lines, and an error reported without
// stopping the script; \q, quit or exit ends it. It returns
// errScriptFailed when a statement failed.
func runScript(ctx context.Context, conn *pgconn.PgConn, text string, out io.Writer) error {
	failed := 0
	report := func(err error) {
		if err != nil {
			printError(out, err)
			failed++
		}
	}
parts:
	for _, p := range splitScript(text) {
		switch {
		case p.quit:
			break parts
		case p.sql == "":
			report(runSQL(ctx, conn, p.meta, out))
		default:
			stmts, err := ddl.Parse(p.sql)
			if err != nil {
				report(&queryError{query: p.sql, err: err})
				continue
			}
			for _, st := range stmts {
				report(runSQL(ctx, conn, st.Text(), out))
			}
		}
	}
	if failed > 0 {
		return errScriptFailed{failed}
	}
	return nil
}

// scriptPart is one piece of a script or of a -c's text (splitScript):
// SQL, a backslash command, or the end.
type scriptPart struct {
	sql  string // SQL lines as written, each ended by a newline; "" for the others
	meta string // with sql "": the statement of a backslash command (metaCommand)
	quit bool   // with sql "": \q, quit or exit, after which nothing runs
}

// splitScript cuts text at its lines into SQL and the lines that are
// backslash commands (metaCommand) or \q, quit and exit (isQuit). Such a
// line counts only where a statement starts, after nothing but blanks
// since the last complete statement (complete), so that the same words
// inside a statement or a string stay SQL; the SQL is cut after each
// complete statement, so that a script can report each one's error and
// go on. Blank SQL between two commands is dropped. The parts after a
// quit are not returned.
func splitScript(text string) []scriptPart {
	var parts []scriptPart
	var buf strings.Builder
	flush := func() {
		if strings.TrimSpace(buf.String()) != "" {
			parts = append(parts, scriptPart{sql: buf.String()})
		}
		buf.Reset()
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(buf.String()) == "" {
			if isQuit(line) {
				flush()
				return append(parts, scriptPart{quit: true})
			}
			if q, ok := metaCommand(line); ok {
				flush()
				parts = append(parts, scriptPart{meta: q})
				continue
			}
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
		if complete(buf.String()) {
			flush()
		}
	}
	flush()
	return parts
}

// runSQL sends text with the simple query protocol and prints every
// statement's result. An error of the server's comes back as a
// queryError that holds text, in which its position counts.
func runSQL(ctx context.Context, conn *pgconn.PgConn, text string, out io.Writer) error {
	err := execSQL(ctx, conn, text, out)
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return &queryError{query: text, err: err}
	}
	return err
}

// execSQL is runSQL without the query attached to its error.
func execSQL(ctx context.Context, conn *pgconn.PgConn, text string, out io.Writer) error {
	mrr := conn.Exec(ctx, text)
	for mrr.NextResult() {
		rr := mrr.ResultReader()
		fields := rr.FieldDescriptions()
		var rows [][]string
		for rr.NextRow() {
			vals := rr.Values()
			row := make([]string, len(vals))
			for i, v := range vals {
				if v == nil {
					row[i] = ""
				} else {
					row[i] = string(v)
				}
			}
			rows = append(rows, row)
		}
		tag, err := rr.Close()
		if err != nil {
			_ = mrr.Close()
			return err
		}
		if len(fields) > 0 {
			names := make([]string, len(fields))
			right := make([]bool, len(fields))
			for i, f := range fields {
				names[i] = f.Name
				right[i] = numericOID(f.DataTypeOID)
			}
			printTable(out, names, right, rows)
			continue
		}
		fmt.Fprintln(out, tag.String())
	}
	return mrr.Close()
}

// printTable prints rows under a header as psql's aligned format does:
// a space around each cell, numbers right-aligned, the header centred,
// the row count after.
func printTable(out io.Writer, names []string, right []bool, rows [][]string) {
	w := make([]int, len(names))
	for i, n := range names {
		w[i] = utf8.RuneCountInString(n)
	}
	for _, r := range rows {
		for i, v := range r {
			w[i] = max(w[i], utf8.RuneCountInString(v))
		}
	}
	cell := func(s string, i int, align int) string {
		pad := w[i] - utf8.RuneCountInString(s)
		switch align {
		case 1: // right
			return strings.Repeat(" ", pad) + s
		case 2: // centre
			left := pad / 2
			return strings.Repeat(" ", left) + s + strings.Repeat(" ", pad-left)
		}
		return s + strings.Repeat(" ", pad)
	}
	var b strings.Builder
	line := func(parts []string) {
		b.WriteString(strings.TrimRight(" "+strings.Join(parts, " | ")+" ", " "))
		b.WriteByte('\n')
	}
	head := make([]string, len(names))
	dash := make([]string, len(names))
	for i, n := range names {
		head[i] = cell(n, i, 2)
		dash[i] = strings.Repeat("-", w[i])
	}
	line(head)
	b.WriteString("-" + strings.Join(dash, "-+-") + "-\n")
	for _, r := range rows {
		parts := make([]string, len(r))
		for i, v := range r {
			align := 0
			if right[i] {
				align = 1
			}
			parts[i] = cell(v, i, align)
		}
		line(parts)
	}
	if len(rows) == 1 {
		b.WriteString("(1 row)\n")
	} else {
		fmt.Fprintf(&b, "(%d rows)\n", len(rows))
	}
	fmt.Fprint(out, b.String())
}

// numericOID tells the type OIDs psql right-aligns.
func numericOID(oid uint32) bool {
	switch oid {
	case 20, 21, 23, 26, 700, 701, 1700, 790:
		return true
	}
	return false
}
