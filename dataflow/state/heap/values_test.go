package heap

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestValuesMatchMap runs random sets and deletes, enough to grow the
// table and compact the arena many times, against a Go map, and checks
// that every value a get returned stays unchanged afterwards (invariant
// arena-append-only).
func TestValuesMatchMap(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	v := newValues()
	want := map[string]string{}
	type held struct {
		b    []byte
		want string
	}
	var kept []held
	compactions := 0
	for step := range 200000 {
		ns := fmt.Appendf(nil, "ns-%d", r.IntN(3000))
		switch r.IntN(10) {
		case 0, 1:
			v.del(ns)
			delete(want, string(ns))
		default:
			val := bytes.Repeat([]byte{byte(step)}, r.IntN(40))
			before := len(v.arena)
			v.set(ns, val)
			if len(v.arena) < before {
				compactions++
			}
			want[string(ns)] = string(val)
		}
		probe := fmt.Appendf(nil, "ns-%d", r.IntN(3000))
		got, ok := v.get(probe)
		w, wok := want[string(probe)]
		if ok != wok || string(got) != w {
			t.Fatalf("step %d: get(%s) = %q,%v want %q,%v", step, probe, got, ok, w, wok)
		}
		if ok && r.IntN(100) == 0 {
			kept = append(kept, held{got, w})
		}
	}
	if v.n != len(want) {
		t.Fatalf("table counts %d entries, map %d", v.n, len(want))
	}
	for ns, w := range want {
		if got, ok := v.get([]byte(ns)); !ok || string(got) != w {
			t.Fatalf("get(%s) = %q,%v want %q", ns, got, ok, w)
		}
	}
	for i, h := range kept {
		if string(h.b) != h.want {
			t.Fatalf("value %d returned earlier changed to %q, was %q", i, h.b, h.want)
		}
	}
	if compactions == 0 {
		t.Fatal("the arena was never compacted")
	}
}

// TestRestoreReadsVersion1: handles written before value entries got their
// own section still restore.
func TestRestoreReadsVersion1(t *testing.T) {
	// Two namespaces: "a" with the empty key and "k", "b" with the empty
	// key only.
	h := []byte{formatV1, 2}
	put := func(b ...[]byte) {
		for _, x := range b {
			h = binary.AppendUvarint(h, uint64(len(x)))
			h = append(h, x...)
		}
	}
	put([]byte("a"))
	h = binary.AppendUvarint(h, 2)
	put([]byte(""), []byte("va"), []byte("k"), []byte("vk"))
	put([]byte("b"))
	h = binary.AppendUvarint(h, 1)
	put([]byte(""), []byte("vb"))
	b, err := Restore(h, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ ns, key, want string }{{"a", "", "va"}, {"a", "k", "vk"}, {"b", "", "vb"}} {
		got, ok, _ := b.Get([]byte(c.ns), []byte(c.key))
		if !ok || string(got) != c.want {
			t.Fatalf("Get(%s, %q) = %q,%v want %q", c.ns, c.key, got, ok, c.want)
		}
	}
	var keys []string
	_ = b.Iterate([]byte("a"), func(k, _ []byte) error { keys = append(keys, string(k)); return nil })
	if fmt.Sprint(keys) != "[ k]" {
		t.Fatalf("Iterate(a) keys %q, want the empty key then k", keys)
	}
}

// TestRewriteKeepsNamespace: rewriting the value of an entry appends the
// value alone; the old value is the only garbage.
func TestRewriteKeepsNamespace(t *testing.T) {
	v := newValues()
	ns := bytes.Repeat([]byte("k"), 1000)
	v.set(ns, []byte("one"))
	before := len(v.arena)
	v.set(ns, []byte("three"))
	if grew := len(v.arena) - before; grew != len("three") || v.garbage != len("one") {
		t.Fatalf("rewrite grew the arena by %d bytes with %d of garbage, want 5 and 3", grew, v.garbage)
	}
	if got, ok := v.get(ns); !ok || string(got) != "three" {
		t.Fatalf("get = %q,%v", got, ok)
	}
}

// TestArenaGrowsIntoPreparedBuffer: once the arena is three quarters full
// its next buffer is prepared on another goroutine, and growing takes it
// (no copy into fresh memory) with every value intact.
func TestArenaGrowsIntoPreparedBuffer(t *testing.T) {
	defer func(a, b int) { prefaultFrom, prefaultTo = a, b }(prefaultFrom, prefaultTo)
	prefaultFrom, prefaultTo = 1<<12, 1<<30
	v := newValues()
	val := bytes.Repeat([]byte("v"), 100)
	taken := 0
	for i := range 20000 {
		before := cap(v.arena)
		spare := v.spare.Load()
		v.set(fmt.Appendf(nil, "ns-%05d", i), val)
		if cap(v.arena) != before && spare != nil && cap(v.arena) == cap(*spare) {
			taken++
		}
		if i%100 == 0 {
			// Give the preparing goroutine a chance on a busy machine.
			for v.preparing.Load() {
				runtime.Gosched()
			}
		}
	}
	if taken == 0 {
		t.Fatalf("the arena grew to %d bytes without taking a prepared buffer", cap(v.arena))
	}
	for i := range 20000 {
		got, ok := v.get(fmt.Appendf(nil, "ns-%05d", i))
		if !ok || !bytes.Equal(got, val) {
			t.Fatalf("ns-%05d = %q,%v", i, got, ok)
		}
	}
	t.Logf("%d growths into prepared buffers, arena %d of %d bytes", taken, len(v.arena), cap(v.arena))
}

// TestCompactionTakesPreparedBuffer: once garbage is a quarter of the
// arena a buffer for its compaction is prepared, and the compaction copies
// the live entries into it.
func TestCompactionTakesPreparedBuffer(t *testing.T) {
	defer func(a, b int) { prefaultFrom, prefaultTo = a, b }(prefaultFrom, prefaultTo)
	prefaultFrom, prefaultTo = 1<<12, 1<<30
	v := newValues()
	val := bytes.Repeat([]byte("v"), 100)
	for i := range 20000 {
		v.set(fmt.Appendf(nil, "ns-%05d", i), val)
	}
	for v.preparing.Load() {
		runtime.Gosched()
	}
	v.spare.Store(nil) // one prepared for growth
	gen := v.gen
	var spare []byte
	for i := 0; v.gen == gen; i++ {
		if p := v.spare.Load(); p != nil {
			spare = *p
		}
		v.del(fmt.Appendf(nil, "ns-%05d", i))
		for v.preparing.Load() {
			runtime.Gosched()
		}
	}
	if spare == nil || cap(v.arena) != cap(spare) || &v.arena[:1][0] != &spare[:1][0] {
		t.Fatalf("the compaction did not take the prepared buffer (arena cap %d, spare cap %d)", cap(v.arena), cap(spare))
	}
	for i := range 20000 {
		got, ok := v.get(fmt.Appendf(nil, "ns-%05d", i))
		if deleted := i < 20000-v.n; ok == deleted || (ok && !bytes.Equal(got, val)) {
			t.Fatalf("ns-%05d = %q,%v after the compaction", i, got, ok)
		}
	}
}
