package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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
	want := " k  | name\n----+------\n  1 | ann\n 22 |\n(2 rows)\n"
	if out != want {
		t.Fatalf("output\n%q\nwant\n%q", out, want)
	}
	if _, err := run(t, "sql", "--addr", addr, "-c", "SELECT nope FROM t"); err == nil || !strings.Contains(err.Error(), "42703") {
		t.Fatalf("an error: %v", err)
	}
	// A script goes on after an error, and \dt works.
	out, err = runIn(t, strings.NewReader("SELECT nope FROM t;\n\\dt\nSELECT count(*) FROM t;\n"), "sql", "--addr", addr)
	if err == nil || !strings.Contains(out, "ERROR:") || !strings.Contains(out, " t\n") || !strings.Contains(out, "     2\n") {
		t.Fatalf("script with an error and \\dt: %v\n%s", err, out)
	}
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
			if err == nil || !strings.Contains(err.Error(), tc.want) {
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
		want := " one\n-----\n   1\n(1 row)\n"
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
			"CREATE TABLE\n name\n------\n t\n(1 row)\n n\n---\n 0\n(1 row)\n", false},
		{"quit as a column alias", "SELECT 1 AS\nquit;\n", " quit\n------\n    1\n(1 row)\n", false},
		{"\\q inside a string", "SELECT length('a\n\\q\nb') AS n;\n\\q\nSELECT nope;", " n\n---\n 6\n(1 row)\n", false},
		{"an error ends the text", "SELECT 1/0;\n\\dt\nSELECT 1 AS one;", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := run(t, "sql", "--addr", addr, "-c", tc.text)
			if (err != nil) != tc.fails || out != tc.want {
				t.Fatalf("%q: %v, output\n%q\nwant\n%q", tc.text, err, out, tc.want)
			}
		})
	}
}

// TestSplitScript: a script's lines cut into SQL, backslash commands and
// the end.
func TestSplitScript(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []scriptPart
	}{
		{"SELECT 1;", []scriptPart{{sql: "SELECT 1;\n"}}},
		{"SELECT 1;\n\\q\nSELECT 2;", []scriptPart{{sql: "SELECT 1;\n"}, {quit: true}}},
		{"SELECT 1;\n\n  \\dt\n\nSELECT\n 2;\nexit", []scriptPart{{sql: "SELECT 1;\n"}, {meta: "SHOW TABLES"}, {sql: "\nSELECT\n 2;\n"}, {quit: true}}},
		{"SELECT 1 AS\nexit\n", []scriptPart{{sql: "SELECT 1 AS\nexit\n\n"}}},
		{"SELECT '\n\\q\n';\n\\d t", []scriptPart{{sql: "SELECT '\n\\q\n';\n"}, {meta: "DESCRIBE t"}}},
		{"SELECT 1\n\\q", []scriptPart{{sql: "SELECT 1\n\\q\n"}}},
	} {
		if got := splitScript(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("splitScript(%q) = %+v, want %+v", tc.text, got, tc.want)
		}
	}
}

// TestSQLCommandErrorPosition: an error with a position prints psql's
// LINE n and a caret under the character it points at, counted in the
// text sent: the whole -c, a script's statement, or a script's piece
// that Strata's parser refused before sending it.
func TestSQLCommandErrorPosition(t *testing.T) {
	addr := startSQLServer(t, server.Options{})
	if out, err := run(t, "sql", "--addr", addr, "-c", "CREATE TABLE t (k INT PRIMARY KEY)"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The last -c's error is the command's.
	_, err := run(t, "sql", "--addr", addr, "-c", "SELECT 1 AS one;\nSELECT *\n  FORM t;")
	if want := "ERROR:  syntax error at or near \"FORM\" (SQLSTATE 42601)\nLINE 3:   FORM t;\n          ^"; err == nil || err.Error() != want {
		t.Fatalf("-c: %v\nwant\n%s", err, want)
	}
	// Before another -c, it is printed.
	out, err := run(t, "sql", "--addr", addr, "-c", "SELECT k,\n\tnope FROM t", "-c", "SELECT 1 AS one")
	if want := "ERROR:  column \"nope\" does not exist (SQLSTATE 42703)\nLINE 2:  nope FROM t\n         ^\n one\n-----\n   1\n(1 row)\n"; err != nil || out != want {
		t.Fatalf("two -c: %v, output\n%s\nwant\n%s", err, out, want)
	}
	out, err = runIn(t, strings.NewReader("SELECT 1 AS one;\nSELECT k,\n  nope\nFROM t;\nSELECT *\n  FORM t;\n"), "sql", "--addr", addr)
	want := " one\n-----\n   1\n(1 row)\n" +
		"ERROR:  column \"nope\" does not exist (SQLSTATE 42703)\nLINE 2:   nope\n          ^\n" +
		"ERROR:  syntax error at or near \"FORM\" (SQLSTATE 42601)\nLINE 2:   FORM t;\n          ^\n"
	if err == nil || out != want {
		t.Fatalf("script: %v, output\n%s\nwant\n%s", err, out, want)
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
// the next runs, and the command fails only when the last one did.
func TestSQLCommandSeveralActions(t *testing.T) {
	addr := startSQLServer(t, server.Options{})
	out, err := run(t, "sql", "--addr", addr, "-c", "SELECT 1 AS a", "-c", "SELECT 2 AS b")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if want := " a\n---\n 1\n(1 row)\n b\n---\n 2\n(1 row)\n"; out != want {
		t.Fatalf("output\n%q\nwant\n%q", out, want)
	}
	script := filepath.Join(t.TempDir(), "s.sql")
	if err := os.WriteFile(script, []byte("SELECT 3 AS c;\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err = run(t, "sql", "--addr", addr, "-c", "SELECT 1/0", "-f", script, "-c", "SELECT 4 AS d")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if want := "ERROR:  division by zero (SQLSTATE 22012)\n c\n---\n 3\n(1 row)\n d\n---\n 4\n(1 row)\n"; out != want {
		t.Fatalf("output\n%q\nwant\n%q", out, want)
	}
	if out, err := run(t, "sql", "--addr", addr, "-c", "SELECT 1 AS a", "-c", "SELECT 1/0"); err == nil || !strings.Contains(err.Error(), "22012") || !strings.HasPrefix(out, " a\n") {
		t.Fatalf("a failing last -c: %v\n%s", err, out)
	}
}
