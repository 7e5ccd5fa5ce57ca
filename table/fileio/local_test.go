package fileio

import (
	"errors"
	"os"
	"slices"
	"testing"
)

// Put-if-absent on the disk, by renameat2 and by the link fallback: a
// new name gets its content, an existing one fails with ErrExist and
// keeps its content, and no temporary file is left either way.
func TestLocalPutIfAbsent(t *testing.T) {
	for _, linkOnly := range []bool{false, true} {
		name := "renameat2"
		if linkOnly {
			name = "link"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			l, err := NewLocal(dir)
			if err != nil {
				t.Fatal(err)
			}
			l.linkOnly.Store(linkOnly)
			files := func() []string {
				t.Helper()
				es, err := os.ReadDir(dir + "/d")
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, e := range es {
					out = append(out, e.Name())
				}
				return out
			}
			if err := l.PutIfAbsent("d/a", []byte("first")); err != nil {
				t.Fatal(err)
			}
			if err := l.PutIfAbsent("d/a", []byte("second")); !errors.Is(err, ErrExist) {
				t.Fatalf("PutIfAbsent on an existing name: %v, want ErrExist", err)
			}
			p, err := l.Prepare("d/b", []byte("prepared"))
			if err != nil {
				t.Fatal(err)
			}
			if got := files(); len(got) != 2 || !slices.Contains(got, "a") {
				t.Fatalf("files after Prepare: %v, want a and a temporary one", got)
			}
			if err := p.Publish(); err != nil {
				t.Fatal(err)
			}
			p, err = l.Prepare("d/b", []byte("again"))
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Publish(); !errors.Is(err, ErrExist) {
				t.Fatalf("Publish on an existing name: %v, want ErrExist", err)
			}
			for path, want := range map[string]string{"d/a": "first", "d/b": "prepared"} {
				if b, err := l.ReadFile(path); err != nil || string(b) != want {
					t.Errorf("%s holds %q (%v), want %q", path, b, err, want)
				}
			}
			if got := files(); !slices.Equal(got, []string{"a", "b"}) {
				t.Fatalf("files %v, want a and b only", got)
			}
			if st, err := os.Stat(dir + "/d/a"); err != nil || st.Mode().Perm() != 0o644 {
				t.Fatalf("d/a: %v, %v", st, err)
			}
			if !linkOnly && l.linkOnly.Load() {
				t.Skip("the file system of the test directory has no RENAME_NOREPLACE; the link fallback ran")
			}
		})
	}
}
