package heap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/internal/base"
)

// smallSlotLog makes tables of a few entries log their slots, change
// records go to files from a few bytes, arenas go to files from 512 bytes
// and arenas of any size prepare their next buffer, for the duration of
// the test.
func smallSlotLog(t *testing.T, inline int) {
	t.Helper()
	a, b, c, d, e := slotInline, slotTail, inlineTail, prefaultFrom, prefaultTo
	t.Cleanup(func() { slotInline, slotTail, inlineTail, prefaultFrom, prefaultTo = a, b, c, d, e })
	slotInline, slotTail, inlineTail = inline, 150, 512
	prefaultFrom, prefaultTo = 1<<9, 1<<30
}

// fullModel is the state a snapshot must restore: value entries (empty
// user key) and map entries.
type fullModel struct {
	values map[string]string
	maps   map[string]map[string]string
}

func (m fullModel) clone() fullModel {
	c := fullModel{values: maps.Clone(m.values), maps: map[string]map[string]string{}}
	for ns, inner := range m.maps {
		c.maps[ns] = maps.Clone(inner)
	}
	return c
}

// diff reports how b differs from m ("" when equal).
func (m fullModel) diff(b *Backend) string {
	if d := valuesEqual(b, m.values); d != "" {
		return d
	}
	if len(b.m) != len(m.maps) {
		return fmt.Sprintf("%d map namespaces, want %d", len(b.m), len(m.maps))
	}
	for ns, inner := range m.maps {
		got := b.m[ns]
		if len(got) != len(inner) {
			return fmt.Sprintf("namespace %q has %d map entries, want %d", ns, len(got), len(inner))
		}
		for k, v := range inner {
			if g, ok := got[k]; !ok || string(g) != v {
				return fmt.Sprintf("map entry %q/%q = %q,%v want %q", ns, k, g, ok, v)
			}
		}
	}
	return ""
}

// listedFiles reads only the shared files a snapshot listed in
// state.Snapshot.Shared: those the checkpoint's retention keeps.
type listedFiles struct {
	*checkpoint.SharedFiles
	listed map[string]bool
}

func (f listedFiles) ReadSharedBytes(name string, dst []byte) error {
	if !f.listed[name] {
		return fmt.Errorf("shared file %s not listed by the snapshot: %w", name, base.ErrNotFound)
	}
	return f.SharedFiles.ReadSharedBytes(name, dst)
}

// pendingSnap is a snapshot whose asynchronous part runs later.
type pendingSnap struct {
	id      int
	sn      state.Snapshot
	model   fullModel
	dropped bool // Upload never runs
	handle  []byte
	err     error
	done    chan struct{}
}

// historyOpts shapes a random history.
type historyOpts struct {
	keys       int
	emptyVals  bool // values may be empty
	steps      int
	concurrent bool // asynchronous parts run on another goroutine
}

