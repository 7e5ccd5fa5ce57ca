package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
)

// MaxBodyBytes bounds a request body.
const MaxBodyBytes = 4 << 20

// TimeoutHeader carries a call's remaining time in milliseconds.
const TimeoutHeader = "Strata-Timeout"

// Request bodies of methods whose argument is not already a JSON value.
type (
	nameReq struct {
		Name string `json:"name"`
	}
	objectReq struct {
		Name catalog.ObjectName `json:"name"`
	}
	epochReq struct {
		Table catalog.ObjectName `json:"table,omitzero"`
		Epoch base.Epoch         `json:"epoch"`
	}
	pinReq struct {
		Pin version.PinID `json:"pin"`
		TTL time.Duration `json:"ttl,omitempty"`
	}
	pinnedResp struct {
		Epoch base.Epoch `json:"epoch"`
		OK    bool       `json:"ok"`
	}
	empty struct{}
)

type method func(ctx context.Context, s meta.Service, body []byte) (any, error)

// decode is a helper for methods: it decodes the body into a T.
func decode[T any](body []byte) (T, error) {
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		return v, fmt.Errorf("request body does not decode: %v: %w", err, base.ErrInvalidArgument)
	}
	return v, nil
}

// with adapts a typed method.
func with[T any](f func(ctx context.Context, s meta.Service, req T) (any, error)) method {
	return func(ctx context.Context, s meta.Service, body []byte) (any, error) {
		req, err := decode[T](body)
		if err != nil {
			return nil, err
		}
		return f(ctx, s, req)
	}
}

var methods = map[string]method{
	"CreateDatabase": with(func(ctx context.Context, s meta.Service, r catalog.Database) (any, error) {
		return empty{}, s.CreateDatabase(ctx, r)
	}),
	"DropDatabase": with(func(ctx context.Context, s meta.Service, r nameReq) (any, error) {
		return empty{}, s.DropDatabase(ctx, r.Name)
	}),
	"CreateTable": with(func(ctx context.Context, s meta.Service, r catalog.Table) (any, error) {
		return empty{}, s.CreateTable(ctx, r)
	}),
	"DropTable": with(func(ctx context.Context, s meta.Service, r objectReq) (any, error) {
		return empty{}, s.DropTable(ctx, r.Name)
	}),
	"CreateSource": with(func(ctx context.Context, s meta.Service, r catalog.Source) (any, error) {
		return empty{}, s.CreateSource(ctx, r)
	}),
	"DropSource": with(func(ctx context.Context, s meta.Service, r objectReq) (any, error) {
		return empty{}, s.DropSource(ctx, r.Name)
	}),
	"Catalog": with(func(ctx context.Context, s meta.Service, _ empty) (any, error) {
		c, err := s.Catalog(ctx)
		if err != nil {
			return nil, err
		}
		doc, err := c.Marshal()
		return json.RawMessage(doc), err
	}),
	"RegisterJob": with(func(ctx context.Context, s meta.Service, r catalog.Job) (any, error) {
		return empty{}, s.RegisterJob(ctx, r)
	}),
	"DropJob": with(func(ctx context.Context, s meta.Service, r nameReq) (any, error) {
		return empty{}, s.DropJob(ctx, r.Name)
	}),
	"ApplyChange": with(func(ctx context.Context, s meta.Service, r meta.Change) (any, error) {
		return empty{}, s.ApplyChange(ctx, r)
	}),
	"Heartbeat": with(func(ctx context.Context, s meta.Service, r meta.Heartbeat) (any, error) {
		return empty{}, s.Heartbeat(ctx, r)
	}),
	"Job": with(func(ctx context.Context, s meta.Service, r nameReq) (any, error) {
		return s.Job(ctx, r.Name)
	}),
	"Jobs": with(func(ctx context.Context, s meta.Service, _ empty) (any, error) {
		return s.Jobs(ctx)
	}),
	"Lineage": with(func(ctx context.Context, s meta.Service, r meta.LineageQuery) (any, error) {
		return s.Lineage(ctx, r)
	}),
	"CurrentEpoch": with(func(ctx context.Context, s meta.Service, _ empty) (any, error) {
		return s.CurrentEpoch(ctx)
	}),
	"WaitEpoch": with(func(ctx context.Context, s meta.Service, r epochReq) (any, error) {
		return s.WaitEpoch(ctx, r.Epoch)
	}),
	"CommitEpoch": with(func(ctx context.Context, s meta.Service, r epochReq) (any, error) {
		return empty{}, s.CommitEpoch(ctx, r.Table, r.Epoch)
	}),
	"CommittedEpoch": with(func(ctx context.Context, s meta.Service, r objectReq) (any, error) {
		return s.CommittedEpoch(ctx, r.Name)
	}),
	"AcquireVersion": with(func(ctx context.Context, s meta.Service, r meta.VersionRequest) (any, error) {
		return s.AcquireVersion(ctx, r)
	}),
	"RenewPin": with(func(ctx context.Context, s meta.Service, r pinReq) (any, error) {
		return s.RenewPin(ctx, r.Pin, r.TTL)
	}),
	"ReleasePin": with(func(ctx context.Context, s meta.Service, r pinReq) (any, error) {
		return empty{}, s.ReleasePin(ctx, r.Pin)
	}),
	"PinnedEpoch": with(func(ctx context.Context, s meta.Service, r objectReq) (any, error) {
		e, ok, err := s.PinnedEpoch(ctx, r.Name)
		return pinnedResp{Epoch: e, OK: ok}, err
	}),
	"Freshness": with(func(ctx context.Context, s meta.Service, _ empty) (any, error) {
		return s.Freshness(ctx)
	}),
}

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type responseBody struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *errorBody      `json:"error,omitempty"`
}

