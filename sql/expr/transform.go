package expr

// Children returns e's direct sub-expressions, left to right.
func Children(e Expr) []Expr {
	switch n := e.(type) {
	case *Call:
		return n.Args
	case *And:
		return n.Args
	case *Or:
		return n.Args
	case *Not:
		return []Expr{n.Arg}
	case *IsNull:
		return []Expr{n.Arg}
	case *IsDistinctFrom:
		return []Expr{n.Left, n.Right}
	case *Case:
		var out []Expr
		for _, w := range n.Whens {
			out = append(out, w.Cond, w.Result)
		}
		if n.Else != nil {
			out = append(out, n.Else)
		}
		return out
	case *Coalesce:
		return n.Args
	case *NullIf:
		return []Expr{n.Left, n.Right}
	case *In:
		return append([]Expr{n.Arg}, n.List...)
	case *Cast:
		return []Expr{n.Arg}
	}
	return nil
}

// Transform rebuilds e bottom-up: children first, then fn is applied to the
// node rebuilt over the transformed children. fn returns the replacement
// (or its argument unchanged) or an error, which stops the walk. Leaves
// (ColumnRef, Const and node types this package does not know) are passed
// to fn as they are.
func Transform(e Expr, fn func(Expr) (Expr, error)) (Expr, error) {
	kids := Children(e)
	if len(kids) == 0 {
		return fn(e)
	}
	nk := make([]Expr, len(kids))
	for i, k := range kids {
		t, err := Transform(k, fn)
		if err != nil {
			return nil, err
		}
		nk[i] = t
	}
	return fn(WithChildren(e, nk))
}

// WithChildren returns a copy of e with its children replaced by k, in
// the order Children lists them. It panics for a leaf.
func WithChildren(e Expr, k []Expr) Expr {
	switch n := e.(type) {
	case *Call:
		c := *n
		c.Args = k
		return &c
	case *And:
		return &And{Args: k}
	case *Or:
		return &Or{Args: k}
	case *Not:
		return &Not{Arg: k[0]}
	case *IsNull:
		return &IsNull{Arg: k[0], Negate: n.Negate}
	case *IsDistinctFrom:
		return &IsDistinctFrom{Left: k[0], Right: k[1], Negate: n.Negate}
	case *Case:
		c := &Case{Typ: n.Typ, Whens: make([]When, len(n.Whens))}
		for i := range n.Whens {
			c.Whens[i] = When{Cond: k[2*i], Result: k[2*i+1]}
		}
		if n.Else != nil {
			c.Else = k[len(k)-1]
		}
		return c
	case *Coalesce:
		return &Coalesce{Args: k, Typ: n.Typ}
	case *NullIf:
		return &NullIf{Left: k[0], Right: k[1]}
	case *In:
		return &In{Arg: k[0], List: k[1:], Negate: n.Negate}
	case *Cast:
		return &Cast{Arg: k[0], To: n.To, Explicit: n.Explicit}
	}
	panic("expr: withChildren of a leaf")
}

// Walk calls fn on e and every sub-expression, parents before children,
// until fn returns false.
func Walk(e Expr, fn func(Expr) bool) {
	if !fn(e) {
		return
	}
	for _, k := range Children(e) {
		Walk(k, fn)
	}
}

// IsConstant reports whether e depends on no input column and calls no
// volatile function, so it can be folded once.
func IsConstant(e Expr) bool {
	constant := true
	Walk(e, func(x Expr) bool {
		switch n := x.(type) {
		case *ColumnRef:
			constant = false
		case *Call:
			if n.Fn.Volatile {
				constant = false
			}
		case *Const:
		default:
			if len(Children(x)) == 0 {
				constant = false // a leaf kind this package does not know
			}
		}
		return constant
	})
	return constant
}
