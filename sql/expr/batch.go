package expr

import (
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/stratadb/strata/internal/types"
)

// Column-at-a-time evaluation (invariant batch-same-result): a Batch
// evaluates expressions for a whole chunk, one node at a time over a
// vector of rows, instead of walking the tree once per row. It computes
// the same values as Eval row by row, for the same rows:
//
//   - Every node evaluates on a selection, the ascending rows of the
//     chunk it is asked for, and writes its result at those rows of a
//     vector indexed by row (the rows it was not asked for keep what an
//     earlier evaluation on the same chunk wrote). CASE, AND, OR,
//     COALESCE, IN and strict calls narrow the selection for the parts
//     that Eval would evaluate only on some rows: an arm's result on the
//     rows whose condition is TRUE, the arguments after AND's FALSE or
//     a strict call's NULL not at all. So a node evaluates on exactly the
//     rows where Eval evaluates it, and raises no error Eval would not.
//   - A volatile function (random(), now()) is left to Eval, which
//     calls it in the order of the rows and then of the expressions.
//   - A shared sub-expression (Memoize) becomes one node that computes
//     each row at most once per chunk, whichever expression asks first.
//   - Errors: a Batch reports that something failed, not which row's
//     error comes first; the order of the rows and expressions of a
//     row-by-row evaluation decides that. The caller evaluates the chunk
//     row by row again after any error (the nodes have no side effects),
//     which gives the error, and the row, that Eval gives. A node also
//     gives up (errBatchGiveUp) on a value it cannot hold exactly, such
//     as a function result of another kind than its declared type.
//
// Hot functions have kernels (batch_kernels.go) that work on the typed
// slices without making a types.Datum per value; any other function is
// called per row on the datums of its argument vectors, which still
// saves the tree walk, the row's datums and the memo checks. Expression
// shapes without a vector form (a node kind not listed in compileNode, a
// type outside batchFamilies) leave the whole expression to Eval.
//
// TestBatchMatchesEval compares both over random chunks with NULLs,
// empty and non-ASCII strings and rows that raise errors.

// errBatchGiveUp is returned by a node that cannot compute a chunk
// exactly; the caller evaluates it row by row.
var errBatchGiveUp = errors.New("expr: batch evaluation gave up")

// Batch evaluates a set of expressions (Specialize and Memoize forms
// included) a chunk at a time; see above. Start it on each chunk, then
// evaluate expressions on selections of its rows. A Batch belongs to
// one goroutine.
type Batch struct {
	roots []vnode // nil where the expression has no vector form
	ctx   *Context
	chunk *types.Chunk
	n     int
	gen   uint64 // counts chunks; shared nodes compare it
	all   []int  // 0 .. n-1
	test  []int  // scratch of Select
}

// NewBatch prepares es (nil entries allowed) for column-at-a-time
// evaluation: es[j] is vectorized when every node of it has a vector
// form (Vectorized). Shared nodes (Memoize) shared between expressions
// stay shared.
func NewBatch(es []Expr) *Batch {
	b := &Batch{roots: make([]vnode, len(es))}
	memos := map[*memoized]*vmemo{}
	for j, e := range es {
		if e != nil {
			b.roots[j] = compileNode(e, memos)
		}
	}
	return b
}

// Vectorized reports whether expression j is evaluated column at a time.
func (b *Batch) Vectorized(j int) bool { return b.roots[j] != nil }

// Start begins the evaluation of chunk c with ctx: results of the
// previous chunk are forgotten.
func (b *Batch) Start(ctx *Context, c *types.Chunk) {
	b.ctx, b.chunk, b.n = ctx, c, c.Len()
	b.gen++
	for len(b.all) < b.n {
		b.all = append(b.all, len(b.all))
	}
}

// All returns the selection of every row of the current chunk; callers
// must not modify it.
func (b *Batch) All() []int { return b.all[:b.n] }

// Eval evaluates expression j (Vectorized) on rows sel of the current
// chunk and returns a vector indexed by row whose entries at sel are the
// values; it belongs to the Batch and is valid until the next Start. Any
// error means only that the chunk must be evaluated row by row (see
// above).
func (b *Batch) Eval(j int, sel []int) (*types.Vector, error) {
	return b.roots[j].eval(b, sel)
}

