package pgwire

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// ServerVersion is what clients see as server_version: the Postgres
// release whose behaviour Strata follows.
const ServerVersion = "15.0 (Strata)"

// Server accepts Postgres connections and serves each with a Session.
type Server struct {
	handler Handler
	opts    Options
	log     *slog.Logger
	// mockKey seeds the invented SCRAM secrets of unknown users.
	mockKey []byte

	mu struct {
		sync.Mutex
		// open holds every accepted connection until its goroutine ends,
		// so that Close can close it even during startup.
		open map[*conn]struct{}
		// conns maps a BackendKeyData process id to its connection, for
		// cancel requests: connections past startup.
		conns  map[uint32]*conn
		nextID uint32
		ln     net.Listener
		closed bool
	}
	// closing is set by Close: every connection with a session ends with
	// FATAL 57P01 (errShutdown).
	closing atomic.Bool
	wg      sync.WaitGroup
}

// closeGrace bounds how long Close waits for the connections it told to
// end (a statement that goes on after its cancel, a client that does not
// read the FATAL) before it closes them outright.
const closeGrace = 5 * time.Second

// errShutdown ends a connection's message loop when the server closes:
// serveConn then sends FATAL 57P01, as PostgreSQL tells each session when
// it shuts down ("terminating connection due to administrator command"),
// instead of dropping the connection without a word.
var errShutdown = errors.New("pgwire: server shutting down")

// NewServer returns a plaintext server without authentication that opens
// sessions with h. A nil logger discards logs. It is
// NewServerWithOptions(h, Options{Log: log}).
func NewServer(h Handler, log *slog.Logger) *Server {
	s, err := NewServerWithOptions(h, Options{Log: log})
	if err != nil {
		panic(fmt.Sprintf("pgwire: default options refused: %v", err))
	}
	return s
}

// NewServerWithOptions returns a server that opens sessions with h and
// negotiates TLS, authenticates and limits messages as o says. It fails
// with base.ErrInvalidArgument when o.RequireTLS is set without o.TLS.
func NewServerWithOptions(h Handler, o Options) (*Server, error) {
	if o.RequireTLS && o.TLS == nil {
		return nil, fmt.Errorf("pgwire: RequireTLS without a TLS configuration: %w", base.ErrInvalidArgument)
	}
	o = o.withDefaults()
	s := &Server{handler: h, opts: o, log: o.Log, mockKey: make([]byte, 32)}
	if _, err := rand.Read(s.mockKey); err != nil {
		return nil, fmt.Errorf("pgwire: random key: %w", err)
	}
	s.mu.open = map[*conn]struct{}{}
	s.mu.conns = map[uint32]*conn{}
	return s, nil
}

// Serve accepts connections on ln until Close. It returns nil after Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return errors.New("pgwire: server closed")
	}
	s.mu.ln = ln
	s.mu.Unlock()
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.mu.closed
			s.mu.Unlock()
			if closed {
				return nil
			}
			return fmt.Errorf("pgwire: accept: %w", err)
		}
		c := newConn(s, nc)
		s.mu.Lock()
		if s.mu.closed {
			s.mu.Unlock()
			nc.Close()
			return nil
		}
		s.mu.open[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.serveConn(c)
		}()
	}
}

// Close stops accepting, cancels the context of every running statement
// and ends every connection: one with a session, idle or running a
// statement, gets FATAL 57P01 (terminating connection due to
// administrator command) in place of the cancelled statement's outcome,
// as PostgreSQL's sessions do when it shuts down; one still in startup is
// closed. It waits for the connections' goroutines, closing outright
// those that have not ended after closeGrace.
func (s *Server) Close() error {
	s.closing.Store(true)
	grace := time.Now().Add(closeGrace)
	s.mu.Lock()
	s.mu.closed = true
	ln := s.mu.ln
	for c := range s.mu.open {
		if c.id == 0 {
			// In startup or authentication: no session to tell.
			c.raw.Close()
		} else {
			// The pump's read ends at once (its loop then sees closing);
			// the FATAL, and whatever the connection still sends before
			// it, must be written by the grace deadline.
			c.raw.SetReadDeadline(time.Now())
			c.raw.SetWriteDeadline(grace)
		}
		c.cancelConn()
	}
	s.mu.Unlock()
	var err error
	if ln != nil {
		err = ln.Close()
	}
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Until(grace)):
		s.mu.Lock()
		for c := range s.mu.open {
			c.raw.Close()
		}
		s.mu.Unlock()
		<-done
	}
	return err
}

