package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/epoch"
	"github.com/stratadb/strata/meta/version"
)

// Client is meta.Service over HTTP. It is safe for concurrent use.
//
// A client of several endpoints (NewFailoverClient) sends each call to the
// endpoint that answered last and moves on to the next one when a call
// certainly was not processed: the connection was refused, or the server
// answered with code "closed" (a follower, or a service shutting down).
// It cycles until the call's context ends, pausing RetryPause after each
// full round. Other failures are returned as they are: a call that may
// have been processed is never sent twice.
type Client struct {
	endpoints []string
	hc        *http.Client
	current   atomic.Int64 // index into endpoints of the last good one
}

// RetryPause is the pause after every endpoint of a failover client
// refused a call, before the next round.
const RetryPause = 20 * time.Millisecond

var _ meta.Service = (*Client)(nil)

// NewClient returns a client of the Handler at baseURL (e.g.
// "http://127.0.0.1:7070"). hc nil means http.DefaultClient; its Timeout
// should be zero, since deadlines come from each call's context.
func NewClient(baseURL string, hc *http.Client) *Client {
	return NewFailoverClient([]string{baseURL}, hc)
}

// NewFailoverClient returns a client of the Handlers at several base URLs,
// of which one serves at a time (meta/ha); see Client.
func NewFailoverClient(baseURLs []string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	c := &Client{hc: hc}
	for _, u := range baseURLs {
		c.endpoints = append(c.endpoints, strings.TrimRight(u, "/"))
	}
	return c
}

// call posts req to method and decodes the result into out (nil to
// ignore it), failing over as the Client doc says.
func (c *Client) call(ctx context.Context, method string, req, out any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("meta client %s: encoding request: %v: %w", method, err, base.ErrInvalidArgument)
	}
	n := len(c.endpoints)
	start := int(c.current.Load())
	for i := 0; ; i++ {
		idx := (start + i) % n
		err := c.callOne(ctx, c.endpoints[idx], method, body, out)
		if err == nil {
			c.current.Store(int64(idx))
			return nil
		}
		if n == 1 || !retryable(err) || ctx.Err() != nil {
			return err
		}
		if (i+1)%n == 0 {
			t := time.NewTimer(RetryPause)
			select {
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("meta client %s: no endpoint served the call (last: %v): %w", method, err, ctx.Err())
			case <-t.C:
			}
		}
	}
}

