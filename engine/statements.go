package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
	"github.com/stratadb/strata/sql/binder"
	"github.com/stratadb/strata/sql/exec"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/olap"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/table/schema"
)

// Args are the parameters $1, $2, ... of a prepared statement (the
// extended query protocol). Types are those the client named (types.Unknown
// where it named none); the binder infers the rest and reports them in
// Inferred. Values, when not nil, are one execution's values. With DryRun
// the statement is only bound (to describe it): nothing is read or written.
type Args struct {
	Types    []types.Type
	Values   []types.Datum
	DryRun   bool
	Inferred []types.Type
}

// bind binds one query with the statement's parameters, if any, and
// supplies their values. insertTarget, when not nil, types untyped values
// of an INSERT's rows by their target columns.
func bindWith(rels *relations, text string, ectx *expr.Context, node *pg_query.Node, args *Args, insertTarget []types.Type) (plan.Node, error) {
	b := binder.New(rels, text, ectx)
	var params *plan.Params
	if args != nil {
		params = b.WithParams(args.Types)
	}
	var p plan.Node
	var err error
	if insertTarget != nil {
		p, err = b.BindInsertSource(node, insertTarget)
	} else {
		p, err = b.BindQuery(node)
	}
	if err != nil {
		return nil, err
	}
	if args != nil {
		args.Inferred = params.Types
		if args.Values != nil {
			if err := params.Set(args.Values); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// ReadSpec says which version a query reads: the consistent version of
// the meta service in Mode, or, with AtEpoch set, every relation at that
// epoch (time travel; each must have committed it and still keep it).
type ReadSpec struct {
	Mode    version.Mode
	AtEpoch *base.Epoch
	// After, when not zero, makes the read wait until every relation it
	// names has committed epoch After: a session that wrote at After then
	// reads its own write in every view downstream (read your writes).
	After base.Epoch
}

// Bind binds a SELECT against the catalog of database db and returns its
// plan (for the result's columns) without reading anything.
func (e *Engine) Bind(ctx context.Context, db string, node *pg_query.Node, text string, ectx *expr.Context, args *Args) (plan.Node, error) {
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	return bindWith(&relations{cat: cat, db: db}, text, ectx, node, args, nil)
}

// Query binds a SELECT (a pg_query node of text) against the catalog of
// database db, reads every relation it names at one version (see
// ReadSpec) and runs it with the batch executor. It returns the plan (for
// the result's columns), the rows and the epochs read.
func (e *Engine) Query(ctx context.Context, db string, node *pg_query.Node, text string, spec ReadSpec, ectx *expr.Context, args *Args) (plan.Node, []types.Row, map[catalog.ObjectName]base.Epoch, error) {
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	rels := &relations{cat: cat, db: db}
	p, err := bindWith(rels, text, ectx, node, args, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	var sc exec.Scanner
	var epochs map[catalog.ObjectName]base.Epoch
	if spec.After != 0 && spec.AtEpoch == nil {
		for _, n := range rels.seen {
			if err := e.waitCommitted(ctx, n, spec.After); err != nil {
				return nil, nil, nil, fmt.Errorf("waiting for %s to commit epoch %d, which holds this session's last write: %w", n.Name, spec.After, err)
			}
		}
	}
	if spec.AtEpoch != nil {
		sc, epochs, err = e.scannerAt(rels, *spec.AtEpoch)
	} else {
		sc, epochs, err = e.scanner(ctx, rels, spec.Mode)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if len(rels.system) > 0 {
		rs := sc.(readScanner)
		rs.system = map[string][]types.Row{}
		for _, n := range rels.system {
			if rs.system[n], err = e.systemRows(ctx, n); err != nil {
				return nil, nil, nil, err
			}
		}
		sc = rs
	}
	rows, err := exec.Run(interruptible(ectx, ctx), p, sc)
	if err != nil {
		return nil, nil, nil, err
	}
	return p, rows, epochs, nil
}

// readScanner serves the batch executor the rows of one consistent read,
// and of the system tables read.
type readScanner struct {
	db     string
	rows   map[catalog.ObjectName][]types.Row
	system map[string][]types.Row
}

func (s readScanner) Scan(rel *plan.Relation) ([]types.Row, error) {
	if rows, ok := s.system[rel.Name]; ok {
		return rows, nil
	}
	n := (&relations{db: s.db}).objectName(rel.Name)
	rows, ok := s.rows[n]
	if !ok {
		return nil, fmt.Errorf("relation %s was not read", rel.Name)
	}
	return rows, nil
}

// scanner reads the relations a binding looked up at one consistent
// version.
func (e *Engine) scanner(ctx context.Context, rels *relations, mode version.Mode) (exec.Scanner, map[catalog.ObjectName]base.Epoch, error) {
	if len(rels.seen) == 0 {
		return readScanner{db: rels.db}, nil, nil
	}
	if err := e.checkBatchRows(rels); err != nil {
		return nil, nil, err
	}
	if err := e.checkReadable(ctx, rels.seen); err != nil {
		return nil, nil, err
	}
	r, err := e.ReadConsistent(ctx, rels.seen, mode, "query")
	if err != nil {
		return nil, nil, sqlerr.Wrap(sqlerr.SerializationFailure, err)
	}
	for _, n := range rels.seen {
		if t, err := rels.cat.Table(n); err == nil && multisetColumn(t) != "" {
			r.Rows[n] = olap.ExpandMultiset(r.Rows[n])
		}
	}
	return readScanner{db: rels.db, rows: r.Rows}, r.Version.Epochs, nil
}

// scannerAt reads the relations a binding looked up at epoch ep.
func (e *Engine) scannerAt(rels *relations, ep base.Epoch) (exec.Scanner, map[catalog.ObjectName]base.Epoch, error) {
	if err := e.checkBatchRows(rels); err != nil {
		return nil, nil, err
	}
	rows := map[catalog.ObjectName][]types.Row{}
	epochs := map[catalog.ObjectName]base.Epoch{}
	for _, n := range rels.seen {
		ct, err := rels.cat.Table(n)
		if err != nil {
			return nil, nil, err
		}
		t, err := e.Table(n)
		if err != nil {
			return nil, nil, err
		}
		c, err := t.CommittedEpoch()
		if err != nil {
			return nil, nil, err
		}
		if c < ep {
			return nil, nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "relation %q has committed epoch %d, not yet %d", n.Name, c, ep)
		}
		rs, err := e.readRows(ct, ep)
		if err != nil {
			return nil, nil, sqlerr.Wrap(sqlerr.ObjectNotInPrerequisiteState, fmt.Errorf("relation %q at epoch %d: %w", n.Name, ep, err))
		}
		rows[n], epochs[n] = rs, ep
	}
	return readScanner{db: rels.db, rows: rows}, epochs, nil
}

// targetTable resolves the table a DML statement writes.
func targetTable(cat *catalog.Catalog, db string, rv *pg_query.RangeVar) (catalog.Table, error) {
	rels := &relations{cat: cat, db: db}
	name := rv.GetRelname()
	if s := rv.GetSchemaname(); s != "" && s != "public" {
		name = s + "." + name
	}
	t, err := cat.Table(rels.objectName(name))
	if err != nil {
		return catalog.Table{}, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name).WithPosition(int(rv.GetLocation()) + 1)
	}
	return t, nil
}

// assign casts v to column c's type as an assignment (INSERT, UPDATE SET)
// and checks NOT NULL.
func assign(t catalog.Table, c catalog.Column, v types.Datum, ectx *expr.Context) (types.Datum, error) {
	if v.IsNull() {
		if c.NotNull {
			return v, sqlerr.New(sqlerr.NotNullViolation, "null value in column %q of relation %q violates not-null constraint", c.Name, t.Name.Name)
		}
		return v, nil
	}
	out, err := types.Cast(v, c.Type, types.CastContext{Loc: ectx.Loc})
	if err != nil {
		return v, fmt.Errorf("column %q: %w", c.Name, err)
	}
	return out, nil
}

// Insert runs INSERT INTO t [(cols)] VALUES ... | SELECT ... . Rows whose
// primary key exists replace the stored row (upsert, as in Paimon and
// RisingWave tables). It returns the number of rows written once their
// epoch is committed.
func (e *Engine) Insert(ctx context.Context, db string, ins *pg_query.InsertStmt, text string, ectx *expr.Context, args *Args) (int, base.Epoch, error) {
	if ins.GetOnConflictClause() != nil || len(ins.GetReturningList()) > 0 || ins.GetWithClause() != nil {
		return 0, 0, sqlerr.New(sqlerr.FeatureNotSupported, "INSERT with ON CONFLICT, RETURNING or WITH is not supported")
	}
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return 0, 0, err
	}
	t, err := targetTable(cat, db, ins.GetRelation())
	if err != nil {
		return 0, 0, err
	}
	// target[i] is the table column that value i goes to.
	var target []int
	if cols := ins.GetCols(); len(cols) > 0 {
		seen := map[int]bool{}
		for _, n := range cols {
			rt := n.GetResTarget()
			idx := -1
			for i, c := range t.Columns {
				if c.Name == rt.GetName() {
					idx = i
				}
			}
			if idx < 0 {
				return 0, 0, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", rt.GetName(), t.Name.Name).WithPosition(int(rt.GetLocation()) + 1)
			}
			if seen[idx] {
				return 0, 0, sqlerr.New(sqlerr.DuplicateColumn, "column %q specified more than once", rt.GetName()).WithPosition(int(rt.GetLocation()) + 1)
			}
			seen[idx] = true
			target = append(target, idx)
		}
	} else {
		for i := range t.Columns {
			target = append(target, i)
		}
	}
	sel := ins.GetSelectStmt()
	if sel == nil {
		return 0, 0, sqlerr.New(sqlerr.FeatureNotSupported, "INSERT ... DEFAULT VALUES is not supported")
	}
	// Processing-time columns take DEFAULT only: the statement stamps
	// them (proctime.go).
	stamp := types.NewTimestampTZ(procTimeMicros(time.Now()))
	if len(generatedColumns(t)) > 0 {
		if sel, target, err = dropDefaults(t, sel, target); err != nil {
			return 0, 0, err
		}
	}
	rels := &relations{cat: cat, db: db}
	targetTypes := make([]types.Type, len(target))
	for j, i := range target {
		targetTypes[j] = t.Columns[i].Type
	}
	p, err := bindWith(rels, text, ectx, sel, args, targetTypes)
	if err != nil {
		return 0, 0, err
	}
	if n := len(p.Schema()); n < len(target) && len(ins.GetCols()) == 0 {
		// Without a column list, the rows may leave out trailing
		// columns, which take their defaults, as in PostgreSQL: NULL (a
		// NOT NULL or key column is then refused by assign, 23502), or
		// the stamp of a processing-time column.
		target = target[:n]
	}
	if err := insertCountError(t, ins, sel, len(p.Schema()), target); err != nil {
		return 0, 0, err
	}
	for _, i := range target {
		if c := t.Columns[i]; c.IsGenerated() {
			return 0, 0, insertGeneratedError(c)
		}
	}
	if args != nil && args.DryRun {
		return 0, 0, nil
	}
	sc, _, err := e.scanner(ctx, rels, version.Strong)
	if err != nil {
		return 0, 0, err
	}
	l, err := e.writableLog(ctx, t.Name)
	if err != nil {
		return 0, 0, err
	}
	rows, err := exec.Run(interruptible(ectx, ctx), p, sc)
	if err != nil {
		return 0, 0, err
	}
	c := types.NewChunk(columnTypes(t.Columns), len(rows))
	for _, r := range rows {
		out := make(types.Row, len(t.Columns))
		for i := range out {
			out[i] = types.Null
		}
		for j, i := range target {
			out[i] = r[j]
		}
		for i, col := range t.Columns {
			if col.IsGenerated() {
				out[i] = stamp
			}
		}
		for i, col := range t.Columns {
			if out[i], err = assign(t, col, out[i], ectx); err != nil {
				return 0, 0, err
			}
		}
		c.Append(types.Insert, out)
	}
	if c.Len() == 0 {
		return len(rows), 0, nil
	}
	// An INSERT reads nothing of its table: it holds the table's writer
	// lock only to append, and waits for its epoch without it, so that
	// several sessions' INSERTs share epochs.
	// Canceled before the append, it writes nothing; after it, it
	// commits and reports success (commit, the point of no return).
	l.write.Lock()
	end, err := e.appendRecord(ctx, l, c)
	l.write.Unlock()
	if err != nil {
		return 0, 0, err
	}
	ep, err := e.waitApplied(context.WithoutCancel(ctx), l, end)
	if err != nil {
		return 0, 0, err
	}
	return len(rows), ep, nil
}

// insertCountError is PostgreSQL's refusal (42601) of an INSERT whose
// query gives n columns for the target columns: more than there are
// targets, or fewer than its column list names (without a list, fewer is
// fine: the caller has cut target to n). Its position is the first value
// left over, or the first listed column left without one, where the
// statement shows it; sel is the query after dropDefaults.
func insertCountError(t catalog.Table, ins *pg_query.InsertStmt, sel *pg_query.Node, n int, target []int) error {
	switch {
	case n > len(target):
		err := sqlerr.New(sqlerr.SyntaxError, "INSERT has more expressions than target columns")
		var items []*pg_query.Node
		if lists := sel.GetSelectStmt().GetValuesLists(); len(lists) > 0 {
			items = lists[0].GetList().GetItems()
		} else {
			items = sel.GetSelectStmt().GetTargetList()
		}
		if len(items) == n {
			if loc := binder.Location(items[len(target)]); loc >= 0 {
				return err.WithPosition(int(loc) + 1)
			}
		}
		return err
	case n < len(target):
		err := sqlerr.New(sqlerr.SyntaxError, "INSERT has more target columns than expressions")
		missing := t.Columns[target[n]].Name
		for _, c := range ins.GetCols() {
			if rt := c.GetResTarget(); rt.GetName() == missing {
				return err.WithPosition(int(rt.GetLocation()) + 1)
			}
		}
		return err
	}
	return nil
}

// insertGeneratedError is PostgreSQL's error for a value given to a
// generated column.
func insertGeneratedError(c catalog.Column) error {
	err := sqlerr.New(generatedAlways, "cannot insert a non-DEFAULT value into column %q", c.Name)
	err.Detail = fmt.Sprintf("Column %q is a generated column.", c.Name)
	return err
}

// dropDefaults takes out of an INSERT's VALUES the generated columns of
// target, which every row must set to DEFAULT (the statement stamps
// them; another value is 428C9), and returns the query and target without
// them; sel is copied, not changed. A query other than VALUES is left for
// the caller to check.
func dropDefaults(t catalog.Table, sel *pg_query.Node, target []int) (*pg_query.Node, []int, error) {
	lists := sel.GetSelectStmt().GetValuesLists()
	if len(lists) == 0 {
		return sel, target, nil
	}
	var drop []int
	for j, i := range target {
		if !t.Columns[i].IsGenerated() {
			continue
		}
		given := false
		for _, l := range lists {
			items := l.GetList().GetItems()
			if j >= len(items) {
				continue // a row too short: the caller's count check
			}
			if items[j].GetSetToDefault() == nil {
				return nil, nil, insertGeneratedError(t.Columns[i])
			}
			given = true
		}
		if given {
			drop = append(drop, j)
		}
	}
	if len(drop) == 0 {
		return sel, target, nil
	}
	sel = proto.Clone(sel).(*pg_query.Node)
	for _, l := range sel.GetSelectStmt().GetValuesLists() {
		list := l.GetList()
		for k := len(drop) - 1; k >= 0; k-- {
			if drop[k] < len(list.Items) {
				list.Items = slices.Delete(list.Items, drop[k], drop[k]+1)
			}
		}
	}
	target = slices.Clone(target)
	for k := len(drop) - 1; k >= 0; k-- {
		target = slices.Delete(target, drop[k], drop[k]+1)
	}
	return sel, target, nil
}

// selectFor builds SELECT *, extra... FROM rel WHERE where from a DML
// statement's parts; their locations stay those of text.
func selectFor(rel *pg_query.RangeVar, extra []*pg_query.Node, where *pg_query.Node) *pg_query.Node {
	star := pg_query.MakeResTargetNodeWithVal(pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeAStarNode()}, -1), -1)
	targets := []*pg_query.Node{star}
	for _, x := range extra {
		targets = append(targets, pg_query.MakeResTargetNodeWithVal(x, -1))
	}
	return &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: &pg_query.SelectStmt{
		TargetList:  targets,
		FromClause:  []*pg_query.Node{{Node: &pg_query.Node_RangeVar{RangeVar: rel}}},
		WhereClause: where,
		Op:          pg_query.SetOperation_SETOP_NONE,
	}}}
}

