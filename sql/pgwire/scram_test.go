package pgwire

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

// rfc7677 is the example exchange of RFC 7677 section 3: user "user",
// password "pencil".
var rfc7677 = struct {
	salt, serverNonce, clientFirst, serverFirst, clientFinal, serverFinal string
}{
	salt:        "W22ZaJ0SNY7soEsUEjb6gQ==",
	serverNonce: "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0",
	clientFirst: "n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
	serverFirst: "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
	clientFinal: "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
	serverFinal: "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
}

func rfcSecret(t *testing.T, password string) SCRAMSecret {
	t.Helper()
	salt, _ := base64.StdEncoding.DecodeString(rfc7677.salt)
	s, err := NewSCRAMSecret(password, salt, 4096)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSCRAMExchangeRFC7677(t *testing.T) {
	x := &scramExchange{secret: rfcSecret(t, "pencil"), secretKnown: true}
	first, err := x.first([]byte(rfc7677.clientFirst), rfc7677.serverNonce)
	if err != nil || string(first) != rfc7677.serverFirst {
		t.Fatalf("server-first %q, %v\nwant %q", first, err, rfc7677.serverFirst)
	}
	final, err := x.final([]byte(rfc7677.clientFinal))
	if err != nil || string(final) != rfc7677.serverFinal {
		t.Fatalf("server-final %q, %v\nwant %q", final, err, rfc7677.serverFinal)
	}
	// A second client-final is out of order.
	if _, err := x.final([]byte(rfc7677.clientFinal)); err == nil {
		t.Fatal("second client-final accepted")
	}
}

func TestSCRAMExchangeWrongPasswordAndUnknownUser(t *testing.T) {
	for name, x := range map[string]*scramExchange{
		"wrong password": {secret: rfcSecret(t, "pencil2"), secretKnown: true},
		// The right keys but an unknown user: never accepted.
		"unknown user": {secret: rfcSecret(t, "pencil"), secretKnown: false},
	} {
		if _, err := x.first([]byte(rfc7677.clientFirst), rfc7677.serverNonce); err != nil {
			t.Fatalf("%s: first: %v", name, err)
		}
		if _, err := x.final([]byte(rfc7677.clientFinal)); !errors.Is(err, errSCRAMProof) {
			t.Errorf("%s: final: %v, want errSCRAMProof", name, err)
		}
	}
}

func TestSCRAMExchangeMalformed(t *testing.T) {
	for _, tc := range []struct {
		name, first, final string
	}{
		{"channel binding asked", "p=tls-server-end-point,,n=user,r=abc", ""},
		{"authzid", "n,a=admin,n=user,r=abc", ""},
		{"no gs2 header", "n=user,r=abc", ""},
		{"no nonce", "n,,n=user", ""},
		{"empty nonce", "n,,n=user,r=", ""},
		{"mandatory extension", "n,,m=ext,n=user,r=abc", ""},
		{"no proof", rfc7677.clientFirst, "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"},
		{"binding differs from header", rfc7677.clientFirst, strings.Replace(rfc7677.clientFinal, "c=biws", "c=eSws", 1)},
		{"nonce differs", rfc7677.clientFirst, strings.Replace(rfc7677.clientFinal, "r=rOpr", "r=xOpr", 1)},
		{"short proof", rfc7677.clientFirst, "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=AAAA"},
	} {
		x := &scramExchange{secret: rfcSecret(t, "pencil"), secretKnown: true}
		_, err := x.first([]byte(tc.first), rfc7677.serverNonce)
		if tc.final == "" {
			if err == nil {
				t.Errorf("%s: client-first %q accepted", tc.name, tc.first)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: first: %v", tc.name, err)
		}
		if _, err := x.final([]byte(tc.final)); err == nil || errors.Is(err, errSCRAMProof) {
			t.Errorf("%s: client-final %q gave %v, want a protocol error", tc.name, tc.final, err)
		}
	}
}

func TestSCRAMSecretText(t *testing.T) {
	s := rfcSecret(t, "pencil")
	text := s.String()
	if !strings.HasPrefix(text, "SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$") {
		t.Fatalf("secret text %q", text)
	}
	back, err := ParseSCRAMSecret(text)
	if err != nil {
		t.Fatal(err)
	}
	if back.String() != text || back.StoredKey != s.StoredKey || back.ServerKey != s.ServerKey {
		t.Fatalf("round trip %q -> %q", text, back.String())
	}
	for _, bad := range []string{
		"md5abc",
		"SCRAM-SHA-256$0:W22ZaJ0SNY7soEsUEjb6gQ==$AAAA:AAAA",
		"SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$AAAA:AAAA",
		"SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==",
		strings.Replace(text, "$4096:", "$4096;", 1),
	} {
		if _, err := ParseSCRAMSecret(bad); err == nil {
			t.Errorf("ParseSCRAMSecret(%q) accepted", bad)
		}
	}
}

func TestParsePasswordFile(t *testing.T) {
	secret := rfcSecret(t, "pencil").String()
	auth, err := ParsePasswordFile([]byte("# users\n\nalice:s3cret:with:colons\nbob:" + secret + "\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, ok := auth("alice")
	want, _ := NewSCRAMSecret("s3cret:with:colons", a.Salt, a.Iterations)
	if !ok || a.StoredKey != want.StoredKey || a.Iterations != DefaultSCRAMIterations {
		t.Errorf("alice: %v %v", ok, a)
	}
	if b, ok := auth("bob"); !ok || b.String() != secret {
		t.Errorf("bob: %v %v", ok, b)
	}
	if _, ok := auth("carol"); ok {
		t.Error("carol is not in the file")
	}
	for _, bad := range []string{"", "# only a comment\n", "nocolon\n", ":pw\n", "a:x\na:y\n", "a:SCRAM-SHA-256$bad\n"} {
		if _, err := ParsePasswordFile([]byte(bad)); err == nil {
			t.Errorf("password file %q accepted", bad)
		}
	}
}

// TestPasswordFileUsers: the users of a password file come in the order
// of its lines, comments and blank lines skipped; a file ParsePasswordFile
// refuses is refused alike.
func TestPasswordFileUsers(t *testing.T) {
	users, err := PasswordFileUsers([]byte("# admins\n\ncarol:pw:with:colons\nalice:pw\r\nbob:pw2\n"))
	if err != nil || strings.Join(users, ",") != "carol,alice,bob" {
		t.Fatalf("users %q, %v; want carol,alice,bob", users, err)
	}
	for _, bad := range []string{"", "# only a comment\n", "alice\n", "alice:a\nalice:b\n"} {
		if _, err := PasswordFileUsers([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
