package api

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/metatest"
	"github.com/stratadb/strata/meta/service"
	"github.com/stratadb/strata/meta/store"
)

func serve(t *testing.T, st store.Store) (*service.Meta, *Client, func()) {
	t.Helper()
	m, err := service.Open(context.Background(), service.Options{Store: st, EpochInterval: 5 * time.Millisecond,
		EpochReserveWindow: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewHandler(m))
	stop := func() { srv.Close(); _ = m.Close() }
	t.Cleanup(stop)
	return m, NewClient(srv.URL, srv.Client()), stop
}

// TestSuiteOverHTTP runs the conformance suite through Client and Handler,
// restarting the server process's service on the same store.
func TestSuiteOverHTTP(t *testing.T) {
	metatest.Run(t, func(t *testing.T) *metatest.Harness {
		st := store.NewMemory()
		_, c, stop := serve(t, st)
		return &metatest.Harness{Service: c, Restart: func(t *testing.T) meta.Service {
			stop()
			_, c, stop = serve(t, st.Reopen())
			return c
		}}
	})
}

func TestErrorsCrossTheWire(t *testing.T) {
	_, c, _ := serve(t, store.NewMemory())
	ctx := context.Background()
	err := c.DropDatabase(ctx, "nope")
	if !errors.Is(err, base.ErrNotFound) || !errIsRemote(err) || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("DropDatabase(nope) = %v", err)
	}
	for _, code := range codes {
		if got, _ := classify(rebuild(code.code, "x")); got != code.code {
			t.Errorf("code %s comes back as %s", code.code, got)
		}
	}
	if got, _ := classify(errors.New("plain")); got != "internal" {
		t.Errorf("plain error classified %s", got)
	}
}

func TestHandlerRefusesBadRequests(t *testing.T) {
	_, c, _ := serve(t, store.NewMemory())
	for _, tc := range []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/v1/NoSuchMethod", "{}", http.StatusNotFound, "not_found"},
		{"GET", "/v1/CurrentEpoch", "", http.StatusBadRequest, "invalid_argument"},
		{"POST", "/v1/DropTable", `{"name":"../x.y"}`, http.StatusBadRequest, "invalid_argument"},
		{"POST", "/v1/DropTable", `{"name":`, http.StatusBadRequest, "invalid_argument"},
		{"POST", "/v1/CurrentEpoch", strings.Repeat(" ", MaxBodyBytes+1), http.StatusBadRequest, "invalid_argument"},
	} {
		req, _ := http.NewRequest(tc.method, c.endpoints[0]+tc.path, strings.NewReader(tc.body))
		resp, err := c.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != tc.status || !strings.Contains(string(body), `"code":"`+tc.code+`"`) {
			t.Errorf("%s %s: HTTP %d %s; want %d %s", tc.method, tc.path, resp.StatusCode, body, tc.status, tc.code)
		}
	}
}

// errIsRemote reports whether err came from the server.
func errIsRemote(err error) bool {
	var re *remoteError
	return errors.As(err, &re)
}
