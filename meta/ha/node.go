package ha

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/api"
	"github.com/stratadb/strata/meta/service"
	"github.com/stratadb/strata/meta/store/etcdstore"
)

// DefaultSessionTTL is the lease of a node's election session: how long a
// dead leader keeps the lead.
const DefaultSessionTTL = 5 * time.Second

// Config configures a Node.
type Config struct {
	// Client reaches etcd; the node does not close it.
	Client *clientv3.Client
	// Prefix is the etcd key prefix of the meta state; "" means
	// etcdstore.DefaultPrefix.
	Prefix string
	// Name identifies the node (its advertised address); it is the value
	// of its election key.
	Name string
	// SessionTTL is the election lease, whole seconds, at least 1; zero
	// means DefaultSessionTTL.
	SessionTTL time.Duration
	// Service configures the Meta the node opens when it leads; its Store
	// is set by the node.
	Service service.Options
	// Logger receives elections and failures; nil means slog.Default().
	Logger *slog.Logger
}

// Node is one meta service instance in an election.
type Node struct {
	cfg   Config
	store *etcdstore.Store
	log   *slog.Logger
	stop  chan bool // true: crash, false: resign
	done  chan struct{}

	mu struct {
		sync.Mutex
		svc     *service.Meta // guarded by mu; nil unless leading
		handler *api.Handler  // guarded by mu; serves svc
		// led is closed and replaced whenever leadership changes.
		led chan struct{} // guarded by mu
	}
}

// Start starts a node campaigning in the background.
func Start(cfg Config) (*Node, error) {
	if cfg.Client == nil || cfg.Name == "" {
		return nil, fmt.Errorf("meta node: a client and a name are required: %w", base.ErrInvalidArgument)
	}
	if cfg.SessionTTL == 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.SessionTTL < time.Second {
		return nil, fmt.Errorf("meta node %s: session TTL %v is below one second: %w", cfg.Name, cfg.SessionTTL, base.ErrInvalidArgument)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	n := &Node{cfg: cfg, store: etcdstore.New(cfg.Client, cfg.Prefix), log: cfg.Logger.With("node", cfg.Name),
		stop: make(chan bool, 1), done: make(chan struct{})}
	n.mu.led = make(chan struct{})
	go n.run()
	return n, nil
}

func (n *Node) run() {
	defer close(n.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var crash atomic.Bool
	go func() {
		select {
		case c := <-n.stop:
			crash.Store(c)
			cancel()
		case <-ctx.Done():
		}
	}()
	for ctx.Err() == nil {
		err := n.term(ctx, &crash)
		if err != nil && ctx.Err() == nil {
			n.log.Error("meta node lost or failed its term", "err", err)
			t := time.NewTimer(time.Second)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
	}
}

// term campaigns once, serves while leading, and returns when the
// leadership ends or the node stops.
//
// The session is not tied to ctx: stopping must not end the keep-alive
// before the node has resigned (or, crashing, orphaned the session).
func (n *Node) term(ctx context.Context, crash *atomic.Bool) error {
	sess, err := concurrency.NewSession(n.cfg.Client, concurrency.WithTTL(int(n.cfg.SessionTTL/time.Second)))
	if err != nil {
		return fmt.Errorf("opening an election session: %w", err)
	}
	el := concurrency.NewElection(sess, n.store.ElectionPrefix())
	if err := el.Campaign(ctx, n.cfg.Name); err != nil {
		n.end(sess, el, crash.Load())
		return fmt.Errorf("campaigning: %w", err)
	}
	opts := n.cfg.Service
	opts.Store = n.store.Fenced(el.Key(), el.Rev())
	svc, err := service.Open(ctx, opts)
	if err != nil {
		n.end(sess, el, crash.Load())
		return fmt.Errorf("opening the meta service as leader: %w", err)
	}
	n.log.Info("meta node leads", "key", el.Key(), "revision", el.Rev())
	n.publish(svc)
	select {
	case <-sess.Done():
		n.publish(nil)
		_ = svc.Close()
		if ctx.Err() == nil {
			return errors.New("election session expired; no longer the leader")
		}
	case <-ctx.Done():
	}
	n.publish(nil)
	_ = svc.Close()
	n.end(sess, el, crash.Load())
	return nil
}

// end closes a session: resigning and revoking its lease, or, for a crash,
// abandoning it to expire.
func (n *Node) end(sess *concurrency.Session, el *concurrency.Election, crash bool) {
	if crash {
		sess.Orphan()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = el.Resign(ctx)
	_ = sess.Close()
}

func (n *Node) publish(svc *service.Meta) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.mu.svc = svc
	n.mu.handler = nil
	if svc != nil {
		n.mu.handler = api.NewHandler(svc)
	}
	close(n.mu.led)
	n.mu.led = make(chan struct{})
}

// Service returns the served Meta while this node leads.
func (n *Node) Service() (*service.Meta, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.mu.svc, n.mu.svc != nil
}

// WaitLeader blocks until this node leads and returns its Meta.
func (n *Node) WaitLeader(ctx context.Context) (*service.Meta, error) {
	for {
		n.mu.Lock()
		svc, ch := n.mu.svc, n.mu.led
		n.mu.Unlock()
		if svc != nil {
			return svc, nil
		}
		select {
		case <-ch:
		case <-n.done:
			return nil, fmt.Errorf("meta node %s stopped: %w", n.cfg.Name, base.ErrClosed)
		case <-ctx.Done():
			return nil, fmt.Errorf("meta node %s waiting to lead: %w", n.cfg.Name, ctx.Err())
		}
	}
}

// Leader returns the name of the current leader, as etcd sees it; the
// error wraps base.ErrNotFound when there is none.
func (n *Node) Leader(ctx context.Context) (string, error) {
	resp, err := n.cfg.Client.Get(ctx, n.store.ElectionPrefix(), clientv3.WithFirstCreate()...)
	if err != nil {
		return "", fmt.Errorf("meta node %s: reading the election: %w", n.cfg.Name, err)
	}
	if len(resp.Kvs) == 0 {
		return "", fmt.Errorf("meta election under %s has no leader: %w", n.store.ElectionPrefix(), base.ErrNotFound)
	}
	return string(resp.Kvs[0].Value), nil
}

// ServeHTTP serves the meta API while leading; otherwise it answers with
// code "closed", naming the leader when known.
func (n *Node) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n.mu.Lock()
	h := n.mu.handler
	n.mu.Unlock()
	if h != nil {
		h.ServeHTTP(w, r)
		return
	}
	leader, err := n.Leader(r.Context())
	if err != nil {
		leader = "unknown"
	}
	api.WriteError(w, fmt.Errorf("meta node %s is not the leader (leader: %s): %w", n.cfg.Name, leader, base.ErrClosed))
}

// Stop resigns and stops the node; a follower takes over at once.
func (n *Node) Stop() { n.halt(false) }

// Crash stops the node as a killed process would: it stops serving but
// neither resigns nor revokes its lease, so followers wait for the lease to
// expire. For tests.
func (n *Node) Crash() { n.halt(true) }

func (n *Node) halt(crash bool) {
	select {
	case n.stop <- crash:
	default:
	}
	<-n.done
}
