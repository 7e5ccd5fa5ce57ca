package schema

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/fileio"
)

// Dir is the schema directory inside a table directory.
const Dir = "schema"

// Manager reads and writes the schema files of one table. It is safe for
// concurrent use.
//
// Schema files are immutable and their ids dense ([schema-ids-dense]), so
// the manager lists the directory once and afterwards answers IDs and
// Latest from the ids it knows: each call stats the newest known schema
// (it is gone only if the table was dropped, and then the manager forgets
// everything and lists again) and probes the ids after it until one is
// missing, finding schemas that other managers or processes added. A
// caught-up call costs two stats and no listing. Decoded schemas are kept
// by id.
//
// A table dropped and created again at the same directory, with as many
// schemas or more, is not noticed by those stats: a manager lives as long
// as the handle of an opened table (store.Store), and a handle is not used
// across a drop of its table (the engine forgets it before it removes the
// files and opens the new table afresh). Dropped design: reading the
// newest schema file on every call and comparing its bytes would notice
// any re-creation, but costs about as many system calls as the listing
// the manager avoids.
type Manager struct {
	fs    fileio.FS
	table string // table directory, for paths and error messages
	mu    struct {
		sync.Mutex
		// ids are the schema ids known present, ascending; nil until a
		// listing found one. The slice is never modified in place:
		// callers get it without a copy under mu and read it after.
		ids []ID
		// schemas are the decoded schemas by id (schema files are
		// immutable).
		schemas map[ID]*Schema
		// gen counts the times ids and schemas were forgotten because
		// the newest known schema was gone; work started before one
		// does not put what it found back.
		gen uint64
	}
}

// NewManager returns the schema manager of the table at dir.
func NewManager(fs fileio.FS, dir string) *Manager {
	m := &Manager{fs: fs, table: dir}
	m.mu.schemas = map[ID]*Schema{}
	return m
}

// Path returns the path of schema id.
func (m *Manager) Path(id ID) string {
	return m.table + "/" + Dir + "/schema-" + strconv.FormatInt(int64(id), 10)
}

// Commit publishes s as schema s.ID ([schema-publish-once]). An existing
// schema with that id gives an error wrapping base.ErrConflict; a
// negative id, or an id above 0 whose predecessor does not exist
// ([schema-ids-dense]), base.ErrInvalidArgument.
func (m *Manager) Commit(s *Schema) error {
	if s.ID < 0 {
		return fmt.Errorf("table %s: schema %d: negative id: %w", m.table, s.ID, base.ErrInvalidArgument)
	}
	if s.ID > 0 {
		m.mu.Lock()
		known := m.mu.ids
		m.mu.Unlock()
		if _, found := slices.BinarySearch(known, s.ID-1); !found {
			ok, err := m.fs.Exists(m.Path(s.ID - 1))
			if err != nil {
				return fmt.Errorf("table %s: schema %d: %w", m.table, s.ID, err)
			}
			if !ok {
				return fmt.Errorf("table %s: schema %d: schema %d does not exist; schema ids are dense: %w", m.table, s.ID, s.ID-1, base.ErrInvalidArgument)
			}
		}
	}
	b, err := fileio.EncodeJSON(s)
	if err != nil {
		return err
	}
	if err := m.fs.PutIfAbsent(m.Path(s.ID), b); err != nil {
		return fmt.Errorf("table %s: schema %d: %w", m.table, s.ID, err)
	}
	m.mu.Lock()
	m.mu.schemas[s.ID] = s
	if n := len(m.mu.ids); n > 0 && m.mu.ids[n-1] == s.ID-1 {
		m.mu.ids = append(slices.Clip(m.mu.ids), s.ID)
	}
	m.mu.Unlock()
	return nil
}

