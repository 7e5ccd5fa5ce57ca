package snapshot

import (
	"fmt"
	"strings"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/fileio"
)

// TagDir is the tag directory inside a table directory.
const TagDir = "tag"

func (m *Manager) tagPath(name string) string { return m.table + "/" + TagDir + "/tag-" + name }

// CreateTag pins snapshot id under name by copying its file (Paimon's
// TagManager). An existing tag gives an error wrapping base.ErrConflict;
// a bad name base.ErrInvalidArgument.
func (m *Manager) CreateTag(name string, id base.SnapshotID) error {
	if name == "" || strings.ContainsAny(name, "/\\") {
		return fmt.Errorf("table %s: tag name %q: %w", m.table, name, base.ErrInvalidArgument)
	}
	s, err := m.Get(id)
	if err != nil {
		return err
	}
	b, err := fileio.EncodeJSON(s)
	if err != nil {
		return err
	}
	if err := m.fs.PutIfAbsent(m.tagPath(name), b); err != nil {
		return fmt.Errorf("table %s: tag %s: %w", m.table, name, err)
	}
	return nil
}

// Tag reads tag name.
func (m *Manager) Tag(name string) (*Snapshot, error) {
	p := m.tagPath(name)
	b, err := m.fs.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("table %s: tag %s: %w", m.table, name, err)
	}
	return m.decode(p, b)
}

// DeleteTag removes tag name; its files become expirable.
func (m *Manager) DeleteTag(name string) error { return m.fs.Delete(m.tagPath(name)) }

// Tags returns every tag by name.
func (m *Manager) Tags() (map[string]*Snapshot, error) {
	files, err := m.fs.List(m.table + "/" + TagDir)
	if err != nil {
		return nil, err
	}
	out := map[string]*Snapshot{}
	for _, f := range files {
		name, ok := strings.CutPrefix(f.Name, "tag-")
		if !ok {
			continue
		}
		s, err := m.Tag(name)
		if err != nil {
			return nil, err
		}
		out[name] = s
	}
	return out, nil
}
