package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chzyer/readline"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/server"
	"github.com/stratadb/strata/sql/pgwire"
)

// TestSQLCommand runs `strata sql -c` and `strata sql` with a script on
// standard input against a server, and checks the aligned output.
func TestSQLCommand(t *testing.T) {
	addr := startSQLServer(t, server.Options{})
	out, err := run(t, "sql", "--addr", addr, "-c", "CREATE TABLE t (k INT PRIMARY KEY, name TEXT); INSERT INTO t VALUES (1, 'ann'), (22, NULL)")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out != "CREATE TABLE\nINSERT 0 2\n" {
		t.Fatalf("output %q", out)
	}
	out, err = runIn(t, strings.NewReader("SELECT k, name FROM t ORDER BY k;\n"), "sql", "--addr", addr)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := " k  | name\n----+------\n  1 | ann\n 22 |\n(2 rows)\n\n"
	if out != want {
		t.Fatalf("output\n%q\nwant\n%q", out, want)
	}
	// A failed -c prints its error on standard error and exits 1.
	stdout, stderr, code := sqlRun(t, nil, "--addr", addr, "-c", "SELECT nope FROM t")
	if code != exitFailure || stdout != "" || !strings.HasPrefix(stderr, "ERROR:  column \"nope\" does not exist (SQLSTATE 42703)\n") {
		t.Fatalf("a failed -c: status %d, output %q, errors %q", code, stdout, stderr)
	}
	// A script goes on after an error, and \dt works; as psql's, its
	// status is 0.
	stdout, stderr, code = sqlRun(t, strings.NewReader("SELECT nope FROM t;\n\\dt\nSELECT count(*) FROM t;\n"), "--addr", addr)
	if code != exitOK || !strings.HasPrefix(stderr, "ERROR:") || !strings.Contains(stdout, " t\n") || !strings.Contains(stdout, "     2\n") {
		t.Fatalf("script with an error and \\dt: status %d, output\n%s\nerrors\n%s", code, stdout, stderr)
	}
}

// sqlRun runs `strata sql` with args, and in as its standard input when
// not nil, and returns what it wrote to standard output, what it wrote
// to standard error (with the line main adds for an error it returns)
// and the exit status main gives (exitStatus).
func sqlRun(t *testing.T, in io.Reader, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := newRootCommand()
	var o, e bytes.Buffer
	cmd.SetOut(&o)
	cmd.SetErr(&e)
	if in != nil {
		cmd.SetIn(in)
	}
	cmd.SetArgs(append([]string{"sql"}, args...))
	code, msg := exitStatus(cmd.Execute())
	if msg != "" {
		e.WriteString("strata: " + msg + "\n")
	}
	return o.String(), e.String(), code
}

// startSQLServer starts a server with o's TLS and authentication over a
// fresh data directory, with 20 ms epochs and checkpoints, on a free local
// port without HTTP, and returns its address; it closes when the test
// ends.
func startSQLServer(t *testing.T, o server.Options) string {
	t.Helper()
	o.Engine = engine.Options{Dir: t.TempDir(), EpochInterval: 20 * time.Millisecond, CheckpointInterval: 20 * time.Millisecond}
	o.Listen, o.HTTP = "127.0.0.1:0", "-"
	s, err := server.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.Addr().String()
}

// selfSignedCA writes a fresh self-signed certificate for 127.0.0.1 to
// dir/ca.pem and returns the server's TLS configuration with it.
func selfSignedCA(t *testing.T, dir string) (*tls.Config, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "strata test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:        true, BasicConstraintsValid: true,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, MinVersion: tls.VersionTLS12}, path
}

