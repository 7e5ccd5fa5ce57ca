package logictest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stratadb/strata/internal/types"
)

// TestAgainstPostgres is the corpus's second opinion, run by hand: with
// STRATA_LOGICTEST_PG set to a connection string of a PostgreSQL 15
// server (C.UTF-8 ctype), it loads each dataset's final rows into
// Postgres, runs every query's SQL there and compares the exact text of
// the view's final rows with Postgres's (floats to 12 digits, as the
// DuckDB comparison does); a query that must fail must fail there with
// the same SQLSTATE, unless its code is 0A000 (Strata refuses what
// Postgres runs). Skipped queries are not compared. It is how the corpus's
// DuckDB workarounds and expected rows were checked; CI does not run it.
func TestAgainstPostgres(t *testing.T) {
	url := os.Getenv("STRATA_LOGICTEST_PG")
	if url == "" {
		t.Skip("STRATA_LOGICTEST_PG is not set")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
	db, err := OpenOracle()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r := &Runner{Oracle: db, Timeout: time.Minute}
	files, _ := filepath.Glob("testdata/*.slt")
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ParseScript(f, string(text))
		if err != nil {
			t.Fatal(err)
		}
		loaded := (*Dataset)(nil)
		for _, q := range s.Queries {
			if q.Skip != "" {
				continue
			}
			if q.Data != loaded {
				if err := loadPostgres(ctx, conn, q.Data); err != nil {
					t.Fatalf("%s: %v", s.Where(q), err)
				}
				loaded = q.Data
			}
			sql := q.SQL
			if q.Postgres != "" {
				sql = q.Postgres
			}
			if _, err := conn.Exec(ctx, "SET TimeZone = "+quote(q.TimeZone.String())); err != nil {
				t.Fatal(err)
			}
			pgRows, pgErr := queryPostgres(ctx, conn, sql)
			if q.ErrCode != "" {
				var pe *pgconn.PgError
				switch {
				case errors.As(pgErr, &pe) && pe.Code == q.ErrCode && q.ErrPos != 0 && int(pe.Position) != q.ErrPos:
					t.Errorf("%s: %s\nPostgres points at %d; want %d", s.Where(q), q.SQL, pe.Position, q.ErrPos)
				case errors.As(pgErr, &pe) && pe.Code == q.ErrCode:
				case q.ErrCode == "0A000":
				default:
					t.Errorf("%s: %s\nPostgres: %v; want error %s", s.Where(q), q.SQL, pgErr, q.ErrCode)
				}
				continue
			}
			if pgErr != nil {
				t.Errorf("%s: %s\nPostgres failed: %v", s.Where(q), q.SQL, pgErr)
				continue
			}
			got, err := r.FinalRows(ctx, q)
			if err != nil {
				t.Errorf("%s: %s\nview failed: %v", s.Where(q), q.SQL, err)
				continue
			}
			if d := diff(roundFloats(got), roundFloats(pgRows)); d != "" {
				t.Errorf("%s: %s\nthe view differs from Postgres (- view only, + Postgres only):\n%s", s.Where(q), q.SQL, d)
			}
		}
	}
}

// roundFloats rewrites fields that read as floats (an exponent, or more
// than 12 significant digits not ending in a zero, which NUMERIC's fixed
// scale would) to 12 digits, so that the last bits of float sums do not
// count.
func roundFloats(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		f := strings.Split(r, "|")
		for j, v := range f {
			d, err := types.ParseText(types.Float64, v, time.UTC)
			if err != nil {
				continue
			}
			sig := len(strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(v), "0"))
			if strings.ContainsAny(v, "eE") || sig > 12 && strings.Contains(v, ".") && !strings.HasSuffix(v, "0") {
				f[j] = normValue(d, types.Float64, true)
			}
		}
		out[i] = strings.Join(f, "|")
	}
	return out
}

func pgType(t types.Type) string {
	if t.Kind == types.KindFloat64 {
		return "DOUBLE PRECISION"
	}
	return t.String()
}

func loadPostgres(ctx context.Context, conn *pgx.Conn, ds *Dataset) error {
	for _, t := range ds.Tables {
		cols := make([]string, len(t.Rel.Columns))
		for i, c := range t.Rel.Columns {
			cols[i] = `"` + c.Name + `" ` + pgType(c.Type)
		}
		st := newLiveState(t.Rel)
		for _, ep := range ds.Inputs[t.Rel.Name] {
			for _, c := range ep {
				if err := st.apply(c); err != nil {
					return err
				}
			}
		}
		var b strings.Builder
		b.WriteString("DROP TABLE IF EXISTS " + t.Rel.Name + " CASCADE; CREATE TABLE " + t.Rel.Name + " (" + strings.Join(cols, ", ") + ");")
		for _, r := range st.snapshot() {
			vals := make([]string, len(r))
			for i, d := range r {
				vals[i] = "NULL"
				if !d.IsNull() {
					vals[i] = quote(types.FormatText(d, time.UTC)) + "::" + pgType(t.Rel.Columns[i].Type)
				}
			}
			b.WriteString("INSERT INTO " + t.Rel.Name + " VALUES (" + strings.Join(vals, ", ") + ");")
		}
		if _, err := conn.Exec(ctx, b.String(), pgx.QueryExecModeSimpleProtocol); err != nil {
			return err
		}
	}
	return nil
}

// queryPostgres runs sql and returns its rows in the expected-rows format.
func queryPostgres(ctx context.Context, conn *pgx.Conn, sql string) ([]string, error) {
	rows, err := conn.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		raw := rows.RawValues()
		parts := make([]string, len(raw))
		for i, v := range raw {
			if v == nil {
				parts[i] = "NULL"
			} else {
				parts[i] = string(v)
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}