// Update runs UPDATE t SET col = expr, ... [WHERE ...] on a table written
// by SQL; it returns the number of rows matched once the change is
// committed. Changing a primary key moves the row (a delete and an
// insert).
func (e *Engine) Update(ctx context.Context, db string, up *pg_query.UpdateStmt, text string, ectx *expr.Context, args *Args) (int, base.Epoch, error) {
	if len(up.GetFromClause()) > 0 || len(up.GetReturningList()) > 0 || up.GetWithClause() != nil {
		return 0, 0, sqlerr.New(sqlerr.FeatureNotSupported, "UPDATE with FROM, RETURNING or WITH is not supported")
	}
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return 0, 0, err
	}
	t, err := targetTable(cat, db, up.GetRelation())
	if err != nil {
		return 0, 0, err
	}
	var set, restamp []int
	var vals []*pg_query.Node
	stamp := types.NewTimestampTZ(procTimeMicros(time.Now()))
	for _, n := range up.GetTargetList() {
		rt := n.GetResTarget()
		if len(rt.GetIndirection()) > 0 {
			return 0, 0, sqlerr.New(sqlerr.FeatureNotSupported, "UPDATE of a part of column %q is not supported", rt.GetName()).WithPosition(int(rt.GetLocation()) + 1)
		}
		idx := -1
		for i, c := range t.Columns {
			if c.Name == rt.GetName() {
				idx = i
			}
		}
		if idx < 0 {
			return 0, 0, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", rt.GetName(), t.Name.Name).WithPosition(int(rt.GetLocation()) + 1)
		}
		if c := t.Columns[idx]; c.IsGenerated() {
			if rt.GetVal().GetSetToDefault() == nil {
				gerr := sqlerr.New(generatedAlways, "column %q can only be updated to DEFAULT", c.Name).WithPosition(int(rt.GetLocation()) + 1)
				gerr.Detail = fmt.Sprintf("Column %q is a generated column.", c.Name)
				return 0, 0, gerr
			}
			// SET p_time = DEFAULT stamps the rows again.
			restamp = append(restamp, idx)
			continue
		}
		set = append(set, idx)
		vals = append(vals, rt.GetVal())
	}
	// The SELECT behind the UPDATE reads t's columns, then the new
	// values: those take their columns' types, so that SET n = $1 types
	// $1 as n's type, as Postgres does.
	target := columnTypes(t.Columns)
	for _, i := range set {
		target = append(target, t.Columns[i].Type)
	}
	return e.rewrite(ctx, cat, db, t, selectFor(up.GetRelation(), vals, up.GetWhereClause()), target, text, ectx, args, func(r types.Row) (types.Row, error) {
		out := append(types.Row(nil), r[:len(t.Columns)]...)
		for j, i := range set {
			v, err := assign(t, t.Columns[i], r[len(t.Columns)+j], ectx)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		for _, i := range restamp {
			out[i] = stamp
		}
		return out, nil
	})
}

