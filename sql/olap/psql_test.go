package olap

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/pgwire"
	"github.com/stratadb/strata/table/fileio"
)

// psqlHandler serves an engine over the wire: catalog queries go to
// CatalogQuery over objects, other SELECTs to Query over inputs. It is the
// smallest session that lets the real psql talk to the engine.
type psqlHandler struct {
	e       *Engine
	objects []TableInfo
	inputs  []Input
}

func (h psqlHandler) NewSession(context.Context, string, string) (pgwire.Session, error) {
	return psqlSession(h), nil
}

type psqlSession psqlHandler

func (s psqlSession) Prepare(_ context.Context, sql string, _ []types.Type) (*pgwire.Statement, error) {
	if strings.TrimSpace(sql) == "" {
		return nil, nil
	}
	return &pgwire.Statement{SQL: sql}, nil
}

func (s psqlSession) Execute(ctx context.Context, st *pgwire.Statement, _ []types.Datum) (*pgwire.Result, error) {
	var res *Result
	var err error
	if IsCatalogQuery(st.SQL) {
		res, err = s.e.CatalogQuery(ctx, s.objects, st.SQL)
	} else {
		res, err = s.e.Query(ctx, s.inputs, st.SQL, QueryOptions{})
	}
	if err != nil {
		return nil, err
	}
	out := &pgwire.Result{Rows: res.Rows, Tag: fmt.Sprintf("SELECT %d", len(res.Rows))}
	for _, c := range res.Columns {
		out.Columns = append(out.Columns, pgwire.Column{Name: c.Name, Type: c.Type})
	}
	return out, nil
}

func (s psqlSession) Split(sql string) ([]string, error) {
	var out []string
	toks := lex(sql)
	start := 0
	for i, t := range toks {
		if t.text == ";" {
			out = append(out, join(toks[start:i]))
			start = i + 1
		}
	}
	if rest := join(toks[start:]); strings.TrimSpace(rest) != "" {
		out = append(out, rest)
	}
	return out, nil
}

func (s psqlSession) Location() *time.Location { return time.UTC }
func (s psqlSession) Close()                   {}

