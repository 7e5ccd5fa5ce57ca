package expr

import (
	"strings"
	"unicode/utf8"

	"github.com/stratadb/strata/internal/types"
)

// Vector kernels (invariant batch-same-result, batch.go): for a few
// functions, the loop over a chunk's rows that a Batch runs on the typed
// slices of the argument vectors, computing what Func.Eval computes on
// each row's datums. A kernel is called for a strict function on rows
// where no argument is NULL (the call has set the others to NULL) and
// must set every one of them, NULL flag included. A constant argument's
// vector is nil; its value, never NULL, is in the call's consts.
type kernel func(b *Batch, out *types.Vector, args []*types.Vector, sel []int) error

// kernelFactory returns the kernel for call c, or nil when its arguments
// are of a shape the kernel does not take (the function is then called
// per row).
type kernelFactory func(c *vcall) kernel

// kernels maps function overloads to their kernel factories; filled once
// the registry is built, read only afterwards.
var kernels = map[*Func]kernelFactory{}

func init() {
	overloads := func(name string, params ...types.Kind) []*Func {
		var out []*Func
		for _, f := range Builtins.byName[name] {
			if !f.Variadic && sameKinds(f.Params, params) {
				out = append(out, f)
			}
		}
		if len(out) == 0 {
			panic("expr: no overload " + name + " for a vector kernel")
		}
		return out
	}
	add := func(fs []*Func, k kernelFactory) {
		for _, f := range fs {
			kernels[f] = k
		}
	}
	add(overloads("lower", kText), stringMap(strings.ToLower))
	add(overloads("upper", kText), stringMap(strings.ToUpper))
	for _, name := range []string{"length", "char_length", "character_length"} {
		add(overloads(name, kText), stringInt(func(s string) int64 { return int64(utf8.RuneCountInString(s)) }))
	}
	add(overloads("octet_length", kText), stringInt(func(s string) int64 { return int64(len(s)) }))
	add(overloads("split_part", kText, kText, kInt), splitPartKernel)
	for f, test := range compareTests {
		add([]*Func{f}, compareKernel(test))
	}
}

// stringMap is the kernel of a TEXT function of one TEXT argument that
// cannot fail.
func stringMap(f func(string) string) kernelFactory {
	return func(c *vcall) kernel {
		if c.isLit[0] {
			return nil
		}
		return func(_ *Batch, out *types.Vector, args []*types.Vector, sel []int) error {
			in := args[0]
			for _, i := range sel {
				out.Nulls[i] = false
				out.Strs[i] = f(in.Strs[i])
			}
			return nil
		}
	}
}

// stringInt is the kernel of an integer function of one TEXT argument
// that cannot fail.
func stringInt(f func(string) int64) kernelFactory {
	return func(c *vcall) kernel {
		if c.isLit[0] {
			return nil
		}
		return func(_ *Batch, out *types.Vector, args []*types.Vector, sel []int) error {
			in := args[0]
			for _, i := range sel {
				out.Nulls[i] = false
				out.Ints[i] = f(in.Strs[i])
			}
			return nil
		}
	}
}

// splitPartKernel takes split_part with a constant delimiter and field.
func splitPartKernel(c *vcall) kernel {
	if c.isLit[0] || !c.isLit[1] || !c.isLit[2] {
		return nil
	}
	d, n := c.consts[1].Str(), c.consts[2].Int64()
	return func(_ *Batch, out *types.Vector, args []*types.Vector, sel []int) error {
		if n == 0 && len(sel) > 0 {
			return errBatchGiveUp // each row raises the error
		}
		in := args[0]
		for _, i := range sel {
			out.Nulls[i] = false
			out.Strs[i] = splitPartStr(in.Strs[i], d, n)
		}
		return nil
	}
}

// intKind reports whether values of kind k sit in a vector's Ints and
// compare as those integers (types.Compare).
func intKind(k types.Kind) bool {
	switch k {
	case types.KindBool, types.KindInt16, types.KindInt32, types.KindInt64,
		types.KindDate, types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
		return true
	}
	return false
}

// intPayload is the integer of a non-NULL datum of an intKind.
func intPayload(d types.Datum) int64 {
	switch d.Kind() {
	case types.KindBool:
		return boolInt(d.Bool())
	case types.KindDate:
		return int64(d.Date())
	case types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
		return d.Micros()
	}
	return d.Int64()
}

// compareKernel takes a comparison of two values of one integer kind, or
// of VARCHAR or TEXT (CHAR compares without its trailing blanks), either
// of them possibly constant.
func compareKernel(test func(int) bool) kernelFactory {
	return func(c *vcall) kernel {
		k0, k1 := c.args[0].typ().Kind, c.args[1].typ().Kind
		if c.isLit[0] && c.isLit[1] {
			return nil
		}
		switch {
		case intKind(k0) && k0 == k1:
			return compareInts(c, test)
		case (k0 == types.KindVarchar || k0 == types.KindText) && (k1 == types.KindVarchar || k1 == types.KindText):
			return compareStrs(c, test)
		}
		return nil
	}
}

