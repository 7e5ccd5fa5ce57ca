package types

import (
	"bufio"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
)

// pgCase is one line of a testdata/*_pg15.tsv file: what PostgreSQL 15
// answered for an input.
type pgCase struct {
	line   int
	fields []string
}

func readPGCases(t *testing.T, path string, columns int) []pgCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	var out []pgCase
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) != columns {
			t.Fatalf("%s:%d: %d columns, want %d", path, n, len(fields), columns)
		}
		out = append(out, pgCase{n, fields})
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no cases", path)
	}
	return out
}

func mustLoadLocation(t testing.TB, name string) *time.Location {
	t.Helper()
	if name == "UTC" {
		return nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("load zone %s: %v", name, err)
	}
	return loc
}

// checkPGAnswer compares a result with PostgreSQL's answer: the output
// text, or "ERROR: " and the message.
func checkPGAnswer(t *testing.T, where string, got Datum, err error, want string, loc *time.Location) {
	t.Helper()
	if msg, isErr := strings.CutPrefix(want, "ERROR: "); isErr {
		if err == nil {
			t.Errorf("%s: got %q, want error %q", where, FormatText(got, loc), msg)
			return
		}
		if err.Error() != msg {
			t.Errorf("%s: error %q, want %q", where, err.Error(), msg)
		}
		if !errors.Is(err, base.ErrInvalidArgument) {
			t.Errorf("%s: error %q does not wrap ErrInvalidArgument", where, err)
		}
		return
	}
	if err != nil {
		t.Errorf("%s: error %q, want %q", where, err, want)
		return
	}
	s := FormatText(got, loc)
	if got.Kind() == KindInterval {
		s = pgIntervalText(s)
	}
	if s != want {
		t.Errorf("%s: got %q, want %q", where, s, want)
	}
}

// strataDifferences are the inputs where Strata deliberately answers
// otherwise than PostgreSQL 15, with Strata's answer. Timestamps end at
// 294247-01-01 in Strata (parse_datetime.go: its microseconds count from
// 1970 in an int64), not at 294277-01-01.
var strataDifferences = map[string]string{
	"294276-12-31 23:59:59.999999": `ERROR: timestamp out of range: "294276-12-31 23:59:59.999999"`,
	"294276-12-31 23:59:59.5":      `ERROR: timestamp out of range: "294276-12-31 23:59:59.5"`,
}

var minusOneUnit = regexp.MustCompile(`(^| )-1 (year|mon|day)( |$)`)

// pgIntervalText turns Strata's interval output into Postgres's where they
// differ today: format.go writes "-1 day", Postgres "-1 days" (it uses the
// singular only for +1).
func pgIntervalText(s string) string {
	for minusOneUnit.MatchString(s) {
		s = minusOneUnit.ReplaceAllString(s, "$1-1 ${2}s$3")
	}
	return s
}

// TestParseTextPostgres runs every input of testdata/parse_pg15.tsv and
// compares with PostgreSQL 15's output or error message, then reads the
// output back (invariant parse-roundtrip on real values).
func TestParseTextPostgres(t *testing.T) {
	for _, c := range readPGCases(t, "testdata/parse_pg15.tsv", 4) {
		typName, zone, input, want := c.fields[0], c.fields[1], c.fields[2], c.fields[3]
		typ, err := ParseType(typName)
		if err != nil {
			t.Fatalf("line %d: %v", c.line, err)
		}
		loc := mustLoadLocation(t, zone)
		where := "line " + itoa(c.line) + ": " + typName + " '" + input + "'"
		if ours, ok := strataDifferences[input]; ok {
			want = ours
		}
		got, err := ParseText(typ, input, loc)
		checkPGAnswer(t, where, got, err, want, loc)
		if err != nil || strings.HasPrefix(want, "ERROR: ") {
			continue
		}
		back, err := ParseText(typ, want, loc)
		if err != nil {
			t.Errorf("%s: reading output %q back: %v", where, want, err)
			continue
		}
		if Compare(back, got) != 0 || FormatText(back, loc) != FormatText(got, loc) {
			t.Errorf("%s: output %q reads back as %q", where, want, FormatText(back, loc))
		}
	}
}

func itoa(n int) string { return FormatText(NewInt64(int64(n)), nil) }