// runHistory runs a random history of value and map writes over backend
// b with snapshots whose asynchronous parts run late (in snapshot order,
// on another goroutine when concurrent), some of them never uploaded
// (dropped checkpoints), restores of older handles from which the
// history goes on, and checks that every handle uploaded restores
// exactly the state of its snapshot. It returns the first difference
// found ("" when none).
func runHistory(t *testing.T, seed uint64, o historyOpts) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 77))
	files, dir := sharedFiles(t)
	var st struct{ restores, compactions, plain int }
	defer func() {
		bases, changes := slotFiles(t, dir)
		t.Logf("%d slot bases, %d change files, %d restores continued, %d compactions, %d format 2 snapshots",
			len(bases), len(changes), st.restores, st.compactions, st.plain)
		if len(bases) == 0 || len(changes) == 0 || st.restores == 0 || st.compactions == 0 {
			t.Error("the history did not reach every path")
		}
	}()
	b := New()
	model := fullModel{values: map[string]string{}, maps: map[string]map[string]string{}}
	var queue []*pendingSnap // taken, asynchronous part not started
	var all []*pendingSnap
	work := make(chan *pendingSnap, 1024)
	workerDone := make(chan struct{})
	runOne := func(p *pendingSnap) {
		defer close(p.done)
		if !p.dropped {
			if err := p.sn.Upload(); err != nil {
				p.err = err
				return
			}
		}
		p.handle, p.err = p.sn.Encode()
	}
	go func() {
		defer close(workerDone)
		for p := range work {
			runOne(p)
		}
	}()
	defer func() {
		close(work)
		<-workerDone
	}()
	// flush starts the asynchronous parts of the first k queued snapshots.
	flush := func(k int) {
		for _, p := range queue[:k] {
			if o.concurrent {
				work <- p
			} else {
				runOne(p)
			}
		}
		queue = queue[k:]
	}
	// check waits for every snapshot started and restores each handle.
	checked := 0
	check := func() string {
		flush(len(queue))
		for _, p := range all[checked:] {
			<-p.done
		}
		for _, p := range all[checked:] {
			if p.err != nil {
				t.Fatalf("snapshot %d: %v", p.id, p.err)
			}
			if p.dropped {
				continue
			}
			listed := listedFiles{files, map[string]bool{}}
			for _, n := range p.sn.Shared {
				listed.listed[n] = true
			}
			r, err := Restore(p.handle, listed)
			if err != nil {
				return fmt.Sprintf("restore of snapshot %d: %v", p.id, err)
			}
			if d := p.model.diff(r); d != "" {
				return fmt.Sprintf("restore of snapshot %d: %s", p.id, d)
			}
		}
		checked = len(all)
		return ""
	}
	value := func(step int) string {
		if o.emptyVals && rng.IntN(6) == 0 {
			return ""
		}
		return strings.Repeat("v", rng.IntN(200)) + fmt.Sprint(step)
	}
	keys := o.keys
	for step := range o.steps {
		// Phases that grow and shrink the table across slotInline.
		if step%500 == 0 {
			keys = 1 + rng.IntN(o.keys)
		}
		ns := fmt.Sprintf("n%d", rng.IntN(keys))
		switch r := rng.IntN(100); {
		case r < 45:
			v := value(step)
			if err := b.Set([]byte(ns), nil, []byte(v)); err != nil {
				t.Fatal(err)
			}
			model.values[ns] = v
		case r < 70:
			if err := b.Delete([]byte(ns), nil); err != nil {
				t.Fatal(err)
			}
			delete(model.values, ns)
		case r < 75:
			// Removed and added again, several times.
			for range 1 + rng.IntN(3) {
				_ = b.Delete([]byte(ns), nil)
				v := value(step)
				_ = b.Set([]byte(ns), nil, []byte(v))
				model.values[ns] = v
			}
		case r < 82:
			k := fmt.Sprintf("k%d", rng.IntN(5))
			v := "m" + value(step)
			_ = b.Set([]byte(ns), []byte(k), []byte(v))
			if model.maps[ns] == nil {
				model.maps[ns] = map[string]string{}
			}
			model.maps[ns][k] = v
		case r < 85:
			k := fmt.Sprintf("k%d", rng.IntN(5))
			_ = b.Delete([]byte(ns), []byte(k))
			if inner := model.maps[ns]; inner != nil {
				delete(inner, k)
				if len(inner) == 0 {
					delete(model.maps, ns)
				}
			}
		case r < 86:
			_ = b.DeleteNamespace([]byte(ns))
			delete(model.values, ns)
			delete(model.maps, ns)
		case r < 96:
			sn, err := b.SnapshotAsync(base.CheckpointID(step+1), files)
			if err != nil {
				t.Fatal(err)
			}
			p := &pendingSnap{id: step, sn: sn, model: model.clone(), dropped: rng.IntN(6) == 0, done: make(chan struct{})}
			queue = append(queue, p)
			all = append(all, p)
			// Several snapshots may be taken before the first one's
			// asynchronous part starts.
			if k := rng.IntN(len(queue) + 1); k > 0 {
				flush(k)
			}
		case r < 97:
			// A restore right away, from which the history goes on.
			if d := check(); d != "" {
				return d
			}
			var cands []*pendingSnap
			for _, p := range all {
				if !p.dropped {
					cands = append(cands, p)
				}
			}
			if len(cands) == 0 {
				continue
			}
			p := cands[rng.IntN(len(cands))] // perhaps an older one
			r, err := Restore(p.handle, files)
			if err != nil {
				return fmt.Sprintf("restore of snapshot %d: %v", p.id, err)
			}
			st.compactions += int(b.v.gen)
			st.restores++
			b, model = r, p.model.clone()
		case r < 98:
			// A snapshot without shared files (format 2) between the
			// others.
			sn, err := b.Snapshot(base.CheckpointID(step+1), nil)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Restore(sn.Handle, nil)
			if err != nil {
				return fmt.Sprintf("restore of format 2 snapshot at %d: %v", step, err)
			}
			if d := model.diff(r); d != "" {
				return fmt.Sprintf("format 2 snapshot at %d: %s", step, d)
			}
			st.plain++
		default:
			// Values rewritten in bulk: garbage, then a compaction.
			for i := range keys {
				ns := fmt.Sprintf("n%d", i)
				if _, ok := model.values[ns]; ok {
					v := strings.Repeat("w", 1000) + value(step)
					_ = b.Set([]byte(ns), nil, []byte(v))
					model.values[ns] = v
				}
			}
		}
	}
	st.compactions += int(b.v.gen)
	sn, err := b.SnapshotAsync(base.CheckpointID(o.steps+1), files)
	if err != nil {
		t.Fatal(err)
	}
	p := &pendingSnap{id: o.steps, sn: sn, model: model.clone(), done: make(chan struct{})}
	queue = append(queue, p)
	all = append(all, p)
	return check()
}