// Get reads schema id, decoding its file only the first time. A missing
// file wraps base.ErrNotFound; a bad file base.ErrCorruption; an unknown
// format version base.ErrCorruption too, naming the version.
func (m *Manager) Get(id ID) (*Schema, error) {
	m.mu.Lock()
	s, ok := m.mu.schemas[id]
	gen := m.mu.gen
	m.mu.Unlock()
	if ok {
		return s, nil
	}
	p := m.Path(id)
	b, err := m.fs.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("table %s: schema %d: %w", m.table, id, err)
	}
	s = &Schema{}
	if err := fileio.DecodeJSON(p, b, s); err != nil {
		return nil, fmt.Errorf("table %s: schema %d: %w", m.table, id, err)
	}
	if s.Version != FormatVersion {
		return nil, fmt.Errorf("table %s: schema file %s: unknown format version %d: %w", m.table, p, s.Version, base.ErrCorruption)
	}
	if s.ID != id {
		return nil, fmt.Errorf("table %s: schema file %s holds id %d: %w", m.table, p, s.ID, base.ErrCorruption)
	}
	m.mu.Lock()
	if m.mu.gen == gen {
		m.mu.schemas[id] = s
	}
	m.mu.Unlock()
	return s, nil
}

// IDs returns the schema ids present, ascending. The caller owns the
// slice.
func (m *Manager) IDs() ([]ID, error) {
	ids, err := m.ids()
	return slices.Clone(ids), err
}

// ids returns the schema ids present, ascending, in a slice the caller
// must not modify. It lists the directory the first time and when the
// newest known schema is gone; otherwise it stats the newest known
// schema and the ids after it until one is missing.
func (m *Manager) ids() ([]ID, error) {
	m.mu.Lock()
	known, gen := m.mu.ids, m.mu.gen
	m.mu.Unlock()
	if n := len(known); n > 0 {
		last := known[n-1]
		ok, err := m.fs.Exists(m.Path(last))
		if err != nil {
			return nil, fmt.Errorf("table %s: schema %d: %w", m.table, last, err)
		}
		if ok {
			return m.probe(known, gen)
		}
		// Gone: the table was dropped (and maybe created again) while
		// this manager lived, which only a listing can tell.
	}
	listed, err := m.list()
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.mu.gen != gen:
		// Another call forgot the cache meanwhile; its listing stands.
	case len(known) > 0:
		m.mu.gen++
		m.mu.ids = nil
		m.mu.schemas = map[ID]*Schema{}
		fallthrough
	default:
		if len(listed) > len(m.mu.ids) {
			m.mu.ids = listed
		}
	}
	return listed, nil
}

// probe stats the ids after the last of known until one is missing and
// returns known with those found appended, keeping them unless the cache
// was forgotten since gen.
func (m *Manager) probe(known []ID, gen uint64) ([]ID, error) {
	ids := known
	for next := known[len(known)-1] + 1; ; next++ {
		ok, err := m.fs.Exists(m.Path(next))
		if err != nil {
			return nil, fmt.Errorf("table %s: schema %d: %w", m.table, next, err)
		}
		if !ok {
			break
		}
		ids = append(slices.Clip(ids), next)
	}
	if len(ids) > len(known) {
		m.mu.Lock()
		if m.mu.gen == gen && len(ids) > len(m.mu.ids) {
			m.mu.ids = ids
		}
		m.mu.Unlock()
	}
	return ids, nil
}

// list lists the schema directory: the schema ids present, ascending.
func (m *Manager) list() ([]ID, error) {
	files, err := m.fs.List(m.table + "/" + Dir)
	if err != nil {
		return nil, fmt.Errorf("table %s: list schemas: %w", m.table, err)
	}
	var ids []ID
	for _, f := range files {
		if n, ok := strings.CutPrefix(f.Name, "schema-"); ok {
			if v, err := strconv.ParseInt(n, 10, 64); err == nil {
				ids = append(ids, ID(v))
			}
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// Latest returns the schema with the highest id. A table without schema
// files gives an error wrapping base.ErrNotFound.
func (m *Manager) Latest() (*Schema, error) {
	ids, err := m.ids()
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("table %s: no schema: %w", m.table, base.ErrNotFound)
	}
	return m.Get(ids[len(ids)-1])
}
