package olap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
)

// catalogCache keeps built catalogs by the fingerprint of their object
// list, bounded; idle ones are dropped least recently used first.
type catalogCache struct {
	max  int
	drop func(schema string)

	mu struct {
		sync.Mutex
		entries map[string]*catalogEntry // by fingerprint; guarded by mu
		tick    uint64                   // guarded by mu
		seq     uint64                   // guarded by mu
	}
}

type catalogEntry struct {
	fp      string
	schema  string
	tables  []TableInfo
	done    chan struct{}
	err     error
	refs    int    // guarded by catalogCache.mu
	lastUse uint64 // guarded by catalogCache.mu
}

func newCatalogCache(max int, drop func(string)) *catalogCache {
	c := &catalogCache{max: max, drop: drop}
	c.mu.entries = map[string]*catalogEntry{}
	return c
}

func (c *catalogCache) acquire(ctx context.Context, objects []TableInfo, build func(schema string) error) (*catalogEntry, error) {
	b, err := json.Marshal(objects)
	if err != nil {
		return nil, fmt.Errorf("olap: catalog fingerprint: %w", err)
	}
	sum := sha256.Sum256(b)
	fp := hex.EncodeToString(sum[:])
	c.mu.Lock()
	c.mu.tick++
	if e, ok := c.mu.entries[fp]; ok {
		e.refs++
		e.lastUse = c.mu.tick
		c.mu.Unlock()
		retry, err := awaitShared(ctx, e.done, func() error { return e.err }, func() { c.release(e) })
		if retry {
			return c.acquire(ctx, objects, build) // its builder was cancelled, this caller was not
		}
		if err != nil {
			return nil, err
		}
		return e, nil
	}
	c.mu.seq++
	e := &catalogEntry{fp: fp, schema: fmt.Sprintf("strata_pgc_%d", c.mu.seq), tables: objects, done: make(chan struct{}), refs: 1, lastUse: c.mu.tick}
	c.mu.entries[fp] = e
	c.mu.Unlock()
	err = build(e.schema)
	c.mu.Lock()
	e.err = err
	if err != nil {
		delete(c.mu.entries, fp)
	}
	close(e.done)
	c.mu.Unlock()
	if err != nil {
		c.drop(e.schema)
		return nil, err
	}
	return e, nil
}

func (c *catalogCache) release(e *catalogEntry) {
	c.mu.Lock()
	e.refs--
	var victims []string
	for len(c.mu.entries) > c.max {
		var lru *catalogEntry
		for _, x := range c.mu.entries {
			select {
			case <-x.done:
			default:
				continue
			}
			if x.refs == 0 && (lru == nil || x.lastUse < lru.lastUse) {
				lru = x
			}
		}
		if lru == nil {
			break
		}
		delete(c.mu.entries, lru.fp)
		victims = append(victims, lru.schema)
	}
	c.mu.Unlock()
	for _, v := range victims {
		c.drop(v)
	}
}
