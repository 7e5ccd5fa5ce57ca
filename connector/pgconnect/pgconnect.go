package pgconnect

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// Error is the failure to connect to the PostgreSQL server at Addr:
// `cannot connect to host:port: cause`. It wraps the driver's error, so
// errors.As still finds the server's *pgconn.PgError in it.
type Error struct {
	// Addr is host:port as the options named them.
	Addr string
	// Cause is what went wrong, once (Cause).
	Cause string
	err   error
}

// New returns the failure err of connecting to host:port; nil when err
// is nil.
func New(host string, port int, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Addr: net.JoinHostPort(host, strconv.Itoa(port)), Cause: Cause(err), err: err}
}

// Error returns the message.
func (e *Error) Error() string { return "cannot connect to " + e.Addr + ": " + e.Cause }

// Unwrap returns the driver's error.
func (e *Error) Unwrap() error { return e.err }

// rank orders the causes of attempts: the lower tells the more.
const (
	rankServer  = iota // the server answered with an error
	rankNetwork        // the address could not be reached
	rankOther          // anything else but TLS
	rankTLS            // the TLS attempt of sslmode=prefer failed
)

// Cause returns what made a connection attempt fail, in few words: of
// the driver's attempts (pgconn.ConnectError joins one error per address
// and TLS mode), the causes of the best rank, each once, joined by "; ".
func Cause(err error) string {
	best, seen := rankTLS+1, map[string]bool{}
	var causes []string
	for _, a := range attempts(err) {
		c, r := attemptCause(a)
		switch {
		case r < best:
			best, causes, seen = r, []string{c}, map[string]bool{c: true}
		case r == best && !seen[c]:
			causes = append(causes, c)
			seen[c] = true
		}
	}
	if len(causes) == 0 {
		return err.Error()
	}
	return strings.Join(causes, "; ")
}

// attempts returns the errors of the driver's connection attempts that
// err joins, or err alone.
func attempts(err error) []error {
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		return []error{err}
	}
	for e := ce.Unwrap(); e != nil; e = errors.Unwrap(e) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			return j.Unwrap()
		}
		if errors.Unwrap(e) == nil {
			return []error{e}
		}
	}
	return []error{err}
}

// attemptCause returns the cause of one attempt and its rank.
func attemptCause(a error) (string, int) {
	var pe *pgconn.PgError
	if errors.As(a, &pe) {
		return pe.Message + " (SQLSTATE " + pe.Code + ")", rankServer
	}
	// The driver words an attempt "addr (host): what: cause"; what
	// follows the address is the attempt's own.
	msg := a.Error()
	if u := errors.Unwrap(a); u != nil {
		msg = u.Error()
	}
	if strings.HasPrefix(msg, "tls error") {
		return msg, rankTLS
	}
	var errno syscall.Errno
	if errors.As(a, &errno) {
		return errno.Error(), rankNetwork
	}
	var dns *net.DNSError
	if errors.As(a, &dns) {
		return dns.Error(), rankNetwork
	}
	var op *net.OpError
	if errors.As(a, &op) {
		return op.Err.Error(), rankNetwork
	}
	return msg, rankOther
}
