package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/sqlerr"
)

// TestBadJoinViewsLeaveTheCatalog: views over joins that name an unknown
// column, compare mismatched types, use a construct the planner does not
// support, or a sink that would close a cycle through a join view, are
// refused with their SQLSTATE (and, where the statement has one, the
// 1-based position in the query of what is wrong); the catalog's version
// and objects stay as they were.
func TestBadJoinViewsLeaveTheCatalog(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	a, b := catalog.Name(DefaultDatabase, "a"), catalog.Name(DefaultDatabase, "b")
	for _, n := range []catalog.ObjectName{a, b} {
		if err := e.CreateTable(ctx, catalog.Table{Name: n, PrimaryKey: []string{"k"},
			Columns: []catalog.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}, {Name: "s", Type: types.Text}}}, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.CreateView(ctx, catalog.Name(DefaultDatabase, "ab"), "SELECT a.k, a.v, b.s FROM a JOIN b ON a.k = b.k", nil, false); err != nil {
		t.Fatal(err)
	}
	before, err := e.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what, query, code string
		pos               int
	}{
		{"unknown column", "SELECT a.k, b.nosuch FROM a JOIN b ON a.k = b.k", sqlerr.UndefinedColumn, 13},
		{"unknown column in ON", "SELECT a.k FROM a JOIN b ON a.k = b.kk", sqlerr.UndefinedColumn, 35},
		{"type mismatch", "SELECT a.k FROM a JOIN b ON a.v = b.s", sqlerr.UndefinedFunction, 33},
		{"ON not boolean", "SELECT a.k FROM a JOIN b ON a.v", sqlerr.DatatypeMismatch, 29},
		{"unsupported construct", "SELECT a.k FROM a FULL JOIN LOOKUP(b) c ON c.k = a.k", sqlerr.FeatureNotSupported, 29},
		{"unsupported construct", "SELECT a.k FROM a JOIN LATERAL (SELECT * FROM b WHERE b.k = a.k) x ON true", sqlerr.FeatureNotSupported, 40},
	} {
		err := e.CreateView(ctx, catalog.Name(DefaultDatabase, "bad"), c.query, nil, false)
		var se *sqlerr.Error
		if !errors.As(err, &se) || se.Code != c.code || se.Position != c.pos {
			t.Errorf("%s: %s: got %v (%s at %d), want %s at %d", c.what, c.query, err, sqlerr.Code(err), pos(err), c.code, c.pos)
		}
		if cv, err := e.Catalog(ctx); err != nil || cv.Version() != before.Version() {
			t.Fatalf("%s: the catalog moved from version %d to %d (%v)", c.what, before.Version(), cv.Version(), err)
		}
	}
	// A sink into a that reads the view over a joins a's own output back
	// into it: a cycle.
	err = e.CreateSink(ctx, catalog.Name(DefaultDatabase, "loop"), a, "SELECT k, v, s FROM ab", false)
	if sqlerr.Code(err) != "42P17" || pos(err) != 21 {
		t.Errorf("cycle: %v (%s at %d, want 42P17 at 21)", err, sqlerr.Code(err), pos(err))
	}
	// The refused sink changes nothing in the catalog.
	after, err := e.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Version() != before.Version() {
		t.Fatalf("the catalog moved from version %d to %d", before.Version(), after.Version())
	}
	if a, b := objects(after), objects(before); a != b {
		t.Fatalf("the catalog's objects changed:\n%s\nwere:\n%s", a, b)
	}
}

func pos(err error) int {
	var se *sqlerr.Error
	if errors.As(err, &se) {
		return se.Position
	}
	return -1
}

// objects lists a catalog's tables and jobs with what they read and write.
func objects(c *catalog.Catalog) string {
	var out []string
	for _, t := range c.Tables() {
		out = append(out, "table "+t.Name.String())
	}
	for _, j := range c.Jobs() {
		out = append(out, fmt.Sprintf("job %s %v reads %v writes %v", j.Name, j.Kind, j.Reads, j.Writes))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