// TestSQLCommandPasswordAndTLS: `strata sql` reaches a server that
// requires TLS and a password, with --password or PGPASSWORD and
// --sslmode as libpq's; verify-full checks the certificate against
// --sslrootcert.
func TestSQLCommandPasswordAndTLS(t *testing.T) {
	dir := t.TempDir()
	tlsConf, ca := selfSignedCA(t, dir)
	auth, err := pgwire.ParsePasswordFile([]byte("root:s3cret/@?\n"))
	if err != nil {
		t.Fatal(err)
	}
	addr := startSQLServer(t, server.Options{TLS: tlsConf, RequireTLS: true, Auth: auth})
	t.Setenv("PGPASSWORD", "")
	t.Setenv("PGSSLMODE", "")
	t.Setenv("PGSSLROOTCERT", "")
	for _, tc := range []struct {
		name string
		args []string
		env  string // PGPASSWORD
		ok   bool
		want string // in the output or the error
	}{
		{"require", []string{"--sslmode", "require", "--password", "s3cret/@?"}, "", true, "   1\n(1 row)"},
		{"prefer by default", []string{"--password", "s3cret/@?"}, "", true, "   1\n(1 row)"},
		{"PGPASSWORD", []string{"--sslmode", "require"}, "s3cret/@?", true, "   1\n(1 row)"},
		{"verify-full", []string{"--sslmode", "verify-full", "--sslrootcert", ca, "--password", "s3cret/@?"}, "", true, "   1\n(1 row)"},
		{"disable refused", []string{"--sslmode", "disable", "--password", "s3cret/@?"}, "", false, "TLS"},
		{"wrong password", []string{"--sslmode", "require", "--password", "nope"}, "", false, "password authentication failed"},
		{"verify-full without a CA", []string{"--sslmode", "verify-full"}, "", false, "--sslrootcert"},
		{"bad sslmode", []string{"--sslmode", "always"}, "", false, `--sslmode "always" is not one of disable, allow, prefer, require, verify-ca, verify-full`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PGPASSWORD", tc.env)
			out, err := run(t, append([]string{"sql", "--addr", addr, "-c", "SELECT 1 AS one"}, tc.args...)...)
			if tc.ok {
				if err != nil || !strings.Contains(out, tc.want) {
					t.Fatalf("%v\n%s", err, out)
				}
				return
			}
			// The error is returned, or printed (a failed connection).
			if err == nil || !strings.Contains(err.Error()+"\n"+out, tc.want) {
				t.Fatalf("want an error saying %q, got %v\n%s", tc.want, err, out)
			}
		})
	}
}

// TestSQLCommandQuits: \q, quit and exit end a script or -c, also on a
// line of their own after SQL in a -c's text; a \q in a -c ends the
// run, so that a later -c does not run.
func TestSQLCommandQuits(t *testing.T) {
	addr := startSQLServer(t, server.Options{})
	if out, err := run(t, "sql", "--addr", addr, "-c", `\q`); err != nil || out != "" {
		t.Fatalf(`-c \q: %v %q`, err, out)
	}
	for _, quit := range []string{`\q`, "quit", "exit", "exit;", "  \\q  "} {
		want := " one\n-----\n   1\n(1 row)\n\n"
		out, err := runIn(t, strings.NewReader("SELECT 1 AS one;\n"+quit+"\nSELECT nope;\n"), "sql", "--addr", addr)
		if err != nil || out != want {
			t.Fatalf("script with %s: %v, output %q, want %q", quit, err, out, want)
		}
		out, err = run(t, "sql", "--addr", addr, "-c", "SELECT 1 AS one;\n"+quit+"\nSELECT nope;", "-c", "SELECT nope")
		if err != nil || out != want {
			t.Fatalf("-c with %s: %v, output %q, want %q", quit, err, out, want)
		}
	}
}

// TestSQLCommandMetaLinesInC: a -c's text runs backslash commands on
// lines of their own between its SQL, while the same words inside a
// statement or a string stay SQL; its first error ends it.
func TestSQLCommandMetaLinesInC(t *testing.T) {
	addr := startSQLServer(t, server.Options{})
	for _, tc := range []struct {
		name, text, want string
		fails            bool
	}{
		{"\\dt between statements", "CREATE TABLE t (k INT PRIMARY KEY);\n\\dt\nSELECT count(*) AS n FROM t;",
			"CREATE TABLE\n name\n------\n t\n(1 row)\n\n n\n---\n 0\n(1 row)\n\n", false},
		{"quit as a column alias", "SELECT 1 AS\nquit;\n", " quit\n------\n    1\n(1 row)\n\n", false},
		{"\\q inside a string", "SELECT length('a\n\\q\nb') AS n;\n\\q\nSELECT nope;", " n\n---\n 6\n(1 row)\n\n", false},
		{"an error ends the text", "SELECT 1/0;\n\\dt\nSELECT 1 AS one;", "", true},
		{"two statements before a command go whole", "SELECT 1 AS a; SELECT 2 AS b\n\\q", " a\n---\n 1\n(1 row)\n\n b\n---\n 2\n(1 row)\n\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := sqlRun(t, nil, "--addr", addr, "-c", tc.text)
			if (code != exitOK) != tc.fails || out != tc.want || (stderr != "") != tc.fails {
				t.Fatalf("%q: status %d, output\n%q\nwant\n%q\nerrors %q", tc.text, code, out, tc.want, stderr)
			}
		})
	}
}