// Conns returns the number of open connections, counting those still in
// startup; a connection leaves the count when its goroutines have ended.
func (s *Server) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.mu.open)
}

// conn is one client connection.
type conn struct {
	s *Server
	// raw is the accepted connection; closing it ends every read and
	// write of the connection, TLS or not.
	raw net.Conn
	// nc is raw, or the TLS connection over it after an SSLRequest.
	nc      net.Conn
	tls     bool
	be      *pgproto3.Backend
	pump    *pump
	id      uint32
	user    string
	secret  []byte
	sess    Session
	stmts   map[string]*Statement
	portals map[string]*portal

	// ctx is cancelled when the client goes away (the pump sees the
	// connection end) or the connection's goroutine ends; every
	// statement's context derives from it.
	ctx        context.Context
	cancelConn context.CancelFunc

	// cancelMu guards cancel, the running statement's cancel function.
	cancelMu sync.Mutex
	cancel   context.CancelFunc
}

type portal struct {
	st      *Statement
	params  []types.Datum
	formats []int16 // result formats per column (one entry applies to all)
	result  *Result // run on the first Execute; rows handed out in pieces
	next    int
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{s: s, raw: nc, nc: nc, stmts: map[string]*Statement{}, portals: map[string]*portal{}}
	c.ctx, c.cancelConn = context.WithCancel(context.Background())
	// Until startup ends, reads go straight to the connection (readStartup)
	// and the backend only writes.
	c.be = pgproto3.NewBackend(eofReader{}, nc)
	return c
}

// serveConn runs one connection to its end. A panic in a Session ends
// only its connection.
func (s *Server) serveConn(c *conn) {
	defer func() {
		s.mu.Lock()
		delete(s.mu.open, c)
		if c.id != 0 {
			delete(s.mu.conns, c.id)
		}
		s.mu.Unlock()
	}()
	defer func() {
		c.cancelConn()
		c.raw.Close()
		if c.pump != nil {
			c.pump.stop()
		}
		if c.sess != nil {
			c.sess.Close()
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("pgwire: connection panicked", "remote", c.raw.RemoteAddr(), "user", c.user, "panic", r, "stack", string(debug.Stack()))
		}
	}()
	err := c.serve()
	if errors.Is(err, errShutdown) {
		err = c.fatal(sqlerr.New(sqlerr.AdminShutdown, "terminating connection due to administrator command"))
	}
	var fe *fatalError
	switch {
	case err == nil, isClientGone(err):
	case errors.As(err, &fe):
		s.log.Debug("pgwire: connection refused", "remote", c.raw.RemoteAddr(), "user", c.user, "code", fe.e.Code, "err", fe.e.Message)
	default:
		s.log.Debug("pgwire: connection ended", "remote", c.raw.RemoteAddr(), "user", c.user, "err", err)
	}
}

