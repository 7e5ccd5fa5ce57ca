package pgwire

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/stratadb/strata/sql/sqlerr"
)

// Authenticator returns the SCRAM secret of user, ok false when the user is
// unknown. It is called once per connection, from the connection's
// goroutine, and may be called concurrently for different connections.
type Authenticator func(user string) (secret SCRAMSecret, ok bool)

// PasswordAuth returns an Authenticator for a fixed map user -> password.
// It derives each user's SCRAM secret once, with a random 16-byte salt and
// DefaultSCRAMIterations, and keeps no password.
func PasswordAuth(passwords map[string]string) (Authenticator, error) {
	secrets := make(map[string]SCRAMSecret, len(passwords))
	for user, pw := range passwords {
		salt := make([]byte, 16)
		if _, err := rand.Read(salt); err != nil {
			return nil, fmt.Errorf("pgwire: salt for user %q: %w", user, err)
		}
		s, err := NewSCRAMSecret(pw, salt, DefaultSCRAMIterations)
		if err != nil {
			return nil, fmt.Errorf("pgwire: secret for user %q: %w", user, err)
		}
		secrets[user] = s
	}
	return SecretAuth(secrets), nil
}

// SecretAuth returns an Authenticator for a fixed map user -> SCRAM secret.
func SecretAuth(secrets map[string]SCRAMSecret) Authenticator {
	return func(user string) (SCRAMSecret, bool) {
		s, ok := secrets[user]
		return s, ok
	}
}

// ParsePasswordFile reads a password file: one "user:password" or
// "user:SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>" per
// line (the second is Postgres's rolpassword form, see SCRAMSecret);
// blank lines and lines starting with '#' are skipped. The user name ends
// at the first ':'; the password is the rest of the line as written.
func ParsePasswordFile(data []byte) (Authenticator, error) {
	passwords, secrets, _, err := parsePasswordFile(data)
	if err != nil {
		return nil, err
	}
	derived, err := PasswordAuth(passwords)
	if err != nil {
		return nil, err
	}
	return func(user string) (SCRAMSecret, bool) {
		if s, ok := secrets[user]; ok {
			return s, true
		}
		return derived(user)
	}, nil
}

// PasswordFileUsers returns the user names of a password file (see
// ParsePasswordFile) in the order of its lines, or the error
// ParsePasswordFile gives it.
func PasswordFileUsers(data []byte) ([]string, error) {
	_, _, users, err := parsePasswordFile(data)
	return users, err
}

// parsePasswordFile reads a password file's lines: the plain passwords
// and the SCRAM secrets by user, and the users in the order of the lines.
func parsePasswordFile(data []byte) (passwords map[string]string, secrets map[string]SCRAMSecret, users []string, err error) {
	passwords = map[string]string{}
	secrets = map[string]SCRAMSecret{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		user, pw, ok := strings.Cut(line, ":")
		if !ok || user == "" {
			return nil, nil, nil, fmt.Errorf("pgwire: password file line %d: expected user:password", n)
		}
		_, dupPw := passwords[user]
		_, dupSecret := secrets[user]
		if dupPw || dupSecret {
			return nil, nil, nil, fmt.Errorf("pgwire: password file line %d: user %q appears twice", n, user)
		}
		users = append(users, user)
		if strings.HasPrefix(pw, SCRAMMechanism+"$") {
			s, err := ParseSCRAMSecret(pw)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("pgwire: password file line %d, user %q: %w", n, user, err)
			}
			secrets[user] = s
			continue
		}
		passwords[user] = pw
	}
	if err := sc.Err(); err != nil {
		return nil, nil, nil, fmt.Errorf("pgwire: password file: %w", err)
	}
	if len(users) == 0 {
		return nil, nil, nil, fmt.Errorf("pgwire: password file has no users")
	}
	return passwords, secrets, users, nil
}

// ReadPasswordFile reads the password file at path (see ParsePasswordFile).
func ReadPasswordFile(path string) (Authenticator, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pgwire: password file: %w", err)
	}
	a, err := ParsePasswordFile(data)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return a, nil
}

// authenticate runs SCRAM-SHA-256 with the client for user: the driver of
// scramExchange. It returns nil when the client proved the password; else
// the error that was sent to the client as FATAL (28P01 for a wrong
// password or unknown user, 08P01 for a broken exchange).
func (c *conn) authenticate(user string) error {
	secret, known := c.s.opts.Auth(user)
	if !known {
		secret = mockSCRAMSecret(c.s.mockKey, user)
	}
	x := &scramExchange{secret: secret, secretKnown: known}
	failed := func(err error) error {
		c.s.log.Debug("pgwire: authentication failed", "user", user, "remote", c.nc.RemoteAddr(), "err", err)
		return c.fatal(sqlerr.New(sqlerr.InvalidPassword, "password authentication failed for user %q", user))
	}
	protocol := func(format string, args ...any) error {
		return c.fatal(sqlerr.New(sqlerr.ProtocolViolation, format, args...))
	}

	c.be.Send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{SCRAMMechanism}})
	if err := c.be.Flush(); err != nil {
		return err
	}
	if err := c.be.SetAuthType(pgproto3.AuthTypeSASL); err != nil {
		return err
	}
	msg, err := c.be.Receive()
	if err != nil {
		return c.receiveFailed(err)
	}
	init, ok := msg.(*pgproto3.SASLInitialResponse)
	if !ok {
		return protocol("expected SASL response, got %T", msg)
	}
	if init.AuthMechanism != SCRAMMechanism {
		return protocol("client selected an invalid SASL authentication mechanism %q", init.AuthMechanism)
	}
	nonce := make([]byte, 18)
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	serverFirst, err := x.first(init.Data, base64.StdEncoding.EncodeToString(nonce))
	if err != nil {
		return protocol("%v", err)
	}
	c.be.Send(&pgproto3.AuthenticationSASLContinue{Data: serverFirst})
	if err := c.be.Flush(); err != nil {
		return err
	}
	if err := c.be.SetAuthType(pgproto3.AuthTypeSASLContinue); err != nil {
		return err
	}
	msg, err = c.be.Receive()
	if err != nil {
		return c.receiveFailed(err)
	}
	resp, ok := msg.(*pgproto3.SASLResponse)
	if !ok {
		return protocol("expected SASL response, got %T", msg)
	}
	serverFinal, err := x.final(resp.Data)
	if err == errSCRAMProof {
		return failed(err)
	}
	if err != nil {
		return protocol("%v", err)
	}
	c.be.Send(&pgproto3.AuthenticationSASLFinal{Data: serverFinal})
	return c.be.SetAuthType(pgproto3.AuthTypeOk)
}
