package planner

import (
	"fmt"
	"reflect"

	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
)

// Sub-plan reuse. A query that names the same subquery twice (Nexmark q5
// computes its hopping-window counts once for the rows and once for their
// maximum) or reads one table on both sides of a join would otherwise run
// that subtree twice: two sources reading the same changelog, two window
// expansions, two aggregates with the same state. The builder remembers
// every plan node it built with its output stage, and a node deeply equal
// to one built before gets that stage: its vertex then feeds every
// consumer (a vertex's output goes to all of its out edges, in one order,
// barriers included). Flink's planner does the same by default
// (table.optimizer.reuse-sub-plan-enabled).
//
// A subtree that calls a volatile function (random(), now(),
// current_setting) is never shared: run twice, each copy gives its own
// values, and sharing would make them equal.
//
// Invariant reuse-equal-output: a shared stage is the stage of a subtree
// deeply equal to the one asking for it (same relations, expressions,
// types and options), whose operators are deterministic functions of
// their input, so its output is what a second copy would emit.

// builtNode is a plan node built, with its output stage.
type builtNode struct {
	n plan.Node
	s stage
}

// reuse returns the stage of a node built before that is deeply equal to
// n, unless n calls a volatile function.
func (b *builder) reuse(n plan.Node) (stage, bool) {
	for _, e := range b.built {
		if reflect.TypeOf(e.n) == reflect.TypeOf(n) && reflect.DeepEqual(e.n, n) && !volatile(n) {
			b.explain = append(b.explain, fmt.Sprintf("(%s read again)", e.s.vertex))
			return e.s, true
		}
	}
	return stage{}, false
}

// remember records that n was built as s.
func (b *builder) remember(n plan.Node, s stage) {
	b.built = append(b.built, builtNode{n: n, s: s})
}

var funcType = reflect.TypeFor[*expr.Func]()

// volatile reports whether v (a plan node, or any value reachable from
// it) holds a volatile function.
func volatile(v any) bool {
	seen := map[uintptr]bool{}
	var walk func(r reflect.Value) bool
	walk = func(r reflect.Value) bool {
		switch r.Kind() {
		case reflect.Pointer:
			if r.IsNil() || seen[r.Pointer()] {
				return false
			}
			seen[r.Pointer()] = true
			if r.Type() == funcType {
				// Through a field, unexported or not: read, not Interface.
				return r.Elem().FieldByName("Volatile").Bool()
			}
			return walk(r.Elem())
		case reflect.Interface:
			return !r.IsNil() && walk(r.Elem())
		case reflect.Struct:
			for i := range r.NumField() {
				if walk(r.Field(i)) {
					return true
				}
			}
		case reflect.Slice, reflect.Array:
			for i := range r.Len() {
				if walk(r.Index(i)) {
					return true
				}
			}
		case reflect.Map:
			it := r.MapRange()
			for it.Next() {
				if walk(it.Value()) {
					return true
				}
			}
		}
		return false
	}
	return walk(reflect.ValueOf(v))
}