// TestRealPsql runs Debian's psql against the engine behind the wire
// server: \dt, \d t1, \d mv and a join, and checks what psql prints.
func TestRealPsql(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed")
	}
	e := newEngine(t)
	tb := accounts(t, fileio.NewMem(), "wh/dev/accounts")
	objects := append(catalogObjects(), TableInfo{Name: "accounts", Owner: "root", PrimaryKey: []string{"id"}, SizeBytes: 123456,
		Columns: []ColumnInfo{{Name: "id", Type: types.Int64}, {Name: "name", Type: types.Text}, {Name: "balance", Type: types.Type{Kind: types.KindNumeric, Precision: 10, Scale: 2}}}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := pgwire.NewServer(psqlHandler{e: e, objects: objects, inputs: []Input{{Name: "dev.accounts", Table: tb, Epoch: 2}}}, nil)
	go srv.Serve(ln)
	defer srv.Close()
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	run := func(cmd string) string {
		out, err := exec.Command(psql, "-X", "-h", host, "-p", port, "-U", "root", "-d", "dev", "-c", cmd).CombinedOutput()
		if err != nil {
			t.Fatalf("psql %s: %v\n%s", cmd, err, out)
		}
		return string(out)
	}
	trim := func(s string) string {
		var lines []string
		for _, l := range strings.Split(s, "\n") {
			lines = append(lines, strings.TrimRight(l, " "))
		}
		return strings.TrimSpace(strings.Join(lines, "\n"))
	}
	cases := []struct{ cmd, want string }{
		{`\dt`, `
          List of relations
 Schema |   Name   | Type  | Owner
--------+----------+-------+-------
 public | accounts | table | root
 public | t1       | table | root
 public | t2       | table | root
(3 rows)`},
		{`\d t1`, `
                           Table "public.t1"
 Column |            Type             | Collation | Nullable | Default
--------+-----------------------------+-----------+----------+---------
 k      | bigint                      |           | not null |
 a      | integer                     |           | not null |
 s      | text                        |           |          |
 n      | numeric(10,2)               |           |          |
 b      | boolean                     |           |          |
 d      | date                        |           |          |
 ts     | timestamp without time zone |           |          |
 tz     | timestamp with time zone    |           |          |
 iv     | interval                    |           |          |
 j      | jsonb                       |           |          |
 by     | bytea                       |           |          |
 v      | character varying(20)       |           |          |
Indexes:
    "t1_pkey" PRIMARY KEY, btree (k)`},
		{`\d mv`, `
           Materialized view "public.mv"
 Column |  Type   | Collation | Nullable | Default
--------+---------+-----------+----------+---------
 id     | integer |           |          |
 n      | bigint  |           |          |`},
		{`\dn`, `
  List of schemas
  Name  | Owner
--------+-------
 public | root
(1 row)`},
		{`\l`, `
                                       List of databases
 Name | Owner | Encoding | Collate |  Ctype  | ICU Locale | Locale Provider | Access privileges
------+-------+----------+---------+---------+------------+-----------------+-------------------
 dev  | root  | UTF8     | C.UTF-8 | C.UTF-8 |            | libc            |
(1 row)`},
		{`\dt+ acc*`, `
                                    List of relations
 Schema |   Name   | Type  | Owner | Persistence | Access method |  Size  | Description
--------+----------+-------+-------+-------------+---------------+--------+-------------
 public | accounts | table | root  | permanent   | heap          | 121 kB |
(1 row)`},
		{`\di`, `
                 List of relations
 Schema |     Name      | Type  | Owner |  Table
--------+---------------+-------+-------+----------
 public | accounts_pkey | index | root  | accounts
 public | t1_pkey       | index | root  | t1
 public | t2_pkey       | index | root  | t2
(3 rows)`},
		{`\du`, `
                               List of roles
 Role name |                  Attributes                   | Member of
-----------+-----------------------------------------------+-----------
 root      | Superuser, Create role, Create DB, Bypass RLS | {}`},
		{`\df`, `
                       List of functions
 Schema | Name | Result data type | Argument data types | Type
--------+------+------------------+---------------------+------
(0 rows)`},
		{`SELECT name ~ 'a', name ~ '^a', name !~ 'l' FROM dev.accounts ORDER BY id`, `
 ?column? | ?column? | ?column?
----------+----------+----------
 t        | t        | f
 t        | f        | f
 t        | f        | t
(3 rows)`},
		{`SELECT name, balance FROM dev.accounts ORDER BY id`, `
 name  | balance
-------+---------
 alice |   11.00
 carol |   30.25
 dave  |   40.00
(3 rows)`},
	}
	for cmd, want := range map[string]string{
		"SELECT 1/0":                        "ERROR:  22012: division by zero",
		"SELECT nope FROM dev.accounts":     "ERROR:  42703: column \"nope\" does not exist\nHINT:  Perhaps you meant to reference the column \"accounts.name\".",
		"SELECT * FROM missing":             "ERROR:  42P01: relation \"missing\" does not exist",
		"SELECT count(*) FROM dev.accounts": "count",
	} {
		out, _ := exec.Command(psql, "-X", "-v", "VERBOSITY=verbose", "-h", host, "-p", port, "-U", "root", "-d", "dev", "-c", cmd).CombinedOutput()
		if !strings.Contains(string(out), want) {
			t.Errorf("psql %s:\n%s\nwant it to contain %q", cmd, out, want)
		}
	}
	for _, c := range cases {
		if got := trim(run(c.cmd)); got != trim(c.want) {
			t.Errorf("psql %s:\n%s\nwant\n%s", c.cmd, got, trim(c.want))
		}
	}
}