// TestSlotLogAdversarialHistories: random histories with late, dropped
// and batched snapshots, restores of older handles, deletions and
// re-additions within an interval, map entries, compactions and tables
// crossing slotInline both ways; every uploaded handle restores exactly
// the state of its snapshot. Values are never empty here (see
// TestSlotLogEmptyValueAtMark).
func TestSlotLogAdversarialHistories(t *testing.T) {
	smallSlotLog(t, 12)
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			if d := runHistory(t, seed, historyOpts{keys: 60, steps: 4000}); d != "" {
				t.Fatal(d)
			}
		})
	}
}

// TestSlotLogConcurrentEncode: as TestSlotLogAdversarialHistories, with
// Upload and Encode on another goroutine while the backend goes on
// changing (run with -race).
func TestSlotLogConcurrentEncode(t *testing.T) {
	smallSlotLog(t, 12)
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			if d := runHistory(t, 100+seed, historyOpts{keys: 60, steps: 4000, concurrent: true}); d != "" {
				t.Fatal(d)
			}
		})
	}
}

// TestSlotLogEmptyValueAtMark: an entry whose value is empty and was the
// last thing appended to the arena before a snapshot ends at the arena's
// length, where one set after the snapshot would start; its next Set must
// still be logged (startLog appends a byte so that it lies below the
// mark), or the next handle restores the old, empty value. Likewise an
// empty namespace with an empty value added last must be logged when
// removed.
func TestSlotLogEmptyValueAtMark(t *testing.T) {
	smallSlotLog(t, 8)
	files, _ := sharedFiles(t)
	b := New()
	for i := range 10 {
		_ = b.Set(fmt.Appendf(nil, "ns-%02d", i), nil, []byte("value"))
	}
	_ = b.Set([]byte("k"), nil, []byte{}) // last in the arena
	h1 := finish(t, mustSnapshot(t, b, 1, files))
	_ = b.Set([]byte("k"), nil, []byte("x"))
	h2 := finish(t, mustSnapshot(t, b, 2, files))
	for i, c := range []struct {
		h    []byte
		want string
	}{{h1, ""}, {h2, "x"}} {
		r, err := Restore(c.h, files)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok, _ := r.Get([]byte("k"), nil); !ok || string(got) != c.want {
			t.Errorf("snapshot %d restores k = %q,%v, want %q", i+1, got, ok, c.want)
		}
	}

	// The empty namespace with an empty value, removed after the
	// snapshot.
	b = New()
	for i := range 10 {
		_ = b.Set(fmt.Appendf(nil, "ns-%02d", i), nil, []byte("value"))
	}
	_ = b.Set([]byte{}, nil, []byte{})
	finish(t, mustSnapshot(t, b, 1, files))
	_ = b.Delete([]byte{}, nil)
	h := finish(t, mustSnapshot(t, b, 2, files))
	r, err := Restore(h, files)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := r.Get([]byte{}, nil); ok {
		t.Errorf("removed empty namespace restored with value %q", got)
	}
}

