package file_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/connector/file"
	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

var _ ingest.Reader = (*file.Reader)(nil)

var cols = []catalog.Column{{Name: "id", Type: types.Int64, NotNull: true}, {Name: "name", Type: types.Text}}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := writeFile(dir, name, content); err != nil {
		t.Fatal(err)
	}
}

// writeFile writes a file aside and renames it in, as a producer of a
// watched directory must.
func writeFile(dir, name, content string) error {
	tmp := filepath.Join(dir, "_"+name)
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}

func rowsText(c *types.Chunk) string {
	var parts []string
	for i := range c.Len() {
		var f []string
		for _, d := range c.Row(i) {
			if d.IsNull() {
				f = append(f, "NULL")
			} else {
				f = append(f, types.FormatText(d, nil))
			}
		}
		parts = append(parts, strings.Join(f, "|"))
	}
	return strings.Join(parts, ",")
}

func open(t *testing.T, opts map[string]string, dl format.DeadLetterFunc) *file.Reader {
	t.Helper()
	r, err := file.Open(opts, cols, dl)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestPositionPacking(t *testing.T) {
	for _, tc := range []struct {
		ord int
		off int64
	}{{0, 0}, {1, 0}, {0, file.MaxOffset - 1}, {file.MaxFiles - 1, 12345}} {
		p := file.Pack(tc.ord, tc.off)
		if o, f := file.Unpack(p); o != tc.ord || f != tc.off {
			t.Fatalf("Unpack(Pack(%d, %d)) = %d, %d", tc.ord, tc.off, o, f)
		}
	}
	if file.Pack(0, file.MaxOffset-1) >= file.Pack(1, 0) {
		t.Fatal("positions do not grow with the file ordinal")
	}
}

// TestReaderCSVDirectory reads a directory of CSV files with headers in
// name order, two records a transaction, a quoted field spanning lines,
// and re-reads the same transactions after rewinds.
func TestReaderCSVDirectory(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "b.csv", "name;id\n'x;y';3\n")
	write(t, dir, "a.csv", "id;name\n1;'multi\nline'\n2;\n\n4;four")
	write(t, dir, ".hidden.csv", "junk")
	r := open(t, map[string]string{"path": dir, "format": "csv", "csv.header": "true", "csv.delimiter": ";", "csv.quote": "'", "chunk.rows": "2"}, nil)
	want := []struct {
		rows string
		next uint64
	}{
		{"1|multi\nline,2|NULL", file.Pack(0, 26)},
		{"4|four", file.Pack(0, 33)}, // the blank line, then the last record without a line break
		{"", file.Pack(1, 0)},        // the end of the file
		{"3|x;y", file.Pack(2, 0)},
	}
	pos := uint64(0)
	for i, w := range want {
		c, n, err := r.Next(pos)
		if err != nil {
			t.Fatal(err)
		}
		if c == nil || rowsText(c) != w.rows || n != w.next {
			t.Fatalf("transaction %d at %x: %q -> %x, want %q -> %x", i, pos, rowsText(c), n, w.rows, w.next)
		}
		pos = n
	}
	if !r.Exhausted(pos) || r.Exhausted(0) {
		t.Fatal("Exhausted is wrong")
	}
	if c, n, err := r.Next(pos); c != nil || n != pos || err != nil {
		t.Fatalf("past the end: %v %x %v", c, n, err)
	}
	for _, i := range []int{1, 0, 3, 2} {
		at := uint64(0)
		if i > 0 {
			at = want[i-1].next
		}
		c, n, err := r.Next(at)
		if err != nil || rowsText(c) != want[i].rows || n != want[i].next {
			t.Fatalf("rewind to %x: %q -> %x (%v), want %q -> %x", at, rowsText(c), n, err, want[i].rows, want[i].next)
		}
	}
	if got := r.Files(); len(got) != 2 || filepath.Base(got[0]) != "a.csv" {
		t.Fatalf("files %v", got)
	}
}