// Select appends to dst the rows of sel for which the BOOLEAN expression
// j is TRUE (a WHERE clause) and returns it; errors as Eval.
func (b *Batch) Select(j int, sel []int, dst []int) ([]int, error) {
	v, err := b.Eval(j, sel)
	if err != nil {
		return dst, err
	}
	for _, i := range sel {
		if !v.Nulls[i] && v.Ints[i] != 0 {
			dst = append(dst, i)
		}
	}
	return dst, nil
}

// vnode is the vector form of an expression node.
type vnode interface {
	// eval computes the node at rows sel (ascending) of b's chunk into a
	// vector indexed by row: its entries at sel are the values (the
	// payload of a NULL entry is unspecified), and entries an earlier
	// eval on the same chunk computed keep their values. The vector
	// holds values of kind typ().Kind only.
	eval(b *Batch, sel []int) (*types.Vector, error)
	typ() types.Type
}

// batchFamilies reports whether values of type t have a vector form: the
// kinds setDatum can store.
func batchFamily(t types.Type) bool {
	switch t.Kind {
	case types.KindBool, types.KindInt16, types.KindInt32, types.KindInt64,
		types.KindFloat32, types.KindFloat64, types.KindNumeric,
		types.KindChar, types.KindVarchar, types.KindText,
		types.KindDate, types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
		return true
	}
	return false
}

// compileNode returns the vector form of e, or nil when some node of e
// has none.
func compileNode(e Expr, memos map[*memoized]*vmemo) vnode {
	if !batchFamily(e.Type()) {
		return nil
	}
	sub := func(x Expr) vnode { return compileNode(x, memos) }
	all := func(xs []Expr) ([]vnode, bool) {
		out := make([]vnode, len(xs))
		for i, x := range xs {
			if out[i] = sub(x); out[i] == nil {
				return nil, false
			}
		}
		return out, true
	}
	switch n := e.(type) {
	case *ColumnRef:
		return &vcolumn{index: n.Index, t: n.Typ}
	case *Const:
		if !n.Value.IsNull() && n.Value.Kind() != n.Typ.Kind {
			return nil
		}
		return &vconst{value: n.Value, t: n.Typ}
	case *memoized:
		if m, ok := memos[n]; ok {
			return m
		}
		inner := sub(n.inner)
		if inner == nil {
			return nil
		}
		m := &vmemo{inner: inner}
		memos[n] = m
		return m
	case *Call:
		if n.Fn.Volatile {
			return nil // its calls keep the row-by-row order
		}
		args, ok := all(n.Args)
		if !ok {
			return nil
		}
		return newVcall(n, args)
	case *Cast:
		arg := sub(n.Arg)
		if arg == nil {
			return nil
		}
		return &vcast{orig: n, arg: arg}
	case *And:
		args, ok := all(n.Args)
		if !ok {
			return nil
		}
		return &vlogic{args: args, and: true}
	case *Or:
		args, ok := all(n.Args)
		if !ok {
			return nil
		}
		return &vlogic{args: args}
	case *Not:
		arg := sub(n.Arg)
		if arg == nil {
			return nil
		}
		return &vnot{arg: arg}
	case *IsNull:
		arg := sub(n.Arg)
		if arg == nil {
			return nil
		}
		return &visnull{arg: arg, negate: n.Negate}
	case *Case:
		w := &vcase{t: n.Typ}
		for _, arm := range n.Whens {
			c, r := sub(arm.Cond), sub(arm.Result)
			if c == nil || r == nil || r.typ().Kind != n.Typ.Kind {
				return nil
			}
			w.conds, w.results = append(w.conds, c), append(w.results, r)
		}
		if n.Else != nil {
			if w.els = sub(n.Else); w.els == nil || w.els.typ().Kind != n.Typ.Kind {
				return nil
			}
		}
		return w
	case *Coalesce:
		args, ok := all(n.Args)
		if !ok {
			return nil
		}
		for _, a := range args {
			if a.typ().Kind != n.Typ.Kind {
				return nil
			}
		}
		return &vcoalesce{args: args, t: n.Typ}
	case *In:
		arg := sub(n.Arg)
		list, ok := all(n.List)
		if arg == nil || !ok {
			return nil
		}
		return newVin(arg, list, n.Negate)
	case *regexSubstringConst:
		arg := sub(n.arg)
		if arg == nil || !isStringKind(arg.typ().Kind) {
			return nil
		}
		return &vregexSubstring{arg: arg, re: n.re, t: n.Type()}
	case *numericScale:
		arg := sub(n.arg)
		if arg == nil {
			return nil
		}
		return &vnumericScale{n: n, arg: arg}
	case *numericScaleCompare:
		scale := sub(n.scale)
		if scale == nil {
			return nil
		}
		return &vnumericScaleCompare{n: n, scale: scale.(*vnumericScale)}
	}
	return nil
}

