package binder

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// nodeLoc is the location of a parse node (its own Location field), or,
// for the node kinds without one (a JoinExpr, a RangeSubselect, a String),
// the first location inside it; -1 when there is none at all. Errors use
// it for their position.
func nodeLoc(n *pg_query.Node) int32 {
	if n == nil {
		return -1
	}
	return msgLoc(n.ProtoReflect())
}

// deepLoc is the smallest location in a parse subtree: the start of the
// construct, as nearly as the tree records it.
func deepLoc(m proto.Message) int32 {
	if m == nil || !m.ProtoReflect().IsValid() {
		return -1
	}
	return minLoc(m.ProtoReflect())
}

func msgLoc(m protoreflect.Message) int32 {
	if !m.IsValid() {
		return -1
	}
	// A Node is a oneof wrapper: look at the message it holds.
	if n, ok := m.Interface().(*pg_query.Node); ok {
		if n.GetNode() == nil {
			return -1
		}
		var inner protoreflect.Message
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			if fd.Message() != nil {
				inner = v.Message()
			}
			return false
		})
		if inner == nil {
			return -1
		}
		m = inner
	}
	if fd := m.Descriptor().Fields().ByName("location"); fd != nil {
		if l := int32(m.Get(fd).Int()); l >= 0 {
			return l
		}
	}
	return minLoc(m)
}

func minLoc(m protoreflect.Message) int32 {
	best := int32(-1)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		var l int32 = -1
		switch {
		case fd.Name() == "location" && fd.Kind() == protoreflect.Int32Kind:
			l = int32(v.Int())
		case fd.IsList() && fd.Message() != nil:
			list := v.List()
			for i := 0; i < list.Len(); i++ {
				if x := minLoc(list.Get(i).Message()); x >= 0 && (l < 0 || x < l) {
					l = x
				}
			}
		case !fd.IsMap() && fd.Message() != nil:
			l = minLoc(v.Message())
		}
		if l >= 0 && (best < 0 || l < best) {
			best = l
		}
		return true
	})
	return best
}

// Location is the position an error gives parse node n, as PostgreSQL's
// exprLocation does: the start of the construct (the smallest location
// inside it), -1 when it has none.
func Location(n *pg_query.Node) int32 { return deepLoc(n) }
