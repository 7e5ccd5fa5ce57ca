package pgwire

import (
	"crypto/tls"
	"log/slog"
	"time"
)

// DefaultMaxMessageSize is the largest frontend message body (bytes) a
// server accepts when Options.MaxMessageSize is zero: 64 MiB.
const DefaultMaxMessageSize = 64 << 20

// DefaultStartupTimeout bounds the time (Options.StartupTimeout) from
// accepting a connection to the end of authentication: Postgres's
// authentication_timeout default.
const DefaultStartupTimeout = time.Minute

// Options configure a Server. The zero value serves plaintext connections
// from any user without a password, with the default limits.
type Options struct {
	// Log receives debug lines about refused and broken connections; nil
	// discards them.
	Log *slog.Logger
	// TLS, when set, makes the server answer SSLRequest with 'S' and run
	// the TLS handshake with this configuration (it needs Certificates or
	// GetCertificate). Nil answers 'N', and clients go on in plaintext.
	TLS *tls.Config
	// RequireTLS refuses a StartupMessage that arrives in plaintext with
	// FATAL 28000. It needs TLS; a CancelRequest is still taken in
	// plaintext (it carries only the connection's secret key).
	RequireTLS bool
	// Auth, when set, makes every connection prove its user's password
	// with SCRAM-SHA-256 before its session opens; a wrong password or an
	// unknown user gets FATAL 28P01. Nil accepts any user without a
	// password. See PasswordAuth, SecretAuth and ReadPasswordFile.
	Auth Authenticator
	// MaxMessageSize is the largest frontend message body in bytes; a
	// larger one gets FATAL 54000 and the connection is closed before the
	// body is read. Zero means DefaultMaxMessageSize; negative means no
	// limit. Startup packets are limited to 10000 bytes regardless, as in
	// Postgres.
	MaxMessageSize int
	// StartupTimeout bounds TLS negotiation, startup and authentication of
	// one connection. Zero means DefaultStartupTimeout; negative means no
	// limit.
	StartupTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.MaxMessageSize == 0 {
		o.MaxMessageSize = DefaultMaxMessageSize
	}
	if o.StartupTimeout == 0 {
		o.StartupTimeout = DefaultStartupTimeout
	}
	return o
}
