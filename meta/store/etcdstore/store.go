package etcdstore

import (
	"context"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/store"
)

// DefaultPrefix is the key prefix of the meta state in etcd.
const DefaultPrefix = "/strata/meta/"

// ErrFenced marks a write refused because the writer is no longer the
// leader (invariant etcdstore-fenced). It wraps base.ErrClosed: this
// instance is closed for writes, nothing was written, and the call can go
// to the new leader (the failover client of meta/api retries it there).
var ErrFenced = fmt.Errorf("meta store: not the leader any more: %w", base.ErrClosed)

// Store is the meta store on etcd. It does not own the client.
type Store struct {
	cli    *clientv3.Client
	prefix string
	// fenceKey and fenceRev guard writes when fenceKey is set.
	fenceKey string
	fenceRev int64
}

var _ store.Store = (*Store)(nil)

// New returns an unfenced store of the keys under prefix ("" means
// DefaultPrefix). Unfenced stores are for tools and tests; a serving meta
// service writes through Fenced.
func New(cli *clientv3.Client, prefix string) *Store {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return &Store{cli: cli, prefix: prefix}
}

// Fenced returns a copy of s whose writes succeed only while key exists
// with create revision rev (the leader's election key and revision).
func (s *Store) Fenced(key string, rev int64) *Store {
	f := *s
	f.fenceKey, f.fenceRev = key, rev
	return &f
}

// Load implements store.Store with one linearizable range read.
func (s *Store) Load(ctx context.Context) (map[string][]byte, error) {
	resp, err := s.cli.Get(ctx, s.prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("meta store etcd %s: loading: %w", s.prefix, err)
	}
	out := make(map[string][]byte, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		key := strings.TrimPrefix(string(kv.Key), s.prefix)
		if strings.HasPrefix(key, electionDir) {
			continue
		}
		p, err := store.Open(key, kv.Value)
		if err != nil {
			return nil, fmt.Errorf("meta store etcd %s: %w", s.prefix, err)
		}
		out[key] = p
	}
	return out, nil
}

// electionDir is where meta/ha keeps election keys, under the prefix; Load
// skips it.
const electionDir = "election/"

// ElectionPrefix returns the election prefix for the store's keys.
func (s *Store) ElectionPrefix() string { return s.prefix + electionDir }

// Apply implements store.Store with one transaction, guarded by the fence
// when the store is fenced.
func (s *Store) Apply(ctx context.Context, b store.Batch) error {
	ops := make([]clientv3.Op, 0, len(b.Puts)+len(b.Deletes))
	for _, k := range b.Deletes {
		if _, put := b.Puts[k]; !put {
			ops = append(ops, clientv3.OpDelete(s.prefix+k))
		}
	}
	for k, v := range b.Puts {
		if strings.HasPrefix(k, electionDir) {
			return fmt.Errorf("meta store etcd: key %q is reserved for elections: %w", k, base.ErrInvalidArgument)
		}
		ops = append(ops, clientv3.OpPut(s.prefix+k, string(store.Seal(v))))
	}
	txn := s.cli.Txn(ctx)
	if s.fenceKey != "" {
		txn = txn.If(clientv3.Compare(clientv3.CreateRevision(s.fenceKey), "=", s.fenceRev))
	}
	resp, err := txn.Then(ops...).Commit()
	if err != nil {
		return fmt.Errorf("meta store etcd %s: %w", s.prefix, err)
	}
	if !resp.Succeeded {
		return fmt.Errorf("meta store etcd %s: election key %s at revision %d is gone: %w", s.prefix, s.fenceKey, s.fenceRev, ErrFenced)
	}
	return nil
}

// Close implements store.Store; the client belongs to the caller.
func (s *Store) Close() error { return nil }