// serve runs startup, authentication and the message loop.
func (c *conn) serve() error {
	if d := c.s.opts.StartupTimeout; d > 0 {
		c.raw.SetDeadline(time.Now().Add(d))
	}
	m, err := c.startup()
	if err != nil || m == nil {
		return err
	}
	c.user = m.Parameters["user"]
	// From here on every read goes through the pump, which notices a
	// client that goes away even while a statement runs.
	c.pump = startPump(c.nc, c.cancelConn)
	c.be = pgproto3.NewBackend(c.pump, c.nc)
	if c.s.opts.MaxMessageSize > 0 {
		c.be.SetMaxBodyLen(c.s.opts.MaxMessageSize)
	}
	if c.s.opts.Auth != nil {
		if err := c.authenticate(c.user); err != nil {
			return err
		}
	}
	if err := c.open(m); err != nil {
		return err
	}
	if c.s.opts.StartupTimeout > 0 {
		c.raw.SetDeadline(time.Time{})
	}
	return c.loop()
}

// startup reads startup packets until a StartupMessage, which it returns,
// negotiating TLS on the way. It returns nil, nil after a CancelRequest.
func (c *conn) startup() (*pgproto3.StartupMessage, error) {
	for {
		msg, err := c.readStartup()
		if err != nil {
			return nil, err
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest:
			if c.tls {
				return nil, c.fatal(sqlerr.New(sqlerr.ProtocolViolation, "SSLRequest on a TLS connection"))
			}
			if c.s.opts.TLS == nil {
				if _, err := c.nc.Write([]byte{'N'}); err != nil {
					return nil, &readError{err}
				}
				continue
			}
			if _, err := c.nc.Write([]byte{'S'}); err != nil {
				return nil, &readError{err}
			}
			tc := tls.Server(c.raw, c.s.opts.TLS)
			if err := tc.Handshake(); err != nil {
				return nil, fmt.Errorf("pgwire: TLS handshake: %w", err)
			}
			c.nc, c.tls = tc, true
			c.be = pgproto3.NewBackend(eofReader{}, tc)
		case *pgproto3.GSSEncRequest:
			if _, err := c.nc.Write([]byte{'N'}); err != nil {
				return nil, &readError{err}
			}
		case *pgproto3.CancelRequest:
			c.s.cancelRequest(m.ProcessID, m.SecretKey)
			return nil, nil
		case *pgproto3.StartupMessage:
			if c.s.opts.RequireTLS && !c.tls {
				return nil, c.fatal(sqlerr.New(sqlerr.InvalidAuthorization, "connection without TLS refused for user %q: the server requires TLS (sslmode=require)", m.Parameters["user"]))
			}
			return m, nil
		default:
			return nil, c.fatal(sqlerr.New(sqlerr.ProtocolViolation, "unexpected startup packet %T", msg))
		}
	}
}

// maxStartupPacket is the largest startup packet, length included:
// Postgres's MAX_STARTUP_PACKET_LENGTH.
const maxStartupPacket = 10000

// readStartup reads one startup packet with exact reads, so that no byte
// after it is consumed: the bytes after an SSLRequest are the TLS
// handshake's.
func (c *conn) readStartup() (pgproto3.FrontendMessage, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(c.nc, hdr[:]); err != nil {
		return nil, &readError{err}
	}
	n := int64(int32(binary.BigEndian.Uint32(hdr[:])))
	if n < 8 || n > maxStartupPacket {
		return nil, c.fatal(sqlerr.New(sqlerr.ProtocolViolation, "invalid length of startup packet: %d", n))
	}
	buf := make([]byte, n)
	copy(buf, hdr[:])
	if _, err := io.ReadFull(c.nc, buf[4:]); err != nil {
		return nil, &readError{err}
	}
	msg, err := pgproto3.NewBackend(bytes.NewReader(buf), io.Discard).ReceiveStartupMessage()
	if err != nil {
		return nil, c.fatal(sqlerr.New(sqlerr.ProtocolViolation, "invalid startup packet: %v", err))
	}
	return msg, nil
}

// eofReader is the read side of the backend during startup, when reads go
// to the connection directly.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// readError marks a failed read or write of the connection: the client went
// away, timed out or the server closed the connection. Nothing more is sent.
type readError struct{ err error }