// Delete runs DELETE FROM t [WHERE ...] on a table written by SQL; it
// returns the number of rows deleted once the change is committed.
func (e *Engine) Delete(ctx context.Context, db string, del *pg_query.DeleteStmt, text string, ectx *expr.Context, args *Args) (int, base.Epoch, error) {
	if len(del.GetUsingClause()) > 0 || len(del.GetReturningList()) > 0 || del.GetWithClause() != nil {
		return 0, 0, sqlerr.New(sqlerr.FeatureNotSupported, "DELETE with USING, RETURNING or WITH is not supported")
	}
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return 0, 0, err
	}
	t, err := targetTable(cat, db, del.GetRelation())
	if err != nil {
		return 0, 0, err
	}
	return e.rewrite(ctx, cat, db, t, selectFor(del.GetRelation(), nil, del.GetWhereClause()), nil, text, ectx, args, nil)
}

// rewrite selects the rows a DML statement matches and writes, per row,
// the replacement newRow gives (a delete when newRow is nil); target, when
// not nil, types the untyped values of the SELECT sel by position.
func (e *Engine) rewrite(ctx context.Context, cat *catalog.Catalog, db string, t catalog.Table, sel *pg_query.Node, target []types.Type, text string, ectx *expr.Context, args *Args,
	newRow func(types.Row) (types.Row, error)) (int, base.Epoch, error) {
	if len(t.PrimaryKey) == 0 {
		return 0, 0, sqlerr.New(sqlerr.FeatureNotSupported, "table %q has no primary key: it is an append table, and UPDATE and DELETE need a key to find rows", t.Name.Name)
	}
	// Only a deduplicate table's row is the last one written: under the
	// other merge engines a retraction is refused (first-row, min/max
	// aggregation) or means something else (partial-update, sum), so
	// UPDATE and DELETE would not do what they say.
	if me := t.Options["merge-engine"]; me != "" && schema.MergeEngine(me) != schema.Deduplicate {
		return 0, 0, sqlerr.New(sqlerr.FeatureNotSupported, "table %q has merge-engine %q: UPDATE and DELETE need merge-engine 'deduplicate' (its rows are what their merge function makes of every INSERT)", t.Name.Name, me)
	}
	rels := &relations{cat: cat, db: db}
	p, err := bindWith(rels, text, ectx, sel, args, target)
	if err != nil {
		return 0, 0, err
	}
	if args != nil && args.DryRun {
		return 0, 0, nil
	}
	l, err := e.writableLog(ctx, t.Name)
	if err != nil {
		return 0, 0, err
	}
	// Hold the table's writer lock from the read to the commit: the rows
	// read are the rows the change applies to. Earlier statements'
	// appends are committed first, so the read sees them.
	l.write.Lock()
	defer l.write.Unlock()
	if err := e.settle(ctx, l); err != nil {
		return 0, 0, err
	}
	sc, _, err := e.scanner(ctx, rels, version.Strong)
	if err != nil {
		return 0, 0, err
	}
	rows, err := exec.Run(interruptible(ectx, ctx), p, sc)
	if err != nil {
		return 0, 0, err
	}
	keyCols := make([]int, 0, len(t.PrimaryKey))
	for _, k := range t.PrimaryKey {
		for i, c := range t.Columns {
			if c.Name == k {
				keyCols = append(keyCols, i)
			}
		}
	}
	keyTypes := make([]types.Type, len(keyCols))
	for i, k := range keyCols {
		keyTypes[i] = t.Columns[k].Type
	}
	keyOf := func(r types.Row) string { return string(types.EncodeKey(nil, r, keyCols, keyTypes)) }
	// Rows that keep their key are updated in place; rows whose key
	// changes are deleted first and inserted after every delete, so that
	// UPDATE t SET id = id + 1 does not delete the rows it just moved.
	// A new key that another row keeps is a unique violation, as in
	// PostgreSQL.
	c := types.NewChunk(columnTypes(t.Columns), len(rows))
	var moved []types.Row
	vacated := map[string]bool{}
	for _, r := range rows {
		old := r[:len(t.Columns)]
		if newRow == nil {
			c.Append(types.Delete, old)
			continue
		}
		nr, err := newRow(r)
		if err != nil {
			return 0, 0, err
		}
		if keyOf(old) == keyOf(nr) {
			if types.CompareRows(old, nr, nil) != 0 {
				c.Append(types.UpdateBefore, old)
				c.Append(types.UpdateAfter, nr)
			}
			continue
		}
		c.Append(types.Delete, old)
		vacated[keyOf(old)] = true
		moved = append(moved, nr)
	}
	if len(moved) > 0 {
		kept := map[string]bool{}
		for _, r := range sc.(readScanner).rows[t.Name] {
			if k := keyOf(r); !vacated[k] {
				kept[k] = true
			}
		}
		for _, nr := range moved {
			k := keyOf(nr)
			if kept[k] {
				return 0, 0, sqlerr.New(sqlerr.UniqueViolation, "duplicate key value violates unique constraint \"%s_pkey\"", t.Name.Name)
			}
			kept[k] = true
			c.Append(types.Insert, nr)
		}
	}
	ep, err := e.applyLocked(ctx, l, c)
	if err != nil {
		return 0, 0, err
	}
	return len(rows), ep, nil
}

