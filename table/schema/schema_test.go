package schema

import (
	"errors"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/fileio"
)

func TestSchemaFilesAndEvolution(t *testing.T) {
	s, err := New([]Field{{Name: "k", Type: types.Int64, Nullable: true}, {Name: "v", Type: types.Varchar, Nullable: true}}, []string{"k"}, map[string]string{"bucket": "4"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Fields[0].Nullable {
		t.Fatal("[key-not-null] key column left nullable")
	}
	m := NewManager(fileio.NewMem(), "t")
	if err := m.Commit(s); err != nil {
		t.Fatal(err)
	}
	if err := m.Commit(s); !errors.Is(err, base.ErrConflict) {
		t.Fatalf("[schema-publish-once]: %v", err)
	}
	s1, err := s.AddColumn("w", types.Int32)
	if err != nil {
		t.Fatal(err)
	}
	m.Commit(s1)
	m2 := NewManager(m.fs, "t") // no cache
	latest, err := m2.Latest()
	if err != nil || latest.ID != 1 || len(latest.Fields) != 3 || latest.Fields[2].ID != 2 || latest.Fields[2].Type != types.Int32 {
		t.Fatalf("latest %+v %v", latest, err)
	}
	o, _ := ParseOptions(latest)
	if o.Buckets != 4 || o.MergeEngine != Deduplicate || o.ChangelogProducer != ChangelogLookup {
		t.Fatalf("options %+v", o)
	}
}

func TestBadSchemas(t *testing.T) {
	f := []Field{{Name: "k", Type: types.Int64}}
	for name, tc := range map[string]struct {
		fields []Field
		pk     []string
		opts   map[string]string
	}{
		"dup column":   {[]Field{{Name: "a", Type: types.Int64}, {Name: "a", Type: types.Int64}}, nil, nil},
		"no type":      {[]Field{{Name: "a"}}, nil, nil},
		"missing key":  {f, []string{"x"}, nil},
		"bad bucket":   {f, []string{"k"}, map[string]string{"bucket": "0"}},
		"bad engine":   {f, []string{"k"}, map[string]string{"merge-engine": "magic"}},
		"bad agg":      {f, []string{"k"}, map[string]string{"fields.k.aggregate-function": "median"}},
		"sum of text":  {[]Field{{Name: "k", Type: types.Int64}, {Name: "s", Type: types.Text}}, []string{"k"}, map[string]string{"fields.s.aggregate-function": "sum"}},
		"bad duration": {f, []string{"k"}, map[string]string{"snapshot.time-retained": "soon"}},
	} {
		if _, err := New(tc.fields, tc.pk, tc.opts); !errors.Is(err, base.ErrInvalidArgument) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestCheckRow(t *testing.T) {
	s, _ := New([]Field{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Varchar, Nullable: true}}, []string{"k"}, nil)
	if err := s.CheckRow(types.Row{types.NewInt64(1), types.NewText("x")}); err != nil {
		t.Fatalf("TEXT into VARCHAR: %v", err)
	}
	if err := s.CheckRow(types.Row{types.NewInt64(1), types.NewInt64(2)}); !errors.Is(err, base.ErrInvalidArgument) {
		t.Fatalf("BIGINT into VARCHAR: %v", err)
	}
}