func compareInts(c *vcall, test func(int) bool) kernel {
	var lit int64
	litAt := -1
	for k := range 2 {
		if c.isLit[k] {
			lit, litAt = intPayload(c.consts[k]), k
		}
	}
	var table [3]int64 // test(-1), test(0), test(1)
	for k := range table {
		table[k] = boolInt(test(k - 1))
	}
	return func(_ *Batch, out *types.Vector, args []*types.Vector, sel []int) error {
		for _, i := range sel {
			var a, b int64
			switch litAt {
			case 0:
				a, b = lit, args[1].Ints[i]
			case 1:
				a, b = args[0].Ints[i], lit
			default:
				a, b = args[0].Ints[i], args[1].Ints[i]
			}
			c := 1
			if a < b {
				c = 0
			} else if a > b {
				c = 2
			}
			out.Nulls[i] = false
			out.Ints[i] = table[c]
		}
		return nil
	}
}

func compareStrs(c *vcall, test func(int) bool) kernel {
	var lit string
	litAt := -1
	for k := range 2 {
		if c.isLit[k] {
			lit, litAt = c.consts[k].Str(), k
		}
	}
	eq, lt, gt := boolInt(test(0)), boolInt(test(-1)), boolInt(test(1))
	return func(_ *Batch, out *types.Vector, args []*types.Vector, sel []int) error {
		for _, i := range sel {
			var a, b string
			switch litAt {
			case 0:
				a, b = lit, args[1].Strs[i]
			case 1:
				a, b = args[0].Strs[i], lit
			default:
				a, b = args[0].Strs[i], args[1].Strs[i]
			}
			out.Nulls[i] = false
			switch {
			case a == b:
				out.Ints[i] = eq
			case a < b:
				out.Ints[i] = lt
			default:
				out.Ints[i] = gt
			}
		}
		return nil
	}
}

// vregexSubstring is regexSubstringConst: substring(s FROM p), p a
// constant pattern.
type vregexSubstring struct {
	arg vnode
	re  *compiledRegex
	t   types.Type
	out types.Vector
}

func (n *vregexSubstring) typ() types.Type { return n.t }

func (n *vregexSubstring) eval(b *Batch, sel []int) (*types.Vector, error) {
	v, err := n.arg.eval(b, sel)
	if err != nil {
		return nil, err
	}
	prepare(&n.out, n.t, b.n)
	for _, i := range sel {
		if v.Nulls[i] {
			n.out.Nulls[i] = true
			continue
		}
		s, ok := regexSubstringStr(v.Strs[i], n.re)
		n.out.Nulls[i], n.out.Strs[i] = !ok, s
	}
	return &n.out, nil
}

// vnumericScale is numericScale: a NUMERIC constant times an integer.
type vnumericScale struct {
	n   *numericScale
	arg vnode
	out types.Vector
}

func (s *vnumericScale) typ() types.Type { return s.n.Type() }

// each calls f for the rows of sel where the integer is not NULL, with
// the product as evalSmall gives it; the others are NULL in out.
func (s *vnumericScale) each(b *Batch, sel []int, out *types.Vector, f func(i int, r smallDec, x int64, ok bool) error) error {
	v, err := s.arg.eval(b, sel)
	if err != nil {
		return err
	}
	for _, i := range sel {
		if v.Nulls[i] {
			out.Nulls[i] = true
			continue
		}
		x := v.Ints[i]
		r, ok := smallArith('*', s.n.c, smallOfInt(x))
		if err := f(i, r, x, ok); err != nil {
			return err
		}
	}
	return nil
}

func (s *vnumericScale) eval(b *Batch, sel []int) (*types.Vector, error) {
	prepare(&s.out, s.typ(), b.n)
	err := s.each(b, sel, &s.out, func(i int, r smallDec, x int64, ok bool) error {
		d, err := s.n.product(r, x, ok)
		if err != nil {
			return err
		}
		return setDatum(&s.out, i, d)
	})
	if err != nil {
		return nil, err
	}
	return &s.out, nil
}

// vnumericScaleCompare is numericScaleCompare: such a product compared
// with a NUMERIC constant.
type vnumericScaleCompare struct {
	n     *numericScaleCompare
	scale *vnumericScale
	out   types.Vector
}

func (s *vnumericScaleCompare) typ() types.Type { return s.n.Type() }

func (s *vnumericScaleCompare) eval(b *Batch, sel []int) (*types.Vector, error) {
	prepare(&s.out, s.typ(), b.n)
	err := s.scale.each(b, sel, &s.out, func(i int, r smallDec, x int64, ok bool) error {
		d, err := s.n.compare(r, x, ok)
		if err != nil {
			return err
		}
		return setDatum(&s.out, i, d)
	})
	if err != nil {
		return nil, err
	}
	return &s.out, nil
}