// interruptible returns a copy of ectx whose batch execution stops when
// ctx ends (a cancel request, statement_timeout).
func interruptible(ectx *expr.Context, ctx context.Context) *expr.Context {
	var c expr.Context
	if ectx != nil {
		c = *ectx
	}
	c.Interrupt = ctx
	return &c
}

// batchRowLimit is the most rows, over all the tables a statement reads,
// that the batch executor reads into memory: the statements DuckDB does
// not answer (INSERT ... SELECT, UPDATE and DELETE with subqueries, reads
// of system tables joined with tables) hold every row of their inputs as
// Go values, a few hundred bytes each, so ten million rows of Nexmark's
// bid took the process past 3 GB and down. Above it the statement is
// refused (54000) before anything is read.
var batchRowLimit int64 = 2_000_000

// checkBatchRows refuses a batch-executor read of rels whose tables hold
// more than batchRowLimit rows in their latest snapshots (the rows of
// their live data files, an upper bound where updates are not yet
// compacted).
func (e *Engine) checkBatchRows(rels *relations) error {
	var total int64
	var largest catalog.ObjectName
	var largestRows int64
	for _, n := range rels.seen {
		t, err := e.Table(n)
		if err != nil {
			continue // a system table or a source: the read says what is wrong
		}
		sn, err := t.Latest()
		if err != nil || sn == nil {
			continue
		}
		live, err := t.Store().LiveFiles(sn)
		if err != nil {
			return err
		}
		var rows int64
		for _, f := range live {
			rows += f.File.Rows
		}
		total += rows
		if rows > largestRows {
			largest, largestRows = n, rows
		}
	}
	if total <= batchRowLimit {
		return nil
	}
	err := sqlerr.New(sqlerr.ProgramLimitExceeded,
		"this statement would read %d rows into memory (%s holds %d), more than the %d this kind of statement may read", total, largest.Name, largestRows, batchRowLimit)
	err.Hint = "INSERT ... SELECT, UPDATE and DELETE, and the few SELECTs DuckDB does not run, read their inputs whole; other SELECTs have no such limit. To keep a large query's result, CREATE MATERIALIZED VIEW ... AS SELECT, or CREATE SINK ... INTO a table."
	return err
}