// TestReaderWatch reads files as they appear and refuses one that sorts
// before a file already read.
func TestReaderWatch(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "0001.jsonl", `{"id": 1, "name": "a"}`+"\n")
	r := open(t, map[string]string{"path": dir, "format": "json", "watch": "true"}, nil)
	c, pos, err := r.Next(0)
	if err != nil || rowsText(c) != "1|a" || pos != file.Pack(1, 0) {
		t.Fatalf("%q %x %v", rowsText(c), pos, err)
	}
	if c, _, err := r.Next(pos); c != nil || err != nil || r.Exhausted(pos) {
		t.Fatalf("no new file yet: %v %v", c, err)
	}
	write(t, dir, "0002.jsonl", `{"id": 2}`+"\n"+`{"id": 3, "name": "c"}`)
	var got []string
	for range 1000 {
		c, n, err := r.Next(pos)
		if err != nil {
			t.Fatal(err)
		}
		if c != nil {
			got, pos = append(got, rowsText(c)), n
			break
		}
		relist(t)
	}
	if fmt.Sprint(got) != "[2|NULL,3|c]" || pos != file.Pack(2, 0) {
		t.Fatalf("new file: %q %x", got, pos)
	}
	write(t, dir, "0000.jsonl", `{"id": 0}`+"\n")
	for range 1000 {
		_, _, err = r.Next(pos)
		if err != nil {
			break
		}
		relist(t)
	}
	if err == nil || !strings.Contains(err.Error(), "files may only be added, with names sorting after all others") {
		t.Fatalf("a file sorting first: %v", err)
	}
}

// relist waits long enough for a watched directory to be listed again.
func relist(t *testing.T) {
	t.Helper()
	time.Sleep(5 * time.Millisecond)
}

// TestReaderBadRecords checks the three error modes: fail names the file,
// line and field; skip counts; dead-letter hands over bytes and error.
func TestReaderBadRecords(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "in.jsonl", `{"id": 1}`+"\n"+`{"id": "one"}`+"\n"+`{"id": 3}`+"\n")
	path := filepath.Join(dir, "in.jsonl")
	r := open(t, map[string]string{"path": path, "format": "json"}, nil)
	_, _, err := r.Next(0)
	want := "file " + path + ` line 2 (byte 10): field "id": value "one": invalid input syntax for type bigint`
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, base.ErrInvalidArgument) {
		t.Fatalf("fail: %v, want %q", err, want)
	}
	s := open(t, map[string]string{"path": path, "format": "json", "errors": "skip"}, nil)
	c, n, err := s.Next(0)
	if err != nil || rowsText(c) != "1|NULL,3|NULL" || n != file.Pack(1, 0) || s.Errors().Skipped() != 1 {
		t.Fatalf("skip: %q %x %v %d", rowsText(c), n, err, s.Errors().Skipped())
	}
	var letters []format.BadRecord
	d := open(t, map[string]string{"path": path, "format": "json", "errors": "dead-letter"}, func(b format.BadRecord) error {
		letters = append(letters, b)
		return nil
	})
	c, _, err = d.Next(0)
	if err != nil || rowsText(c) != "1|NULL,3|NULL" || len(letters) != 1 || string(letters[0].Raw) != `{"id": "one"}`+"\n" ||
		letters[0].Position != file.Pack(0, 10) || letters[0].Where != "line 2 (byte 10)" {
		t.Fatalf("dead-letter: %q %v %+v", rowsText(c), err, letters)
	}
	if _, err := file.Open(map[string]string{"path": path, "format": "json", "errors": "dead-letter"}, cols, nil); err == nil {
		t.Fatal("dead-letter without a receiver accepted")
	}
}

func TestOptions(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"format": "csv"}, `option "path" is required`},
		{map[string]string{"path": dir}, `option "format" is required`},
		{map[string]string{"path": dir, "format": "avro", "avro.schema": "{}"}, `option "format": "avro" is not one of csv, json, debezium-json`},
		{map[string]string{"path": dir, "format": "xml"}, `option "format": "xml" is not one of csv, json, debezium-json`},
		{map[string]string{"path": dir, "format": "csv", "watch": "maybe"}, `"maybe" is not true or false`},
		{map[string]string{"path": dir, "format": "csv", "chunk.rows": "0"}, `"0" is not a whole number >= 1`},
		{map[string]string{"path": dir, "format": "csv", "topic": "x"}, `unknown option "topic"`},
	} {
		_, err := file.ParseOptions(tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, base.ErrInvalidArgument) {
			t.Errorf("%v: %v, want %q", tc.opts, err, tc.want)
		}
	}
	missing := filepath.Join(dir, "nope")
	if _, err := file.Open(map[string]string{"path": missing, "format": "csv"}, cols, nil); !errors.Is(err, base.ErrNotFound) || !strings.Contains(err.Error(), `option "path": path `+missing+` does not exist`) {
		t.Fatalf("missing path: %v", err)
	}
	write(t, dir, "f.csv", "1,a\n")
	if _, err := file.Open(map[string]string{"path": filepath.Join(dir, "f.csv"), "format": "csv", "watch": "true"}, cols, nil); !errors.Is(err, base.ErrInvalidArgument) {
		t.Fatalf("watch on a file: %v", err)
	}
}
