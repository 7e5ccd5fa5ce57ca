package pgcdc

import (
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/types"
)

// Route returns the operator that feeds one Strata table from a source's
// union stream: it keeps the rows whose tag is table and emits them in
// that table's own columns (Layout.Project), row kinds kept. One Route per
// table sits between the source's single ingest vertex and that table's
// sink vertex, so every table of the source sees the same epoch barriers
// at the same source positions (doc.go, One source, many tables). It
// keeps no state; epoch and checkpoint barriers pass through it.
func Route(l *Layout, table int) operator.Operator {
	if table < 0 || table >= l.Tables() {
		panic("pgcdc: Route of a table outside the layout")
	}
	return &route{layout: l, table: table}
}

type route struct {
	operator.Base
	layout *Layout
	table  int
	out    operator.Output
}

func (r *route) Open(ctx *operator.Context) error {
	r.out = ctx.Output
	return nil
}

func (r *route) Process(_ int, c *types.Chunk) error {
	if p := r.layout.Project(c, r.table); p != nil {
		return r.out.Emit(p)
	}
	return nil
}
