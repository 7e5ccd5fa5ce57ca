package schema

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/fileio"
)

// Dir is the schema directory inside a table directory.
const Dir = "schema"

// Manager reads and writes the schema files of one table.
type Manager struct {
	fs    fileio.FS
	table string // table directory, for paths and error messages
	mu    struct {
		sync.Mutex
		cache map[ID]*Schema // guarded by mu; schemas are immutable
	}
}

// NewManager returns the schema manager of the table at dir.
func NewManager(fs fileio.FS, dir string) *Manager {
	m := &Manager{fs: fs, table: dir}
	m.mu.cache = map[ID]*Schema{}
	return m
}

// Path returns the path of schema id.
func (m *Manager) Path(id ID) string {
	return m.table + "/" + Dir + "/schema-" + strconv.FormatInt(int64(id), 10)
}

// Commit publishes s as schema s.ID ([schema-publish-once]). An existing
// schema with that id gives an error wrapping base.ErrConflict.
func (m *Manager) Commit(s *Schema) error {
	b, err := fileio.EncodeJSON(s)
	if err != nil {
		return err
	}
	if err := m.fs.PutIfAbsent(m.Path(s.ID), b); err != nil {
		return fmt.Errorf("table %s: schema %d: %w", m.table, s.ID, err)
	}
	m.mu.Lock()
	m.mu.cache[s.ID] = s
	m.mu.Unlock()
	return nil
}

// Get reads schema id. A missing file wraps base.ErrNotFound; a bad file
// base.ErrCorruption; an unknown format version base.ErrCorruption too,
// naming the version.
func (m *Manager) Get(id ID) (*Schema, error) {
	m.mu.Lock()
	s, ok := m.mu.cache[id]
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
	m.mu.cache[id] = s
	m.mu.Unlock()
	return s, nil
}

// IDs lists the schema ids present, ascending.
func (m *Manager) IDs() ([]ID, error) {
	files, err := m.fs.List(m.table + "/" + Dir)
	if err != nil {
		return nil, err
	}
	var ids []ID
	for _, f := range files {
		if n, ok := strings.CutPrefix(f.Name, "schema-"); ok {
			if v, err := strconv.ParseInt(n, 10, 64); err == nil {
				ids = append(ids, ID(v))
			}
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

// Latest reads the schema with the highest id. A table without schema
// files gives an error wrapping base.ErrNotFound.
func (m *Manager) Latest() (*Schema, error) {
	ids, err := m.IDs()
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("table %s: no schema: %w", m.table, base.ErrNotFound)
	}
	return m.Get(ids[len(ids)-1])
}