func (e *readError) Error() string { return "pgwire: connection: " + e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// fatalError is an error that was sent to the client as FATAL before the
// connection was closed.
type fatalError struct{ e *sqlerr.Error }

func (e *fatalError) Error() string { return "pgwire: FATAL " + e.e.Code + ": " + e.e.Message }

func isClientGone(err error) bool {
	var re *readError
	return errors.As(err, &re) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed)
}

// fatal sends e as a FATAL ErrorResponse and returns it as a *fatalError:
// the connection ends.
func (c *conn) fatal(e *sqlerr.Error) error {
	c.be.Send(&pgproto3.ErrorResponse{
		Severity: "FATAL", SeverityUnlocalized: "FATAL",
		Code: e.Code, Message: e.Message, Detail: e.Detail, Hint: e.Hint,
	})
	if err := c.be.Flush(); err != nil {
		return &readError{err}
	}
	return &fatalError{e}
}

// receiveFailed turns a failed Receive into the connection's end: nothing
// more when the client went away, else FATAL 54000 for a message over the
// size limit (its body is not read) and FATAL 08P01 for a malformed one
// (an unknown type, a length below 4, a body that does not decode).
func (c *conn) receiveFailed(err error) error {
	if isClientGone(err) {
		return err
	}
	var big *pgproto3.ExceededMaxBodyLenErr
	if errors.As(err, &big) {
		return c.fatal(sqlerr.New(sqlerr.ProgramLimitExceeded, "message of %d bytes exceeds the maximum of %d bytes", big.ActualBodyLen, big.MaxExpectedBodyLen))
	}
	return c.fatal(sqlerr.New(sqlerr.ProtocolViolation, "invalid frontend message: %v", err))
}

func (c *conn) open(m *pgproto3.StartupMessage) error {
	user, db := m.Parameters["user"], m.Parameters["database"]
	if db == "" {
		db = user
	}
	sess, err := c.s.handler.NewSession(c.ctx, user, db)
	if err != nil {
		e := sqlerr.From(err)
		c.fatal(e)
		return fmt.Errorf("session refused: %w", err)
	}
	c.sess = sess
	c.secret = make([]byte, 4)
	if _, err := rand.Read(c.secret); err != nil {
		return err
	}
	c.s.mu.Lock()
	c.s.mu.nextID++
	c.id = c.s.mu.nextID
	c.s.mu.conns[c.id] = c
	c.s.mu.Unlock()

	c.be.Send(&pgproto3.AuthenticationOk{})
	tz := "UTC"
	if loc := sess.Location(); loc != nil {
		tz = loc.String()
	}
	app := m.Parameters["application_name"]
	for _, p := range [][2]string{
		{"server_version", ServerVersion},
		{"server_encoding", "UTF8"},
		{"client_encoding", "UTF8"},
		{"DateStyle", "ISO, MDY"},
		{"IntervalStyle", "postgres"},
		{"TimeZone", tz},
		{"integer_datetimes", "on"},
		{"standard_conforming_strings", "on"},
		{"is_superuser", "on"},
		{"session_authorization", user},
		{"application_name", app},
	} {
		c.be.Send(&pgproto3.ParameterStatus{Name: p[0], Value: p[1]})
	}
	c.be.Send(&pgproto3.BackendKeyData{ProcessID: c.id, SecretKey: c.secret})
	c.be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	if err := c.be.Flush(); err != nil {
		return &readError{err}
	}
	return nil
}

// cancelRequest cancels the running statement of connection id when the
// key matches.
func (s *Server) cancelRequest(id uint32, secret []byte) {
	s.mu.Lock()
	c := s.mu.conns[id]
	s.mu.Unlock()
	if c == nil || subtle.ConstantTimeCompare(c.secret, secret) != 1 {
		return
	}
	c.cancelMu.Lock()
	if c.cancel != nil {
		c.cancel()
	}
	c.cancelMu.Unlock()
}

