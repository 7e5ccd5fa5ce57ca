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
	"math/big"
	"net"
	"os"
	"path/filepath"
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

// TestSQLCommandQuits: \q, quit and exit end a script or -c, as in psql.
func TestSQLCommandQuits(t *testing.T) {
	addr := startSQLServer(t, server.Options{})
	if out, err := run(t, "sql", "--addr", addr, "-c", `\q`); err != nil || out != "" {
		t.Fatalf(`-c \q: %v %q`, err, out)
	}
	for _, quit := range []string{`\q`, "quit", "exit"} {
		out, err := runIn(t, strings.NewReader("SELECT 1 AS one;\n"+quit+"\nSELECT nope;\n"), "sql", "--addr", addr)
		if err != nil {
			t.Fatalf("%s: %v\n%s", quit, err, out)
		}
		if want := " one\n-----\n   1\n(1 row)\n"; out != want {
			t.Fatalf("%s: output %q, want %q", quit, out, want)
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
