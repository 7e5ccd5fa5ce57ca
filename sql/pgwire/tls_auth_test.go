package pgwire_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"errors"
	"math/big"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/stratadb/strata/sql/pgwire"
	"github.com/stratadb/strata/sql/session"
)

// selfSigned returns a TLS configuration with a fresh self-signed
// certificate for 127.0.0.1 and localhost.
func selfSigned(t *testing.T) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "strata test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

func dsn(addr, user, password, sslmode string) string {
	host, port, _ := net.SplitHostPort(addr)
	userinfo := user
	if password != "" {
		userinfo += ":" + password
	}
	return "postgres://" + userinfo + "@" + host + ":" + port + "/dev?sslmode=" + sslmode
}

// queryOver connects with connString and returns SELECT 41 + 1 and whether
// the connection is TLS.
func queryOver(t *testing.T, connString string) (n int64, isTLS bool, err error) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		return 0, false, err
	}
	defer conn.Close(ctx)
	_, isTLS = conn.PgConn().Conn().(*tls.Conn)
	err = conn.QueryRow(ctx, "SELECT 41 + 1").Scan(&n)
	return n, isTLS, err
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != code {
		t.Fatalf("%s: %v, want SQLSTATE %s", what, err, code)
	}
}

func TestTLS(t *testing.T) {
	addr, srv := startWith(t, session.Handler{}, pgwire.Options{TLS: selfSigned(t)})
	n, isTLS, err := queryOver(t, dsn(addr, "root", "", "require"))
	if err != nil || n != 42 || !isTLS {
		t.Fatalf("sslmode=require: %d, TLS %v, %v", n, isTLS, err)
	}
	// Plaintext is still served when TLS is optional.
	n, isTLS, err = queryOver(t, dsn(addr, "root", "", "disable"))
	if err != nil || n != 42 || isTLS {
		t.Fatalf("sslmode=disable: %d, TLS %v, %v", n, isTLS, err)
	}
	// A TLS handshake that fails (the client speaks plaintext after 'S')
	// ends only its connection.
	c := dialRaw(t, addr)
	c.Write([]byte{0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f})
	var b [1]byte
	if _, err := c.Read(b[:]); err != nil || b[0] != 'S' {
		t.Fatalf("SSLRequest answered %q, %v", b[0], err)
	}
	c.Write([]byte("this is no ClientHello, just plain text"))
	c.expectClosed(t)
	waitConns(t, srv, 0)
	checkServes(t, addr)
}

func TestRequireTLS(t *testing.T) {
	if _, err := pgwire.NewServerWithOptions(session.Handler{}, pgwire.Options{RequireTLS: true}); err == nil {
		t.Fatal("RequireTLS without TLS accepted")
	}
	addr, _ := startWith(t, session.Handler{}, pgwire.Options{TLS: selfSigned(t), RequireTLS: true})
	_, _, err := queryOver(t, dsn(addr, "root", "", "disable"))
	wantCode(t, "plaintext startup", err, "28000")
	n, isTLS, err := queryOver(t, dsn(addr, "root", "", "require"))
	if err != nil || n != 42 || !isTLS {
		t.Fatalf("sslmode=require: %d, TLS %v, %v", n, isTLS, err)
	}
	// sslmode=prefer upgrades.
	n, isTLS, err = queryOver(t, dsn(addr, "root", "", "prefer"))
	if err != nil || n != 42 || !isTLS {
		t.Fatalf("sslmode=prefer: %d, TLS %v, %v", n, isTLS, err)
	}
}

func passwordServer(t *testing.T, o pgwire.Options) (string, *pgwire.Server) {
	t.Helper()
	auth, err := pgwire.PasswordAuth(map[string]string{"alice": "correct horse", "bob": "battery staple"})
	if err != nil {
		t.Fatal(err)
	}
	o.Auth = auth
	return startWith(t, session.Handler{}, o)
}

