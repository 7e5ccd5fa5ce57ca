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

	"github.com/stratadb/strata/sql/ddl"
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
// that is \q ends the run.
func runActions(ctx context.Context, conn *pgconn.PgConn, actions []sqlAction, out io.Writer) error {
	var last error
	for i, a := range actions {
		if i > 0 && last != nil {
			var sf errScriptFailed
			if !errors.As(last, &sf) {
				printError(out, last) // a script printed its own
			}
		}
		switch {
		case a.file:
			b, err := os.ReadFile(a.text)
			if err != nil {
				last = err
				continue
			}
			last = runScript(ctx, conn, string(b), out)
		case isQuit(a.text):
			return nil
		default:
			text := a.text
			if q, ok := metaCommand(text); ok {
				text = q
			}
			last = runSQL(ctx, conn, text, out)
		}
	}
	return last
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

// printError prints a statement's error as psql does: a server error
// already names its severity ("ERROR: ..."), anything else gets one.
func printError(out io.Writer, err error) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		fmt.Fprintf(out, "%s:  %s (SQLSTATE %s)\n", pe.Severity, pe.Message, pe.Code)
		return
	}
	fmt.Fprintln(out, "ERROR: ", err)
}

// errScriptFailed is what a script with failed statements returns, after
// printing each error, so that the command exits 1 without printing the
// first one again.
type errScriptFailed struct{ failed int }

func (e errScriptFailed) Error() string { return fmt.Sprintf("%d statement(s) failed", e.failed) }

// runScript runs a script statement by statement, as psql -f does:
// backslash commands on their own lines, and an error reported without
// stopping the script. It returns errScriptFailed when a statement
// failed.
func runScript(ctx context.Context, conn *pgconn.PgConn, text string, out io.Writer) error {
	failed := 0
	report := func(err error) {
		if err != nil {
			printError(out, err)
			failed++
		}
	}
	var buf strings.Builder
	flush := func() {
		if strings.TrimSpace(buf.String()) == "" {
			buf.Reset()
			return
		}
		stmts, err := ddl.Parse(buf.String())
		buf.Reset()
		if err != nil {
			report(err)
			return
		}
		for _, st := range stmts {
			report(runSQL(ctx, conn, st.Text(), out))
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if isQuit(line) && strings.TrimSpace(buf.String()) == "" {
			break
		}
		if q, ok := metaCommand(line); ok && strings.TrimSpace(buf.String()) == "" {
			report(runSQL(ctx, conn, q, out))
			continue
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
		if complete(buf.String()) {
			flush()
		}
	}
	flush()
	if failed > 0 {
		return errScriptFailed{failed}
	}
	return nil
}

// runSQL sends text with the simple query protocol and prints every
// statement's result.
func runSQL(ctx context.Context, conn *pgconn.PgConn, text string, out io.Writer) error {
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