// TestSlotLogEmptyValuesHistories: random histories as
// TestSlotLogAdversarialHistories, with empty values among the others.
func TestSlotLogEmptyValuesHistories(t *testing.T) {
	smallSlotLog(t, 12)
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			if d := runHistory(t, 200+seed, historyOpts{keys: 60, steps: 4000, emptyVals: true}); d != "" {
				t.Fatal(d)
			}
		})
	}
}

// slotHandle returns a version 5 handle with a logged slot section (base
// file, change files and a tail) and the files it references.
func slotHandle(tb testing.TB) ([]byte, state.SnapshotFiles) {
	tb.Helper()
	a, c, d := slotInline, slotTail, inlineTail
	defer func() { slotInline, slotTail, inlineTail = a, c, d }()
	slotInline, slotTail, inlineTail = 4, 20, 64
	files := checkpoint.NewStorage(checkpoint.OSFS{}, tb.TempDir(), 1).Shared()
	b := New()
	for i := range 8 {
		_ = b.Set(fmt.Appendf(nil, "ns-%d", i), nil, []byte("value"))
	}
	_ = b.Set([]byte("m"), []byte("k"), []byte("v"))
	finishTB(tb, b, 1, files)
	for i := range 3 {
		_ = b.Set(fmt.Appendf(nil, "ns-%d", i), nil, []byte("other"))
	}
	finishTB(tb, b, 2, files)
	_ = b.Delete([]byte("ns-7"), nil)
	_ = b.Set([]byte("new"), nil, []byte("n"))
	h := finishTB(tb, b, 3, files)
	if h[0] != formatSlotLog || !strings.Contains(string(h), ".slog") {
		tb.Fatalf("handle %q has no slot change file", h)
	}
	return h, files
}

func finishTB(tb testing.TB, b *Backend, id base.CheckpointID, files state.SnapshotFiles) []byte {
	tb.Helper()
	sn, err := b.SnapshotAsync(id, files)
	if err != nil {
		tb.Fatal(err)
	}
	if err := sn.Upload(); err != nil {
		tb.Fatal(err)
	}
	h, err := sn.Encode()
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// TestSlotHandleDamage: every truncation and every single-byte change of
// a version 5 handle with slot files fails with corruption, a checksum
// error or not found, or restores; none panics.
func TestSlotHandleDamage(t *testing.T) {
	h, files := slotHandle(t)
	if _, err := Restore(h, files); err != nil {
		t.Fatal(err)
	}
	try := func(what string, p []byte) {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%s: Restore panicked: %v", what, r)
			}
		}()
		_, err := Restore(p, files)
		if err != nil && !errors.Is(err, base.ErrCorruption) && !errors.Is(err, base.ErrChecksum) && !errors.Is(err, base.ErrNotFound) {
			t.Errorf("%s: %v", what, err)
		}
	}
	for n := range len(h) {
		p := h[:n]
		if _, err := Restore(p, files); !errors.Is(err, base.ErrCorruption) {
			t.Errorf("handle cut at %d of %d: %v, want corruption", n, len(h), err)
		}
	}
	for i := range h {
		for _, x := range []byte{1, 0x80, 0xff} {
			p := append([]byte(nil), h...)
			p[i] ^= x
			try(fmt.Sprintf("byte %d ^ %#x", i, x), p)
		}
	}
}