func TestSCRAMWithPgx(t *testing.T) {
	addr, srv := passwordServer(t, pgwire.Options{TLS: selfSigned(t)})
	for _, sslmode := range []string{"disable", "require"} {
		// Over TLS the client sends the "y,," GS2 header: it could bind
		// the channel but the server offers no SCRAM-SHA-256-PLUS.
		n, _, err := queryOver(t, dsn(addr, "alice", "correct%20horse", sslmode))
		if err != nil || n != 42 {
			t.Fatalf("alice, sslmode=%s: %d, %v", sslmode, n, err)
		}
		_, _, err = queryOver(t, dsn(addr, "alice", "battery%20staple", sslmode))
		wantCode(t, "alice with bob's password", err, "28P01")
		if !strings.Contains(err.Error(), `password authentication failed for user "alice"`) {
			t.Fatalf("wrong password message: %v", err)
		}
		_, _, err = queryOver(t, dsn(addr, "mallory", "correct%20horse", sslmode))
		wantCode(t, "unknown user", err, "28P01")
		_, _, err = queryOver(t, dsn(addr, "bob", "", sslmode))
		if err == nil {
			t.Fatal("bob without a password got in")
		}
	}
	// Channel binding required by the client cannot be had.
	if _, _, err := queryOver(t, dsn(addr, "alice", "correct%20horse", "require")+"&channel_binding=require"); err == nil {
		t.Fatal("channel_binding=require succeeded without SCRAM-SHA-256-PLUS")
	}
	waitConns(t, srv, 0)
}

func TestSCRAMWithDatabaseSQL(t *testing.T) {
	addr, _ := passwordServer(t, pgwire.Options{})
	for _, tc := range []struct {
		password string
		code     string
	}{{"battery%20staple", ""}, {"wrong", "28P01"}} {
		db, err := sql.Open("pgx", dsn(addr, "bob", tc.password, "disable"))
		if err != nil {
			t.Fatal(err)
		}
		var n int
		err = db.QueryRow("SELECT 41 + 1").Scan(&n)
		db.Close()
		if tc.code == "" {
			if err != nil || n != 42 {
				t.Fatalf("right password: %d, %v", n, err)
			}
			continue
		}
		wantCode(t, "wrong password", err, tc.code)
	}
}

func TestSCRAMProtocolErrors(t *testing.T) {
	addr, srv := passwordServer(t, pgwire.Options{})
	start := func() *rawConn {
		c := dialRaw(t, addr)
		c.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "alice", "database": "dev"}})
		c.fe.Flush()
		msg, err := c.fe.Receive()
		sasl, ok := msg.(*pgproto3.AuthenticationSASL)
		if err != nil || !ok || len(sasl.AuthMechanisms) != 1 || sasl.AuthMechanisms[0] != "SCRAM-SHA-256" {
			t.Fatalf("expected AuthenticationSASL with SCRAM-SHA-256, got %#v, %v", msg, err)
		}
		return c
	}
	c := start()
	c.fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-1", Data: []byte("n,,n=,r=abc")})
	c.fe.Flush()
	c.expectFatal(t, "08P01")

	c = start()
	c.fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("p=tls-server-end-point,,n=,r=abc")})
	c.fe.Flush()
	c.expectFatal(t, "08P01")

	// A query instead of the SASL response.
	c = start()
	c.fe.Send(&pgproto3.Query{String: "SELECT 1"})
	c.fe.Flush()
	c.expectFatal(t, "08P01")
	waitConns(t, srv, 0)
}

// psqlRun runs psql with a connection string and extra environment,
// skipping the test when psql is not installed.
func psqlRun(t *testing.T, conninfo string, env ...string) (string, error) {
	t.Helper()
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed")
	}
	cmd := exec.Command(psql, "-X", "-A", "-t", "-w", "-d", conninfo, "-c", "SELECT 40 + 2")
	cmd.Env = append(os.Environ(), append([]string{"PGPASSWORD=", "PGSSLMODE=", "PGCONNECT_TIMEOUT=10"}, env...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func conninfo(addr, user, sslmode string) string {
	host, port, _ := net.SplitHostPort(addr)
	return "host=" + host + " port=" + port + " user=" + user + " dbname=dev sslmode=" + sslmode
}

func TestPsqlTLSAndPassword(t *testing.T) {
	addr, _ := passwordServer(t, pgwire.Options{TLS: selfSigned(t), RequireTLS: true})
	out, err := psqlRun(t, conninfo(addr, "alice", "require"), "PGPASSWORD=correct horse")
	if err != nil || strings.TrimSpace(out) != "42" {
		t.Fatalf("psql sslmode=require with the right password: %q, %v", out, err)
	}
	out, err = psqlRun(t, conninfo(addr, "alice", "require"), "PGPASSWORD=nope")
	if err == nil || !strings.Contains(out, `password authentication failed for user "alice"`) {
		t.Fatalf("psql with a wrong password: %q, %v", out, err)
	}
	out, err = psqlRun(t, conninfo(addr, "alice", "disable"), "PGPASSWORD=correct horse")
	if err == nil || !strings.Contains(out, "requires TLS") {
		t.Fatalf("psql in plaintext against RequireTLS: %q, %v", out, err)
	}
}
