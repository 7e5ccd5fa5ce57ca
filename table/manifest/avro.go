package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"

	"github.com/hamba/avro/v2"
	"github.com/hamba/avro/v2/ocf"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/fileio"
)

const dataFileSchema = `{"type":"record","name":"DataFile","namespace":"strata.manifest","fields":[
 {"name":"name","type":"string"},
 {"name":"size","type":"long"},
 {"name":"crc","type":"long"},
 {"name":"rows","type":"long"},
 {"name":"min_key","type":"bytes"},
 {"name":"max_key","type":"bytes"},
 {"name":"min_seq","type":"long"},
 {"name":"max_seq","type":"long"},
 {"name":"schema_id","type":"long"},
 {"name":"level","type":"int"},
 {"name":"epoch","type":"long"},
 {"name":"created_millis","type":"long"},
 {"name":"no_retracts","type":"boolean","default":false}]}`

var (
	entrySchema = avro.MustParse(`{"type":"record","name":"Entry","namespace":"strata.manifest","fields":[
 {"name":"kind","type":"int"},
 {"name":"bucket","type":"int"},
 {"name":"file","type":` + dataFileSchema + `}]}`)
	fileMetaSchema = avro.MustParse(`{"type":"record","name":"FileMeta","namespace":"strata.manifest","fields":[
 {"name":"name","type":"string"},
 {"name":"size","type":"long"},
 {"name":"crc","type":"long"},
 {"name":"num_added","type":"long"},
 {"name":"num_deleted","type":"long"},
 {"name":"schema_id","type":"long"}]}`)
)

const versionKey = "strata.format.version"

// avroEntry mirrors Entry with Avro-friendly field types (int for kind).
type avroEntry struct {
	Kind   int32    `avro:"kind"`
	Bucket int32    `avro:"bucket"`
	File   DataFile `avro:"file"`
}

func encodeOCF[T any](schema avro.Schema, items []T) ([]byte, error) {
	var buf bytes.Buffer
	enc, err := ocf.NewEncoderWithSchema(schema, &buf,
		ocf.WithCodec(ocf.Snappy),
		ocf.WithMetadata(map[string][]byte{versionKey: []byte(strconv.Itoa(FormatVersion))}))
	if err != nil {
		return nil, err
	}
	for i := range items {
		if err := enc.Encode(items[i]); err != nil {
			return nil, err
		}
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func decodeOCF[T any](name string, data []byte) ([]T, error) {
	dec, err := ocf.NewDecoder(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("file %s: %v: %w", name, err, base.ErrCorruption)
	}
	if v := string(dec.Metadata()[versionKey]); v != strconv.Itoa(FormatVersion) {
		return nil, fmt.Errorf("file %s: unknown format version %q: %w", name, v, base.ErrCorruption)
	}
	var out []T
	for dec.HasNext() {
		var v T
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("file %s: %v: %w", name, err, base.ErrCorruption)
		}
		out = append(out, v)
	}
	if err := dec.Error(); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("file %s: %v: %w", name, err, base.ErrCorruption)
	}
	return out, nil
}

// Dir is the manifest directory inside a table directory.
const Dir = "manifest"

// IO reads and writes the manifest files and lists of one table. Manifest
// files and lists are immutable ([immutable-manifest]) and shared by
// snapshots, so decoded ones are cached by name (bounded by
// maxCachedEntries and maxCachedListMetas; checked reads fill the caches,
// and so do the manifests and lists this process encoded). A list is read
// by every commit (its parent's lists), every stream that follows the
// table and every expiration (the lists of each snapshot kept and
// expired), and decoding one costs more than its size suggests: the Avro
// container parses its schema from JSON each time.
type IO struct {
	fs    fileio.FS
	table string
	mu    struct {
		sync.Mutex
		manifests cache[Entry]    // guarded by mu
		lists     cache[FileMeta] // guarded by mu
	}
}

const (
	maxCachedEntries   = 1 << 20
	maxCachedListMetas = 1 << 18
)

// cache holds decoded files by name, evicting the oldest once more than a
// bound of items are held.
type cache[T any] struct {
	byName map[string][]T
	order  []string
	items  int
}

func (c *cache[T]) get(name string) ([]T, bool) {
	v, ok := c.byName[name]
	return v, ok
}

