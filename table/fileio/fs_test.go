package fileio_test

import (
	"errors"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/fileio/fstest"
)

// Every FS implementation runs the same suite (NATS store_test.go style).
func TestFSSuite(t *testing.T) {
	impls := map[string]func(t *testing.T) fileio.FS{
		"local": func(t *testing.T) fileio.FS {
			l, err := fileio.NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return l
		},
		"mem":    func(*testing.T) fileio.FS { return fileio.NewMem() },
		"faulty": func(*testing.T) fileio.FS { return fileio.NewFaulty(fileio.NewMem()) },
	}
	for name, mk := range impls {
		t.Run(name, func(t *testing.T) { fstest.Run(t, mk(t)) })
	}
}

func TestFaultyFailsNthAndAfter(t *testing.T) {
	f := fileio.NewFaulty(fileio.NewMem())
	f.FailAfter(2)
	if err := f.WriteFile("x", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := f.PutIfAbsent("y", []byte("2")); !errors.Is(err, fileio.ErrInjected) {
		t.Fatalf("second op: %v", err)
	}
	if err := f.Delete("x"); !errors.Is(err, fileio.ErrInjected) {
		t.Fatalf("third op: %v", err)
	}
	if ok, _ := f.Exists("y"); ok {
		t.Fatal("failed put reached the inner FS")
	}
	f.Reset()
	if err := f.Delete("x"); err != nil {
		t.Fatal(err)
	}
}

func TestCheckedJSON(t *testing.T) {
	type doc struct {
		Version int    `json:"version"`
		Name    string `json:"name"`
	}
	b, err := fileio.EncodeJSON(doc{1, "t"})
	if err != nil {
		t.Fatal(err)
	}
	var d doc
	if err := fileio.DecodeJSON("f", b, &d); err != nil || d.Name != "t" || d.Version != 1 {
		t.Fatalf("decode: %v %+v", err, d)
	}
	bad := append([]byte(nil), b...)
	bad[12] ^= 1
	if err := fileio.DecodeJSON("f", bad, &d); !errors.Is(err, base.ErrChecksum) {
		t.Fatalf("flipped byte: %v", err)
	}
	if err := fileio.DecodeJSON("f", b[:len(b)/2], &d); !errors.Is(err, base.ErrCorruption) {
		t.Fatalf("truncated: %v", err)
	}
}

func TestReadChecked(t *testing.T) {
	m := fileio.NewMem()
	m.WriteFile("d", []byte("hello"))
	if _, err := fileio.ReadChecked(m, "d", 5, fileio.Checksum([]byte("hello"))); err != nil {
		t.Fatal(err)
	}
	if _, err := fileio.ReadChecked(m, "d", 6, 0); !errors.Is(err, base.ErrCorruption) {
		t.Fatalf("size: %v", err)
	}
	m.Corrupt("d", 0)
	if _, err := fileio.ReadChecked(m, "d", 5, fileio.Checksum([]byte("hello"))); !errors.Is(err, base.ErrChecksum) {
		t.Fatalf("crc: %v", err)
	}
}
