package store

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/format/parquet"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/record"
	"github.com/stratadb/strata/table/schema"
	"github.com/stratadb/strata/table/snapshot"
)

// Store is one opened table's file access. It is safe for concurrent use.
type Store struct {
	FS        fileio.FS
	Dir       string
	Schemas   *schema.Manager
	Snapshots *snapshot.Manager
	Manifests *manifest.IO
	// Now is the clock for file and snapshot times.
	Now func() time.Time
	// CacheRows bounds the decoded records of this store's files kept in
	// its cache of decoded files (default 2M; the cache bounds them in
	// bytes besides, see SetCache); 0 turns caching off, so every read
	// goes to storage.
	CacheRows int

	id    uint64    // the store's key in its cache
	cache *cacheRef // the cache of decoded files (SetCache)

	mu struct {
		sync.Mutex
		live      map[base.SnapshotID][]manifest.Entry // guarded by mu
		liveOrder []base.SnapshotID                    // guarded by mu
	}
}

// Cache bounds.
const (
	defaultCacheRows   = 1 << 21
	maxCachedSnapshots = 8
)

// nextStoreID numbers stores for their cache keys.
var nextStoreID atomic.Uint64

// New returns the store of the table at dir on fs.
func New(fs fileio.FS, dir string) *Store {
	s := &Store{FS: fs, Dir: dir, Schemas: schema.NewManager(fs, dir),
		Snapshots: snapshot.NewManager(fs, dir), Manifests: manifest.NewIO(fs, dir), Now: time.Now,
		CacheRows: defaultCacheRows, id: nextStoreID.Add(1), cache: &cacheRef{}}
	s.cache.c.Store(DefaultCache)
	s.mu.live = map[base.SnapshotID][]manifest.Entry{}
	// The cache's entries of a store nobody can read through any more go
	// with it: the cache knows stores by id only, so it does not keep them
	// reachable, and the cleanup's argument does not lead back to s.
	id := s.id
	runtime.AddCleanup(s, func(ref *cacheRef) {
		ref.c.Load().dropOwner(id)
	}, s.cache)
	return s
}

// BucketDir returns the directory of bucket b.
func (s *Store) BucketDir(b int32) string { return s.Dir + "/bucket-" + strconv.Itoa(int(b)) }

// DataPath returns the path of data or changelog file name of bucket b.
func (s *Store) DataPath(b int32, name string) string { return s.BucketDir(b) + "/" + name }

// WriteFile encodes the records of blk (columns of schema sc) as a new
// Parquet file in bucket b (prefix "data" or "changelog") and returns its
// metadata. Keys of blk give MinKey and MaxKey when its records are sorted
// by key. A data file of a primary-key table keeps blk in the cache: the
// caller must not modify blk afterwards.
func (s *Store) WriteFile(b int32, prefix string, sc *schema.Schema, blk *record.Block, level int32, epoch base.Epoch) (manifest.DataFile, error) {
	return s.writeFile(b, prefix, sc, blk, level, epoch, false)
}

// StageFile is WriteFile with the file staged (fileio.Stage): its content
// is durable when StageFile returns, its name only after SyncBuckets of
// its bucket. A writer stages the files of an epoch and syncs each bucket
// directory once before it hands out the message naming them.
func (s *Store) StageFile(b int32, prefix string, sc *schema.Schema, blk *record.Block, level int32, epoch base.Epoch) (manifest.DataFile, error) {
	return s.writeFile(b, prefix, sc, blk, level, epoch, true)
}

