package service

import (
	"context"
	"fmt"

	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/store"
)

// changeCatalog applies a catalog change: compute the next version, persist
// it with what extra adds to the batch, publish it, then run published with
// the mutex still held. extra and published may be nil.
func (m *Meta) changeCatalog(ctx context.Context, what string, change func(*catalog.Catalog) (*catalog.Catalog, error), extra func(*store.Batch), published func()) error {
	if err := m.lock(); err != nil {
		return err
	}
	defer m.mu.Unlock()
	next, err := change(m.mu.catalog)
	if err != nil {
		return err
	}
	doc, err := next.Marshal()
	if err != nil {
		return fmt.Errorf("meta service: encoding catalog for %s: %w", what, err)
	}
	var b store.Batch
	b.Put(keyCatalog, doc)
	if extra != nil {
		extra(&b)
	}
	if err := m.apply(ctx, what, b); err != nil {
		return err
	}
	m.mu.catalog = next
	if published != nil {
		published()
	}
	return nil
}

// CreateDatabase implements meta.Service.
func (m *Meta) CreateDatabase(ctx context.Context, db catalog.Database) error {
	return m.changeCatalog(ctx, fmt.Sprintf("database %q", db.Name), func(c *catalog.Catalog) (*catalog.Catalog, error) {
		return c.CreateDatabase(db)
	}, nil, nil)
}

// DropDatabase implements meta.Service.
func (m *Meta) DropDatabase(ctx context.Context, name string) error {
	return m.changeCatalog(ctx, fmt.Sprintf("drop of database %q", name), func(c *catalog.Catalog) (*catalog.Catalog, error) {
		return c.DropDatabase(name)
	}, nil, nil)
}

// CreateTable implements meta.Service.
func (m *Meta) CreateTable(ctx context.Context, t catalog.Table) error {
	return m.changeCatalog(ctx, fmt.Sprintf("table %s", t.Name), func(c *catalog.Catalog) (*catalog.Catalog, error) {
		return c.CreateTable(t)
	}, nil, nil)
}

// DropTable implements meta.Service. The table's committed epoch and floor
// go with it, so a table created later under the same name starts afresh.
func (m *Meta) DropTable(ctx context.Context, name catalog.ObjectName) error {
	return m.changeCatalog(ctx, fmt.Sprintf("drop of table %s", name), func(c *catalog.Catalog) (*catalog.Catalog, error) {
		return c.DropTable(name)
	}, func(b *store.Batch) {
		b.Delete(commitKey(name))
		b.Delete(floorKey(name))
	}, func() { m.mu.tracker.Forget(name) })
}

// CreateSource implements meta.Service.
func (m *Meta) CreateSource(ctx context.Context, s catalog.Source) error {
	return m.changeCatalog(ctx, fmt.Sprintf("source %s", s.Name), func(c *catalog.Catalog) (*catalog.Catalog, error) {
		return c.CreateSource(s)
	}, nil, nil)
}

// DropSource implements meta.Service.
func (m *Meta) DropSource(ctx context.Context, name catalog.ObjectName) error {
	return m.changeCatalog(ctx, fmt.Sprintf("drop of source %s", name), func(c *catalog.Catalog) (*catalog.Catalog, error) {
		return c.DropSource(name)
	}, nil, nil)
}

// Catalog implements meta.Service. The returned catalog is immutable and
// stays valid while the service moves on.
func (m *Meta) Catalog(context.Context) (*catalog.Catalog, error) {
	if err := m.lock(); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	return m.mu.catalog, nil
}
