package fstest

import (
	"errors"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/fileio"
)

// Run checks f against the FS contract. f must be empty.
func Run(t *testing.T, f fileio.FS) {
	t.Helper()
	if _, err := f.ReadFile("a/b"); !errors.Is(err, base.ErrNotFound) {
		t.Fatalf("missing file: %v, want ErrNotFound", err)
	}
	if ok, err := f.Exists("a/b"); ok || err != nil {
		t.Fatalf("Exists of a missing file: %v %v", ok, err)
	}
	if err := f.WriteFile("a/b", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteFile("a/b", []byte("two")); err != nil {
		t.Fatal(err)
	}
	if b, _ := f.ReadFile("a/b"); string(b) != "two" {
		t.Fatalf("read %q, want two", b)
	}
	if err := f.PutIfAbsent("a/b", []byte("three")); !errors.Is(err, fileio.ErrExist) || !errors.Is(err, base.ErrConflict) {
		t.Fatalf("PutIfAbsent on existing: %v", err)
	}
	if b, _ := f.ReadFile("a/b"); string(b) != "two" {
		t.Fatalf("failed put changed the file: %q", b)
	}
	if err := f.PutIfAbsent("a/c", []byte("c")); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteFile("a/d/e", []byte("e")); err != nil {
		t.Fatal(err)
	}
	ls, err := f.List("a")
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 || ls[0].Name != "b" || ls[1].Name != "c" || ls[0].Size != 3 || ls[0].ModUnixMilli == 0 {
		t.Fatalf("List = %+v", ls)
	}
	ds, _ := f.ListDirs("a")
	if len(ds) != 1 || ds[0] != "d" {
		t.Fatalf("ListDirs = %v", ds)
	}
	if ok, _ := f.Exists("a/c"); !ok {
		t.Fatal("a/c should exist")
	}
	if err := f.Delete("a/c"); err != nil {
		t.Fatal(err)
	}
	if err := f.Delete("a/c"); err != nil {
		t.Fatalf("second delete: %v", err)
	}
	if ok, _ := f.Exists("a/c"); ok {
		t.Fatal("a/c still exists")
	}
	if ls, _ := f.List("nowhere"); len(ls) != 0 {
		t.Fatalf("List of missing dir = %v", ls)
	}
	big := make([]byte, 3<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	if err := f.PutIfAbsent("big/x", big); err != nil {
		t.Fatal(err)
	}
	if b, err := f.ReadFile("big/x"); err != nil || fileio.Checksum(b) != fileio.Checksum(big) {
		t.Fatalf("big file: %v", err)
	}
	// Staged files, through the Stager or its fallbacks.
	if err := fileio.Stage(f, "s/one", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := fileio.Stage(f, "s/one", []byte("2")); !errors.Is(err, fileio.ErrExist) {
		t.Fatalf("Stage on existing: %v", err)
	}
	if err := fileio.SyncDir(f, "s"); err != nil {
		t.Fatal(err)
	}
	if err := fileio.SyncDir(f, "nowhere"); err != nil {
		t.Fatalf("SyncDir of a missing dir: %v", err)
	}
	if b, _ := f.ReadFile("s/one"); string(b) != "1" {
		t.Fatalf("staged file holds %q, want 1", b)
	}
	for _, v := range []string{"7", "12"} {
		if err := fileio.WriteHint(f, "s/HINT", []byte(v)); err != nil {
			t.Fatal(err)
		}
		if b, _ := f.ReadFile("s/HINT"); string(b) != v {
			t.Fatalf("hint holds %q, want %s", b, v)
		}
	}
	if ls, _ := f.List("s"); len(ls) != 2 {
		t.Fatalf("List(s) = %v, want HINT and one (no temporary files left)", ls)
	}
	// Prepared files: no name until Publish, put-if-absent at Publish,
	// nothing left by Discard.
	p, err := fileio.Prepare(f, "p/snap-1", []byte("first"))
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := f.Exists("p/snap-1"); ok {
		t.Fatal("prepared file visible before Publish")
	}
	if err := p.Publish(); err != nil {
		t.Fatal(err)
	}
	if err := fileio.SyncDir(f, "p"); err != nil {
		t.Fatal(err)
	}
	if b, _ := f.ReadFile("p/snap-1"); string(b) != "first" {
		t.Fatalf("published file holds %q, want first", b)
	}
	p2, err := fileio.Prepare(f, "p/snap-1", []byte("second"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p2.Publish(); !errors.Is(err, fileio.ErrExist) {
		t.Fatalf("Publish on an existing name: %v", err)
	}
	p2.Discard()
	if b, _ := f.ReadFile("p/snap-1"); string(b) != "first" {
		t.Fatalf("lost race changed the file: %q", b)
	}
	p3, err := fileio.Prepare(f, "p/snap-2", []byte("dropped"))
	if err != nil {
		t.Fatal(err)
	}
	p3.Discard()
	if ls, _ := f.List("p"); len(ls) != 1 || ls[0].Name != "snap-1" {
		t.Fatalf("List(p) = %v, want snap-1 alone (no temporary files left)", ls)
	}
}