// retryable reports whether err certainly means "not processed".
func retryable(err error) bool {
	if err == nil {
		return false
	}
	var re *remoteError
	if errors.As(err, &re) {
		return errors.Is(re.marker, base.ErrClosed)
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func (c *Client) callOne(ctx context.Context, endpoint, method string, body []byte, out any) error {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint+"/v1/"+method, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("meta client %s: %w", method, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	if dl, ok := ctx.Deadline(); ok {
		ms := max(time.Until(dl).Milliseconds(), 0)
		hr.Header.Set(TimeoutHeader, strconv.FormatInt(ms, 10))
	}
	resp, err := c.hc.Do(hr)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("meta client %s: %w", method, ctxErr)
		}
		return fmt.Errorf("meta client %s at %s: %w", method, endpoint, err)
	}
	defer resp.Body.Close()
	var rb responseBody
	if err := json.NewDecoder(http.MaxBytesReader(nil, resp.Body, MaxBodyBytes<<2)).Decode(&rb); err != nil {
		return fmt.Errorf("meta client %s: response (HTTP %d) does not decode: %v: %w", method, resp.StatusCode, err, base.ErrCorruption)
	}
	if rb.Error != nil {
		return rebuild(rb.Error.Code, rb.Error.Message)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("meta client %s: HTTP %d without an error body", method, resp.StatusCode)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(rb.Result, out); err != nil {
		return fmt.Errorf("meta client %s: result does not decode: %v: %w", method, err, base.ErrCorruption)
	}
	return nil
}

// CreateDatabase implements meta.Service.
func (c *Client) CreateDatabase(ctx context.Context, db catalog.Database) error {
	return c.call(ctx, "CreateDatabase", db, nil)
}

// DropDatabase implements meta.Service.
func (c *Client) DropDatabase(ctx context.Context, name string) error {
	return c.call(ctx, "DropDatabase", nameReq{Name: name}, nil)
}

// CreateTable implements meta.Service.
func (c *Client) CreateTable(ctx context.Context, t catalog.Table) error {
	return c.call(ctx, "CreateTable", t, nil)
}

// DropTable implements meta.Service.
func (c *Client) DropTable(ctx context.Context, name catalog.ObjectName) error {
	return c.call(ctx, "DropTable", objectReq{Name: name}, nil)
}

// CreateSource implements meta.Service.
func (c *Client) CreateSource(ctx context.Context, s catalog.Source) error {
	return c.call(ctx, "CreateSource", s, nil)
}

// DropSource implements meta.Service.
func (c *Client) DropSource(ctx context.Context, name catalog.ObjectName) error {
	return c.call(ctx, "DropSource", objectReq{Name: name}, nil)
}

// Catalog implements meta.Service: the catalog document is decoded and
// checked again on this side.
func (c *Client) Catalog(ctx context.Context) (*catalog.Catalog, error) {
	var doc json.RawMessage
	if err := c.call(ctx, "Catalog", empty{}, &doc); err != nil {
		return nil, err
	}
	return catalog.Unmarshal(doc)
}

// RegisterJob implements meta.Service.
func (c *Client) RegisterJob(ctx context.Context, j catalog.Job) error {
	return c.call(ctx, "RegisterJob", j, nil)
}

// DropJob implements meta.Service.
func (c *Client) DropJob(ctx context.Context, name string) error {
	return c.call(ctx, "DropJob", nameReq{Name: name}, nil)
}

// ApplyChange implements meta.Service: the change travels as one request
// and the serving side applies it in one store write.
func (c *Client) ApplyChange(ctx context.Context, ch meta.Change) error {
	return c.call(ctx, "ApplyChange", ch, nil)
}

// Heartbeat implements meta.Service.
func (c *Client) Heartbeat(ctx context.Context, hb meta.Heartbeat) error {
	return c.call(ctx, "Heartbeat", hb, nil)
}

// Job implements meta.Service.
func (c *Client) Job(ctx context.Context, name string) (meta.JobInfo, error) {
	var out meta.JobInfo
	return out, c.call(ctx, "Job", nameReq{Name: name}, &out)
}

// Jobs implements meta.Service.
func (c *Client) Jobs(ctx context.Context) ([]meta.JobInfo, error) {
	var out []meta.JobInfo
	return out, c.call(ctx, "Jobs", empty{}, &out)
}

// Lineage implements meta.Service.
func (c *Client) Lineage(ctx context.Context, q meta.LineageQuery) (meta.Lineage, error) {
	var out meta.Lineage
	return out, c.call(ctx, "Lineage", q, &out)
}

// CurrentEpoch implements meta.Service.
func (c *Client) CurrentEpoch(ctx context.Context) (epoch.Info, error) {
	var out epoch.Info
	return out, c.call(ctx, "CurrentEpoch", empty{}, &out)
}

// WaitEpoch implements meta.Service as a long poll: the request stays open
// until the epoch opens or the deadline passes.
func (c *Client) WaitEpoch(ctx context.Context, after base.Epoch) (epoch.Info, error) {
	var out epoch.Info
	return out, c.call(ctx, "WaitEpoch", epochReq{Epoch: after}, &out)
}

// CommitEpoch implements meta.Service.
func (c *Client) CommitEpoch(ctx context.Context, table catalog.ObjectName, e base.Epoch) error {
	return c.call(ctx, "CommitEpoch", epochReq{Table: table, Epoch: e}, nil)
}

// CommittedEpoch implements meta.Service.
func (c *Client) CommittedEpoch(ctx context.Context, table catalog.ObjectName) (version.Committed, error) {
	var out version.Committed
	return out, c.call(ctx, "CommittedEpoch", objectReq{Name: table}, &out)
}

// AcquireVersion implements meta.Service.
func (c *Client) AcquireVersion(ctx context.Context, req meta.VersionRequest) (meta.Version, error) {
	var out meta.Version
	return out, c.call(ctx, "AcquireVersion", req, &out)
}

// RenewPin implements meta.Service.
func (c *Client) RenewPin(ctx context.Context, id version.PinID, ttl time.Duration) (time.Time, error) {
	var out time.Time
	return out, c.call(ctx, "RenewPin", pinReq{Pin: id, TTL: ttl}, &out)
}

// ReleasePin implements meta.Service.
func (c *Client) ReleasePin(ctx context.Context, id version.PinID) error {
	return c.call(ctx, "ReleasePin", pinReq{Pin: id}, nil)
}

// PinnedEpoch implements meta.Service.
func (c *Client) PinnedEpoch(ctx context.Context, table catalog.ObjectName) (base.Epoch, bool, error) {
	var out pinnedResp
	err := c.call(ctx, "PinnedEpoch", objectReq{Name: table}, &out)
	return out.Epoch, out.OK, err
}

// Freshness implements meta.Service.
func (c *Client) Freshness(ctx context.Context) (meta.Freshness, error) {
	var out meta.Freshness
	return out, c.call(ctx, "Freshness", empty{}, &out)
}