// statementContext returns the context of one statement, cancelled by a
// CancelRequest or when the client goes away.
func (c *conn) statementContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(c.ctx)
	c.cancelMu.Lock()
	c.cancel = cancel
	c.cancelMu.Unlock()
	return ctx, func() {
		c.cancelMu.Lock()
		c.cancel = nil
		c.cancelMu.Unlock()
		cancel()
	}
}

func (c *conn) loop() error {
	skipToSync := false
	for {
		msg, err := c.be.Receive()
		if c.s.closing.Load() {
			return errShutdown
		}
		if err != nil {
			return c.receiveFailed(err)
		}
		if skipToSync {
			if _, ok := msg.(*pgproto3.Sync); !ok {
				continue
			}
			skipToSync = false
		}
		var failed error
		switch m := msg.(type) {
		case *pgproto3.Query:
			c.simpleQuery(m.String)
			if c.s.closing.Load() {
				return errShutdown
			}
			c.be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
			if err := c.be.Flush(); err != nil {
				return &readError{err}
			}
		case *pgproto3.Parse:
			failed = c.parse(m)
		case *pgproto3.Bind:
			failed = c.bind(m)
		case *pgproto3.Describe:
			failed = c.describe(m)
		case *pgproto3.Execute:
			failed = c.execute(m)
		case *pgproto3.Close:
			if m.ObjectType == 'S' {
				delete(c.stmts, m.Name)
			} else {
				delete(c.portals, m.Name)
			}
			c.be.Send(&pgproto3.CloseComplete{})
		case *pgproto3.Sync:
			delete(c.portals, "")
			c.be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
			if err := c.be.Flush(); err != nil {
				return &readError{err}
			}
		case *pgproto3.Flush:
			if err := c.be.Flush(); err != nil {
				return &readError{err}
			}
		case *pgproto3.Terminate:
			return nil
		case *pgproto3.CopyData, *pgproto3.CopyDone, *pgproto3.CopyFail:
			// No COPY runs: these are what a client still sends after
			// its COPY was refused (pgx's CopyFrom). As PostgreSQL does,
			// they are accepted and ignored, so that the connection's
			// next query works.
		default:
			failed = sqlerr.New(sqlerr.FeatureNotSupported, "protocol message %T is not supported", msg)
		}
		if c.s.closing.Load() {
			return errShutdown
		}
		if failed != nil {
			c.sendError(failed)
			skipToSync = true
		}
	}
}

func (c *conn) sendError(err error) {
	if c.s.closing.Load() {
		// The statement was cancelled by Close: FATAL 57P01 says why
		// (errShutdown), not its 57014.
		return
	}
	e := sqlerr.From(err)
	if errors.Is(err, context.Canceled) {
		e = sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
	}
	c.be.Send(&pgproto3.ErrorResponse{
		Severity: "ERROR", SeverityUnlocalized: "ERROR",
		Code: e.Code, Message: e.Message, Detail: e.Detail, Hint: e.Hint, Position: int32(e.Position),
	})
}

// sendNotices sends each notice as a NoticeResponse of severity NOTICE.
func (c *conn) sendNotices(notices []*sqlerr.Error) {
	for _, n := range notices {
		c.be.Send(&pgproto3.NoticeResponse{
			Severity: "NOTICE", SeverityUnlocalized: "NOTICE",
			Code: n.Code, Message: n.Message, Detail: n.Detail, Hint: n.Hint, Position: int32(n.Position),
		})
	}
}

// scanNotices sends the notices the session's scanner has for text
// (ScanNoticer), if it has any.
func (c *conn) scanNotices(text string) {
	if sn, ok := c.sess.(ScanNoticer); ok {
		c.sendNotices(sn.ScanNotices(text))
	}
}

