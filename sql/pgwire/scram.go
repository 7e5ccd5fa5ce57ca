package pgwire

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/text/secure/precis"
)

// SCRAMMechanism is the SASL mechanism the server offers (RFC 7677). The
// channel-binding variant SCRAM-SHA-256-PLUS is not offered.
const SCRAMMechanism = "SCRAM-SHA-256"

// DefaultSCRAMIterations is the PBKDF2 iteration count of secrets derived
// from plain passwords: Postgres's scram_iterations default.
const DefaultSCRAMIterations = 4096

// SCRAMSecret is what the server keeps of a password (RFC 5802 section 3):
// the salt and iteration count of PBKDF2-HMAC-SHA-256 and the two keys
// derived from the salted password. It does not let anyone log in without
// the password. Its text form is Postgres's pg_authid.rolpassword one:
// "SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>", base64.
type SCRAMSecret struct {
	Iterations int
	Salt       []byte
	// StoredKey is H(HMAC(SaltedPassword, "Client Key")).
	StoredKey [sha256.Size]byte
	// ServerKey is HMAC(SaltedPassword, "Server Key").
	ServerKey [sha256.Size]byte
}

// NewSCRAMSecret derives the secret of password with salt and iterations
// (at least 1). The password is normalized with SASLprep (the PRECIS
// OpaqueString profile) as Postgres and pgx do; a password SASLprep refuses
// is used as its raw bytes, as Postgres does.
func NewSCRAMSecret(password string, salt []byte, iterations int) (SCRAMSecret, error) {
	if iterations < 1 {
		return SCRAMSecret{}, fmt.Errorf("pgwire: SCRAM iteration count %d: must be positive", iterations)
	}
	if p, err := precis.OpaqueString.String(password); err == nil {
		password = p
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, iterations, sha256.Size)
	if err != nil {
		return SCRAMSecret{}, fmt.Errorf("pgwire: SCRAM salted password: %w", err)
	}
	s := SCRAMSecret{Iterations: iterations, Salt: append([]byte(nil), salt...)}
	s.StoredKey = sha256.Sum256(hmacSHA256(salted, []byte("Client Key")))
	copy(s.ServerKey[:], hmacSHA256(salted, []byte("Server Key")))
	return s, nil
}

// String gives the secret in Postgres's rolpassword form.
func (s SCRAMSecret) String() string {
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("%s$%d:%s$%s:%s", SCRAMMechanism, s.Iterations, b64(s.Salt), b64(s.StoredKey[:]), b64(s.ServerKey[:]))
}

// ParseSCRAMSecret parses the rolpassword form that String gives (what
// `SELECT rolpassword FROM pg_authid` shows in Postgres), so that secrets,
// not passwords, can be configured.
func ParseSCRAMSecret(text string) (SCRAMSecret, error) {
	bad := func(why string) (SCRAMSecret, error) {
		return SCRAMSecret{}, fmt.Errorf("pgwire: SCRAM secret: %s", why)
	}
	rest, ok := strings.CutPrefix(text, SCRAMMechanism+"$")
	if !ok {
		return bad("does not start with " + SCRAMMechanism + "$")
	}
	params, keys, ok := strings.Cut(rest, "$")
	if !ok {
		return bad("missing $ before the keys")
	}
	iterText, saltText, ok1 := strings.Cut(params, ":")
	storedText, serverText, ok2 := strings.Cut(keys, ":")
	if !ok1 || !ok2 {
		return bad("expected <iterations>:<salt>$<StoredKey>:<ServerKey>")
	}
	var s SCRAMSecret
	var err error
	if s.Iterations, err = strconv.Atoi(iterText); err != nil || s.Iterations < 1 {
		return bad("bad iteration count " + strconv.Quote(iterText))
	}
	if s.Salt, err = base64.StdEncoding.DecodeString(saltText); err != nil || len(s.Salt) == 0 {
		return bad("bad salt")
	}
	for _, k := range []struct {
		text string
		dst  []byte
	}{{storedText, s.StoredKey[:]}, {serverText, s.ServerKey[:]}} {
		b, err := base64.StdEncoding.DecodeString(k.text)
		if err != nil || len(b) != sha256.Size {
			return bad("bad key")
		}
		copy(k.dst, b)
	}
	return s, nil
}

func hmacSHA256(key, msg []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(msg)
	return h.Sum(nil)
}

// errSCRAMProof marks a client proof that does not match the secret: the
// wrong password (or an unknown user).
var errSCRAMProof = errors.New("pgwire: SCRAM client proof does not match")

// scramExchange is the server side of one SCRAM-SHA-256 exchange
// (RFC 5802 section 5, RFC 7677) as a pure state machine: it reads no
// clock, draws no randomness and does no I/O. The driver (conn.authenticate)
// hands it the client's messages and the server nonce and sends what it
// returns.
//
//	client-first  "n,,n=<user>,r=<cnonce>"       -> server-first "r=<cnonce><snonce>,s=<salt>,i=<iter>"
//	client-final  "c=biws,r=<nonce>,p=<proof>"   -> server-final "v=<signature>"
//
// The user name inside the SCRAM messages is ignored, as Postgres does: the
// user is the one of the StartupMessage. An unknown user gets a mock
// exchange with an invented secret (secretKnown false) that fails at the
// proof, so that a client cannot tell unknown users from wrong passwords.
type scramExchange struct {
	secret      SCRAMSecret
	secretKnown bool

	gs2Header       string // "n,," or "y,,"
	clientFirstBare string
	serverFirst     string
	nonce           string // client nonce + server nonce
	done            bool
}

