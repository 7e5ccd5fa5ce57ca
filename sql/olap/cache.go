package olap

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/schema"
)

// cacheKey names one loaded table: a table's content at one snapshot, read
// with one schema. The file system is part of the key because two tables
// on different file systems may share a directory name; when the file
// system's dynamic type is not comparable, the store pointer stands in.
// [cache-identity] A table dropped and created again under the same name
// reuses its directory, its snapshot ids and its schema ids (an empty
// table is snapshot 0 with schema 0 either way), so the key also holds
// what tells the two apart: the schema's creation time and its columns.
type cacheKey struct {
	fs         any
	dir        string
	snapshot   base.SnapshotID // 0: the table had no data at the epoch
	snapTime   int64           // the snapshot's commit time: a re-created table reuses ids
	schema     schema.ID       // the schema the rows were read with
	schemaTime int64           // that schema's creation time (Unix ms)
	columns    string          // that schema's columns (schemaColumns)
}

// schemaColumns fingerprints sc's columns (field id, name and type of
// each) for cacheKey: two schemas created in the same millisecond still
// differ by it unless they read alike.
func schemaColumns(sc *schema.Schema) string {
	var b strings.Builder
	for _, f := range sc.Fields {
		fmt.Fprintf(&b, "%d %q %s;", f.ID, f.Name, f.Type)
	}
	return b.String()
}

// sameRelation reports whether a and b load the same table with the
// same schema, at any snapshots.
func (a cacheKey) sameRelation(b cacheKey) bool {
	return a.fs == b.fs && a.dir == b.dir && a.schema == b.schema && a.schemaTime == b.schemaTime && a.columns == b.columns
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
		// advanced counts loads replaced by bringing an older table
		// forward; guarded by mu.
		advanced int
	}
}

func newCache(maxTables int, maxRows int64, drop func(string)) *cache {
	c := &cache{maxTables: maxTables, maxRows: maxRows, drop: drop}
	c.mu.entries = map[cacheKey]*entry{}
	return c
}

// loadFunc creates DuckDB table name holding one cache key's rows and
// returns their count and the table's columns.
type loadFunc func(name string) (rows int64, cols []duckColumn, err error)

// advanceFunc brings DuckDB table name, which holds the rows of key from
// (rows of them, columns cols), forward to the key being acquired, in
// place, and returns its new row count. It returns errNoAdvance, having
// changed nothing, when the table cannot be brought forward (the
// relation's changes since from are not readable, or are too many).
type advanceFunc func(from cacheKey, rows int64, cols []duckColumn, name string) (int64, error)

// errNoAdvance is an advanceFunc's answer that a full load is needed.
var errNoAdvance = errors.New("olap: the loaded table cannot be brought forward")

// acquire returns the loaded table for key, loading it with load (which
// gets the DuckDB table name to create) if it is not cached. When advance
// is not nil and an idle loaded table of the same relation and schema at
// an older snapshot is cached, that table is taken out of the cache and
// brought forward with advance instead ([cache-advance]): a query at the
// latest epoch of a table that changes every epoch then costs the epoch's
// changes, not a full load. If advance fails, the table is dropped (or,
// on errNoAdvance, put back) and key is loaded in full. The caller must
// release the entry when its query ends.
func (c *cache) acquire(ctx context.Context, key cacheKey, load loadFunc, advance advanceFunc) (*entry, error) {
	c.mu.Lock()
	c.mu.tick++
	if e, ok := c.mu.entries[key]; ok {
		e.refs++
		e.lastUse = c.mu.tick
		c.mu.Unlock()
		retry, err := awaitShared(ctx, e.done, func() error { return e.err }, func() { c.release(e) })
		if retry {
			return c.acquire(ctx, key, load, advance)
		}
		if err != nil {
			return nil, err
		}
		return e, nil
	}
	var prev *entry
	if advance != nil && key.snapshot != 0 {
		prev = c.olderIdleLocked(key)
	}
	c.mu.seq++
	e := &entry{key: key, name: fmt.Sprintf("s%d", c.mu.seq), done: make(chan struct{}), refs: 1, lastUse: c.mu.tick}
	if prev != nil {
		delete(c.mu.entries, prev.key)
		c.mu.rows -= prev.rows
		e.name = prev.name
	}
	c.mu.entries[key] = e
	c.mu.Unlock()

	var rows int64
	var cols []duckColumn
	var err error
	if prev != nil {
		cols = prev.cols
		rows, err = advance(prev.key, prev.rows, prev.cols, e.name)
		if err != nil {
			c.mu.Lock()
			if _, taken := c.mu.entries[prev.key]; errors.Is(err, errNoAdvance) && !taken {
				c.mu.entries[prev.key] = prev // unchanged: still holds prev.key
				c.mu.rows += prev.rows
				c.mu.Unlock()
			} else {
				c.mu.Unlock()
				c.drop(prev.name)
			}
			c.mu.Lock()
			c.mu.seq++
			e.name = fmt.Sprintf("s%d", c.mu.seq)
			c.mu.Unlock()
			prev = nil
		}
	}
	if prev == nil {
		rows, cols, err = load(e.name)
	}
	c.mu.Lock()
	if prev != nil && err == nil {
		c.mu.advanced++
	}
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
// awaitShared waits for an entry that another caller is filling (done
// closes when the fill ended; fillErr then gives its error) on behalf of a
// caller that took a reference to it, and says what that caller does
// next: use the entry (false, nil), fill it again because the filler was
// cancelled and this caller was not (true, nil), or fail (false, err).
// When the entry is not to be used, release drops the reference first.
// Both the table cache and the catalog cache share fills this way.
func awaitShared(ctx context.Context, done <-chan struct{}, fillErr func() error, release func()) (retry bool, err error) {
	select {
	case <-done:
	case <-ctx.Done():
		release()
		return false, ctx.Err()
	}
	if err := fillErr(); err != nil {
		release()
		if isContextErr(err) && ctx.Err() == nil {
			return true, nil
		}
		return false, err
	}
	return false, nil
}

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

// olderIdleLocked returns the cached table of key's relation and schema
// at the newest snapshot older than key's that no query holds, or nil.
func (c *cache) olderIdleLocked(key cacheKey) *entry {
	var best *entry
	for _, o := range c.mu.entries {
		if !o.key.sameRelation(key) || o.key.snapshot == 0 || o.key.snapshot >= key.snapshot || o.refs > 0 {
			continue
		}
		select {
		case <-o.done:
		default:
			continue // still loading
		}
		if o.err == nil && (best == nil || o.key.snapshot > best.key.snapshot) {
			best = o
		}
	}
	return best
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
