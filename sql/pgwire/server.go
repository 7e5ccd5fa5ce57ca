package pgwire

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// ServerVersion is what clients see as server_version: the Postgres
// release whose behaviour Strata follows.
const ServerVersion = "15.0 (Strata)"

// Server accepts Postgres connections and serves each with a Session.
type Server struct {
	handler Handler
	log     *slog.Logger

	mu struct {
		sync.Mutex
		// conns maps a BackendKeyData process id to its connection, for
		// cancel requests. Guarded by mu.
		conns  map[uint32]*conn
		nextID uint32
		ln     net.Listener
		closed bool
	}
	wg sync.WaitGroup
}

// NewServer returns a server that opens sessions with h. A nil logger
// discards logs.
func NewServer(h Handler, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{handler: h, log: log}
	s.mu.conns = map[uint32]*conn{}
	return s
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
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(nc)
		}()
	}
}

// Close stops accepting, closes every connection and waits for their
// goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	s.mu.closed = true
	ln := s.mu.ln
	for _, c := range s.mu.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	var err error
	if ln != nil {
		err = ln.Close()
	}
	s.wg.Wait()
	return err
}

// conn is one client connection.
type conn struct {
	s       *Server
	nc      net.Conn
	be      *pgproto3.Backend
	id      uint32
	secret  []byte
	sess    Session
	stmts   map[string]*Statement
	portals map[string]*portal

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

func (s *Server) serveConn(nc net.Conn) {
	defer nc.Close()
	c := &conn{s: s, nc: nc, be: pgproto3.NewBackend(nc, nc), stmts: map[string]*Statement{}, portals: map[string]*portal{}}
	if err := c.startup(); err != nil {
		if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
			s.log.Debug("pgwire: startup failed", "remote", nc.RemoteAddr(), "err", err)
		}
		return
	}
	defer func() {
		s.mu.Lock()
		delete(s.mu.conns, c.id)
		s.mu.Unlock()
		c.sess.Close()
	}()
	if err := c.loop(); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		s.log.Debug("pgwire: connection ended", "remote", nc.RemoteAddr(), "err", err)
	}
}

func (c *conn) startup() error {
	for {
		msg, err := c.be.ReceiveStartupMessage()
		if err != nil {
			return err
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest, *pgproto3.GSSEncRequest:
			if _, err := c.nc.Write([]byte{'N'}); err != nil {
				return err
			}
		case *pgproto3.CancelRequest:
			c.s.cancelRequest(m.ProcessID, m.SecretKey)
			return io.EOF
		case *pgproto3.StartupMessage:
			return c.open(m)
		default:
			return fmt.Errorf("unexpected startup message %T", msg)
		}
	}
}

func (c *conn) open(m *pgproto3.StartupMessage) error {
	user, db := m.Parameters["user"], m.Parameters["database"]
	if db == "" {
		db = user
	}
	sess, err := c.s.handler.NewSession(context.Background(), user, db)
	if err != nil {
		c.sendError(err)
		if ferr := c.be.Flush(); ferr != nil {
			return ferr
		}
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
	return c.be.Flush()
}

// cancelRequest cancels the running statement of connection id when the
// key matches.
func (s *Server) cancelRequest(id uint32, secret []byte) {
	s.mu.Lock()
	c := s.mu.conns[id]
	s.mu.Unlock()
	if c == nil || string(c.secret) != string(secret) {
		return
	}
	c.cancelMu.Lock()
	if c.cancel != nil {
		c.cancel()
	}
	c.cancelMu.Unlock()
}

// statementContext returns the context of one statement, cancelled by a
// CancelRequest.
func (c *conn) statementContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
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
		if err != nil {
			return err
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
			c.be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
			if err := c.be.Flush(); err != nil {
				return err
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
				return err
			}
		case *pgproto3.Flush:
			if err := c.be.Flush(); err != nil {
				return err
			}
		case *pgproto3.Terminate:
			return nil
		default:
			failed = sqlerr.New(sqlerr.FeatureNotSupported, "protocol message %T is not supported", msg)
		}
		if failed != nil {
			c.sendError(failed)
			skipToSync = true
		}
	}
}

func (c *conn) sendError(err error) {
	e := sqlerr.From(err)
	if errors.Is(err, context.Canceled) {
		e = sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
	}
	c.be.Send(&pgproto3.ErrorResponse{
		Severity: "ERROR", SeverityUnlocalized: "ERROR",
		Code: e.Code, Message: e.Message, Detail: e.Detail, Hint: e.Hint, Position: int32(e.Position),
	})
}

// simpleQuery runs every statement of a Query message, stopping at the
// first error. Positions in errors are relative to the whole text.
func (c *conn) simpleQuery(text string) {
	parts, err := c.sess.Split(text)
	if err != nil {
		c.sendError(err)
		return
	}
	if len(parts) == 0 {
		c.be.Send(&pgproto3.EmptyQueryResponse{})
		return
	}
	for _, sql := range parts {
		if err := c.runSimple(sql); err != nil {
			c.sendError(err)
			return
		}
	}
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