// TestScanScript: a script's text, and a -c's (lineStart), cut into
// statements, backslash commands and the end, as psql's lexer cuts them.
func TestScanScript(t *testing.T) {
	sql := func(text string, ended bool) scriptItem { return scriptItem{sql: text, ended: ended} }
	meta := func(text string) scriptItem { return scriptItem{meta: text} }
	quit := scriptItem{quit: true}
	for _, tc := range []struct {
		text      string
		lineStart bool
		want      []scriptItem
	}{
		{"SELECT 1;", false, []scriptItem{sql("SELECT 1;", true)}},
		{"SELECT 1;\n\\q\nSELECT 2;", false, []scriptItem{sql("SELECT 1;", true), quit}},
		{"SELECT 1;\n\n  \\dt\n\nSELECT\n 2;\nexit", false, []scriptItem{sql("SELECT 1;", true), meta(`\dt`), sql("SELECT\n 2;", true), quit}},
		{"SELECT 1 AS\nexit\n", false, []scriptItem{sql("SELECT 1 AS\nexit\n", false)}},
		{"SELECT '\n\\q\n';\n\\d t", false, []scriptItem{sql("SELECT '\n\\q\n';", true), meta(`\d t`)}},
		// A command ends the statement before it (psql sends it before \q leaves).
		{"SELECT 1 AS x\n\\q\nSELECT 2;", false, []scriptItem{sql("SELECT 1 AS x\n", false), quit}},
		{"SELECT 1 AS x\n\\dt\n;", false, []scriptItem{sql("SELECT 1 AS x\n", false), meta(`\dt`)}},
		{"SELECT 1 AS x\n\\q", true, []scriptItem{sql("SELECT 1 AS x\n", false), quit}},
		// In a script a command may follow a statement on its line; in a -c it is SQL there.
		{"SELECT 1 AS a; \\q\nSELECT 2;", false, []scriptItem{sql("SELECT 1 AS a;", true), quit}},
		{"SELECT 1 AS a; \\q", true, []scriptItem{sql("SELECT 1 AS a;", true), sql(`\q`, false)}},
		{"SELECT 1 \\dt", false, []scriptItem{sql("SELECT 1 ", false), meta(`\dt`)}},
		// Quotes, comments, parentheses and blanks.
		{"SELECT E'it\\'s;' AS a, \"x;\"\"y\" AS b;", false, []scriptItem{sql("SELECT E'it\\'s;' AS a, \"x;\"\"y\" AS b;", true)}},
		{"SELECT 'it''s;'; SELECT $f$ a; \\q $f$, $1;", false, []scriptItem{sql("SELECT 'it''s;';", true), sql("SELECT $f$ a; \\q $f$, $1;", true)}},
		{"-- a; \\q\n  /* b; /* c; */ \\q */ SELECT 1; -- d\n", false, []scriptItem{sql("/* b; /* c; */ \\q */ SELECT 1;", true)}},
		{"CREATE RULE r AS ON INSERT TO t DO (SELECT 1; SELECT 2);", false, []scriptItem{sql("CREATE RULE r AS ON INSERT TO t DO (SELECT 1; SELECT 2);", true)}},
		{"; ;\n\tSELECT 1", false, []scriptItem{sql("SELECT 1", false)}},
		{"SELECT 'open\n\\q\n", false, []scriptItem{sql("SELECT 'open\n\\q\n", false)}},
		{"  quit  \nSELECT 1;", true, []scriptItem{quit}},
	} {
		got := scanScript(tc.text, tc.lineStart)
		for i := range got {
			got[i].start, got[i].end = 0, 0
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("scanScript(%q, %v) = %+v, want %+v", tc.text, tc.lineStart, got, tc.want)
		}
	}
	// The spans hold the statement's text.
	text := "SELECT 1;\n  SELECT 2\n\\dt"
	for _, it := range scanScript(text, true) {
		if got := text[it.start:it.end]; got != it.sql && got != it.meta {
			t.Errorf("span %q of %+v", got, it)
		}
	}
}

