package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/sqlerr"
)

// TestCreateTableOptionErrors: CREATE TABLE refuses bad options up front
// with the table's name, the option and what it takes, and leaves no
// table behind; a changelog format into a table without a primary key is
// refused rather than accepted and failing on its first retraction.
func TestCreateTableOptionErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "dz.json")
	if err := os.WriteFile(path, []byte(`{"before":null,"after":{"id":1,"name":"a"},"op":"c"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := openTest(t, filepath.Join(dir, "data"))
	defer e.Close()
	cols := []catalog.Column{{Name: "id", Type: types.Int64}, {Name: "name", Type: types.Text}}
	for _, tc := range []struct {
		name string
		key  []string
		opts map[string]string
		code string
		want string
	}{
		{"dz2", nil, map[string]string{"connector": "file", "path": path, "format": "debezium-json"}, sqlerr.InvalidTableDefinition,
			"table dz2: format debezium-json carries updates and deletes, and a table without a PRIMARY KEY takes only inserts"},
		{"kz", nil, map[string]string{"connector": "kafka", "properties.bootstrap.servers": "127.0.0.1:1", "topic": "t", "format": "Debezium-JSON"}, sqlerr.InvalidTableDefinition,
			"table kz: format debezium-json carries updates and deletes"},
		{"dz3", []string{"id"}, map[string]string{"connector": "file", "path": filepath.Join(dir, "nodir"), "format": "debezium-json"}, sqlerr.InvalidParameterValue,
			`table dz3: connector file: option "path": path ` + filepath.Join(dir, "nodir") + ` does not exist`},
		{"x", nil, map[string]string{"connector": "file", "path": path, "format": "xml"}, sqlerr.InvalidParameterValue,
			`table x: connector file: option "format": "xml" is not one of csv, json, debezium-json`},
		{"m1", []string{"id"}, map[string]string{"merge-engine": "dedup"}, sqlerr.InvalidParameterValue,
			`table m1: option "merge-engine": "dedup" is not one of deduplicate, partial-update, aggregation, first-row`},
		{"m2", nil, map[string]string{"merge-engine": "dedup"}, sqlerr.InvalidParameterValue,
			`table m2: option "merge-engine": "dedup" is not one of deduplicate`},
		{"m3", nil, map[string]string{"merge-engine": "first-row"}, sqlerr.InvalidTableDefinition,
			`table m3: merge-engine "first-row" needs a PRIMARY KEY`},
		{"b", []string{"id"}, map[string]string{"bucket": "four"}, sqlerr.InvalidParameterValue,
			`table b: option "bucket": "four" is not a whole number >= 1`},
	} {
		n := catalog.Name(DefaultDatabase, tc.name)
		err := e.CreateTable(ctx, catalog.Table{Name: n, Columns: cols, PrimaryKey: tc.key, Options: tc.opts}, false)
		if sqlerr.Code(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v (%s), want %s %q", tc.name, err, sqlerr.Code(err), tc.code, tc.want)
		}
		if _, err := e.Table(n); err == nil {
			t.Errorf("%s: the table was made", tc.name)
		}
	}
	// With a key, the same debezium-json file is a table.
	if err := e.CreateTable(ctx, catalog.Table{Name: catalog.Name(DefaultDatabase, "dz"), Columns: cols, PrimaryKey: []string{"id"},
		Options: map[string]string{"connector": "file", "path": path, "format": "debezium-json"}}, false); err != nil {
		t.Fatal(err)
	}
}

// TestCreateViewTimeZoneError: a view's timezone option that is no time
// zone is refused with the view's name, the option and a hint naming the
// forms it takes, and leaves no view behind; Etc/GMT-2, the form the
// hint gives for an offset, is taken.
func TestCreateViewTimeZoneError(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	cols := []catalog.Column{{Name: "id", Type: types.Int64}, {Name: "name", Type: types.Text}}
	if err := e.CreateTable(ctx, catalog.Table{Name: catalog.Name(DefaultDatabase, "orders"), Columns: cols}, false); err != nil {
		t.Fatal(err)
	}
	for _, zone := range []string{"Mars/Olympus", "+02:00"} {
		n := catalog.Name(DefaultDatabase, "mv")
		err := e.CreateView(ctx, n, "SELECT id FROM orders", map[string]string{"timezone": zone}, false)
		se := sqlerr.From(err)
		if want := `materialized view mv: option timezone: invalid time zone "` + zone + `"`; se == nil || se.Code != sqlerr.InvalidParameterValue || se.Message != want || se.Hint != timeZoneHint {
			t.Errorf("timezone %q: %v, want %s %q with hint %q", zone, err, sqlerr.InvalidParameterValue, want, timeZoneHint)
		}
		if _, err := e.Table(n); err == nil {
			t.Errorf("timezone %q: the view was made", zone)
		}
	}
	if err := e.CreateView(ctx, catalog.Name(DefaultDatabase, "mv2"), "SELECT id FROM orders", map[string]string{"timezone": "Etc/GMT-2"}, false); err != nil {
		t.Errorf("timezone Etc/GMT-2: %v", err)
	}
}
