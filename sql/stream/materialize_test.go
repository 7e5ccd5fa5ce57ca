package stream

import (
	"sort"
	"strings"
	"testing"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/state/heap"
	"github.com/stratadb/strata/internal/types"
)

// upsertTable is a sink that applies upserts and deletes by key column 1
// (the email), as a primary-key table does.
type upsertTable struct {
	operator.Base
	rows map[string]types.Row
}

func (u *upsertTable) Process(_ int, c *types.Chunk) error {
	for i := range c.Len() {
		r := c.Row(i)
		if k := c.Kind(i); k == types.Delete || k == types.UpdateBefore {
			delete(u.rows, r[1].Str())
		} else {
			u.rows[r[1].Str()] = r
		}
	}
	return nil
}

func (u *upsertTable) String() string {
	var out []string
	for _, r := range u.rows {
		out = append(out, r.String())
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// TestUpsertMaterializer feeds changelogs keyed by id into a sink keyed by
// email: an email that changes A -> B -> A ends with exactly one row for
// A, and a key two ids share survives the retraction of one of them.
func TestUpsertMaterializer(t *testing.T) {
	ts := []types.Type{types.Int64, types.Text}
	row := func(id int64, email string) types.Row { return types.Row{types.NewInt64(id), types.NewText(email)} }
	sink := &upsertTable{rows: map[string]types.Row{}}
	m := &UpsertMaterializer{Inner: sink, Types: ts, KeyCols: []int{1}}
	if err := m.Open(newContext(t, heap.New(), nil, 0)); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		changes []struct {
			k types.RowKind
			r types.Row
		}
		want string
	}{}
	add := func(want string, kv ...any) {
		s := struct {
			changes []struct {
				k types.RowKind
				r types.Row
			}
			want string
		}{want: want}
		for i := 0; i < len(kv); i += 2 {
			s.changes = append(s.changes, struct {
				k types.RowKind
				r types.Row
			}{kv[i].(types.RowKind), kv[i+1].(types.Row)})
		}
		steps = append(steps, s)
	}
	add("(1, A)", types.Insert, row(1, "A"))
	add("(1, B)", types.UpdateBefore, row(1, "A"), types.UpdateAfter, row(1, "B"))
	add("(1, A)", types.UpdateBefore, row(1, "B"), types.UpdateAfter, row(1, "A"))
	// id 2 also takes A: the sink shows the newest; retracting id 2 brings
	// id 1 back, retracting id 1 then deletes A.
	add("(2, A)", types.Insert, row(2, "A"))
	add("(1, A)", types.Delete, row(2, "A"))
	add("", types.Delete, row(1, "A"))
	// A retraction of a row never seen changes nothing.
	add("", types.Delete, row(9, "Z"))
	for i, s := range steps {
		c := types.NewChunk(ts, len(s.changes))
		for _, ch := range s.changes {
			c.Append(ch.k, ch.r)
		}
		if err := m.Process(0, c); err != nil {
			t.Fatal(err)
		}
		if got := sink.String(); got != s.want {
			t.Fatalf("step %d: sink holds %q, want %q", i, got, s.want)
		}
	}
}
