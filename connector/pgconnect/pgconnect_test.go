package pgconnect

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// connect connects to 127.0.0.1:port as the connectors do
// (sslmode=prefer) and returns New of its failure.
func connect(t *testing.T, port int) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, fmt.Sprintf("host=127.0.0.1 port=%d user=u dbname=d sslmode=prefer", port))
	if err == nil {
		conn.Close(ctx)
		t.Fatal("connected, want a failure")
	}
	return New("127.0.0.1", port, err)
}

// TestClosedPort: a port nothing listens on is "connection refused",
// once, though the driver tried it over TLS and in plain text.
func TestClosedPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	err = connect(t, port)
	if want := fmt.Sprintf("cannot connect to 127.0.0.1:%d: connection refused", port); err.Error() != want {
		t.Fatalf("got %q\nwant %q", err.Error(), want)
	}
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		t.Fatal("the driver's error is not wrapped")
	}
}

// TestServerRefusesTLS: a server that refuses TLS and then the startup
// (here: its database does not exist) is refused for that reason alone,
// without the TLS attempt's "server refused TLS connection".
func TestServerRefusesTLS(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serveRefusal(c)
		}
	}()
	err = connect(t, l.Addr().(*net.TCPAddr).Port)
	want := fmt.Sprintf(`cannot connect to %s: database "d" does not exist (SQLSTATE 3D000)`, l.Addr())
	if err.Error() != want || strings.Contains(err.Error(), "tls") {
		t.Fatalf("got %q\nwant %q", err.Error(), want)
	}
	if raw := errors.Unwrap(err).Error(); !strings.Contains(raw, "tls error") {
		t.Errorf("the driver's own error does not show the TLS attempt, so this tests nothing: %q", raw)
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "3D000" {
		t.Fatalf("the server's error is not found in %v", err)
	}
}

// serveRefusal answers an SSLRequest with 'N' and a startup message with
// FATAL 3D000, as a PostgreSQL without TLS does for a database it lacks.
func serveRefusal(c net.Conn) {
	defer c.Close()
	be := pgproto3.NewBackend(c, c)
	for {
		msg, err := be.ReceiveStartupMessage()
		if err != nil {
			return
		}
		switch msg.(type) {
		case *pgproto3.SSLRequest:
			if _, err := c.Write([]byte{'N'}); err != nil {
				return
			}
		case *pgproto3.StartupMessage:
			be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", Code: "3D000", Message: `database "d" does not exist`})
			_ = be.Flush()
			return
		default:
			return
		}
	}
}

func TestCause(t *testing.T) {
	if got := Cause(errors.New("plain")); got != "plain" {
		t.Errorf("Cause of an error not the driver's: %q", got)
	}
	if New("h", 1, nil) != nil {
		t.Error("New of no error is not nil")
	}
	if got := New("::1", 5432, errors.New("x")).Error(); got != "cannot connect to [::1]:5432: x" {
		t.Errorf("IPv6 address: %q", got)
	}
}
