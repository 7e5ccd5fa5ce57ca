package engine

import (
	"context"
	"fmt"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/olap"
	"github.com/stratadb/strata/sql/sqlerr"
)

// readRows reads table or view t at epoch ep as its catalog columns show
// it: a multiset view's rows expanded by their multiplicities.
func (e *Engine) readRows(t catalog.Table, ep base.Epoch) ([]types.Row, error) {
	tb, err := e.Table(t.Name)
	if err != nil {
		return nil, err
	}
	rows, err := tb.ReadAtEpoch(ep)
	if err != nil {
		return nil, err
	}
	if multisetColumn(t) != "" {
		rows = olap.ExpandMultiset(rows)
	}
	return rows, nil
}

// ReadAt reads table or view name at epoch ep (base.NoEpoch: its
// committed epoch) as a SELECT * would see it: its column names, in order,
// and its rows (a multiset view's rows as often as they occur; its hidden
// multiplicity column is not among the columns). It returns the epoch
// read. A name that is not in the catalog is 42P01; an epoch above the
// committed one is 55000.
func (e *Engine) ReadAt(ctx context.Context, name catalog.ObjectName, ep base.Epoch) (cols []string, rows []types.Row, at base.Epoch, err error) {
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return nil, nil, 0, err
	}
	t, err := cat.Table(name)
	if err != nil {
		return nil, nil, 0, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name.Name)
	}
	tb, err := e.Table(name)
	if err != nil {
		return nil, nil, 0, err
	}
	c, err := tb.CommittedEpoch()
	if err != nil {
		return nil, nil, 0, err
	}
	if ep == base.NoEpoch {
		ep = c
	}
	if ep > c {
		return nil, nil, 0, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "relation %q has committed epoch %d, not yet %d", name.Name, c, ep)
	}
	if rows, err = e.readRows(t, ep); err != nil {
		return nil, nil, 0, fmt.Errorf("reading %s at epoch %d: %w", name, ep, err)
	}
	for _, col := range t.Columns {
		cols = append(cols, col.Name)
	}
	return cols, rows, ep, nil
}
