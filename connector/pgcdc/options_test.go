package pgcdc_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stratadb/strata/connector/pgcdc"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

func TestParseOptions(t *testing.T) {
	good := map[string]string{"connector": "postgres-cdc", "hostname": "db.local", "username": "u", "password": "p w'\\",
		"database": "shop", "slot": "strata_slot", "publication": "strata_pub"}
	o, err := pgcdc.ParseOptions(good)
	if err != nil {
		t.Fatal(err)
	}
	want := pgcdc.Options{Hostname: "db.local", Port: 5432, Username: "u", Password: "p w'\\", Database: "shop", Slot: "strata_slot", Publication: "strata_pub"}
	if o != want {
		t.Fatalf("got %+v, want %+v", o, want)
	}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for kk, vv := range good {
			m[kk] = vv
		}
		if v == "<none>" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	if o, err := pgcdc.ParseOptions(with("port", "6543")); err != nil || o.Port != 6543 {
		t.Fatalf("port: %+v %v", o, err)
	}
	for _, tc := range []struct {
		opts map[string]string
		say  string
	}{
		{with("connector", "kafka"), `option "connector": "kafka" is not postgres-cdc`},
		{with("port", "0"), `option "port": "0" is not a port number`},
		{with("port", "x"), `option "port": "x" is not a port number`},
		{with("hostname", "<none>"), `option "hostname" is required`},
		{with("slot", "<none>"), `option "slot" is required`},
		{with("slot", "Bad-Slot"), `option "slot": "Bad-Slot" must be`},
		{with("publication", "a b"), `option "publication": "a b" must be`},
		{with("tables", "x"), `unknown option "tables"`},
		{with("errors", "skip"), `option "errors" is set per table: CREATE TABLE ... FROM source TABLE 'schema.table' WITH (errors = 'skip')`},
	} {
		_, err := pgcdc.ParseOptions(tc.opts)
		if !errors.Is(err, base.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.say) {
			t.Fatalf("%v: error %v, want one saying %q", tc.opts, err, tc.say)
		}
	}
}

func TestLayout(t *testing.T) {
	a := pgcdc.Table{Upstream: "s.a", Name: "a", Columns: []catalog.Column{col("x", types.Int64, true), col("y", types.Text, false)}}
	b := pgcdc.Table{Upstream: "b", Name: "b", Columns: []catalog.Column{col("z", types.Bool, false)}}
	l, err := pgcdc.NewLayout([]pgcdc.Table{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Types(); len(got) != 4 || got[0] != pgcdc.TagType || got[1] != types.Int64 || got[2] != types.Text || got[3] != types.Bool {
		t.Fatalf("types %v", got)
	}
	if off, w := l.Span(1); off != 3 || w != 1 {
		t.Fatalf("span of b: %d, %d", off, w)
	}
	if i, ok := l.Index("b"); !ok || i != 1 {
		t.Fatalf("index of b: %d %v", i, ok)
	}
	c := types.NewChunk(l.Types(), 3)
	c.Append(types.Insert, types.Row{types.NewInt32(0), types.NewInt64(1), types.NewText("p"), types.Null})
	c.Append(types.Insert, types.Row{types.NewInt32(1), types.Null, types.Null, types.NewBool(true)})
	c.Append(types.Delete, types.Row{types.NewInt32(0), types.NewInt64(2), types.Null, types.Null})
	if got := l.Project(c, 0).String(); got != "+I (1, p)\n-D (2, NULL)\n" {
		t.Fatalf("project a:\n%s", got)
	}
	if got := l.Project(c, 1).String(); got != "+I (t)\n" {
		t.Fatalf("project b:\n%s", got)
	}
	only := types.NewChunk(l.Types(), 1)
	only.Append(types.Insert, types.Row{types.NewInt32(1), types.Null, types.Null, types.Null})
	if l.Project(only, 0) != nil {
		t.Fatal("a chunk without a's rows projects to rows of a")
	}

	for _, tc := range []struct {
		tables []pgcdc.Table
		say    string
	}{
		{nil, "at least one table"},
		{[]pgcdc.Table{a, {Upstream: "s.a", Name: "a2", Columns: a.Columns}}, "s.a is listed twice"},
		{[]pgcdc.Table{{Upstream: "public.t", Name: "t"}}, "table t has no columns"},
		{[]pgcdc.Table{{Upstream: "t", Name: "t", Columns: []catalog.Column{col("x", types.Int64, true), col("x", types.Text, false)}}}, "column x is listed twice"},
		{[]pgcdc.Table{{Upstream: "t", Name: "t", Columns: a.Columns, PrimaryKey: []string{"k"}}}, "primary-key column k is not a column"},
		{[]pgcdc.Table{{Upstream: ".t", Name: "t", Columns: a.Columns}}, "is not schema.table"},
	} {
		_, err := pgcdc.NewLayout(tc.tables)
		if !errors.Is(err, base.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.say) {
			t.Fatalf("%v: error %v, want one saying %q", tc.tables, err, tc.say)
		}
	}
}

type collect struct{ chunks []*types.Chunk }

func (c *collect) Emit(ch *types.Chunk) error { c.chunks = append(c.chunks, ch); return nil }

// TestRoute checks that a Route emits its table's rows only, and nothing
// for a chunk without them.
func TestRoute(t *testing.T) {
	a := pgcdc.Table{Upstream: "a", Name: "a", Columns: []catalog.Column{col("x", types.Int64, true)}}
	b := pgcdc.Table{Upstream: "b", Name: "b", Columns: []catalog.Column{col("y", types.Text, true)}}
	l, err := pgcdc.NewLayout([]pgcdc.Table{a, b})
	if err != nil {
		t.Fatal(err)
	}
	out := &collect{}
	r := pgcdc.Route(l, 1)
	if err := r.Open(&operator.Context{Output: out}); err != nil {
		t.Fatal(err)
	}
	c := types.NewChunk(l.Types(), 2)
	c.Append(types.Insert, types.Row{types.NewInt32(0), types.NewInt64(1), types.Null})
	c.Append(types.UpdateAfter, types.Row{types.NewInt32(1), types.Null, types.NewText("q")})
	if err := r.Process(0, c); err != nil {
		t.Fatal(err)
	}
	c2 := types.NewChunk(l.Types(), 1)
	c2.Append(types.Insert, types.Row{types.NewInt32(0), types.NewInt64(2), types.Null})
	if err := r.Process(0, c2); err != nil {
		t.Fatal(err)
	}
	if len(out.chunks) != 1 || out.chunks[0].String() != "+U (q)\n" {
		t.Fatalf("route emitted %v", out.chunks)
	}
}
