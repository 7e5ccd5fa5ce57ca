package server

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// replayCSV applies the committed CSV files of a file sink in dir, in
// name order, and returns the rows they leave as "a|b" lines, sorted.
// A retraction of a row that is not there, or an add of one that is,
// fails t.
func replayCSV(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	live := map[string]bool{}
	for _, ent := range ents {
		if strings.HasPrefix(ent.Name(), ".") {
			continue
		}
		f, err := os.Open(filepath.Join(dir, ent.Name()))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", ent.Name(), err)
		}
		if len(recs) == 0 || recs[0][0] != "op" {
			t.Fatalf("%s: no header: %q", ent.Name(), recs)
		}
		for _, rec := range recs[1:] {
			row := strings.Join(rec[1:], "|")
			switch rec[0] {
			case "+I", "+U":
				if live[row] {
					t.Fatalf("%s: %s added twice", ent.Name(), row)
				}
				live[row] = true
			case "-U", "-D":
				if !live[row] {
					t.Fatalf("%s: %s retracted but not there", ent.Name(), row)
				}
				delete(live, row)
			default:
				t.Fatalf("%s: row kind %q", ent.Name(), rec[0])
			}
		}
	}
	var rows []string
	for r := range live {
		rows = append(rows, r)
	}
	slices.Sort(rows)
	return strings.Join(rows, "\n")
}

// TestFileSinkFromView: CREATE SINK ... FROM a view WITH (connector =
// 'file') through the wire writes the view's changes into per-epoch CSV
// files; replaying them ends with the view, across a server restart.
func TestFileSinkFromView(t *testing.T) {
	dataDir, out := t.TempDir(), filepath.Join(t.TempDir(), "totals")
	s := startTest(t, dataDir)
	c := connect(t, s)
	exec(t, c, "CREATE TABLE sales (id INT PRIMARY KEY, shop TEXT NOT NULL, amount INT NOT NULL)")
	exec(t, c, "CREATE MATERIALIZED VIEW totals AS SELECT shop, sum(amount) AS total FROM sales GROUP BY shop")
	exec(t, c, "INSERT INTO sales VALUES (1, 'a', 5), (2, 'b', 7), (3, 'c, d', 1)")
	exec(t, c, fmt.Sprintf("CREATE SINK out FROM totals WITH (connector = 'file', path = '%s', format = 'csv')", out))
	exec(t, c, "INSERT INTO sales VALUES (4, 'a', 10)")
	exec(t, c, "DELETE FROM sales WHERE id = 2")
	if got := rowsText(t, c, "SHOW SINKS"); got != "out|file "+out+" (csv)" {
		t.Fatalf("SHOW SINKS: %q", got)
	}
	waitReplay := func(c *pgx.Conn) {
		t.Helper()
		waitFor(t, 30*time.Second, func() (bool, string) {
			want := rowsText(t, c, "SELECT shop, total FROM totals ORDER BY shop")
			got := replayCSV(t, out)
			return got == want, fmt.Sprintf("files replay to\n%s\nwant\n%s", got, want)
		})
	}
	waitReplay(c)
	c.Close(context.Background())
	s.Close()
	s, c = startConnAt(t, dataDir)
	exec(t, c, "UPDATE sales SET amount = amount + 1 WHERE shop = 'a'")
	exec(t, c, "INSERT INTO sales VALUES (5, 'e', 2)")
	waitReplay(c)
	_, err := c.Exec(context.Background(), "CREATE SINK bad FROM totals WITH (connector = 'file', path = '/tmp/x', colour = 'red')")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "22023" || !strings.Contains(pgErr.Message, `unknown option "colour"`) {
		t.Fatalf("unknown option: %v", err)
	}
	exec(t, c, "DROP SINK out")
	wantRows(t, c, "SHOW SINKS", "")
}
