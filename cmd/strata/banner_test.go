package main

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConnectHint: the startup line suggests psql as root without a
// password file, and as the file's first user, with a word that psql asks
// for the password, with one; a name the shell would split is quoted.
func TestConnectHint(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4566}
	for _, tc := range []struct {
		users []string
		want  string
	}{
		{nil, "psql -h 127.0.0.1 -p 4566 -U root -d dev"},
		{[]string{"alice", "bob"}, "psql -h 127.0.0.1 -p 4566 -U alice -d dev; psql asks for the password, as set for alice in --password-file"},
		{[]string{"o'neil x"}, `psql -h 127.0.0.1 -p 4566 -U 'o'\''neil x' -d dev; psql asks for the password, as set for o'neil x in --password-file`},
	} {
		if got := connectHint(addr, tc.users); got != tc.want {
			t.Errorf("users %q: %q, want %q", tc.users, got, tc.want)
		}
	}
}

// TestStartBannerNamesPasswordFileUser: strata start --password-file
// prints a psql line for the file's first user (after comments and blank
// lines), not root, whom the file does not let in.
func TestStartBannerNamesPasswordFileUser(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "passwords")
	if err := os.WriteFile(pw, []byte("# users\n\nalice:secret\nbob:other\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wire := freePort(t)
	cmd := exec.Command(os.Args[0], "start", "--data", filepath.Join(dir, "data"), "--listen", wire, "--http", "-", "--password-file", pw)
	cmd.Env = append(os.Environ(), "STRATA_TEST_MAIN=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	host, port, _ := net.SplitHostPort(wire)
	want := "(psql -h " + host + " -p " + port + " -U alice -d dev; psql asks for the password, as set for alice in --password-file)"
	deadline := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("strata start ended before its startup line")
			}
			if !strings.Contains(l, "Postgres wire on") {
				continue
			}
			if !strings.Contains(l, want) || strings.Contains(l, "-U root") {
				t.Fatalf("startup line %q, want it to hold %q", l, want)
			}
			return
		case <-deadline:
			t.Fatal("no startup line after 60 s")
		}
	}
}
