package pgwire_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/pgwire"
	"github.com/stratadb/strata/sql/session"
)

// startWith starts a server with options on a loopback port.
func startWith(t *testing.T, h pgwire.Handler, o pgwire.Options) (string, *pgwire.Server) {
	t.Helper()
	srv, err := pgwire.NewServerWithOptions(h, o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), srv
}

// rawConn is a client speaking the protocol by hand.
type rawConn struct {
	net.Conn
	fe *pgproto3.Frontend
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawConn{Conn: nc, fe: pgproto3.NewFrontend(nc, nc)}
}

// dialStarted dials and completes startup as user root of database dev.
func dialStarted(t *testing.T, addr string) *rawConn {
	t.Helper()
	c := dialRaw(t, addr)
	c.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "root", "database": "dev"}})
	if err := c.fe.Flush(); err != nil {
		t.Fatal(err)
	}
	for {
		msg, err := c.fe.Receive()
		if err != nil {
			t.Fatalf("startup: %v", err)
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			return c
		}
	}
}

// expectFatal reads until an ErrorResponse, checks it is FATAL with code,
// and checks that the server then closes the connection.
func (c *rawConn) expectFatal(t *testing.T, code string) {
	t.Helper()
	for {
		msg, err := c.fe.Receive()
		if err != nil {
			t.Fatalf("waiting for FATAL %s: %v", code, err)
		}
		if e, ok := msg.(*pgproto3.ErrorResponse); ok {
			if e.Severity != "FATAL" || e.Code != code {
				t.Fatalf("got %s %s %q, want FATAL %s", e.Severity, e.Code, e.Message, code)
			}
			break
		}
	}
	c.expectClosed(t)
}

// expectClosed checks that the server closed the connection.
func (c *rawConn) expectClosed(t *testing.T) {
	t.Helper()
	var b [1]byte
	n, err := c.Read(b[:])
	var ne net.Error
	if err == nil || (errors.As(err, &ne) && ne.Timeout()) {
		t.Fatalf("connection still open: read %d bytes, %v", n, err)
	}
}

// message builds a frontend message of type typ whose length field says
// length (the real body is body).
func message(typ byte, length uint32, body string) []byte {
	b := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], length)
	return append(b, body...)
}

// checkServes checks that a fresh pgx connection runs a query.
func checkServes(t *testing.T, addr string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, connString(addr))
	if err != nil {
		t.Fatalf("server does not serve a fresh connection: %v", err)
	}
	defer conn.Close(ctx)
	var n int64
	if err := conn.QueryRow(ctx, "SELECT 41 + 1").Scan(&n); err != nil || n != 42 {
		t.Fatalf("fresh connection: %d, %v", n, err)
	}
}