// Handler serves s under /v1/.
type Handler struct {
	s meta.Service
}

// NewHandler returns the HTTP handler of s.
func NewHandler(s meta.Service) *Handler { return &Handler{s: s} }

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, "/v1/")
	m, known := methods[name]
	if !ok || !known {
		writeError(w, fmt.Errorf("no method %q: %w", r.URL.Path, base.ErrNotFound))
		return
	}
	if r.Method != http.MethodPost {
		writeError(w, fmt.Errorf("method %s takes POST, not %s: %w", name, r.Method, base.ErrInvalidArgument))
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBodyBytes+1))
	if err != nil {
		writeError(w, fmt.Errorf("reading request of %s: %v: %w", name, err, base.ErrInvalidArgument))
		return
	}
	if len(body) > MaxBodyBytes {
		writeError(w, fmt.Errorf("request of %s is larger than %d bytes: %w", name, MaxBodyBytes, base.ErrInvalidArgument))
		return
	}
	if len(body) == 0 {
		body = []byte("{}")
	}
	ctx := r.Context()
	if v := r.Header.Get(TimeoutHeader); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms < 0 {
			writeError(w, fmt.Errorf("header %s: %q is not a count of milliseconds: %w", TimeoutHeader, v, base.ErrInvalidArgument))
			return
		}
		left := time.Duration(ms) * time.Millisecond
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, left-max(left/5, 2*time.Millisecond))
		defer cancel()
	}
	res, err := m(ctx, h.s, body)
	if err != nil {
		writeError(w, err)
		return
	}
	out, err := json.Marshal(res)
	if err != nil {
		writeError(w, fmt.Errorf("encoding the result of %s: %w", name, err))
		return
	}
	writeJSON(w, http.StatusOK, responseBody{Result: out})
}

// WriteError writes err as a protocol error response, classified by its
// markers; a server in front of the Handler (a follower of an elected
// leader) answers with it.
func WriteError(w http.ResponseWriter, err error) { writeError(w, err) }

func writeError(w http.ResponseWriter, err error) {
	code, status := classify(err)
	writeJSON(w, status, responseBody{Error: &errorBody{Code: code, Message: err.Error()}})
}

func writeJSON(w http.ResponseWriter, status int, v responseBody) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