func (c *cache[T]) put(name string, v []T, bound int) {
	if c.byName == nil {
		c.byName = map[string][]T{}
	}
	if _, ok := c.byName[name]; ok {
		return
	}
	c.byName[name] = v
	c.order = append(c.order, name)
	c.items += len(v)
	for c.items > bound && len(c.order) > 1 {
		old := c.order[0]
		c.order = c.order[1:]
		c.items -= len(c.byName[old])
		delete(c.byName, old)
	}
}

func (m *IO) cachedList(name string) ([]FileMeta, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.lists.get(name)
}

// rememberList caches a list's metas; they must not be modified
// afterwards (the slice is capped, so an append by a caller copies).
func (m *IO) rememberList(name string, metas []FileMeta) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.lists.put(name, metas[:len(metas):len(metas)], maxCachedListMetas)
}

// NewIO returns the manifest IO of the table at dir.
func NewIO(fs fileio.FS, dir string) *IO {
	return &IO{fs: fs, table: dir}
}

func (m *IO) cached(name string) ([]Entry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.manifests.get(name)
}

func (m *IO) remember(name string, es []Entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.manifests.put(name, es, maxCachedEntries)
}

// Path returns the path of a manifest file or list by name.
func (m *IO) Path(name string) string { return m.table + "/" + Dir + "/" + name }

// Sync makes the names of the manifests and lists written so far durable
// (fileio.SyncDir of the manifest directory): one directory fsync for all
// the files of a commit instead of one each ([manifests-before-snapshot]).
func (m *IO) Sync() error {
	if err := fileio.SyncDir(m.fs, m.table+"/"+Dir); err != nil {
		return fmt.Errorf("table %s: manifests: %w", m.table, err)
	}
	return nil
}

// WriteManifest writes entries to a new manifest file and returns its
// metadata. The file's name is durable only after Sync, which a commit
// calls before it publishes a snapshot naming the file.
func (m *IO) WriteManifest(entries []Entry, schemaID int64) (FileMeta, error) {
	meta, b, err := m.EncodeManifest(entries, schemaID)
	if err != nil {
		return meta, err
	}
	if err := m.Stage(meta.Name, b); err != nil {
		return meta, err
	}
	m.Remember(meta, entries)
	return meta, nil
}

// Stage writes the encoded manifest or list name (fileio.Stage): its
// content is durable when Stage returns, its name after Sync.
func (m *IO) Stage(name string, b []byte) error {
	if err := fileio.Stage(m.fs, m.Path(name), b); err != nil {
		return fmt.Errorf("table %s: %w", m.table, err)
	}
	return nil
}

// Remember puts the entries of a manifest this process wrote into the
// cache of decoded manifests, so that the next commit, which reads the
// live files of the snapshot naming it, does not read it back. entries
// must not be modified afterwards. An inline manifest needs no cache: its
// entries are its meta's.
func (m *IO) Remember(meta FileMeta, entries []Entry) {
	if !meta.Inline() {
		m.remember(meta.Name, entries)
	}
}

// EncodeManifest encodes entries as a new manifest file and returns its
// metadata (fresh name, counts, size and CRC32C) and bytes, for Stage.
func (m *IO) EncodeManifest(entries []Entry, schemaID int64) (FileMeta, []byte, error) {
	items := make([]avroEntry, len(entries))
	meta := FileMeta{Name: NewName("manifest", ""), SchemaID: schemaID}
	meta.count(entries)
	for i, e := range entries {
		items[i] = avroEntry{Kind: int32(e.Kind), Bucket: e.Bucket, File: e.File}
	}
	b, err := encodeOCF(entrySchema, items)
	if err != nil {
		return meta, nil, fmt.Errorf("table %s: encode manifest: %w", m.table, err)
	}
	meta.Size, meta.CRC = int64(len(b)), int64(fileio.Checksum(b))
	return meta, b, nil
}

