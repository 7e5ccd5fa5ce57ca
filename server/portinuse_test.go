package server

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadb/strata/engine"
)

// TestPortInUseCreatesNothing: a server whose Postgres or HTTP port is
// taken fails, naming the address, before it creates its data directory.
func TestPortInUseCreatesNothing(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	for _, tc := range []struct{ listen, http string }{{addr, "-"}, {"127.0.0.1:0", addr}} {
		dir := filepath.Join(t.TempDir(), "data")
		s, err := Start(context.Background(), Options{Engine: engine.Options{Dir: dir}, Listen: tc.listen, HTTP: tc.http})
		if err == nil {
			s.Close()
			t.Fatalf("listen %s, http %s: started on a port in use", tc.listen, tc.http)
		}
		if !strings.Contains(err.Error(), "listen on "+addr) {
			t.Errorf("listen %s, http %s: %v, want the address named", tc.listen, tc.http, err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("listen %s, http %s: the data directory exists after the failed start (%v)", tc.listen, tc.http, err)
		}
	}
}