// first takes the client-first-message and the server's nonce (printable
// ASCII without ','), and returns the server-first-message.
func (x *scramExchange) first(clientFirst []byte, serverNonce string) ([]byte, error) {
	msg := string(clientFirst)
	var gs2 string
	switch {
	case strings.HasPrefix(msg, "n,"), strings.HasPrefix(msg, "y,"):
		// "y": the client could bind the channel but thinks we cannot,
		// which is right: SCRAM-SHA-256-PLUS is not offered.
	case strings.HasPrefix(msg, "p="):
		return nil, errors.New("pgwire: SCRAM channel binding requested, but SCRAM-SHA-256-PLUS was not offered")
	default:
		return nil, errors.New("pgwire: malformed SCRAM client-first-message: bad GS2 header")
	}
	authzid, bare, ok := strings.Cut(msg[2:], ",")
	if !ok {
		return nil, errors.New("pgwire: malformed SCRAM client-first-message: bad GS2 header")
	}
	if authzid != "" {
		return nil, errors.New("pgwire: SCRAM authorization identity is not supported")
	}
	gs2 = msg[:3+len(authzid)]
	if strings.HasPrefix(bare, "m=") {
		return nil, errors.New("pgwire: SCRAM mandatory extensions are not supported")
	}
	attrs := strings.Split(bare, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "n=") || !strings.HasPrefix(attrs[1], "r=") || len(attrs[1]) == 2 {
		return nil, errors.New("pgwire: malformed SCRAM client-first-message: expected n=<user>,r=<nonce>")
	}
	x.gs2Header = gs2
	x.clientFirstBare = bare
	x.nonce = attrs[1][2:] + serverNonce
	x.serverFirst = fmt.Sprintf("r=%s,s=%s,i=%d", x.nonce, base64.StdEncoding.EncodeToString(x.secret.Salt), x.secret.Iterations)
	return []byte(x.serverFirst), nil
}

// final takes the client-final-message and returns the server-final-message
// when the proof matches; errSCRAMProof when it does not.
func (x *scramExchange) final(clientFinal []byte) ([]byte, error) {
	if x.serverFirst == "" || x.done {
		return nil, errors.New("pgwire: SCRAM client-final-message out of order")
	}
	x.done = true
	msg := string(clientFinal)
	i := strings.LastIndex(msg, ",p=")
	if i < 0 {
		return nil, errors.New("pgwire: malformed SCRAM client-final-message: no proof")
	}
	withoutProof, proofText := msg[:i], msg[i+3:]
	attrs := strings.Split(withoutProof, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "c=") || !strings.HasPrefix(attrs[1], "r=") {
		return nil, errors.New("pgwire: malformed SCRAM client-final-message: expected c=<binding>,r=<nonce>")
	}
	binding, err := base64.StdEncoding.DecodeString(attrs[0][2:])
	if err != nil || string(binding) != x.gs2Header {
		return nil, errors.New("pgwire: SCRAM channel binding does not match the GS2 header")
	}
	if attrs[1][2:] != x.nonce {
		return nil, errors.New("pgwire: SCRAM nonce does not match")
	}
	proof, err := base64.StdEncoding.DecodeString(proofText)
	if err != nil || len(proof) != sha256.Size {
		return nil, errors.New("pgwire: malformed SCRAM client proof")
	}
	authMessage := []byte(x.clientFirstBare + "," + x.serverFirst + "," + withoutProof)
	clientSignature := hmacSHA256(x.secret.StoredKey[:], authMessage)
	clientKey := make([]byte, sha256.Size)
	for i := range clientKey {
		clientKey[i] = proof[i] ^ clientSignature[i]
	}
	stored := sha256.Sum256(clientKey)
	if subtle.ConstantTimeCompare(stored[:], x.secret.StoredKey[:]) != 1 || !x.secretKnown {
		return nil, errSCRAMProof
	}
	serverSignature := hmacSHA256(x.secret.ServerKey[:], authMessage)
	return append([]byte("v="), base64.StdEncoding.AppendEncode(nil, serverSignature)...), nil
}

// mockSCRAMSecret invents a stable secret for an unknown user, so that its
// salt does not change between attempts (which would reveal that the user
// does not exist). key is a per-server random key.
func mockSCRAMSecret(key []byte, user string) SCRAMSecret {
	salt := hmacSHA256(key, []byte("salt:"+user))[:16]
	var s SCRAMSecret
	s.Iterations = DefaultSCRAMIterations
	s.Salt = salt
	copy(s.StoredKey[:], hmacSHA256(key, []byte("stored:"+user)))
	copy(s.ServerKey[:], hmacSHA256(key, []byte("server:"+user)))
	return s
}
