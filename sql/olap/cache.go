package olap

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/schema"
)

// cacheKey names one loaded table: a table's content at one snapshot, read
// with one schema. The file system is part of the key because two tables
// on different file systems may share a directory name; when the file
// system's dynamic type is not comparable, the store pointer stands in.
type cacheKey struct {
	fs       any
	dir      string
	snapshot base.SnapshotID // 0: the table had no data at the epoch
	snapTime int64           // the snapshot's commit time: a re-created table reuses ids
	schema   schema.ID       // the schema the rows were read with
}

func fsKey(fs any, store any) any {
	if fs != nil && reflect.TypeOf(fs).Comparable() {
		return fs
	}
	return store
}

// entry is one loaded DuckDB table in the cache.
type entry struct {
	key  cacheKey
	name string        // DuckDB table name in schema strata_data
	rows int64         // rows held
	cols []duckColumn  // column names and types
	done chan struct{} // closed when the load ended
	err  error         // the load's error; set before done closes

	refs    int    // queries using it; guarded by cache.mu
	lastUse uint64 // cache.tick at the last acquire; guarded by cache.mu
}

// cache holds loaded tables, bounded by table count and rows
// ([cache-bounded]): after each load, least recently used tables that no
// query holds are dropped until both bounds hold. A table in use is never
// dropped ([cache-pinned]), so the bounds may be exceeded while queries
// hold more than they allow. Concurrent requests for the same key share
// one load.
type cache struct {
	maxTables int
	maxRows   int64
	drop      func(name string) // drops a loaded DuckDB table

	mu struct {
		sync.Mutex
		entries map[cacheKey]*entry // guarded by mu
		rows    int64               // rows of loaded entries; guarded by mu
		tick    uint64              // guarded by mu
		seq     uint64              // last table number; guarded by mu
	}
}

func newCache(maxTables int, maxRows int64, drop func(string)) *cache {
	c := &cache{maxTables: maxTables, maxRows: maxRows, drop: drop}
	c.mu.entries = map[cacheKey]*entry{}
	return c
}

// acquire returns the loaded table for key, loading it with load (which
// gets the DuckDB table name to create) if it is not cached. The caller
// must release the entry when its query ends.
func (c *cache) acquire(ctx context.Context, key cacheKey, load func(name string) (rows int64, cols []duckColumn, err error)) (*entry, error) {
	c.mu.Lock()
	c.mu.tick++
	if e, ok := c.mu.entries[key]; ok {
		e.refs++
		e.lastUse = c.mu.tick
		c.mu.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			c.release(e)
			return nil, ctx.Err()
		}
		if e.err != nil {
			c.release(e)
			if isContextErr(e.err) && ctx.Err() == nil {
				// The query that loaded it was cancelled, this one was
				// not: load again.
				return c.acquire(ctx, key, load)
			}
			return nil, e.err
		}
		return e, nil
	}
	c.mu.seq++
	e := &entry{key: key, name: fmt.Sprintf("s%d", c.mu.seq), done: make(chan struct{}), refs: 1, lastUse: c.mu.tick}
	c.mu.entries[key] = e
	c.mu.Unlock()

	rows, cols, err := load(e.name)
	c.mu.Lock()
	e.rows, e.cols, e.err = rows, cols, err
	if err != nil {
		delete(c.mu.entries, key)
	} else {
		c.mu.rows += rows
	}
	close(e.done)
	victims := c.evictLocked()
	c.mu.Unlock()
	for _, v := range victims {
		c.drop(v)
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// release ends one query's use of e.
func (c *cache) release(e *entry) {
	c.mu.Lock()
	e.refs--
	victims := c.evictLocked()
	c.mu.Unlock()
	for _, v := range victims {
		c.drop(v)
	}
}

// evictLocked removes least recently used idle loaded tables until the
// bounds hold and returns their DuckDB names to drop.
func (c *cache) evictLocked() []string {
	var victims []string
	for len(c.mu.entries) > c.maxTables || c.mu.rows > c.maxRows {
		var lru *entry
		for _, e := range c.mu.entries {
			select {
			case <-e.done:
			default:
				continue // still loading
			}
			if e.refs > 0 {
				continue
			}
			if lru == nil || e.lastUse < lru.lastUse {
				lru = e
			}
		}
		if lru == nil {
			break
		}
		delete(c.mu.entries, lru.key)
		c.mu.rows -= lru.rows
		victims = append(victims, lru.name)
	}
	return victims
}

// stats returns the number of loaded tables and rows held.
func (c *cache) stats() (tables int, rows int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mu.entries), c.mu.rows
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