// waitConns waits until the server counts want open connections.
func waitConns(t *testing.T, srv *pgwire.Server, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for srv.Conns() != want {
		if time.Now().After(deadline) {
			t.Fatalf("server has %d open connections, want %d", srv.Conns(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitGoroutines waits until at most limit goroutines run.
func waitGoroutines(t *testing.T, limit int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > limit {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), limit, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestMalformedMessagesCloseOnlyTheirConnection(t *testing.T) {
	addr, srv := startWith(t, session.Handler{}, pgwire.Options{})
	// A client that stays connected and idle through every case.
	bystander := dialStarted(t, addr)
	checkServes(t, addr)
	waitConns(t, srv, 1)
	baseline := runtime.NumGoroutine()

	for _, tc := range []struct {
		name    string
		startup bool // send the bytes before startup instead of after
		bytes   []byte
		code    string // FATAL code, or "" when the server closes silently
	}{
		{"unknown message type", false, message('Z', 4, ""), "08P01"},
		{"length below 4", false, message('Q', 2, "x"), "08P01"},
		{"negative length", false, message('Q', 0xFFFFFFFF, "x"), "08P01"},
		{"garbage bytes", false, []byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08 not a message"), "08P01"},
		{"body that does not decode", false, message('B', 6, "xx"), "08P01"},
		{"query without terminator", false, message('Q', 7, "SEL"), "08P01"},
		{"oversized message", false, message('Q', pgwire.DefaultMaxMessageSize+5, "SELECT"), "54000"},
		{"largest length", false, message('Q', 0x7FFFFFFF, "SELECT"), "54000"},
		{"truncated message", false, message('Q', 100, "SELECT 1"), ""},
		{"HTTP request as startup", true, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), "08P01"},
		{"startup packet too short", true, []byte{0, 0, 0, 4}, "08P01"},
		{"unknown protocol version", true, []byte{0, 0, 0, 8, 0, 9, 0, 0}, "08P01"},
		{"truncated startup packet", true, []byte{0, 0, 0, 100, 0, 3, 0, 0}, ""},
		{"nothing at all", true, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c *rawConn
			if tc.startup {
				c = dialRaw(t, addr)
			} else {
				c = dialStarted(t, addr)
			}
			if _, err := c.Write(tc.bytes); err != nil {
				t.Fatal(err)
			}
			if tc.code != "" {
				c.expectFatal(t, tc.code)
			} else {
				// The client gives up half way: the server sees the end of
				// the stream and ends the connection.
				c.Conn.(*net.TCPConn).CloseWrite()
				c.expectClosed(t)
			}
			c.Close()
			waitConns(t, srv, 1)
			checkServes(t, addr)
			waitConns(t, srv, 1)
		})
	}
	waitGoroutines(t, baseline+2)

	// The bystander was not disturbed.
	bystander.fe.Send(&pgproto3.Query{String: "SELECT 'still here'"})
	if err := bystander.fe.Flush(); err != nil {
		t.Fatal(err)
	}
	for {
		msg, err := bystander.fe.Receive()
		if err != nil {
			t.Fatalf("bystander: %v", err)
		}
		if dr, ok := msg.(*pgproto3.DataRow); ok && string(dr.Values[0]) != "still here" {
			t.Fatalf("bystander got %q", dr.Values[0])
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			break
		}
	}
}

func TestConfiguredMaxMessageSize(t *testing.T) {
	addr, srv := startWith(t, session.Handler{}, pgwire.Options{MaxMessageSize: 1024})
	c := dialStarted(t, addr)
	// A query under the limit runs; one over it ends the connection.
	small := "SELECT '" + strings.Repeat("a", 900) + "'"
	c.fe.Send(&pgproto3.Query{String: small})
	c.fe.Flush()
	for {
		msg, err := c.fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := msg.(*pgproto3.ErrorResponse); ok {
			t.Fatalf("query under the limit: %s %s", e.Code, e.Message)
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			break
		}
	}
	c.fe.Send(&pgproto3.Query{String: "SELECT '" + strings.Repeat("a", 1100) + "'"})
	c.fe.Flush()
	c.expectFatal(t, "54000")
	waitConns(t, srv, 0)
	checkServes(t, addr)
}

// slowHandler serves a fake session whose statement "slow" runs until its
// context is cancelled and whose statement "panic" panics; every other
// statement returns one row, 42.
type slowHandler struct {
	started   chan struct{}
	cancelled chan error
	closed    chan struct{}
}

func (h slowHandler) NewSession(context.Context, string, string) (pgwire.Session, error) {
	return slowSession(h), nil
}

type slowSession slowHandler

var slowColumns = []pgwire.Column{{Name: "n", Type: types.Int64}}

func (s slowSession) Prepare(_ context.Context, sql string, _ []types.Type) (*pgwire.Statement, error) {
	return &pgwire.Statement{SQL: sql, Columns: slowColumns}, nil
}

func (s slowSession) Execute(ctx context.Context, st *pgwire.Statement, _ []types.Datum) (*pgwire.Result, error) {
	if st.SQL == "panic" {
		panic("session broke an invariant")
	}
	if st.SQL == "slow" {
		s.started <- struct{}{}
		<-ctx.Done()
		s.cancelled <- ctx.Err()
		return nil, ctx.Err()
	}
	return &pgwire.Result{Columns: slowColumns, Rows: []types.Row{{types.NewInt64(42)}}, Tag: "SELECT 1"}, nil
}

func (s slowSession) Split(sql string) ([]string, error) { return []string{sql}, nil }
func (s slowSession) Location() *time.Location           { return time.UTC }
func (s slowSession) Close()                             { s.closed <- struct{}{} }

func TestClientDisconnectsDuringSlowQuery(t *testing.T) {
	h := slowHandler{started: make(chan struct{}, 1), cancelled: make(chan error, 8), closed: make(chan struct{}, 8)}
	addr, srv := startWith(t, h, pgwire.Options{})
	checkServes(t, addr)
	<-h.closed
	waitConns(t, srv, 0)
	baseline := runtime.NumGoroutine()

	for _, tc := range []struct {
		name string
		send func(fe *pgproto3.Frontend)
	}{
		{"simple query", func(fe *pgproto3.Frontend) {
			fe.Send(&pgproto3.Query{String: "slow"})
		}},
		{"extended query", func(fe *pgproto3.Frontend) {
			fe.Send(&pgproto3.Parse{Query: "slow"})
			fe.Send(&pgproto3.Bind{})
			fe.Send(&pgproto3.Execute{})
			fe.Send(&pgproto3.Sync{})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialStarted(t, addr)
			tc.send(c.fe)
			if err := c.fe.Flush(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-h.started:
			case <-time.After(10 * time.Second):
				t.Fatal("the slow statement did not start")
			}
			c.Close()
			select {
			case err := <-h.cancelled:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("statement context ended with %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the statement's context was not cancelled when its client went away")
			}
			select {
			case <-h.closed:
			case <-time.After(10 * time.Second):
				t.Fatal("the session was not closed")
			}
			waitConns(t, srv, 0)
			checkServes(t, addr)
			<-h.closed
			waitConns(t, srv, 0)
		})
	}
	waitGoroutines(t, baseline+2)
}

func TestStartupTimeoutClosesSilentClients(t *testing.T) {
	addr, srv := startWith(t, session.Handler{}, pgwire.Options{StartupTimeout: 50 * time.Millisecond})
	c := dialRaw(t, addr)
	c.expectClosed(t)
	waitConns(t, srv, 0)
	checkServes(t, addr)
}

// serveSlow serves h on a loopback port; served receives Serve's result.
func serveSlow(t *testing.T, h slowHandler) (srv *pgwire.Server, addr string, served chan error) {
	t.Helper()
	srv, err := pgwire.NewServerWithOptions(h, pgwire.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served = make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	return srv, ln.Addr().String(), served
}

// TestCloseEndsConnectionsInStartupAndStatements: Close closes a
// connection still in startup, cancels a running statement and ends its
// connection with FATAL 57P01, and returns once both are gone.
func TestCloseEndsConnectionsInStartupAndStatements(t *testing.T) {
	h := slowHandler{started: make(chan struct{}, 1), cancelled: make(chan error, 8), closed: make(chan struct{}, 8)}
	srv, addr, served := serveSlow(t, h)
	silent := dialRaw(t, addr)
	busy := dialStarted(t, addr)
	busy.fe.Send(&pgproto3.Query{String: "slow"})
	busy.fe.Flush()
	<-h.started
	waitConns(t, srv, 2)
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve after Close: %v", err)
	}
	if err := <-h.cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("running statement ended with %v", err)
	}
	if srv.Conns() != 0 {
		t.Fatalf("%d connections after Close", srv.Conns())
	}
	silent.expectClosed(t)
	busy.expectFatal(t, "57P01")
}

// TestCloseTellsEverySession: as PostgreSQL at shutdown, Close sends
// every connection that has a session, idle, running a statement of the
// simple or the extended protocol, or in a pgx client, FATAL 57P01
// "terminating connection due to administrator command" (not the
// cancelled statement's 57014), then closes it; a client sees why the
// connection ended instead of "server closed the connection
// unexpectedly".
func TestCloseTellsEverySession(t *testing.T) {
	h := slowHandler{started: make(chan struct{}, 4), cancelled: make(chan error, 8), closed: make(chan struct{}, 8)}
	srv, addr, served := serveSlow(t, h)

	idle := dialStarted(t, addr)
	simple := dialStarted(t, addr)
	simple.fe.Send(&pgproto3.Query{String: "slow"})
	extended := dialStarted(t, addr)
	extended.fe.Send(&pgproto3.Parse{Query: "slow"})
	extended.fe.Send(&pgproto3.Bind{})
	extended.fe.Send(&pgproto3.Execute{})
	extended.fe.Send(&pgproto3.Sync{})
	for _, c := range []*rawConn{simple, extended} {
		if err := c.fe.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	px, err := pgx.Connect(ctx, connString(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close(ctx)
	pxErr := make(chan error, 1)
	go func() {
		_, err := px.Exec(ctx, "slow", pgx.QueryExecModeSimpleProtocol)
		pxErr <- err
	}()
	for range 3 {
		select {
		case <-h.started:
		case <-time.After(10 * time.Second):
			t.Fatal("the slow statements did not start")
		}
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve after Close: %v", err)
	}
	for name, c := range map[string]*rawConn{"idle": idle, "simple": simple, "extended": extended} {
		var got []string
		for {
			msg, err := c.fe.Receive()
			if err != nil {
				t.Fatalf("%s: %v after %v, want FATAL 57P01", name, err, got)
			}
			e, ok := msg.(*pgproto3.ErrorResponse)
			if !ok {
				switch msg.(type) {
				case *pgproto3.ParseComplete, *pgproto3.BindComplete:
					// The extended statement's steps before its Execute.
				default:
					got = append(got, fmt.Sprintf("%T", msg))
				}
				continue
			}
			if e.Severity != "FATAL" || e.Code != "57P01" || e.Message != "terminating connection due to administrator command" {
				t.Fatalf("%s: %s %s %q after %v, want FATAL 57P01", name, e.Severity, e.Code, e.Message, got)
			}
			if len(got) > 0 {
				t.Errorf("%s: %v before the FATAL, want no outcome of the cancelled statement", name, got)
			}
			break
		}
		c.expectClosed(t)
	}
	var pe *pgconn.PgError
	if err := <-pxErr; !errors.As(err, &pe) || pe.Code != "57P01" || pe.Severity != "FATAL" {
		t.Fatalf("pgx's statement during Close: %v, want FATAL 57P01", err)
	}
	if srv.Conns() != 0 {
		t.Fatalf("%d connections after Close", srv.Conns())
	}
}

func TestSessionPanicEndsOnlyItsConnection(t *testing.T) {
	h := slowHandler{started: make(chan struct{}, 1), cancelled: make(chan error, 8), closed: make(chan struct{}, 8)}
	addr, srv := startWith(t, h, pgwire.Options{})
	c := dialStarted(t, addr)
	c.fe.Send(&pgproto3.Query{String: "panic"})
	c.fe.Flush()
	c.expectClosed(t)
	<-h.closed
	waitConns(t, srv, 0)
	checkServes(t, addr)
}