// simpleQuery runs every statement of a Query message, stopping at the
// first error. Positions in errors are relative to the whole text, as
// PostgreSQL's are: the session places an error within its statement,
// and the statement's offset in text is added here.
func (c *conn) simpleQuery(text string) {
	c.scanNotices(text)
	parts, err := c.sess.Split(text)
	if err != nil {
		c.sendError(err)
		return
	}
	if len(parts) == 0 {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return
	}
	from := 0 // byte offset in text where the next part is looked for
	for _, sql := range parts {
		at := from
		if i := strings.Index(text[from:], sql); i >= 0 {
			at = from + i
			from = at + len(sql)
		}
		if err := c.runSimple(sql); err != nil {
			c.sendError(shiftPosition(err, utf8.RuneCountInString(text[:at])))
			return
		}
	}
}

// shiftPosition adds by characters to the position of err, when it has
// one: a position within a statement becomes one within the text that
// held it.
func shiftPosition(err error, by int) error {
	var e *sqlerr.Error
	if by == 0 || !errors.As(err, &e) || e.Position == 0 {
		return err
	}
	return e.WithPosition(e.Position + by)
}

func (c *conn) runSimple(sql string) error {
	ctx, done := c.statementContext()
	defer done()
	st, err := c.sess.Prepare(ctx, sql, nil)
	if err != nil {
		return err
	}
	if st == nil {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return nil
	}
	if len(st.Params) > 0 {
		return sqlerr.New(sqlerr.SyntaxError, "there is no parameter $1")
	}
	res, err := c.sess.Execute(ctx, st, nil)
	if err != nil {
		return err
	}
	c.sendNotices(res.Notices)
	if res.Columns != nil {
		c.be.Send(rowDescription(res.Columns, nil))
	}
	if err := c.sendRows(res.Columns, res.Rows, nil); err != nil {
		return err
	}
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(res.Tag)})
	return nil
}

func (c *conn) parse(m *pgproto3.Parse) error {
	pts := make([]types.Type, len(m.ParameterOIDs))
	for i, oid := range m.ParameterOIDs {
		pts[i] = typeOfOID(oid)
	}
	c.scanNotices(m.Query)
	ctx, done := c.statementContext()
	defer done()
	st, err := c.sess.Prepare(ctx, m.Query, pts)
	if err != nil {
		return err
	}
	if st == nil {
		st = &Statement{SQL: m.Query}
	}
	if m.Name != "" {
		if _, dup := c.stmts[m.Name]; dup {
			return sqlerr.New("42P05", "prepared statement %q already exists", m.Name)
		}
	}
	c.stmts[m.Name] = st
	c.be.Send(&pgproto3.ParseComplete{})
	return nil
}

func (c *conn) bind(m *pgproto3.Bind) error {
	st, ok := c.stmts[m.PreparedStatement]
	if !ok {
		return sqlerr.New(sqlerr.InvalidSQLStatementName, "prepared statement %q does not exist", m.PreparedStatement)
	}
	if len(m.Parameters) != len(st.Params) {
		return sqlerr.New(sqlerr.ProtocolViolation, "bind message supplies %d parameters, but prepared statement %q requires %d", len(m.Parameters), m.PreparedStatement, len(st.Params))
	}
	params := make([]types.Datum, len(m.Parameters))
	for i, raw := range m.Parameters {
		if raw == nil {
			continue
		}
		format := int16(0)
		switch len(m.ParameterFormatCodes) {
		case 0:
		case 1:
			format = m.ParameterFormatCodes[0]
		default:
			format = m.ParameterFormatCodes[i]
		}
		t := st.Params[i]
		if t.Kind == types.KindUnknown {
			t = types.Text
		}
		var err error
		if format == 1 {
			params[i], err = decodeBinary(raw, t)
		} else {
			params[i], err = types.ParseText(t, string(raw), c.sess.Location())
		}
		if err != nil {
			return sqlerr.From(fmt.Errorf("parameter $%d: %w", i+1, err))
		}
	}
	c.portals[m.DestinationPortal] = &portal{st: st, params: params, formats: m.ResultFormatCodes}
	c.be.Send(&pgproto3.BindComplete{})
	return nil
}

