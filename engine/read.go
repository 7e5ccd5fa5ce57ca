package engine

import (
	"context"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/topology"
)

// ReadConsistent reads tables and views at one consistent version of the
// meta service (mode strong or weak, DESIGN.md "Consistent reads"): every
// table at the epoch the version names, merged on read. holder names the
// reader for the version's pin.
func (e *Engine) ReadConsistent(ctx context.Context, names []catalog.ObjectName, mode version.Mode, holder string) (topology.Read, error) {
	tables := make(map[catalog.ObjectName]*table.Table, len(names))
	for _, n := range names {
		t, err := e.Table(n)
		if err != nil {
			return topology.Read{}, err
		}
		tables[n] = t
	}
	return topology.ReadConsistent(ctx, e.meta, tables, mode, holder)
}

// WaitCommitted waits until table or view name has committed epoch ep (or
// ctx ends).
func (e *Engine) WaitCommitted(ctx context.Context, name catalog.ObjectName, ep base.Epoch) error {
	return e.waitCommitted(ctx, name, ep)
}
