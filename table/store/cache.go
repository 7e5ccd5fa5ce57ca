package store

import (
	"container/list"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/table/record"
	"github.com/stratadb/strata/table/schema"
)

// DefaultCacheBytes is the capacity of DefaultCache: 256 MiB of decoded
// records (record.Block.Bytes) for all the tables of a process together.
const DefaultCacheBytes = 256 << 20

// DefaultCache is the file cache every Store shares unless given its
// own: one bound for the process, as Pebble's block cache is shared by
// every DB given the same Cache, and Paimon bounds its lookup cache in
// bytes (lookup.cache-max-memory-size).
var DefaultCache = NewCache(DefaultCacheBytes)

// Cache holds decoded data files (record.Blocks) of the stores that share
// it, bounded in bytes of records ([cache-bytes]), and evicts the least
// recently used file first. Each store's files are its own: entries are
// keyed by the store they were read through, so two handles of one table
// (or two tables at one path on two file systems) never see each other's
// entries, and the entries of a handle the program dropped go when the
// garbage collector finds it unreachable (see New). It is safe for
// concurrent use.
type Cache struct {
	capacity atomic.Int64
	mu       struct {
		sync.Mutex
		entries map[cacheKey]*list.Element // guarded by mu
		lru     list.List                  // of *cacheEntry, most recently used first; guarded by mu
		bytes   int                        // sum of the entries' bytes; guarded by mu
		rows    map[uint64]int             // rows held per owner store; guarded by mu
	}
}

type cacheKey struct {
	owner  uint64 // Store.id
	path   string // the data file's path
	schema schema.ID
}

type cacheEntry struct {
	key   cacheKey
	blk   *record.Block
	bytes int
}

// NewCache returns an empty cache of capacity bytes of records (0 keeps
// nothing).
func NewCache(capacity int) *Cache {
	c := &Cache{}
	c.capacity.Store(int64(capacity))
	c.mu.entries = map[cacheKey]*list.Element{}
	c.mu.rows = map[uint64]int{}
	return c
}

// SetCapacity changes the cache's capacity in bytes of records; entries
// beyond it go at the next insertion.
func (c *Cache) SetCapacity(bytes int) { c.capacity.Store(int64(bytes)) }

// Size returns the bytes of records (record.Block.Bytes) and the number
// of files the cache holds.
func (c *Cache) Size() (bytes, files int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.bytes, len(c.mu.entries)
}

// get returns the cached block of k and marks it used.
func (c *Cache) get(k cacheKey) (*record.Block, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.mu.entries[k]
	if !ok {
		return nil, false
	}
	c.mu.lru.MoveToFront(e)
	return e.Value.(*cacheEntry).blk, true
}

// put caches blk under k, then evicts least recently used files: the
// owner's own while it holds more than maxRows records, anyone's while
// the cache holds more than its capacity in bytes. A file larger than the
// whole capacity is not cached.
func (c *Cache) put(k cacheKey, blk *record.Block, maxRows int) {
	size := blk.Bytes()
	capacity := int(c.capacity.Load())
	if maxRows <= 0 || size > capacity {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.mu.entries[k]; ok {
		return
	}
	c.mu.entries[k] = c.mu.lru.PushFront(&cacheEntry{key: k, blk: blk, bytes: size})
	c.mu.bytes += size
	c.mu.rows[k.owner] += blk.Len()
	for e := c.mu.lru.Back(); e != nil && c.mu.rows[k.owner] > maxRows; {
		prev := e.Prev()
		if ce := e.Value.(*cacheEntry); ce.key.owner == k.owner && ce.key != k {
			c.removeLocked(e)
		}
		e = prev
	}
	for c.mu.bytes > capacity {
		e := c.mu.lru.Back()
		if e.Value.(*cacheEntry).key == k {
			break // only the new file is left
		}
		c.removeLocked(e)
	}
}

// forget drops the entries of owner whose path is path.
func (c *Cache) forget(owner uint64, paths map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.mu.entries {
		if k.owner == owner && paths[k.path] {
			c.removeLocked(e)
		}
	}
}

// dropOwner drops every entry of owner (a store no longer reachable).
func (c *Cache) dropOwner(owner uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.mu.entries {
		if k.owner == owner {
			c.removeLocked(e)
		}
	}
	delete(c.mu.rows, owner)
}

// ownerBytes returns the bytes and files cached for owner whose path
// starts with prefix (tests).
func (c *Cache) ownerBytes(owner uint64, prefix string) (bytes, files int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.mu.entries {
		if k.owner == owner && strings.HasPrefix(k.path, prefix) {
			bytes += e.Value.(*cacheEntry).bytes
			files++
		}
	}
	return bytes, files
}

func (c *Cache) removeLocked(e *list.Element) {
	ce := e.Value.(*cacheEntry)
	c.mu.lru.Remove(e)
	delete(c.mu.entries, ce.key)
	c.mu.bytes -= ce.bytes
	c.mu.rows[ce.key.owner] -= ce.blk.Len()
}
