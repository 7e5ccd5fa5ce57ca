package mergetree

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/record"
	"github.com/stratadb/strata/table/schema"
)

func testSchema(t *testing.T, engine schema.MergeEngine, aggs map[string]string) (*schema.Schema, schema.Options) {
	opts := map[string]string{"merge-engine": string(engine)}
	for c, fn := range aggs {
		opts["fields."+c+".aggregate-function"] = fn
	}
	s, err := schema.New([]schema.Field{
		{Name: "k", Type: types.Int64}, {Name: "a", Type: types.Int64, Nullable: true}, {Name: "b", Type: types.Text, Nullable: true},
	}, []string{"k"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := schema.ParseOptions(s)
	return s, o
}

func kv(seq int, kind types.RowKind, a any, b any) record.KV {
	row := types.Row{types.NewInt64(1), types.Null, types.Null}
	if a != nil {
		row[1] = types.NewInt64(int64(a.(int)))
	}
	if b != nil {
		row[2] = types.NewText(b.(string))
	}
	return record.KV{Key: []byte{1}, Seq: base.SeqNum(seq), Kind: kind, Row: row}
}

func result(f Func, kvs ...record.KV) string {
	out := MergeSorted(kvs, f, true)
	if len(out) == 0 {
		return "none"
	}
	return out[0].Row.String()
}

func TestEngines(t *testing.T) {
	I, UB, UA, D := types.Insert, types.UpdateBefore, types.UpdateAfter, types.Delete
	for _, tc := range []struct {
		engine schema.MergeEngine
		aggs   map[string]string
		in     []record.KV
		want   string
	}{
		{schema.Deduplicate, nil, []record.KV{kv(1, I, 1, "x"), kv(2, UA, 2, nil)}, "(1, 2, NULL)"},
		{schema.Deduplicate, nil, []record.KV{kv(1, I, 1, "x"), kv(2, D, 1, "x")}, "none"},
		{schema.Deduplicate, nil, []record.KV{kv(1, I, 1, "x"), kv(2, UB, 1, "x")}, "none"}, // a lone -U retracts
		{schema.Deduplicate, nil, []record.KV{kv(1, I, 1, "x"), kv(2, UB, 1, "x"), kv(3, UA, 3, "y")}, "(1, 3, y)"},
		{schema.PartialUpdate, nil, []record.KV{kv(1, I, 1, "x"), kv(2, I, nil, "y")}, "(1, 1, y)"},
		{schema.PartialUpdate, nil, []record.KV{kv(1, I, 1, "x"), kv(2, UB, 1, "x"), kv(3, I, 2, nil)}, "(1, 2, x)"},
		{schema.PartialUpdate, nil, []record.KV{kv(1, I, 1, "x"), kv(2, D, nil, nil), kv(3, I, nil, "z")}, "(1, NULL, z)"},
		{schema.Aggregation, map[string]string{"a": "sum", "b": "last_value"}, []record.KV{kv(1, I, 5, "x"), kv(2, I, 7, "y"), kv(3, UB, 5, "x")}, "(1, 7, NULL)"},
		{schema.Aggregation, map[string]string{"a": "max", "b": "min"}, []record.KV{kv(1, I, 5, "q"), kv(2, I, 9, "b"), kv(3, I, 7, "z")}, "(1, 9, b)"},
		{schema.Aggregation, nil, []record.KV{kv(1, I, 5, "q"), kv(2, I, nil, "r")}, "(1, 5, r)"}, // last_non_null_value
		{schema.FirstRow, nil, []record.KV{kv(1, D, 1, "a"), kv(2, I, 2, "b"), kv(3, I, 3, "c")}, "(1, 2, b)"},
		{schema.FirstRow, nil, []record.KV{kv(1, D, 1, "a")}, "none"},
	} {
		s, o := testSchema(t, tc.engine, tc.aggs)
		if got := result(NewFunc(s, o), tc.in...); got != tc.want {
			t.Errorf("%s %v: got %s, want %s", tc.engine, tc.aggs, got, tc.want)
		}
	}
}

// [remergeable]: merging any split of a key's records, then merging the
// partial results with the rest, equals merging everything at once.
func TestRemergeable(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	kinds := []types.RowKind{types.Insert, types.UpdateAfter, types.Delete, types.UpdateBefore}
	for _, engine := range []schema.MergeEngine{schema.Deduplicate, schema.PartialUpdate, schema.Aggregation, schema.FirstRow} {
		s, o := testSchema(t, engine, map[string]string{"a": "sum", "b": "last_value"})
		f := NewFunc(s, o)
		for trial := 0; trial < 500; trial++ {
			n := 1 + r.Intn(6)
			var in []record.KV
			for i := 0; i < n; i++ {
				var a, b any
				if r.Intn(3) > 0 {
					a = r.Intn(10)
				}
				if r.Intn(3) > 0 {
					b = fmt.Sprint(r.Intn(5))
				}
				kind := kinds[r.Intn(4)]
				rec := kv(i+1, kind, a, b)
				in = append(in, rec)
			}
			normalizeKVs(o, in)
			whole := result(f, in...)
			cut := r.Intn(n + 1)
			first := MergeSorted(append([]record.KV(nil), in[:cut]...), f, false)
			rest := append(first, in[cut:]...)
			if got := result(f, rest...); got != whole {
				t.Fatalf("%s: %v split at %d: %s, whole %s", engine, in, cut, got, whole)
			}
		}
	}
}

// normalizeKVs applies NormalizeInput to the row kinds of kvs.
func normalizeKVs(o schema.Options, kvs []record.KV) {
	kinds := make([]types.RowKind, len(kvs))
	for i := range kvs {
		kinds[i] = kvs[i].Kind
	}
	NormalizeInput(o, kinds)
	for i := range kvs {
		kvs[i].Kind = kinds[i]
	}
}