// SyncBuckets makes the names of the files staged in buckets durable: one
// directory fsync per bucket, all at once.
func (s *Store) SyncBuckets(buckets []int32) error {
	errs := make([]error, len(buckets))
	var wg sync.WaitGroup
	for i, b := range buckets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fileio.SyncDir(s.FS, s.BucketDir(b)); err != nil {
				errs[i] = fmt.Errorf("table %s: bucket %d: %w", s.Dir, b, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s *Store) writeFile(b int32, prefix string, sc *schema.Schema, blk *record.Block, level int32, epoch base.Epoch, stage bool) (manifest.DataFile, error) {
	f := manifest.DataFile{
		Name: manifest.NewName(prefix, ".parquet"), Rows: int64(blk.Len()), SchemaID: int64(sc.ID), Level: level, Epoch: int64(epoch),
		CreatedMillis: s.Now().UnixMilli(), MinKey: []byte{}, MaxKey: []byte{},
	}
	if n := blk.Len(); n > 0 {
		if blk.Keyed() {
			f.MinKey, f.MaxKey = bytes.Clone(blk.Key(0)), bytes.Clone(blk.Key(n-1))
		}
		f.NoRetracts = !slices.ContainsFunc(blk.Kinds, types.RowKind.IsRetract)
		f.MinSeq, f.MaxSeq = int64(blk.Seqs[0]), int64(blk.Seqs[0])
		for _, q := range blk.Seqs {
			f.MinSeq = min(f.MinSeq, int64(q))
			f.MaxSeq = max(f.MaxSeq, int64(q))
		}
	}
	put := s.FS.PutIfAbsent
	if stage {
		put = func(p string, data []byte) error { return fileio.Stage(s.FS, p, data) }
	}
	// The file system keeps no reference to data once put returns
	// (fileio.FS), so the file is written from the encoder's buffer.
	var putErr error
	err := parquet.EncodeBlockTo(sc, blk, func(data []byte) error {
		f.Size, f.CRC = int64(len(data)), int64(fileio.Checksum(data))
		putErr = put(s.DataPath(b, f.Name), data)
		return putErr
	})
	switch {
	case putErr != nil:
		return manifest.DataFile{}, fmt.Errorf("table %s: %w", s.Dir, putErr)
	case err != nil:
		return manifest.DataFile{}, fmt.Errorf("table %s: bucket %d: %w", s.Dir, b, err)
	}
	// The records just encoded are the file's content: the writer's
	// lookups and compactions read them back without decoding. Only data
	// files with keys are cached this way (changelog files are read once).
	if prefix == "data" && len(sc.PrimaryKey) > 0 && s.CacheRows > 0 {
		// Own strings: values that point into a source's buffers would keep
		// them alive. Trimmed: a block grown by appending would hold up to
		// twice what the cache counts of it ([cache-bytes]).
		s.remember(s.DataPath(b, f.Name), sc.ID, blk.OwnStrings().Trim())
	}
	return f, nil
}

// ReadFile reads and checks data file f of bucket b and returns its
// records as rows of schema read (see ReadBlock). The records are the
// caller's; their keys are shared and must not be modified.
func (s *Store) ReadFile(b int32, f manifest.DataFile, read *schema.Schema) ([]record.KV, error) {
	blk, err := s.ReadBlock(b, f, read)
	if err != nil {
		return nil, err
	}
	return blk.KVs(), nil
}

// ReadBlock reads and checks data file f of bucket b and returns its
// records as a block of schema read's columns. Data files of primary-key
// tables are kept in the cache of decoded files. The block is shared:
// callers must not modify it.
func (s *Store) ReadBlock(b int32, f manifest.DataFile, read *schema.Schema) (*record.Block, error) {
	return s.readBlock(b, f, read, true)
}

// ReadBlockOnce is ReadBlock for a reader that will not read the file
// again, a compaction that merges it away: a cached copy is used, but a
// file read from storage is not added to the cache, where it would push
// out files that are read again.
func (s *Store) ReadBlockOnce(b int32, f manifest.DataFile, read *schema.Schema) (*record.Block, error) {
	return s.readBlock(b, f, read, false)
}

func (s *Store) readBlock(b int32, f manifest.DataFile, read *schema.Schema, fill bool) (*record.Block, error) {
	p := s.DataPath(b, f.Name)
	key := cacheKey{owner: s.id, path: p, schema: read.ID}
	if s.CacheRows > 0 {
		if blk, ok := s.FileCache().get(key); ok {
			return blk, nil
		}
	}
	data, err := fileio.ReadChecked(s.FS, p, f.Size, uint32(f.CRC))
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", s.Dir, err)
	}
	fileSchema, err := s.Schemas.Get(schema.ID(f.SchemaID))
	if err != nil {
		return nil, err
	}
	blk, err := parquet.DecodeBlock(p, data, fileSchema, read)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", s.Dir, err)
	}
	if int64(blk.Len()) != f.Rows {
		return nil, fmt.Errorf("table %s: data file %s: %d rows, manifest says %d: %w", s.Dir, p, blk.Len(), f.Rows, base.ErrCorruption)
	}
	// Only data files with keys are worth keeping: lookups and
	// compactions read them again. Changelog files and the files of
	// append tables are read once by each scan or stream, and keeping
	// them would hold a stream's whole history in memory.
	if fill && read.HasPrimaryKey() && strings.HasPrefix(f.Name, "data") {
		s.remember(p, read.ID, blk)
	}
	return blk, nil
}