// isStringKind reports whether k is CHAR, VARCHAR or TEXT.
func isStringKind(k types.Kind) bool {
	return k == types.KindChar || k == types.KindVarchar || k == types.KindText
}

// prepare makes v a vector of type t with room for rows 0..n-1, keeping
// what it holds (a node's entries from earlier evaluations on the same
// chunk).
func prepare(v *types.Vector, t types.Type, n int) {
	v.Type = t
	v.Nulls = grow(v.Nulls, n)
	switch t.Kind {
	case types.KindBool, types.KindInt16, types.KindInt32, types.KindInt64,
		types.KindDate, types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
		v.Ints = grow(v.Ints, n)
	case types.KindFloat32, types.KindFloat64:
		v.Floats = grow(v.Floats, n)
	case types.KindNumeric:
		v.Decimals = grow(v.Decimals, n)
	default:
		v.Strs = grow(v.Strs, n)
	}
}

// grow returns s with length n, reusing its array when large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return append(s[:cap(s)], make([]T, n-cap(s))...)
}

// setDatum stores d at row i of v (prepared for v.Type); a non-NULL d of
// another kind than v's makes the caller give up, as the vector could
// not give that kind back.
func setDatum(v *types.Vector, i int, d types.Datum) error {
	if d.IsNull() {
		v.Nulls[i] = true
		return nil
	}
	if d.Kind() != v.Type.Kind {
		return errBatchGiveUp
	}
	v.Nulls[i] = false
	switch d.Kind() {
	case types.KindBool:
		v.Ints[i] = boolInt(d.Bool())
	case types.KindInt16, types.KindInt32, types.KindInt64:
		v.Ints[i] = d.Int64()
	case types.KindDate:
		v.Ints[i] = int64(d.Date())
	case types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
		v.Ints[i] = d.Micros()
	case types.KindFloat32, types.KindFloat64:
		v.Floats[i] = d.Float64()
	case types.KindNumeric:
		v.Decimals[i] = d.Decimal()
	case types.KindChar, types.KindVarchar, types.KindText:
		v.Strs[i] = d.Str()
	default:
		return errBatchGiveUp
	}
	return nil
}

