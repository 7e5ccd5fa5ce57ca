package expr

import (
	"github.com/stratadb/strata/internal/types"
)

// Comparison operators =, <>, <, <=, >, >= for every type, on two
// arguments of one kind (the binder casts mixed operands to a common type
// first). NULL gives NULL (the operators are strict); the order is
// types.Compare's, which is Postgres's.

var comparable = []types.Kind{
	types.KindBool, types.KindInt16, types.KindInt32, types.KindInt64,
	types.KindFloat32, types.KindFloat64, types.KindNumeric,
	types.KindChar, types.KindVarchar, types.KindText, types.KindUUID, types.KindBytea,
	types.KindDate, types.KindTime, types.KindTimestamp, types.KindTimestampTZ,
	types.KindInterval, types.KindJSONB,
}

// compareTests maps each comparison overload to its test of a
// types.Compare result (for the vector kernels, batch_kernels.go); filled
// as the registry is built and read only afterwards.
var compareTests = map[*Func]func(int) bool{}

func registerComparison(r *Registry) {
	ops := []struct {
		name string
		test func(c int) bool
	}{
		{"=", func(c int) bool { return c == 0 }},
		{"<>", func(c int) bool { return c != 0 }},
		{"<", func(c int) bool { return c < 0 }},
		{"<=", func(c int) bool { return c <= 0 }},
		{">", func(c int) bool { return c > 0 }},
		{">=", func(c int) bool { return c >= 0 }},
	}
	for _, op := range ops {
		op := op
		// REAL against DOUBLE PRECISION compares as DOUBLE PRECISION
		// (float48eq and friends), so 0.1::real = 0.1 is false.
		for _, ks := range [][2]types.Kind{{types.KindFloat32, types.KindFloat64}, {types.KindFloat64, types.KindFloat32}} {
			f := &Func{
				Name: op.name, Params: ks[:], Infix: true, Strict: true, ResultKind: types.KindBool,
				Eval: func(_ *Context, a []types.Datum) (types.Datum, error) {
					return types.NewBool(op.test(types.Compare(a[0], a[1]))), nil
				},
			}
			compareTests[f] = op.test
			r.Add(f)
		}
		for _, k := range comparable {
			f := &Func{
				Name: op.name, Params: []types.Kind{k, k}, Infix: true, Strict: true, ResultKind: types.KindBool,
				Eval: func(_ *Context, a []types.Datum) (types.Datum, error) {
					return types.NewBool(op.test(types.Compare(a[0], a[1]))), nil
				},
			}
			if k == types.KindNumeric {
				numericCompares[f] = op.test
			}
			compareTests[f] = op.test
			r.Add(f)
		}
	}
}
