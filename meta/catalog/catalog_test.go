package catalog

import (
	"errors"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

func TestValidateName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
		why  string
	}{
		{"orders", true, ""},
		{"_tmp", true, ""},
		{"Bestellungen_2024", true, ""},
		{"größe", true, ""},
		{"a-b$c", true, ""},
		{strings.Repeat("x", MaxNameLength), true, ""},
		{"", false, "empty"},
		{strings.Repeat("x", MaxNameLength+1), false, "more than 128"},
		{"..", false, "holds a dot"},
		{".", false, "holds a dot"},
		{"a.b", false, "holds a dot"},
		{"a/b", false, "path separator"},
		{"/etc", false, "path separator"},
		{`a\b`, false, "path separator"},
		{"1abc", false, "must start with a letter"},
		{"-x", false, "must start with a letter"},
		{"a b", false, "only letters"},
		{"a\x00b", false, "only letters"},
		{"a\nb", false, "only letters"},
		{"\xff\xfe", false, "not valid UTF-8"},
	} {
		err := ValidateName("table", tc.name)
		if tc.ok {
			if err != nil {
				t.Errorf("ValidateName(%q) = %v, want nil", tc.name, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, base.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("ValidateName(%q) = %v, want an invalid-argument error saying %q", tc.name, err, tc.why)
		}
	}
}

func TestParseObjectName(t *testing.T) {
	n, err := ParseObjectName("shop.orders")
	if err != nil || n != Name("shop", "orders") {
		t.Fatalf("ParseObjectName = %v, %v", n, err)
	}
	for _, bad := range []string{"orders", "shop.", ".orders", "shop.or.ders", "../x.y", "a/b.c"} {
		if _, err := ParseObjectName(bad); !errors.Is(err, base.ErrInvalidArgument) {
			t.Errorf("ParseObjectName(%q) = %v, want invalid argument", bad, err)
		}
	}
}

func col(name string, typ types.Type, notNull bool) Column {
	return Column{Name: name, Type: typ, NotNull: notNull}
}

func ordersTable() Table {
	return Table{
		Name:       Name("shop", "orders"),
		Kind:       KindTable,
		Columns:    []Column{col("id", types.Int64, true), col("amount", types.Numeric, false)},
		PrimaryKey: []string{"id"},
		Options:    map[string]string{"bucket": "4"},
	}
}

// build applies each step, failing the test on the first error.
func build(t *testing.T, steps ...func(*Catalog) (*Catalog, error)) *Catalog {
	t.Helper()
	c := New()
	for i, s := range steps {
		var err error
		if c, err = s(c); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	return c
}

func createDB(name string) func(*Catalog) (*Catalog, error) {
	return func(c *Catalog) (*Catalog, error) { return c.CreateDatabase(Database{Name: name}) }
}

func createTable(tb Table) func(*Catalog) (*Catalog, error) {
	return func(c *Catalog) (*Catalog, error) { return c.CreateTable(tb) }
}

func createSource(name ObjectName) func(*Catalog) (*Catalog, error) {
	return func(c *Catalog) (*Catalog, error) {
		return c.CreateSource(Source{Name: name, Connector: "kafka", Options: map[string]string{"topic": "t"}})
	}
}

func createJob(j Job) func(*Catalog) (*Catalog, error) {
	return func(c *Catalog) (*Catalog, error) { return c.CreateJob(j) }
}

func view(name string) Table {
	return Table{Name: Name("shop", name), Kind: KindView, Columns: []Column{col("n", types.Int64, false)}, Query: "SELECT count(*) AS n FROM shop.orders"}
}

func TestCatalogIsVersionedAndImmutable(t *testing.T) {
	c1 := build(t, createDB("shop"))
	c2, err := c1.CreateTable(ordersTable())
	if err != nil {
		t.Fatal(err)
	}
	if c1.Version() != 1 || c2.Version() != 2 {
		t.Fatalf("versions = %d, %d; want 1, 2", c1.Version(), c2.Version())
	}
	if _, err := c1.Table(Name("shop", "orders")); !errors.Is(err, base.ErrNotFound) {
		t.Fatalf("old version sees the new table: %v", err)
	}
	got, err := c2.Table(Name("shop", "orders"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 2 || got.Options["bucket"] != "4" || got.Columns[1].Type != types.Numeric {
		t.Fatalf("table = %+v", got)
	}
	// A caller mutating what it got back does not change the catalog.
	got.Options["bucket"] = "99"
	got.Columns[0].Name = "zzz"
	again, _ := c2.Table(Name("shop", "orders"))
	if again.Options["bucket"] != "4" || again.Columns[0].Name != "id" {
		t.Fatalf("catalog changed through a returned value: %+v", again)
	}
}

func TestCatalogRefusals(t *testing.T) {
	base0 := build(t, createDB("shop"), createTable(ordersTable()), createSource(Name("shop", "clicks")))
	badPK := ordersTable()
	badPK.Name = Name("shop", "t2")
	badPK.PrimaryKey = []string{"amount"}
	missingPK := ordersTable()
	missingPK.Name = Name("shop", "t3")
	missingPK.PrimaryKey = []string{"nope"}
	dupCol := ordersTable()
	dupCol.Name = Name("shop", "t4")
	dupCol.Columns = append(dupCol.Columns, col("id", types.Text, false))
	noDB := ordersTable()
	noDB.Name = Name("nodb", "t")
	viewNoQuery := view("v")
	viewNoQuery.Query = ""
	pt := Column{Name: "p_time", Type: types.TimestampTZ, Generated: GeneratedProcTime}
	withGen := func(name string, c Column, edit func(*Table)) Table {
		tb := ordersTable()
		tb.Name = Name("shop", name)
		tb.Columns = append(tb.Columns, c)
		if edit != nil {
			edit(&tb)
		}
		return tb
	}
	ptText := pt
	ptText.Type = types.Timestamp
	ptOther := pt
	ptOther.Generated = "random"
	genView := view("gv")
	genView.Columns = append(genView.Columns, pt)
	for _, tc := range []struct {
		name   string
		do     func(*Catalog) (*Catalog, error)
		marker error
		says   string
	}{
		{"duplicate database", createDB("shop"), base.ErrConflict, `database "shop" already exists`},
		{"duplicate table", createTable(ordersTable()), base.ErrConflict, "shop.orders"},
		{"table named like a source", createTable(Table{Name: Name("shop", "clicks"), Kind: KindTable, Columns: []Column{col("a", types.Int32, false)}}), base.ErrConflict, "source of that name"},
		{"nullable primary key", createTable(badPK), base.ErrInvalidArgument, `primary key column "amount" must be NOT NULL`},
		{"missing primary key column", createTable(missingPK), base.ErrInvalidArgument, `"nope" does not exist`},
		{"duplicate column", createTable(dupCol), base.ErrInvalidArgument, `column "id" appears twice`},
		{"missing database", createTable(noDB), base.ErrNotFound, `database "nodb"`},
		{"view without query", createTable(viewNoQuery), base.ErrInvalidArgument, "has no query"},
		{"processing time of another type", createTable(withGen("g1", ptText, nil)), base.ErrInvalidArgument, `processing-time column "p_time" must be TIMESTAMPTZ`},
		{"unknown generation", createTable(withGen("g2", ptOther, nil)), base.ErrInvalidArgument, `unknown generation "random"`},
		{"processing time in the key", createTable(withGen("g3", pt, func(t *Table) { t.PrimaryKey = []string{"id", "p_time"}; t.Columns[2].NotNull = true })), base.ErrInvalidArgument, "cannot be part of the primary key"},
		{"processing time with the input changelog", createTable(withGen("g4", pt, func(t *Table) { t.Options = map[string]string{"changelog-producer": "input"} })), base.ErrInvalidArgument, "other than 'input'"},
		{"generated view column", createTable(genView), base.ErrInvalidArgument, `column "p_time" cannot be generated`},
		{"generated source column", func(c *Catalog) (*Catalog, error) {
			return c.CreateSource(Source{Name: Name("shop", "s2"), Connector: "kafka", Columns: []Column{pt}})
		}, base.ErrInvalidArgument, "cannot be generated"},
		{"drop database in use", func(c *Catalog) (*Catalog, error) { return c.DropDatabase("shop") }, base.ErrConflict, "still holds"},
		{"drop missing table", func(c *Catalog) (*Catalog, error) { return c.DropTable(Name("shop", "nope")) }, base.ErrNotFound, "shop.nope"},
		{"job reads missing", createJob(Job{Name: "j", Kind: JobIngest, Reads: []ObjectName{Name("shop", "nope")}, Writes: []ObjectName{Name("shop", "orders")}}), base.ErrNotFound, "shop.nope"},
		{"job writes source", createJob(Job{Name: "j", Kind: JobIngest, Writes: []ObjectName{Name("shop", "clicks")}}), base.ErrInvalidArgument, "which is a source"},
		{"view job writes plain table", createJob(Job{Name: "j", Kind: JobView, Reads: []ObjectName{Name("shop", "clicks")}, Writes: []ObjectName{Name("shop", "orders")}}), base.ErrInvalidArgument, "not a materialized view"},
		{"job without writes", createJob(Job{Name: "j", Kind: JobIngest}), base.ErrInvalidArgument, "writes no table"},
		{"sink job writes two tables", createJob(Job{Name: "j", Kind: JobSink, Reads: []ObjectName{Name("shop", "clicks")}, Writes: []ObjectName{Name("shop", "orders"), Name("shop", "o2")}}), base.ErrInvalidArgument, "writes 2 tables"},
		{"sink job without reads", createJob(Job{Name: "j", Kind: JobSink}), base.ErrInvalidArgument, "reads nothing"},
		{"job with bad name", createJob(Job{Name: "../j", Kind: JobIngest, Writes: []ObjectName{Name("shop", "orders")}}), base.ErrInvalidArgument, "job name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.do(base0)
			if err == nil {
				t.Fatalf("accepted; catalog version %d", got.Version())
			}
			if !errors.Is(err, tc.marker) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %q: want marker %v and text %q", err, tc.marker, tc.says)
			}
		})
	}
}

// TestSinkJobWritesOnePlainTable: a sink job (CREATE SINK ... INTO)
// writes one plain table, never a view; one to an external system writes
// none.
func TestSinkJobWritesOnePlainTable(t *testing.T) {
	v := view("v")
	c := build(t, createDB("shop"), createTable(ordersTable()), createSource(Name("shop", "clicks")), createTable(v))
	into := Job{Name: "sink-k", Kind: JobSink, Reads: []ObjectName{Name("shop", "clicks")}, Writes: []ObjectName{Name("shop", "orders")}}
	n, err := c.CreateJob(into)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := n.Job("sink-k"); err != nil || got.Kind != JobSink || len(got.Writes) != 1 {
		t.Fatalf("sink job read back = %+v, %v", got, err)
	}
	if _, err := c.CreateJob(Job{Name: "sink-x", Kind: JobSink, Reads: []ObjectName{Name("shop", "orders")}}); err != nil {
		t.Fatalf("external sink job: %v", err)
	}
	toView := into
	toView.Writes = []ObjectName{v.Name}
	if _, err := c.CreateJob(toView); !errors.Is(err, base.ErrInvalidArgument) || !strings.Contains(err.Error(), `sink job "sink-k" writes shop.v, which is a materialized view`) {
		t.Fatalf("sink job into a view: %v", err)
	}
}

func TestObjectsInUseCannotBeDropped(t *testing.T) {
	c := build(t, createDB("shop"), createSource(Name("shop", "cdc")), createTable(ordersTable()),
		createJob(Job{Name: "ingest", Kind: JobIngest, Reads: []ObjectName{Name("shop", "cdc")}, Writes: []ObjectName{Name("shop", "orders")}}))
	if _, err := c.DropSource(Name("shop", "cdc")); !errors.Is(err, base.ErrConflict) || !strings.Contains(err.Error(), `read by job "ingest"`) {
		t.Fatalf("DropSource = %v", err)
	}
	if _, err := c.DropTable(Name("shop", "orders")); !errors.Is(err, base.ErrConflict) || !strings.Contains(err.Error(), `written by job "ingest"`) {
		t.Fatalf("DropTable = %v", err)
	}
	c, err := c.DropJob("ingest")
	if err != nil {
		t.Fatal(err)
	}
	if c, err = c.DropTable(Name("shop", "orders")); err != nil {
		t.Fatal(err)
	}
	if c, err = c.DropSource(Name("shop", "cdc")); err != nil {
		t.Fatal(err)
	}
	if c, err = c.DropDatabase("shop"); err != nil {
		t.Fatal(err)
	}
	if len(c.Databases()) != 0 || c.Version() != 8 {
		t.Fatalf("after drops: %d databases, version %d", len(c.Databases()), c.Version())
	}
}

func TestCodecRoundTrip(t *testing.T) {
	dec, err := types.NumericType(10, 2)
	if err != nil {
		t.Fatal(err)
	}
	tb := ordersTable()
	tb.Columns = append(tb.Columns, col("price", dec, false))
	tb.Columns = append(tb.Columns, Column{Name: "p_time", Type: types.TimestampTZ, Generated: GeneratedProcTime})
	c := build(t, createDB("shop"), createSource(Name("shop", "cdc")), createTable(tb), createTable(view("counts")),
		createJob(Job{Name: "ingest", Kind: JobIngest, Reads: []ObjectName{Name("shop", "cdc")}, Writes: []ObjectName{Name("shop", "orders")}}),
		createJob(Job{Name: "counts", Kind: JobView, Reads: []ObjectName{Name("shop", "orders")}, Writes: []ObjectName{Name("shop", "counts")}, Options: map[string]string{"parallelism": "2"}}))
	b, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"type":"NUMERIC(10,2)"`) || !strings.Contains(string(b), `"generated":"proctime"`) {
		t.Fatalf("types are not spelled as SQL: %s", b)
	}
	d, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := d.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(b2) || d.Version() != c.Version() {
		t.Fatalf("round trip differs:\n%s\n%s", b, b2)
	}
	j, _ := d.Job("counts")
	if j.Version != 6 || j.Options["parallelism"] != "2" {
		t.Fatalf("job = %+v", j)
	}
}

func TestUnmarshalRefusesBadDocuments(t *testing.T) {
	for _, tc := range []struct{ name, doc, says string }{
		{"not json", `{"format":1,`, "does not decode"},
		{"other format", `{"format":2}`, "format 2"},
		{"bad name", `{"format":1,"version":1,"databases":[{"name":"../etc"}]}`, "holds a dot"},
		{"dangling job", `{"format":1,"version":3,"databases":[{"name":"d"}],"jobs":[{"name":"j","kind":"ingest","writes":["d.t"]}]}`, "does not exist"},
		{"bad type", `{"format":1,"version":2,"databases":[{"name":"d"}],"tables":[{"name":"d.t","kind":"table","columns":[{"name":"a","type":"FLUBBER"}]}]}`, "FLUBBER"},
	} {
		_, err := Unmarshal([]byte(tc.doc))
		if !errors.Is(err, base.ErrCorruption) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: err = %v, want corruption saying %q", tc.name, err, tc.says)
		}
	}
}