// TestSQLCommandBackslashEndsStatement: a backslash command sends the
// statement before it that no ';' ended, as psql does for \q: in a
// script, in a -c, and after a ';' on the same line in a script. In a -c
// the same line goes to the server whole, as psql's -c sends it.
func TestSQLCommandBackslashEndsStatement(t *testing.T) {
	addr := startSQLServer(t, server.Options{})
	x := " x\n---\n 1\n(1 row)\n\n"
	for _, tc := range []struct {
		name   string
		stdin  string // a script on standard input, else
		c      string // the text of a -c
		want   string
		errors string // the start of what is printed on standard error
		code   int
	}{
		{name: "script, \\q", stdin: "SELECT 1 AS x\n\\q\nSELECT nope;\n", want: x},
		{name: "-c, \\q", c: "SELECT 1 AS x\n\\q\nSELECT nope;", want: x},
		{name: "script, \\dt", stdin: "SELECT 1 AS x\n\\dt\n", want: x + " name\n------\n(0 rows)\n\n"},
		{name: "-c, \\dt", c: "SELECT 1 AS x\n\\dt", want: x + " name\n------\n(0 rows)\n\n"},
		{name: "script, \\q after ; on a line", stdin: "SELECT 1 AS x; \\q\nSELECT nope;\n", want: x},
		{name: "-c, \\q after ; on a line", c: "SELECT 1 AS x; \\q", errors: "ERROR:  syntax error at or near \"\\\"", code: exitFailure},
		{name: "script, an unknown command", stdin: "\\foo bar\nSELECT 1 AS x;\n", want: x, errors: "invalid command \\foo\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, stderr string
			var code int
			if tc.stdin != "" {
				out, stderr, code = sqlRun(t, strings.NewReader(tc.stdin), "--addr", addr)
			} else {
				out, stderr, code = sqlRun(t, nil, "--addr", addr, "-c", tc.c)
			}
			if out != tc.want || code != tc.code || !strings.HasPrefix(stderr, tc.errors) || (tc.errors == "") != (stderr == "") {
				t.Fatalf("status %d, output\n%q\nwant\n%q\nerrors\n%s", code, out, tc.want, stderr)
			}
		})
	}
}