func (c *conn) describe(m *pgproto3.Describe) error {
	if m.ObjectType == 'S' {
		st, ok := c.stmts[m.Name]
		if !ok {
			return sqlerr.New(sqlerr.InvalidSQLStatementName, "prepared statement %q does not exist", m.Name)
		}
		oids := make([]uint32, len(st.Params))
		for i, t := range st.Params {
			oids[i] = OID(t)
		}
		c.be.Send(&pgproto3.ParameterDescription{ParameterOIDs: oids})
		if st.Columns == nil {
			c.be.Send(&pgproto3.NoData{})
		} else {
			c.be.Send(rowDescription(st.Columns, nil))
		}
		return nil
	}
	p, ok := c.portals[m.Name]
	if !ok {
		return sqlerr.New(sqlerr.InvalidCursorState, "portal %q does not exist", m.Name)
	}
	if p.st.Columns == nil {
		c.be.Send(&pgproto3.NoData{})
	} else {
		c.be.Send(rowDescription(p.st.Columns, p.formats))
	}
	return nil
}

func (c *conn) execute(m *pgproto3.Execute) error {
	p, ok := c.portals[m.Portal]
	if !ok {
		return sqlerr.New(sqlerr.InvalidCursorState, "portal %q does not exist", m.Portal)
	}
	if p.st.Impl == nil && p.st.Columns == nil && strings.TrimSpace(p.st.SQL) == "" {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return nil
	}
	if p.result == nil {
		ctx, done := c.statementContext()
		res, err := c.sess.Execute(ctx, p.st, p.params)
		done()
		if err != nil {
			return err
		}
		p.result = res
		c.sendNotices(res.Notices)
	}
	rows := p.result.Rows[p.next:]
	if m.MaxRows > 0 && len(rows) > int(m.MaxRows) {
		rows = rows[:m.MaxRows]
		if err := c.sendRows(p.result.Columns, rows, p.formats); err != nil {
			return err
		}
		p.next += len(rows)
		c.be.Send(&pgproto3.PortalSuspended{})
		return nil
	}
	if err := c.sendRows(p.result.Columns, rows, p.formats); err != nil {
		return err
	}
	p.next += len(rows)
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(p.result.Tag)})
	return nil
}

func formatOf(formats []int16, i int) int16 {
	switch len(formats) {
	case 0:
		return 0
	case 1:
		return formats[0]
	}
	if i < len(formats) {
		return formats[i]
	}
	return 0
}

func rowDescription(cols []Column, formats []int16) *pgproto3.RowDescription {
	rd := &pgproto3.RowDescription{Fields: make([]pgproto3.FieldDescription, len(cols))}
	for i, col := range cols {
		rd.Fields[i] = pgproto3.FieldDescription{
			Name:         []byte(col.Name),
			DataTypeOID:  OID(col.Type),
			DataTypeSize: typeSize(col.Type),
			TypeModifier: typeModifier(col.Type),
			Format:       formatOf(formats, i),
		}
	}
	return rd
}

func (c *conn) sendRows(cols []Column, rows []types.Row, formats []int16) error {
	loc := c.sess.Location()
	for _, row := range rows {
		values := make([][]byte, len(row))
		for i, d := range row {
			if d.IsNull() {
				continue
			}
			if formatOf(formats, i) == 1 {
				b, err := appendBinary(nil, d, cols[i].Type)
				if err != nil {
					return err
				}
				values[i] = b
			} else {
				values[i] = types.AppendText([]byte{}, d, loc)
			}
		}
		c.be.Send(&pgproto3.DataRow{Values: values})
	}
	return nil
}

// SelectTag returns the command tag of a SELECT that returned n rows.
func SelectTag(n int) string { return "SELECT " + strconv.Itoa(n) }
