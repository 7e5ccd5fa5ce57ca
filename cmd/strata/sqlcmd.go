package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/chzyer/readline"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/cobra"
	"golang.org/x/term"
	"golang.org/x/text/width"

	"github.com/stratadb/strata/sql/pglex"
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

// Exit statuses of `strata sql`, psql's (EXIT_SUCCESS, EXIT_FAILURE,
// EXIT_BADCONN and EXIT_USER of psql's settings.h).
const (
	exitOK      = 0 // the run went to its end; a script's failed statements do not count
	exitFailure = 1 // the last -c failed, a -f could not be read, or a flag is wrong
	exitBadConn = 2 // the server could not be reached, or the connection was lost
	exitUser    = 3 // ON_ERROR_STOP stopped a script at a failed statement
)

// isQuitWord reports whether line is quit or exit (with or without a
// ';') between blanks: psql's words to leave, on a line of their own.
func isQuitWord(line string) bool {
	t := strings.TrimSpace(line)
	return t == "quit" || t == "exit" || t == "quit;" || t == "exit;"
}

func newSQLCommand() *cobra.Command {
	var addr, user, db, password, sslMode, rootCert string
	var vars []string
	var actions []sqlAction
	cmd := &cobra.Command{
		Use:   "sql",
		Short: "Run SQL against a running Strata (a small psql for people without one)",
		Long: `Run SQL against a running Strata over the Postgres wire protocol.
With -c it runs that text, with -f the file's; -c and -f may be given
several times and run in the order given, as in psql; otherwise it reads
statements from the terminal (ending at ';') or from standard input.
Results print as aligned tables on standard output. Errors and the
server's notices print on standard error as psql prints them: "ERROR:  "
and the message, psql's LINE n: and a caret under an error's position,
then "DETAIL:  " and "HINT:  "; "NOTICE:  " and the message.

In a script (-f or standard input) and at the terminal a backslash
outside quotes and comments starts a command that runs to the end of its
line, as in psql: \dt, \dm, \d, \d NAME, \set ON_ERROR_STOP on|off, and
\q (or quit, exit on a line of its own) to end. A statement not yet ended
by ';' is sent before the command runs. A -c goes to the server whole,
as psql's does, unless lines of its own are such commands: then the SQL
between them goes whole and each command runs in turn; a -c's first
error ends it.

Exit status, as psql's: 0 when the run went to its end, failed
statements of a -f or of standard input included; 1 when the last -c
failed, a -f cannot be read, or a flag is wrong; 2 when the server cannot
be reached or the connection is lost; 3 when ON_ERROR_STOP is on (-v
ON_ERROR_STOP=1, or \set in a script) and a statement of a script
failed: the run stops there. With ON_ERROR_STOP a failed -c stops the
run too, with status 1.

Ctrl-C while a statement runs asks the server to cancel it, as psql
does ("Cancel request sent"); the statement fails with "ERROR:  canceling
statement due to user request" and the connection stays: a -c that
fails so exits with status 1, a script (-f, standard input) stops there
with status 3, and at the terminal the next prompt comes.

A server started with --password-file asks for a password: give it with
--password or PGPASSWORD. --sslmode works as libpq's: disable, allow,
prefer (the default: TLS when the server offers it, started with
--tls-cert/--tls-key), require (TLS, the certificate unchecked),
verify-ca and verify-full (TLS with the certificate checked against
--sslrootcert, verify-full also checking the host name). PGSSLMODE and
PGSSLROOTCERT set their defaults.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Ctrl-C (SIGINT) does not end the run: while a statement
			// runs it asks the server to cancel it, as psql does
			// (sqlSession.interrupt); while connecting it stops the
			// connection attempt.
			ctx := context.Background()
			connectCtx, stopConnect := context.WithCancel(ctx)
			defer stopConnect()
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, os.Interrupt)
			defer signal.Stop(sigs)
			onErrorStop, err := parseSQLVars(vars)
			if err != nil {
				return err
			}
			// The environment gives what the flags leave out, as libpq's
			// PGPASSWORD, PGSSLMODE and PGSSLROOTCERT do (read here, not as
			// flag defaults, so that --help never shows a password).
			dsn, err := sqlConnString(addr, user, envOr("PGPASSWORD", password, password != ""), db,
				envOr("PGSSLMODE", sslMode, sslMode != "", "prefer"), envOr("PGSSLROOTCERT", rootCert, rootCert != ""))
			if err != nil {
				return err
			}
			cfg, err := pgconn.ParseConfig(dsn)
			if err != nil {
				return err
			}
			s := &sqlSession{out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr(), onErrorStop: onErrorStop}
			cfg.OnNotice = s.notice
			done := make(chan struct{})
			defer close(done)
			go func() {
				for {
					select {
					case <-sigs:
						s.interrupt(stopConnect)
					case <-done:
						return
					}
				}
			}()
			conn, err := pgconn.ConnectConfig(connectCtx, cfg)
			if err != nil {
				if connectCtx.Err() != nil {
					return &exitError{code: exitBadConn} // interrupted: nothing to say
				}
				fmt.Fprint(s.errOut, connectFailure(cfg, err))
				return &exitError{code: exitBadConn}
			}
			defer conn.Close(context.Background())
			s.conn = conn
			s.sig.Lock()
			s.sig.conn = conn
			s.sig.Unlock()
			status := exitOK
			if len(actions) > 0 {
				status = s.runActions(ctx, actions)
			} else if f, isFile := cmd.InOrStdin().(*os.File); isFile && term.IsTerminal(int(f.Fd())) {
				if status, err = s.interactive(ctx, f); err != nil {
					return err
				}
			} else {
				b, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return err
				}
				status, _ = s.runScript(ctx, string(b))
			}
			if status != exitOK {
				return &exitError{code: status} // the errors are printed
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:4566", "address of the Strata server")
	cmd.Flags().StringVarP(&user, "user", "U", "root", "user name")
	cmd.Flags().StringVarP(&db, "database", "d", "dev", "database")
	cmd.Flags().VarP(&actionFlag{list: &actions, file: false}, "command", "c", "SQL to run (may be repeated)")
	cmd.Flags().VarP(&actionFlag{list: &actions, file: true}, "file", "f", "file of SQL to run (may be repeated)")
	cmd.Flags().StringArrayVarP(&vars, "set", "v", nil, "NAME=VALUE, as psql's: ON_ERROR_STOP=1 stops at the first failed statement (exit status 3 in a script)")
	cmd.Flags().StringVar(&password, "password", "", "password, for a server started with --password-file (default $PGPASSWORD)")
	cmd.Flags().StringVar(&sslMode, "sslmode", "", "TLS as libpq's sslmode: disable, allow, prefer, require, verify-ca, verify-full (default $PGSSLMODE, else prefer)")
	cmd.Flags().StringVar(&rootCert, "sslrootcert", "", "certificate authority (PEM) that verify-ca and verify-full check the server's certificate against (default $PGSSLROOTCERT)")
	return cmd
}

// parseSQLVars reads the NAME=VALUE of each -v (psql's --set) and returns
// ON_ERROR_STOP's value, the only variable `strata sql` knows.
func parseSQLVars(vars []string) (onErrorStop bool, err error) {
	for _, v := range vars {
		name, value, _ := strings.Cut(v, "=")
		if onErrorStop, err = setVariable(name, value); err != nil {
			return false, fmt.Errorf("-v %s: %w", v, err)
		}
	}
	return onErrorStop, nil
}

// setVariable returns the value that setting the variable name to value
// gives ON_ERROR_STOP; any other name is an error.
func setVariable(name, value string) (bool, error) {
	if name != "ON_ERROR_STOP" {
		return false, fmt.Errorf("strata sql knows only the variable ON_ERROR_STOP, not %q", name)
	}
	b, ok := parseBool(value)
	if !ok {
		return false, fmt.Errorf("unrecognized value %q for \"ON_ERROR_STOP\": Boolean expected", value)
	}
	return b, nil
}

// parseBool reads a boolean as psql's ParseVariableBool does: any case,
// a prefix of true, false, yes or no, on or off (two letters at least),
// 1 or 0. ok is false for anything else.
func parseBool(v string) (b, ok bool) {
	l := strings.ToLower(strings.TrimSpace(v))
	switch {
	case l == "":
		return false, false
	case l == "1", strings.HasPrefix("true", l), strings.HasPrefix("yes", l), len(l) >= 2 && strings.HasPrefix("on", l):
		return true, true
	case l == "0", strings.HasPrefix("false", l), strings.HasPrefix("no", l), len(l) >= 2 && strings.HasPrefix("off", l):
		return false, true
	}
	return false, false
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

// sqlSession is the connection of one `strata sql` and where it prints.
type sqlSession struct {
	conn        *pgconn.PgConn
	out         io.Writer // results
	errOut      io.Writer // errors and notices, psql's standard error
	onErrorStop bool      // psql's ON_ERROR_STOP: a failed statement stops the run
	query       string    // the text being run, in which a notice's position counts

	// sig is what Ctrl-C (interrupt, on the signal goroutine) acts on.
	sig struct {
		sync.Mutex
		conn        *pgconn.PgConn // nil until connected
		busy        bool           // a statement or backslash command is running
		interrupted bool           // Ctrl-C came since takeInterrupt last looked
	}
}

// interrupt is Ctrl-C (SIGINT), as psql's handler: while a statement
// runs it sends the server a cancel request on a connection of its own
// and says "Cancel request sent" (the statement then fails with the
// server's 57014, and the session goes on); before the connection is
// made it calls stopConnect. It also marks the run interrupted, which
// ends a script (runScript).
//
// It holds s.sig while it sends, so that "Cancel request sent" comes
// before the statement's error, as in psql, whose handler runs on the
// main thread: report waits for s.sig before it prints.
func (s *sqlSession) interrupt(stopConnect func()) {
	s.sig.Lock()
	defer s.sig.Unlock()
	conn, busy := s.sig.conn, s.sig.busy
	s.sig.interrupted = true
	switch {
	case conn == nil:
		stopConnect()
	case busy:
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := conn.CancelRequest(ctx); err != nil {
			fmt.Fprintf(s.errOut, "Could not send cancel request: %v\n", err)
			return
		}
		fmt.Fprintln(s.errOut, "Cancel request sent")
	}
}

// setBusy records whether a statement or command is running, which is
// when Ctrl-C sends a cancel request.
func (s *sqlSession) setBusy(busy bool) {
	s.sig.Lock()
	s.sig.busy = busy
	s.sig.Unlock()
}

// takeInterrupt reports whether Ctrl-C came since the last call.
func (s *sqlSession) takeInterrupt() bool {
	s.sig.Lock()
	defer s.sig.Unlock()
	in := s.sig.interrupted
	s.sig.interrupted = false
	return in
}

// notice prints a NoticeResponse when it arrives, as psql does
// (messageText); pgconn calls it while it reads a statement's results.
func (s *sqlSession) notice(_ *pgconn.PgConn, n *pgconn.Notice) {
	fmt.Fprintln(s.errOut, messageText((*pgconn.PgError)(n), s.query, false))
}

// exec sends text, prints its results and, when it fails, its error. ok
// tells whether it succeeded; lost, whether the connection is gone (psql
// then ends a run that is not interactive with status 2).
func (s *sqlSession) exec(ctx context.Context, text string) (ok, lost bool) {
	s.query = text
	err := runSQL(ctx, s.conn, text, s.out)
	s.query = ""
	if err == nil {
		return true, false
	}
	return false, s.report(err, "")
}

// report prints err, the failure of a statement: the server's error as
// psql prints it (its position counted in query when query is not "" and
// err does not hold its own), or the client's own. It returns whether the
// connection is lost.
func (s *sqlSession) report(err error, query string) (lost bool) {
	s.sig.Lock() // a cancel request being sent is told first (interrupt)
	s.sig.Unlock()
	var pe *pgconn.PgError
	var qe *queryError
	switch {
	case errors.As(err, &pe) && query != "" && !errors.As(err, &qe):
		printError(s.errOut, &queryError{query: query, err: err})
	case errors.As(err, &pe):
		printError(s.errOut, err)
	default: // the client's own, such as a broken connection: no ERROR: of the server's
		fmt.Fprintln(s.errOut, "strata:", err)
	}
	if s.conn.IsClosed() {
		fmt.Fprintln(s.errOut, "strata: the connection to the server was lost")
		return true
	}
	return false
}

// meta runs one backslash command (from its backslash to the end of its
// line) and reports as exec does. \set and \unset set ON_ERROR_STOP; an
// unknown command fails with psql's "invalid command".
func (s *sqlSession) meta(ctx context.Context, line string) (ok, lost bool) {
	f := strings.Fields(line)
	switch f[0] {
	case `\set`, `\unset`:
		if len(f) < 2 {
			fmt.Fprintf(s.errOut, "%s: missing required argument\n", f[0])
			return false, false
		}
		value := "off" // \unset of a boolean, as psql's substitute hook
		if f[0] == `\set` {
			value = strings.Join(f[2:], "")
		}
		b, err := setVariable(f[1], value)
		if err != nil {
			fmt.Fprintf(s.errOut, "%s: %v\n", f[0], err)
			return false, false
		}
		s.onErrorStop = b
		return true, false
	}
	if (f[0] == `\d` || f[0] == `\d+`) && len(f) == 2 {
		return s.describe(ctx, f[1])
	}
	q, known := metaCommand(line)
	if !known {
		fmt.Fprintf(s.errOut, "invalid command %s\n", f[0])
		return false, false
	}
	return s.exec(ctx, q)
}

// runActions runs each -c and -f in order, as psql does, and returns the
// run's exit status: the last action's (exitOK, or exitFailure for a -c
// that failed or a -f that could not be read), unless a lost connection
// (exitBadConn) or ON_ERROR_STOP (exitUser in a -f, exitFailure in a -c)
// stopped the run earlier. A -c that reaches \q (or quit, exit) ends the
// run; in a -f it ends that file.
func (s *sqlSession) runActions(ctx context.Context, actions []sqlAction) int {
	status := exitOK
	for _, a := range actions {
		quit := false
		if a.file {
			b, err := os.ReadFile(a.text)
			if err != nil {
				fmt.Fprintln(s.errOut, "strata:", err)
				status = exitFailure
			} else {
				status, _ = s.runScript(ctx, string(b))
			}
		} else {
			status, quit = s.runCommand(ctx, a.text)
		}
		if quit || status == exitBadConn || status != exitOK && s.onErrorStop {
			return status
		}
	}
	return status
}

// runCommand runs the text of one -c and returns its status (exitOK,
// exitFailure, exitBadConn) and whether \q (quit, exit) ended it. Text
// without backslash commands on lines of their own (scanScript with
// lineStart) goes to the server whole, as psql's -c sends it: its
// statements run until the first that fails. Else the SQL between two
// such lines goes whole, and each command runs in turn; \q ends the text,
// and the first error ends it too.
//
// This goes beyond psql, whose -c is either all SQL, sent as it is, or
// one backslash command: there a \q on a later line is a syntax error of
// the server's. Strata's -c reads such lines as its scripts do.
func (s *sqlSession) runCommand(ctx context.Context, text string) (status int, quit bool) {
	items := scanScript(text, true)
	if !slices.ContainsFunc(items, func(it scriptItem) bool { return it.sql == "" }) {
		items = []scriptItem{{sql: text}}
	}
	for i := 0; i < len(items); i++ {
		it := items[i]
		sql := it.sql
		if sql != "" && i+1 < len(items) && items[i+1].sql != "" {
			j := i
			for j+1 < len(items) && items[j+1].sql != "" {
				j++
			}
			sql, i = text[it.start:items[j].end], j
		}
		ok, lost, quit := s.runItem(ctx, it, sql)
		switch {
		case quit:
			return exitOK, true
		case lost:
			return exitBadConn, false
		case !ok:
			return exitFailure, false
		}
	}
	return exitOK, false
}

// runItem runs one piece of a script: sql for a statement (the piece's
// own text, or a run of statements sent together), the backslash
// command, or \q, which runs nothing. It reports whether the piece
// succeeded, whether the connection was lost, and whether it was \q.
func (s *sqlSession) runItem(ctx context.Context, it scriptItem, sql string) (ok, lost, quit bool) {
	if it.quit {
		return true, false, true
	}
	s.setBusy(true)
	defer s.setBusy(false)
	if it.meta != "" {
		ok, lost = s.meta(ctx, it.meta)
	} else {
		ok, lost = s.exec(ctx, sql)
	}
	return ok, lost, false
}

// runScript runs a script (-f, standard input) piece by piece, as psql
// does: each statement is sent alone and its error printed, and the
// script goes on, unless ON_ERROR_STOP is on. Ctrl-C stops it after the
// statement it cancels (or between two), as psql stops a script. It
// returns the script's status (exitOK; exitUser when ON_ERROR_STOP or
// Ctrl-C stopped it; exitBadConn) and whether \q (quit, exit) ended it.
func (s *sqlSession) runScript(ctx context.Context, text string) (status int, quit bool) {
	s.takeInterrupt()
	for _, it := range scanScript(text, false) {
		ok, lost, quit := s.runItem(ctx, it, it.sql)
		switch {
		case quit:
			return exitOK, true
		case lost:
			return exitBadConn, false
		case !ok && s.onErrorStop, s.takeInterrupt():
			return exitUser, false
		}
	}
	return exitOK, false
}

// interactive reads statements from a terminal with line editing and
// history (readline) and runs them (terminal). It returns the session's
// status: exitOK, or exitBadConn when the connection was lost.
func (s *sqlSession) interactive(ctx context.Context, in *os.File) (int, error) {
	home, _ := os.UserHomeDir()
	rl, err := readline.NewEx(&readline.Config{
		Prompt:      "dev=> ",
		HistoryFile: filepath.Join(home, ".strata_sql_history"),
		Stdin:       in,
		Stdout:      s.out,
		Stderr:      s.errOut,
	})
	if err != nil {
		return exitFailure, err
	}
	defer rl.Close()
	return s.terminal(ctx, func(prompt string) (string, error) {
		rl.SetPrompt(prompt)
		return rl.Readline()
	}), nil
}

// terminal runs the lines that readLine returns, each read after its
// prompt ("dev=> ", or "dev-> " while a statement is not ended): a
// statement runs once its ';' is typed, a backslash command at the end of
// its line (scanScript). A statement cut by a command runs before it, as
// in a script, but \q (or quit, exit) leaves without sending one, as psql
// at a terminal does. readline.ErrInterrupt (Ctrl-C) drops the statement
// being typed; any other error (io.EOF: Ctrl-D) ends the session. It
// returns exitOK, or exitBadConn when the connection was lost; a failed
// statement does not change it.
func (s *sqlSession) terminal(ctx context.Context, readLine func(prompt string) (string, error)) int {
	pending := "" // a statement not yet ended, from its first line
	for {
		prompt := "dev=> "
		if pending != "" {
			prompt = "dev-> "
		}
		line, err := readLine(prompt)
		if errors.Is(err, readline.ErrInterrupt) {
			pending = ""
			continue
		}
		if err != nil {
			fmt.Fprintln(s.out)
			return exitOK
		}
		text := pending + line + "\n"
		items := scanScript(text, false)
		pending = ""
		if n := len(items); n > 0 && items[n-1].sql != "" && !items[n-1].ended {
			pending = text[items[n-1].start:]
			items = items[:n-1]
		}
		for i, it := range items {
			if it.sql != "" && !it.ended && items[i+1].quit {
				continue // psql at a terminal leaves without sending it
			}
			_, lost, quit := s.runItem(ctx, it, it.sql)
			switch {
			case quit:
				return exitOK
			case lost:
				return exitBadConn
			}
		}
	}
}

// metaCommand turns psql's most used backslash commands into Strata's
// statements: \dt, \dm (\dv), \d NAME and \d. line is the command from
// its backslash. (meta runs \d NAME as describe, which adds the key, the
// watermark and a view's definition to DESCRIBE's columns.)
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

// scriptItem is one piece of a script or of a -c's text (scanScript): a
// statement, a backslash command, or the end.
type scriptItem struct {
	sql   string // a statement, from its first character to its ';' or to where a command or the end of the text cut it
	ended bool   // with sql: ended by its ';'
	meta  string // a backslash command, from its backslash to the end of its line, blanks trimmed
	quit  bool   // \q (\quit), or quit or exit on a line of its own: nothing after it runs
	// start and end are the bytes of the text scanned that sql or meta span.
	start, end int
}

// scanScript cuts text into statements and backslash commands, as psql's
// lexer (psqlscan.l) does. A statement starts at its first character that
// is neither a blank nor in a -- comment, and ends at a ';' outside
// quotes, comments and parentheses. Quotes are '...', E'...', "..." and
// $tag$...$tag$ (pglex's rules); comments are -- to the end of the line
// and /* */, nested. A backslash outside quotes and comments starts a
// command that runs to the end of its line; a statement it cuts, not
// ended by ';', comes before it. (psql would keep that text and send it
// at the next ';' or at the end of the input, after the command; for \q,
// the one command that ends a script, both send it before leaving, and
// for the others sending it first keeps the order the lines were written
// in.) With lineStart (a -c's text) a backslash starts a command only
// where it is the first character of its line that is not a blank, and is
// SQL elsewhere. quit or exit on a line of its own (isQuitWord) where no
// statement is pending ends the text, as \q does; nothing after the end
// is returned. A lone ';' is dropped.
func scanScript(text string, lineStart bool) []scriptItem {
	var items []scriptItem
	start, depth := -1, 0 // the pending statement's first byte (-1: none), its depth in parentheses
	cut := func(end int, ended bool) {
		if start >= 0 && text[start:end] != ";" {
			items = append(items, scriptItem{sql: text[start:end], ended: ended, start: start, end: end})
		}
		start, depth = -1, 0
	}
	lineEnd := func(i int) int {
		if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
			return i + j
		}
		return len(text)
	}
	bol := true // nothing but blanks since the start of the line
	for i := 0; i < len(text); {
		c := text[i]
		if start < 0 && (i == 0 || text[i-1] == '\n') && isQuitWord(text[i:lineEnd(i)]) {
			return append(items, scriptItem{quit: true, start: i, end: lineEnd(i)})
		}
		switch {
		case c == '\n':
			bol = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '-' && strings.HasPrefix(text[i:], "--"):
			i = lineEnd(i)
			continue
		case c == '\\' && (bol || !lineStart):
			cut(i, false)
			e := lineEnd(i)
			meta := strings.TrimSpace(text[i:e])
			if f := strings.Fields(meta)[0]; f == `\q` || f == `\quit` {
				return append(items, scriptItem{quit: true, start: i, end: e})
			}
			items = append(items, scriptItem{meta: meta, start: i, end: e})
			i = e
			continue
		}
		bol = false
		if start < 0 {
			start = i
		}
		switch {
		case c == '/' && strings.HasPrefix(text[i:], "/*"):
			i = blockCommentEnd(text, i)
		case c == '\'':
			escapes := i > 0 && (text[i-1] == 'E' || text[i-1] == 'e') && (i < 2 || !pglex.IsIdentChar(text[i-2]))
			i, _ = pglex.ScanQuoted(text, i+1, '\'', escapes, nil)
		case c == '"':
			i, _ = pglex.ScanQuoted(text, i+1, '"', false, nil)
		case c == '$' && (i == 0 || !pglex.IsIdentChar(text[i-1])):
			if tag, end, _ := pglex.DollarQuoted(text[i:]); tag != "" {
				i += end
			} else {
				i++
			}
		case c == '(':
			depth++
			i++
		case c == ')':
			depth = max(depth-1, 0)
			i++
		case c == ';' && depth == 0:
			cut(i+1, true)
			i++
		case pglex.IsIdentStart(c):
			for i < len(text) && pglex.IsIdentChar(text[i]) {
				i++
			}
		default:
			i++
		}
	}
	cut(len(text), false)
	return items
}

// blockCommentEnd returns the index just past the /* */ comment that
// starts at text[i], nested comments included, or len(text) when it is
// not closed.
func blockCommentEnd(text string, i int) int {
	depth := 0
	for i < len(text) {
		switch {
		case strings.HasPrefix(text[i:], "/*"):
			depth++
			i += 2
		case strings.HasPrefix(text[i:], "*/"):
			depth--
			i += 2
			if depth == 0 {
				return i
			}
		default:
			i++
		}
	}
	return len(text)
}

// printError prints a statement's error as psql does (errorText), its
// position counted in the text sent for a queryError.
func printError(w io.Writer, err error) {
	var qe *queryError
	if errors.As(err, &qe) {
		fmt.Fprintln(w, qe.Error())
		return
	}
	fmt.Fprintln(w, errorText(err, ""))
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

// errorText renders err as psql does (messageText) when it is the
// server's (*pgconn.PgError) or Strata's parser's (*sqlerr.Error); any
// other error is "ERROR:  " and its text.
func errorText(err error, query string) string {
	var pe *pgconn.PgError
	var se *sqlerr.Error
	switch {
	case errors.As(err, &pe):
		return messageText(pe, query, true)
	case errors.As(err, &se):
		return messageText(&pgconn.PgError{Severity: "ERROR", Code: se.Code, Message: se.Message,
			Position: int32(se.Position), Detail: se.Detail, Hint: se.Hint}, query, true)
	}
	return "ERROR:  " + err.Error()
}

// messageText renders an ErrorResponse (isError) or a NoticeResponse as
// psql does at its default verbosity (libpq's pqBuildErrorMessage3):
// "SEVERITY:  message", then, when the message has a position in query,
// the line that holds it and a caret (positionLines), then "DETAIL:  "
// and "HINT:  " lines for the fields that are set. An error adds
// " (SQLSTATE code)" to its first line, which psql shows only in its
// verbose mode, and its "CONTEXT:  " (psql's SHOW_CONTEXT shows it for
// errors only), all without a last newline.
func messageText(pe *pgconn.PgError, query string, isError bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:  %s", pe.Severity, pe.Message)
	if isError {
		fmt.Fprintf(&b, " (SQLSTATE %s)", pe.Code)
	}
	if lines := positionLines(query, int(pe.Position)); lines != "" {
		b.WriteString("\n" + lines)
	}
	fields := []struct{ label, text string }{{"DETAIL", pe.Detail}, {"HINT", pe.Hint}}
	if isError {
		fields = append(fields, struct{ label, text string }{"CONTEXT", pe.Where})
	}
	for _, f := range fields {
		if f.text != "" {
			fmt.Fprintf(&b, "\n%s:  %s", f.label, f.text)
		}
	}
	return b.String()
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
			fmt.Fprintln(out) // psql's blank line after the row count
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

// connectFailure is what `strata sql` prints when it cannot connect, as
// psql prints it: "strata sql: error: " and libpq's "connection to server
// at "HOST", port PORT failed: " with the cause, the address it tried in
// parentheses when it is not the host given. A refused connection adds
// psql's hint line. Each distinct failure prints once: pgconn tries TLS
// and then plain TCP under sslmode=prefer, and a refused connection
// fails both the same way.
func connectFailure(cfg *pgconn.Config, err error) string {
	var lines []string
	for _, e := range connectAttempts(err) {
		host := strconv.Quote(cfg.Host)
		var op *net.OpError
		if errors.As(e, &op) && op.Addr != nil {
			if h, _, serr := net.SplitHostPort(op.Addr.String()); serr == nil && h != cfg.Host {
				host += " (" + h + ")"
			}
		}
		line := fmt.Sprintf("connection to server at %s, port %d failed: %s", host, cfg.Port, connectCause(e))
		if !slices.Contains(lines, line) {
			lines = append(lines, line)
		}
	}
	return "strata sql: error: " + strings.Join(lines, "\n") + "\n"
}

// connectAttempts returns the failure of each address pgconn tried (the
// errors joined under its ConnectError), or err alone.
func connectAttempts(err error) []error {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		if j, ok := ce.Unwrap().(interface{ Unwrap() []error }); ok {
			return j.Unwrap()
		}
		return []error{ce.Unwrap()}
	}
	return []error{err}
}

// connectCause is the cause of one failed attempt in libpq's words: the
// operating system's message for a system error (capitalized, as
// strerror's), the server's message after its severity for a refusal of
// the server's (a wrong password), else pgconn's own text.
func connectCause(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Severity + ":  " + pe.Message
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		msg := errno.Error()
		if msg != "" {
			msg = strings.ToUpper(msg[:1]) + msg[1:]
		}
		if errno == syscall.ECONNREFUSED {
			msg += "\n\tIs the server running on that host and accepting TCP/IP connections?"
		}
		return msg
	}
	return err.Error()
}
