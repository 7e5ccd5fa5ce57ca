package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestStartSetsMemoryLimit: `strata start` without GOMEMLIMIT sets a
// soft memory limit of half the machine and says so; with GOMEMLIMIT it
// leaves the runtime's (the user's) limit alone.
func TestStartSetsMemoryLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, gomemlimit := range []string{"", "3GiB"} {
		c := &child{wire: freePort(t), http: freePort(t)}
		c.cmd = exec.Command(os.Args[0], "start", "--data", t.TempDir(), "--listen", c.wire, "--http", c.http)
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "GOMEMLIMIT=") {
				c.cmd.Env = append(c.cmd.Env, kv)
			}
		}
		c.cmd.Env = append(c.cmd.Env, "STRATA_TEST_MAIN=1")
		if gomemlimit != "" {
			c.cmd.Env = append(c.cmd.Env, "GOMEMLIMIT="+gomemlimit)
		}
		c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
		if err := c.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		conn := c.connect(t)
		_ = conn.Close(context.Background())
		c.kill9(t)
		out := c.out.String()
		got := strings.Contains(out, "Go memory limit: ")
		switch {
		case gomemlimit == "" && (!got || !strings.Contains(out, "(1/2 of ")):
			t.Errorf("without GOMEMLIMIT, no limit of half the machine announced:\n%s", out)
		case gomemlimit != "" && got:
			t.Errorf("with GOMEMLIMIT=%s, a limit was set:\n%s", gomemlimit, out)
		}
	}
}