// copyEntry sets row i of dst to row i of src, both of one kind.
func copyEntry(dst, src *types.Vector, i int) {
	if dst.Nulls[i] = src.Nulls[i]; dst.Nulls[i] {
		return
	}
	switch {
	case dst.Ints != nil:
		dst.Ints[i] = src.Ints[i]
	case dst.Strs != nil:
		dst.Strs[i] = src.Strs[i]
	case dst.Floats != nil:
		dst.Floats[i] = src.Floats[i]
	case dst.Decimals != nil:
		dst.Decimals[i] = src.Decimals[i]
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// vcolumn is a ColumnRef: the chunk's column itself.
type vcolumn struct {
	index int
	t     types.Type
}

func (c *vcolumn) typ() types.Type { return c.t }

func (c *vcolumn) eval(b *Batch, _ []int) (*types.Vector, error) {
	if c.index >= len(b.chunk.Cols) {
		return nil, errBatchGiveUp
	}
	v := &b.chunk.Cols[c.index]
	if v.Type.Kind != c.t.Kind {
		return nil, errBatchGiveUp // Eval gives the column's kind
	}
	return v, nil
}

// vconst is a Const; calls read a constant argument's value directly.
type vconst struct {
	value types.Datum
	t     types.Type
	out   types.Vector
}

func (c *vconst) typ() types.Type { return c.t }

func (c *vconst) eval(b *Batch, sel []int) (*types.Vector, error) {
	prepare(&c.out, c.t, b.n)
	for _, i := range sel {
		if err := setDatum(&c.out, i, c.value); err != nil {
			return nil, err
		}
	}
	return &c.out, nil
}

// vmemo is a shared sub-expression: each row is computed at most once per
// chunk.
type vmemo struct {
	inner vnode
	gen   uint64
	done  []bool
	vec   *types.Vector
	sub   []int
}

func (m *vmemo) typ() types.Type { return m.inner.typ() }

func (m *vmemo) eval(b *Batch, sel []int) (*types.Vector, error) {
	if m.gen != b.gen {
		m.gen, m.vec = b.gen, nil
		m.done = grow(m.done, b.n)
		clear(m.done)
	}
	sub := m.sub[:0]
	for _, i := range sel {
		if !m.done[i] {
			sub = append(sub, i)
		}
	}
	m.sub = sub
	if len(sub) == 0 && m.vec != nil {
		return m.vec, nil
	}
	v, err := m.inner.eval(b, sub)
	if err != nil {
		return nil, err
	}
	for _, i := range sub {
		m.done[i] = true
	}
	m.vec = v
	return v, nil
}

// vcall is a Call: the arguments left to right, a strict function's
// later arguments only on the rows where the earlier ones are not NULL,
// then the function's kernel, or the function per row.
type vcall struct {
	orig   *Call
	args   []vnode
	consts []types.Datum // the value of a constant argument
	isLit  []bool        // args[k] is a constant (not evaluated)
	kernel kernel        // nil: Fn.Eval per row
	t      types.Type
	out    types.Vector
	vecs   []*types.Vector
	datums []types.Datum
	sub    []int
}

func newVcall(c *Call, args []vnode) *vcall {
	n := &vcall{orig: c, args: args, t: c.Typ, consts: make([]types.Datum, len(args)), isLit: make([]bool, len(args)),
		vecs: make([]*types.Vector, len(args)), datums: make([]types.Datum, len(args))}
	nullLit := false
	for k, a := range args {
		if lit, ok := a.(*vconst); ok {
			n.consts[k], n.isLit[k] = lit.value, true
			nullLit = nullLit || lit.value.IsNull()
		}
	}
	// A kernel takes constants that are not NULL (with a NULL one, every
	// row of a strict call is NULL before the function).
	if c.Fn.Strict && !nullLit {
		if f := kernels[c.Fn]; f != nil {
			n.kernel = f(n)
		}
	}
	return n
}

func (c *vcall) typ() types.Type { return c.t }

func (c *vcall) eval(b *Batch, sel []int) (*types.Vector, error) {
	prepare(&c.out, c.t, b.n)
	strict := c.orig.Fn.Strict
	sub := append(c.sub[:0], sel...)
	c.sub = sub
	for k, a := range c.args {
		if c.isLit[k] {
			c.vecs[k] = nil
			if strict && c.consts[k].IsNull() {
				sub = sub[:0]
			}
			continue
		}
		v, err := a.eval(b, sub)
		if err != nil {
			return nil, err
		}
		c.vecs[k] = v
		if strict {
			sub = keepNonNull(sub, v)
		}
	}
	if strict && len(sub) < len(sel) {
		for _, i := range sel {
			c.out.Nulls[i] = true // overwritten below where computed
		}
	}
	if c.kernel != nil {
		return &c.out, c.kernel(b, &c.out, c.vecs, sub)
	}
	for _, i := range sub {
		for k := range c.args {
			if c.isLit[k] {
				c.datums[k] = c.consts[k]
			} else {
				c.datums[k] = c.vecs[k].Get(i)
			}
		}
		d, err := c.orig.Fn.Eval(b.ctx, c.datums[:len(c.datums):len(c.datums)])
		if err != nil {
			return nil, err
		}
		if err := setDatum(&c.out, i, d); err != nil {
			return nil, err
		}
	}
	return &c.out, nil
}

// keepNonNull keeps the rows of sel where v is not NULL, in place.
func keepNonNull(sel []int, v *types.Vector) []int {
	out := sel[:0]
	for _, i := range sel {
		if !v.Nulls[i] {
			out = append(out, i)
		}
	}
	return out
}

// vcast is a Cast: a VARCHAR or TEXT column cast to TEXT or VARCHAR
// without a length is the same strings (castStringFast), checked and
// shared, not copied; any other cast is types.Cast per row.
type vcast struct {
	orig *Cast
	arg  vnode
	out  types.Vector
	view types.Vector // the argument's vector under the target type
}

func (c *vcast) typ() types.Type { return c.orig.To }

func (c *vcast) eval(b *Batch, sel []int) (*types.Vector, error) {
	v, err := c.arg.eval(b, sel)
	if err != nil {
		return nil, err
	}
	to := c.orig.To
	if k := v.Type.Kind; (k == types.KindVarchar || k == types.KindText) &&
		(to.Kind == types.KindText || to.Kind == types.KindVarchar && to.Length == 0) {
		for _, i := range sel {
			if !v.Nulls[i] && !validText(v.Strs[i]) {
				return nil, errBatchGiveUp // types.Cast reports it
			}
		}
		c.view = *v
		c.view.Type = to
		return &c.view, nil
	}
	prepare(&c.out, to, b.n)
	cc := types.CastContext{Loc: b.ctx.Location(), Explicit: c.orig.Explicit}
	for _, i := range sel {
		if v.Nulls[i] {
			c.out.Nulls[i] = true
			continue
		}
		d, err := types.Cast(v.Get(i), to, cc)
		if err != nil {
			return nil, err
		}
		if err := setDatum(&c.out, i, d); err != nil {
			return nil, err
		}
	}
	return &c.out, nil
}

// validText is castStringFast's check: valid UTF-8 without NUL bytes.
func validText(s string) bool { return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 }

// vlogic is AND (and) or OR: each argument on the rows the ones before
// left undecided (neither a FALSE for AND nor a TRUE for OR).
type vlogic struct {
	args []vnode
	and  bool
	out  types.Vector
	sub  []int
}

func (l *vlogic) typ() types.Type { return types.Bool }

func (l *vlogic) eval(b *Batch, sel []int) (*types.Vector, error) {
	prepare(&l.out, types.Bool, b.n)
	out := &l.out
	for _, i := range sel {
		out.Nulls[i] = false // a NULL seen so far
	}
	decided := boolInt(!l.and) // FALSE decides AND, TRUE decides OR
	sub := append(l.sub[:0], sel...)
	l.sub = sub
	for _, a := range l.args {
		if len(sub) == 0 {
			break
		}
		v, err := a.eval(b, sub)
		if err != nil {
			return nil, err
		}
		keep := sub[:0]
		for _, i := range sub {
			switch {
			case v.Nulls[i]:
				out.Nulls[i] = true
				keep = append(keep, i)
			case v.Ints[i] == decided:
				out.Nulls[i], out.Ints[i] = false, decided
			default:
				keep = append(keep, i)
			}
		}
		sub = keep
	}
	for _, i := range sub {
		out.Ints[i] = 1 - decided
	}
	return out, nil
}

// vnot is NOT.
type vnot struct {
	arg vnode
	out types.Vector
}

func (n *vnot) typ() types.Type { return types.Bool }

func (n *vnot) eval(b *Batch, sel []int) (*types.Vector, error) {
	v, err := n.arg.eval(b, sel)
	if err != nil {
		return nil, err
	}
	prepare(&n.out, types.Bool, b.n)
	for _, i := range sel {
		n.out.Nulls[i] = v.Nulls[i]
		n.out.Ints[i] = 1 - v.Ints[i]
	}
	return &n.out, nil
}

// visnull is IS [NOT] NULL.
type visnull struct {
	arg    vnode
	negate bool
	out    types.Vector
}

func (n *visnull) typ() types.Type { return types.Bool }

func (n *visnull) eval(b *Batch, sel []int) (*types.Vector, error) {
	v, err := n.arg.eval(b, sel)
	if err != nil {
		return nil, err
	}
	prepare(&n.out, types.Bool, b.n)
	for _, i := range sel {
		n.out.Nulls[i] = false
		n.out.Ints[i] = boolInt(v.Nulls[i] != n.negate)
	}
	return &n.out, nil
}

// vcase is a searched CASE: each condition on the rows no earlier arm
// took, each result on the rows its condition took.
type vcase struct {
	conds, results []vnode
	els            vnode
	t              types.Type
	out            types.Vector
	rest, take     []int
}

func (c *vcase) typ() types.Type { return c.t }

func (c *vcase) eval(b *Batch, sel []int) (*types.Vector, error) {
	prepare(&c.out, c.t, b.n)
	rest := append(c.rest[:0], sel...)
	c.rest = rest
	for k, cond := range c.conds {
		if len(rest) == 0 {
			break
		}
		v, err := cond.eval(b, rest)
		if err != nil {
			return nil, err
		}
		take, keep := c.take[:0], rest[:0]
		for _, i := range rest {
			if !v.Nulls[i] && v.Ints[i] != 0 {
				take = append(take, i)
			} else {
				keep = append(keep, i)
			}
		}
		c.take, rest = take, keep
		if len(take) == 0 {
			continue
		}
		r, err := c.results[k].eval(b, take)
		if err != nil {
			return nil, err
		}
		for _, i := range take {
			copyEntry(&c.out, r, i)
		}
	}
	if len(rest) == 0 {
		return &c.out, nil
	}
	if c.els == nil {
		for _, i := range rest {
			c.out.Nulls[i] = true
		}
		return &c.out, nil
	}
	r, err := c.els.eval(b, rest)
	if err != nil {
		return nil, err
	}
	for _, i := range rest {
		copyEntry(&c.out, r, i)
	}
	return &c.out, nil
}

// vcoalesce is COALESCE: each argument on the rows still NULL.
type vcoalesce struct {
	args []vnode
	t    types.Type
	out  types.Vector
	rest []int
}

func (c *vcoalesce) typ() types.Type { return c.t }

func (c *vcoalesce) eval(b *Batch, sel []int) (*types.Vector, error) {
	prepare(&c.out, c.t, b.n)
	for _, i := range sel {
		c.out.Nulls[i] = true
	}
	rest := append(c.rest[:0], sel...)
	c.rest = rest
	for _, a := range c.args {
		if len(rest) == 0 {
			break
		}
		v, err := a.eval(b, rest)
		if err != nil {
			return nil, err
		}
		keep := rest[:0]
		for _, i := range rest {
			if v.Nulls[i] {
				keep = append(keep, i)
			} else {
				copyEntry(&c.out, v, i)
			}
		}
		rest = keep
	}
	return &c.out, nil
}

// vin is [NOT] IN: the argument, then each list element on the rows not
// yet found equal; a list of string constants is looked up directly.
type vin struct {
	arg    vnode
	list   []vnode
	negate bool
	// strs are the elements when all are non-NULL VARCHAR or TEXT
	// constants and the argument is VARCHAR or TEXT (string equality is
	// then Compare's).
	strs   []string
	strSet map[string]struct{}
	out    types.Vector
	rest   []int
}

// inSetMin is the list length from which vin looks strings up in a map.
const inSetMin = 8

func newVin(arg vnode, list []vnode, negate bool) *vin {
	n := &vin{arg: arg, list: list, negate: negate}
	if k := arg.typ().Kind; k != types.KindVarchar && k != types.KindText {
		return n
	}
	var strs []string
	for _, e := range list {
		c, ok := e.(*vconst)
		if !ok || c.value.IsNull() || (c.value.Kind() != types.KindVarchar && c.value.Kind() != types.KindText) {
			return n
		}
		strs = append(strs, c.value.Str())
	}
	n.strs = strs
	if len(strs) >= inSetMin {
		n.strSet = make(map[string]struct{}, len(strs))
		for _, s := range strs {
			n.strSet[s] = struct{}{}
		}
	}
	return n
}

func (n *vin) typ() types.Type { return types.Bool }

func (n *vin) eval(b *Batch, sel []int) (*types.Vector, error) {
	v, err := n.arg.eval(b, sel)
	if err != nil {
		return nil, err
	}
	prepare(&n.out, types.Bool, b.n)
	out := &n.out
	found, notFound := boolInt(!n.negate), boolInt(n.negate)
	if n.strs != nil {
		for _, i := range sel {
			if out.Nulls[i] = v.Nulls[i]; out.Nulls[i] {
				continue
			}
			out.Ints[i] = notFound
			s := v.Strs[i]
			if n.strSet != nil {
				if _, ok := n.strSet[s]; ok {
					out.Ints[i] = found
				}
				continue
			}
			for _, x := range n.strs {
				if s == x {
					out.Ints[i] = found
					break
				}
			}
		}
		return out, nil
	}
	rest := n.rest[:0]
	for _, i := range sel {
		if out.Nulls[i] = v.Nulls[i]; !out.Nulls[i] {
			rest = append(rest, i)
		}
	}
	n.rest = rest
	// out.Nulls of a row in rest records a NULL element met so far.
	for _, e := range n.list {
		if len(rest) == 0 {
			break
		}
		x, err := e.eval(b, rest)
		if err != nil {
			return nil, err
		}
		keep := rest[:0]
		for _, i := range rest {
			c, ok := types.CompareSQL(v.Get(i), x.Get(i))
			switch {
			case !ok:
				out.Nulls[i] = true
				keep = append(keep, i)
			case c == 0:
				out.Nulls[i], out.Ints[i] = false, found
			default:
				keep = append(keep, i)
			}
		}
		rest = keep
	}
	for _, i := range rest {
		out.Ints[i] = notFound
	}
	return out, nil
}