// cacheRef is the cache a store uses, apart from the store so that the
// store's cleanup can reach it.
type cacheRef struct{ c atomic.Pointer[Cache] }

// SetCache makes the store keep its decoded files in c instead of
// DefaultCache (a cache of its own, or one shared by a group of tables),
// from its next read on; c bounds them in bytes ([cache-bytes]). Files it
// cached in its former cache stay there until evicted.
func (s *Store) SetCache(c *Cache) { s.cache.c.Store(c) }

// FileCache returns the cache the store keeps its decoded files in.
func (s *Store) FileCache() *Cache { return s.cache.c.Load() }

// remember caches the decoded records of the file at path read with
// schema id (see Cache.put for the bounds and the eviction order: a
// writer's lookups and compactions read a bucket's newer files at every
// epoch, so those stay, while files merged away by compaction go first.
// Evicting in insertion order instead threw out the large compacted
// files that every epoch reads again, to be decoded again).
func (s *Store) remember(path string, id schema.ID, blk *record.Block) {
	if s.CacheRows <= 0 {
		return
	}
	s.FileCache().put(cacheKey{owner: s.id, path: path, schema: id}, blk, s.CacheRows)
}

// Forget drops the decoded records of files of bucket b from the cache
// (under every read schema). A compaction calls it for the files it merged
// away: nothing reads them at newer snapshots, and under least-recently
// used eviction they would otherwise push out live files first. A reader
// of an older snapshot that still wants them decodes them again.
func (s *Store) Forget(b int32, files []manifest.DataFile) {
	paths := make(map[string]bool, len(files))
	for _, f := range files {
		paths[s.DataPath(b, f.Name)] = true
	}
	s.FileCache().forget(s.id, paths)
}

// CachedBytes returns the bytes of records (record.Block.Bytes) and the
// number of files the cache holds for this store.
func (s *Store) CachedBytes() (bytes, files int) {
	return s.FileCache().ownerBytes(s.id, "")
}

// LiveFiles returns the data files live in snapshot sn (its base and delta
// manifests replayed), in manifest order. The slice is shared.
func (s *Store) LiveFiles(sn *snapshot.Snapshot) ([]manifest.Entry, error) {
	s.mu.Lock()
	live, ok := s.mu.live[sn.ID]
	s.mu.Unlock()
	if ok {
		return live, nil
	}
	entries, err := s.Manifests.ReadEntries(sn.BaseManifestList, sn.DeltaManifestList)
	if err != nil {
		return nil, fmt.Errorf("snapshot %d: %w", sn.ID, err)
	}
	live, err = manifest.Merge(entries)
	if err != nil {
		return nil, fmt.Errorf("table %s: snapshot %d: %v: %w", s.Dir, sn.ID, err, base.ErrCorruption)
	}
	s.mu.Lock()
	if _, ok := s.mu.live[sn.ID]; !ok {
		s.mu.live[sn.ID] = live
		s.mu.liveOrder = append(s.mu.liveOrder, sn.ID)
		if len(s.mu.liveOrder) > maxCachedSnapshots {
			delete(s.mu.live, s.mu.liveOrder[0])
			s.mu.liveOrder = s.mu.liveOrder[1:]
		}
	}
	s.mu.Unlock()
	return live, nil
}

// RememberLive records live as the live files of snapshot sn, which a
// commit of this process just published having computed them in memory,
// so that the next commit and writer do not read sn's manifests back.
// live must not be modified afterwards.
func (s *Store) RememberLive(sn *snapshot.Snapshot, live []manifest.Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.mu.live[sn.ID]; ok {
		return
	}
	s.mu.live[sn.ID] = live
	s.mu.liveOrder = append(s.mu.liveOrder, sn.ID)
	if len(s.mu.liveOrder) > maxCachedSnapshots {
		delete(s.mu.live, s.mu.liveOrder[0])
		s.mu.liveOrder = s.mu.liveOrder[1:]
	}
}

// ByBucket groups entries' files by bucket.
func ByBucket(entries []manifest.Entry) map[int32][]manifest.DataFile {
	out := map[int32][]manifest.DataFile{}
	for _, e := range entries {
		out[e.Bucket] = append(out[e.Bucket], e.File)
	}
	return out
}