// ReadManifest reads and checks the manifest file meta describes, or
// returns the entries of an inline manifest (checked when its snapshot was
// decoded). The returned slice is shared: callers must not modify it.
func (m *IO) ReadManifest(meta FileMeta) ([]Entry, error) {
	if meta.Inline() {
		if len(meta.Entries) == 0 {
			return nil, fmt.Errorf("table %s: an inline manifest without entries: %w", m.table, base.ErrCorruption)
		}
		return meta.Entries, nil
	}
	if len(meta.Entries) > 0 {
		return nil, fmt.Errorf("table %s: manifest %s is both named and inline: %w", m.table, meta.Name, base.ErrCorruption)
	}
	if es, ok := m.cached(meta.Name); ok {
		return es, nil
	}
	p := m.Path(meta.Name)
	b, err := fileio.ReadChecked(m.fs, p, meta.Size, uint32(meta.CRC))
	if err != nil {
		return nil, fmt.Errorf("table %s: manifest: %w", m.table, err)
	}
	items, err := decodeOCF[avroEntry](p, b)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", m.table, err)
	}
	out := make([]Entry, len(items))
	for i, it := range items {
		if it.Kind != int32(Add) && it.Kind != int32(Delete) {
			return nil, fmt.Errorf("table %s: manifest %s: entry %d has kind %d: %w", m.table, p, i, it.Kind, base.ErrCorruption)
		}
		out[i] = Entry{Kind: FileKind(it.Kind), Bucket: it.Bucket, File: it.File}
	}
	m.remember(meta.Name, out)
	return out, nil
}

// WriteList writes a manifest list naming metas as a file of its own and
// returns a reference to it; like WriteManifest, its name is durable after
// Sync. Commits hold their lists inline (FileRef); a list file is the form
// of version-1 snapshots, which tests of their reading build with it.
func (m *IO) WriteList(metas []FileMeta) (FileRef, error) {
	ref, b, err := m.EncodeList(metas)
	if err != nil {
		return FileRef{}, err
	}
	if err := m.Stage(ref.Name, b); err != nil {
		return FileRef{}, err
	}
	return ref, nil
}

// EncodeList encodes a manifest list naming metas and returns a reference
// to it (fresh name, size and CRC32C) and its bytes, for Stage. A list file
// names manifest files only: an inline manifest is an error.
func (m *IO) EncodeList(metas []FileMeta) (FileRef, []byte, error) {
	for i, meta := range metas {
		if meta.Inline() {
			return FileRef{}, nil, fmt.Errorf("table %s: encode manifest list: manifest %d is inline, which a list file cannot hold: %w", m.table, i, base.ErrInvalidArgument)
		}
	}
	b, err := encodeOCF(fileMetaSchema, metas)
	if err != nil {
		return FileRef{}, nil, fmt.Errorf("table %s: encode manifest list: %w", m.table, err)
	}
	ref := FileRef{Name: NewName("manifest-list", ""), Size: int64(len(b)), CRC: int64(fileio.Checksum(b))}
	// A list that never gets staged is never named by a snapshot, so its
	// cached copy is harmless.
	m.rememberList(ref.Name, slices.Clone(metas))
	return ref, b, nil
}

// ReadList reads and checks a manifest list (an inline list is returned
// as it is); the zero ref gives nil. The returned slice is shared: callers
// must not modify it.
func (m *IO) ReadList(ref FileRef) ([]FileMeta, error) {
	if ref.IsZero() {
		return nil, nil
	}
	if ref.Name == "" {
		return ref.Metas, nil
	}
	if len(ref.Metas) > 0 {
		return nil, fmt.Errorf("table %s: manifest list %s: a reference with both a name and inline metas: %w", m.table, ref.Name, base.ErrCorruption)
	}
	if metas, ok := m.cachedList(ref.Name); ok {
		return metas, nil
	}
	p := m.Path(ref.Name)
	b, err := fileio.ReadChecked(m.fs, p, ref.Size, uint32(ref.CRC))
	if err != nil {
		return nil, fmt.Errorf("table %s: manifest list: %w", m.table, err)
	}
	metas, err := decodeOCF[FileMeta](p, b)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", m.table, err)
	}
	m.rememberList(ref.Name, metas)
	return metas, nil
}

// ReadEntries reads every manifest of the lists, in order.
func (m *IO) ReadEntries(refs ...FileRef) ([]Entry, error) {
	var out []Entry
	for _, ref := range refs {
		metas, err := m.ReadList(ref)
		if err != nil {
			return nil, err
		}
		for _, meta := range metas {
			es, err := m.ReadManifest(meta)
			if err != nil {
				return nil, err
			}
			out = append(out, es...)
		}
	}
	return out, nil
}