// TestSQLCommandErrorPosition: an error with a position prints psql's
// LINE n and a caret under the character it points at, counted in the
// text sent: the whole -c, or a script's statement.
func TestSQLCommandErrorPosition(t *testing.T) {
	addr := startSQLServer(t, server.Options{})
	if out, err := run(t, "sql", "--addr", addr, "-c", "CREATE TABLE t (k INT PRIMARY KEY)"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	out, stderr, code := sqlRun(t, nil, "--addr", addr, "-c", "SELECT 1 AS one;\nSELECT *\n  FORM t;")
	if want := "ERROR:  syntax error at or near \"FORM\" (SQLSTATE 42601)\nLINE 3:   FORM t;\n          ^\n"; code != exitFailure || out != "" || stderr != want {
		t.Fatalf("-c: status %d, output %q, errors\n%s\nwant\n%s", code, out, stderr, want)
	}
	out, stderr, code = sqlRun(t, nil, "--addr", addr, "-c", "SELECT k,\n\tnope FROM t", "-c", "SELECT 1 AS one")
	if want := "ERROR:  column \"nope\" does not exist (SQLSTATE 42703)\nLINE 2:  nope FROM t\n         ^\n"; code != exitOK || out != " one\n-----\n   1\n(1 row)\n\n" || stderr != want {
		t.Fatalf("two -c: status %d, output %q, errors\n%s\nwant\n%s", code, out, stderr, want)
	}
	out, stderr, code = sqlRun(t, strings.NewReader("SELECT 1 AS one;\nSELECT k,\n  nope\nFROM t;\nSELECT *\n  FORM t;\n"), "--addr", addr)
	want := "ERROR:  column \"nope\" does not exist (SQLSTATE 42703)\nLINE 2:   nope\n          ^\n" +
		"ERROR:  syntax error at or near \"FORM\" (SQLSTATE 42601)\nLINE 2:   FORM t;\n          ^\n"
	if code != exitOK || out != " one\n-----\n   1\n(1 row)\n\n" || stderr != want {
		t.Fatalf("script: status %d, output %q, errors\n%s\nwant\n%s", code, out, stderr, want)
	}
}

// TestPositionLines: the LINE and caret lines of an error position, as
// libpq prints them (each want is psql's output for the same query and
// position).
func TestPositionLines(t *testing.T) {
	cols := func(from, to int) string {
		var s []string
		for i := from; i < to; i++ {
			s = append(s, fmt.Sprintf("col%d", i))
		}
		return strings.Join(s, ", ")
	}
	for _, tc := range []struct {
		query string
		pos   int
		want  string
	}{
		{"SELECT * FORM t;", 10, "LINE 1: SELECT * FORM t;\n                 ^"},
		{"SELECT 1;\nSELECT *\n  FORM t;", 22, "LINE 3:   FORM t;\n          ^"},
		{"SELECT a,\n\tb FORM t", 14, "LINE 2:  b FORM t\n           ^"},
		{"SELECT 'x',\r\n  * FORM t", 18, "LINE 2:   * FORM t\n            ^"},
		{"SELECT 'x',\r  * FORM t", 17, "LINE 2:   * FORM t\n            ^"},
		{"SELECT '漢字漢字', * FORM t", 18, "LINE 1: SELECT '漢字漢字', * FORM t\n                             ^"},
		{"SELECT (1", 10, "LINE 1: SELECT (1\n                 ^"},
		{"SELECT a FORM t " + cols(0, 30), 15,
			"LINE 1: SELECT a FORM t col0, col1, col2, col3, col4, col5, col6, co...\n                      ^"},
		{"SELECT " + cols(0, 10) + " FORM t " + cols(0, 30), 72,
			"LINE 1: ...l2, col3, col4, col5, col6, col7, col8, col9 FORM t col0, co...\n                                                             ^"},
		{"SELECT 1", 0, ""},
		{"SELECT 1", 10, ""},
		{"", 1, "LINE 1: \n        ^"},
	} {
		if got := positionLines(tc.query, tc.pos); got != tc.want {
			t.Errorf("positionLines(%q, %d) =\n%s\nwant\n%s", tc.query, tc.pos, got, tc.want)
		}
	}
}

// TestSQLCommandSeveralActions: several -c and -f run in the order given
// and each prints its result, as psql's do; an error in one is printed and
// the next runs.
func TestSQLCommandSeveralActions(t *testing.T) {
	addr := startSQLServer(t, server.Options{})
	out, err := run(t, "sql", "--addr", addr, "-c", "SELECT 1 AS a", "-c", "SELECT 2 AS b")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if want := " a\n---\n 1\n(1 row)\n\n b\n---\n 2\n(1 row)\n\n"; out != want {
		t.Fatalf("output\n%q\nwant\n%q", out, want)
	}
	script := filepath.Join(t.TempDir(), "s.sql")
	if err := os.WriteFile(script, []byte("SELECT 3 AS c;\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := sqlRun(t, nil, "--addr", addr, "-c", "SELECT 1/0", "-f", script, "-c", "SELECT 4 AS d")
	if want := " c\n---\n 3\n(1 row)\n\n d\n---\n 4\n(1 row)\n\n"; code != exitOK || out != want || stderr != "ERROR:  division by zero (SQLSTATE 22012)\n" {
		t.Fatalf("status %d, output\n%q\nwant\n%q\nerrors %q", code, out, want, stderr)
	}
}

// TestSQLCommandExitStatus: the exit status is psql's. 0 when the run
// went to its end, whatever failed inside a -f or standard input; 1 when
// the last -c failed, a -f cannot be read or a flag is wrong; 2 when the
// server cannot be reached; 3 when ON_ERROR_STOP stopped a script. Errors
// go to standard error, results to standard output.
func TestSQLCommandExitStatus(t *testing.T) {
	addr := startSQLServer(t, server.Options{})
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.sql")
	if err := os.WriteFile(bad, []byte("SELEC 1;\nSELECT 2 AS two;\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const selec = "ERROR:  syntax error at or near \"SELEC\" (SQLSTATE 42601)\nLINE 1: SELEC 1"
	two := " two\n-----\n   2\n(1 row)\n\n"
	for _, tc := range []struct {
		name   string
		stdin  string
		args   []string
		code   int
		want   string // standard output
		errors string // the start of standard error
	}{
		{"one failed -c", "", []string{"-c", "SELEC 1"}, exitFailure, "", selec},
		{"a failed -c, then a good one", "", []string{"-c", "SELEC 1", "-c", "SELECT 2 AS two"}, exitOK, two, selec},
		{"a good -c, then a failed one", "", []string{"-c", "SELECT 2 AS two", "-c", "SELEC 1"}, exitFailure, two, selec},
		{"a -f with a failed statement", "", []string{"-f", bad}, exitOK, two, selec},
		{"standard input with a failed statement", "SELEC 1;\nSELECT 2 AS two;\n", nil, exitOK, two, selec},
		{"ON_ERROR_STOP stops a -f", "", []string{"-v", "ON_ERROR_STOP=1", "-f", bad, "-c", "SELECT 2 AS two"}, exitUser, "", selec},
		{"ON_ERROR_STOP stops standard input", "SELEC 1;\nSELECT 2 AS two;\n", []string{"-v", "ON_ERROR_STOP=on"}, exitUser, "", selec},
		{"\\set ON_ERROR_STOP in a script", "\\set ON_ERROR_STOP on\nSELEC 1;\nSELECT 2 AS two;\n", nil, exitUser, "", selec},
		{"\\unset ON_ERROR_STOP in a script", "\\unset ON_ERROR_STOP\nSELEC 1;\nSELECT 2 AS two;\n", []string{"-v", "ON_ERROR_STOP=1"}, exitOK, two, selec},
		{"ON_ERROR_STOP stops the -c", "", []string{"-v", "ON_ERROR_STOP=true", "-c", "SELEC 1", "-c", "SELECT 2 AS two"}, exitFailure, "", selec},
		{"ON_ERROR_STOP and an unknown command", "\\foo\nSELECT 2 AS two;\n", []string{"-v", "ON_ERROR_STOP=1"}, exitUser, "", "invalid command \\foo\n"},
		{"a -f that cannot be read", "", []string{"-f", filepath.Join(dir, "none.sql"), "-c", "SELECT 2 AS two", "-f", filepath.Join(dir, "none.sql")}, exitFailure, two, "strata: open "},
		{"a bad ON_ERROR_STOP", "", []string{"-v", "ON_ERROR_STOP=maybe", "-c", "SELECT 2 AS two"}, exitFailure, "", "strata: -v ON_ERROR_STOP=maybe: unrecognized value \"maybe\" for \"ON_ERROR_STOP\": Boolean expected\n"},
		{"another variable", "", []string{"-v", "ECHO=all", "-c", "SELECT 2 AS two"}, exitFailure, "", "strata: -v ECHO=all: strata sql knows only the variable ON_ERROR_STOP, not \"ECHO\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in io.Reader
			if tc.stdin != "" {
				in = strings.NewReader(tc.stdin)
			}
			out, stderr, code := sqlRun(t, in, append([]string{"--addr", addr}, tc.args...)...)
			if code != tc.code || out != tc.want || !strings.HasPrefix(stderr, tc.errors) {
				t.Fatalf("status %d (want %d), output\n%q\nwant\n%q\nerrors\n%s\nwant them to start with\n%s", code, tc.code, out, tc.want, stderr, tc.errors)
			}
		})
	}
}

// TestSQLCommandNoServer: when nothing listens, `strata sql` says so
// once, in psql's words, and exits with status 2, whatever the sslmode
// (prefer tries TLS, then plain TCP).
func TestSQLCommandNoServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().(*net.TCPAddr)
	l.Close()
	want := fmt.Sprintf("strata sql: error: connection to server at \"127.0.0.1\", port %d failed: Connection refused\n"+
		"\tIs the server running on that host and accepting TCP/IP connections?\n", closed.Port)
	for _, mode := range []string{"prefer", "disable", "require"} {
		out, stderr, code := sqlRun(t, nil, "--addr", closed.String(), "--sslmode", mode, "-c", "SELECT 1")
		if code != exitBadConn || out != "" || stderr != want {
			t.Fatalf("sslmode %s: status %d (want %d), output %q, errors\n%q\nwant\n%q", mode, code, exitBadConn, out, stderr, want)
		}
	}
}

// TestSQLCommandNoticesDetailHint: the server's notices print on
// standard error as psql prints them, when they arrive; an error's DETAIL
// and HINT follow its LINE and caret.
func TestSQLCommandNoticesDetailHint(t *testing.T) {
	addr := startSQLServer(t, server.Options{})
	for _, tc := range []struct {
		name, c, want, errors string
		code                  int
	}{
		{"a notice", "DROP TABLE IF EXISTS nonexist", "DROP TABLE\n", "NOTICE:  table \"nonexist\" does not exist, skipping\n", exitOK},
		{"notices between results", "SELECT 1 AS x; DROP TABLE IF EXISTS a; DROP TABLE IF EXISTS b",
			" x\n---\n 1\n(1 row)\n\nDROP TABLE\nDROP TABLE\n",
			"NOTICE:  table \"a\" does not exist, skipping\nNOTICE:  table \"b\" does not exist, skipping\n", exitOK},
		{"a hint", "CREATE TABLE f5 (id INT) WITH (connector = 'datagen', rows-per-second = '10');", "",
			"ERROR:  syntax error at or near \"-\" (SQLSTATE 42601)\n" +
				"LINE 1: ...ABLE f5 (id INT) WITH (connector = 'datagen', rows-per-secon...\n" +
				"                                                             ^\n" +
				"HINT:  An option name that holds a dash is quoted: 'rows-per-second' = ... (dotted names such as nexmark.table need no quotes).\n",
			exitFailure},
		{"a detail", "SELECT 123.45::numeric(3,1)", "",
			"ERROR:  numeric field overflow (SQLSTATE 22003)\nDETAIL:  A field with precision 3, scale 1 must round to an absolute value less than 10^2.\n",
			exitFailure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := sqlRun(t, nil, "--addr", addr, "-c", tc.c)
			if code != tc.code || out != tc.want || stderr != tc.errors {
				t.Fatalf("status %d, output\n%q\nwant\n%q\nerrors\n%s\nwant\n%s", code, out, tc.want, stderr, tc.errors)
			}
		})
	}
}

// TestMessageText: an ErrorResponse or NoticeResponse as psql prints it:
// the message, LINE and caret, DETAIL, HINT, and an error's CONTEXT.
func TestMessageText(t *testing.T) {
	full := &pgconn.PgError{Severity: "ERROR", Code: "22012", Message: "division by zero", Position: 8,
		Detail: "It was zero.", Hint: "Divide by something else.", Where: "SQL function \"f\""}
	for _, tc := range []struct {
		pe      *pgconn.PgError
		query   string
		isError bool
		want    string
	}{
		{full, "SELECT 1/0", true, "ERROR:  division by zero (SQLSTATE 22012)\nLINE 1: SELECT 1/0\n               ^\n" +
			"DETAIL:  It was zero.\nHINT:  Divide by something else.\nCONTEXT:  SQL function \"f\""},
		{full, "", true, "ERROR:  division by zero (SQLSTATE 22012)\nDETAIL:  It was zero.\nHINT:  Divide by something else.\nCONTEXT:  SQL function \"f\""},
		{&pgconn.PgError{Severity: "NOTICE", Code: "00000", Message: "m", Detail: "d", Hint: "h", Where: "w"}, "SELECT 1", false, "NOTICE:  m\nDETAIL:  d\nHINT:  h"},
		{&pgconn.PgError{Severity: "WARNING", Code: "01000", Message: "m", Position: 3}, "SELECT 1", false, "WARNING:  m\nLINE 1: SELECT 1\n          ^"},
	} {
		if got := messageText(tc.pe, tc.query, tc.isError); got != tc.want {
			t.Errorf("messageText(%+v, %q) =\n%s\nwant\n%s", tc.pe, tc.query, got, tc.want)
		}
	}
}

// TestParseBool: psql's booleans for ON_ERROR_STOP.
func TestParseBool(t *testing.T) {
	for v, want := range map[string]int{ // 1 true, 0 false, -1 refused
		"on": 1, "ON": 1, "1": 1, "t": 1, "true": 1, "y": 1, "yes": 1,
		"off": 0, "of": 0, "0": 0, "f": 0, "FALSE": 0, "n": 0, "no": 0,
		"o": -1, "": -1, "2": -1, "maybe": -1, "onn": -1,
	} {
		b, ok := parseBool(v)
		got := -1
		if ok && b {
			got = 1
		} else if ok {
			got = 0
		}
		if got != want {
			t.Errorf("parseBool(%q) = %v, %v", v, b, ok)
		}
	}
}

// TestExitStatus: main's exit status and message for a command's error.
func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
		msg  string
	}{
		{nil, 0, ""},
		{errors.New("bad flag"), 1, "bad flag"},
		{&exitError{code: 3}, 3, ""},
		{fmt.Errorf("wrapped: %w", &exitError{code: 2, err: errors.New("connect to x: refused")}), 2, "wrapped: connect to x: refused"},
		{errVerifyFailed, 2, errVerifyFailed.Error()},
	} {
		if code, msg := exitStatus(tc.err); code != tc.code || msg != tc.msg {
			t.Errorf("exitStatus(%v) = %d, %q, want %d, %q", tc.err, code, msg, tc.code, tc.msg)
		}
	}
}