// TestHugeArenaFileSizes: a damaged handle naming arena files whose sizes
// add up beyond what can be allocated (300 of 1 TiB) fails as corruption
// before the arena is allocated; it must not panic ("makeslice: len out of
// range").
func TestHugeArenaFileSizes(t *testing.T) {
	files, _ := sharedFiles(t)
	h := []byte{formatSlotLog, 1, 1, 0} // maps: inline, no namespace
	h = binary.AppendUvarint(h, 300)
	for range 300 {
		h = append(h, 1, 'a')
		h = binary.AppendUvarint(h, 1<<40)
		h = append(h, 0, 0, 0, 0)
	}
	h = append(h, 0, 1, 0) // empty tail, inline slots, none
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("Restore panicked: %v", r)
		}
	}()
	if _, err := Restore(h, files); !errors.Is(err, base.ErrCorruption) {
		t.Errorf("Restore = %v, want corruption", err)
	}
}

// TestHugeSlotFileSize: a damaged version 5 handle whose slot base file
// reference claims 1 TiB (the most parseFileRef accepts) must fail with an
// error before a buffer of that size is allocated (checkSize). An
// allocation that large would kill the process ("fatal error: runtime:
// out of memory", which no recover catches), so the restore runs in a
// child process.
func TestHugeSlotFileSize(t *testing.T) {
	if os.Getenv("HEAP_HUGE_SLOT_FILE") == "1" {
		files, _ := sharedFiles(t)
		h := []byte{formatSlotLog, 1, 1, 0} // maps: inline, no namespace
		h = append(h, 0, 0, 0)              // no arena file, empty tail, logged slots
		h = append(h, 1, 'a')               // base file "a"
		h = binary.AppendUvarint(h, 1<<40)
		h = append(h, 0, 0, 0, 0, 0, 0) // crc, no change file, empty tail
		_, err := Restore(h, files)
		if !errors.Is(err, base.ErrCorruption) && !errors.Is(err, base.ErrNotFound) && !errors.Is(err, base.ErrChecksum) {
			t.Fatalf("Restore = %v", err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHugeSlotFileSize$")
	cmd.Env = append(os.Environ(), "HEAP_HUGE_SLOT_FILE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		first, _, _ := strings.Cut(string(out), "\n")
		t.Fatalf("restore of a handle naming a 1 TiB slot file: %v: %s", err, first)
	}
}

// FuzzRestoreSlotHandle: Restore of any version 5 handle, seeded with one
// with slot files, gives a backend or an error; it never panics. (Errors
// of the file system for names no backend writes are let through here:
// TestSlotFileNameChecked covers them.)
func FuzzRestoreSlotHandle(f *testing.F) {
	h, files := slotHandle(f)
	f.Add(h)
	f.Fuzz(func(t *testing.T, p []byte) {
		if len(p) == 0 || p[0] != formatSlotLog {
			return
		}
		if b, err := Restore(p, files); err == nil {
			// A restored backend snapshots and restores again.
			sn, err := b.Snapshot(1, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Restore(sn.Handle, nil); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestSlotFileNameChecked: a damaged handle naming a slot file outside
// the shared directory ("../", an absolute path), or with a byte no file
// name holds, fails as corruption: the checkpoint storage refuses shared
// file names that are not plain names in its directory.
func TestSlotFileNameChecked(t *testing.T) {
	files, _ := sharedFiles(t)
	for _, name := range []string{"../../x", "a\x00b", "/etc/hostname"} {
		h := []byte{formatSlotLog, 1, 1, 0} // maps: inline, no namespace
		h = append(h, 0, 0, 0)              // no arena file, empty tail, logged slots
		h = binary.AppendUvarint(h, uint64(len(name)))
		h = append(h, name...)
		h = append(h, 1, 0, 0, 0, 0, 0, 0) // size 1, crc, no change file, empty tail
		if _, err := Restore(h, files); !errors.Is(err, base.ErrCorruption) {
			t.Errorf("slot base file named %q: %v, want corruption", name, err)
		}
	}
}