// TestSQLCommandTerminal: at the terminal a statement runs once its ';'
// is typed, the prompt tells a statement being typed, Ctrl-C drops it, a
// backslash command sends the statement it cuts, and \q leaves without
// sending one, as psql does.
func TestSQLCommandTerminal(t *testing.T) {
	addr := startSQLServer(t, server.Options{})
	cfg, err := pgconn.ParseConfig("postgres://root@" + addr + "/dev?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	s := &sqlSession{}
	cfg.OnNotice = s.notice
	if s.conn, err = pgconn.ConnectConfig(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	defer s.conn.Close(context.Background())
	for _, tc := range []struct {
		name    string
		lines   []string // then io.EOF; errInterrupt stands for Ctrl-C
		prompts string   // the prompt before each line, their second characters ('=' or '-')
		want    string   // standard output
		errors  string
	}{
		{"statements over lines", []string{"SELECT 1", "AS x;  SELECT", "2 AS y; SELEC", "3;"}, "=---=",
			" x\n---\n 1\n(1 row)\n\n y\n---\n 2\n(1 row)\n\n\n", "ERROR:  syntax error at or near \"SELEC\" (SQLSTATE 42601)\nLINE 1: SELEC\n        ^\n"},
		{"Ctrl-C drops the statement", []string{"SELECT nope", errInterrupt, "SELECT 1 AS x;"}, "=-==",
			" x\n---\n 1\n(1 row)\n\n\n", ""},
		{"a command sends the statement it cuts", []string{"SELECT 1 AS x", `\dt`}, "=-=",
			" x\n---\n 1\n(1 row)\n\n name\n------\n(0 rows)\n\n\n", ""},
		{"\\q does not send it", []string{"SELECT 1 AS x", `\q`, "SELECT 2 AS y;"}, "=-", "", ""},
		{"quit", []string{"quit", "SELECT 2 AS y;"}, "=", "", ""},
		{"a notice", []string{"DROP TABLE IF EXISTS nonexist;"}, "==", "DROP TABLE\n\n", "NOTICE:  table \"nonexist\" does not exist, skipping\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			s.out, s.errOut = &out, &errOut
			var prompts strings.Builder
			next := 0
			code := s.terminal(context.Background(), func(prompt string) (string, error) {
				prompts.WriteByte(prompt[3])
				if next == len(tc.lines) {
					return "", io.EOF
				}
				next++
				if tc.lines[next-1] == errInterrupt {
					return "", readline.ErrInterrupt
				}
				return tc.lines[next-1], nil
			})
			if code != exitOK || out.String() != tc.want || prompts.String() != tc.prompts || errOut.String() != tc.errors {
				t.Fatalf("status %d, prompts %q (want %q), output\n%q\nwant\n%q\nerrors\n%s\nwant\n%s", code, prompts.String(), tc.prompts, out.String(), tc.want, errOut.String(), tc.errors)
			}
		})
	}
}

// errInterrupt is a line of TestSQLCommandTerminal that stands for Ctrl-C.
const errInterrupt = "\x03"

// TestSQLCommandConnectionLost: when the server closes the connection in
// the middle of a script, the run stops with psql's status 2, saying so.
func TestSQLCommandConnectionLost(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	queries := make(chan string, 1)
	go func() {
		// A server that lets the client in, reads one query and closes
		// the connection.
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		be := pgproto3.NewBackend(c, c)
		if _, err := be.ReceiveStartupMessage(); err != nil {
			return
		}
		be.Send(&pgproto3.AuthenticationOk{})
		be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
		if err := be.Flush(); err != nil {
			return
		}
		if m, err := be.Receive(); err == nil {
			if q, ok := m.(*pgproto3.Query); ok {
				queries <- q.String
			}
		}
	}()
	out, stderr, code := sqlRun(t, strings.NewReader("SELECT 1;\nSELECT 2;\n"), "--addr", l.Addr().String(), "--sslmode", "disable")
	if code != exitBadConn || out != "" || !strings.HasSuffix(stderr, "strata: the connection to the server was lost\n") || strings.Contains(stderr, "ERROR:") {
		t.Fatalf("status %d, output %q, errors\n%s", code, out, stderr)
	}
	if q := <-queries; q != "SELECT 1;" {
		t.Fatalf("the server read %q", q)
	}
}
