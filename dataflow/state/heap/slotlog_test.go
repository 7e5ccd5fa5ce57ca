package heap

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
)

// valuesEqual reports how b's value entries differ from model ("" when
// equal).
func valuesEqual(b *Backend, model map[string]string) string {
	if b.v.n != len(model) {
		return fmt.Sprintf("%d value entries, want %d", b.v.n, len(model))
	}
	for ns, want := range model {
		got, ok := b.v.get([]byte(ns))
		if !ok || string(got) != want {
			return fmt.Sprintf("value of %q = %q,%v want %q", ns, got, ok, want)
		}
	}
	return ""
}

// slotFiles returns the names of dir's slot base and change files.
func slotFiles(t *testing.T, dir string) (bases, changes []string) {
	t.Helper()
	bases, err := filepath.Glob(filepath.Join(dir, "*.slots"))
	if err != nil {
		t.Fatal(err)
	}
	changes, err = filepath.Glob(filepath.Join(dir, "*.slog"))
	if err != nil {
		t.Fatal(err)
	}
	return bases, changes
}

// TestSlotSnapshotsAreIncremental: once a table has slotInline entries, a
// snapshot's handle carries only the slots changed since the one before,
// not every live slot; a new base file comes once the changes outnumber
// the base; and every handle restores exactly the values it captured.
func TestSlotSnapshotsAreIncremental(t *testing.T) {
	defer func(n int) { inlineTail = n }(inlineTail)
	inlineTail = 4096
	files, dir := sharedFiles(t)
	b := New()
	model := map[string]string{}
	set := func(ns, v string) {
		if err := b.Set([]byte(ns), nil, []byte(v)); err != nil {
			t.Fatal(err)
		}
		model[ns] = v
	}
	for i := range 20000 {
		set(fmt.Sprintf("group-%06d", i), "1")
	}
	finish(t, mustSnapshot(t, b, 1, files))
	full := len(appendSlots(nil, b.v.freeze().slots))
	if bases, _ := slotFiles(t, dir); len(bases) != 1 {
		t.Fatalf("first snapshot of 20000 entries wrote slot base files %v, want one", bases)
	}
	// Each interval: 100 values set, 10 removed, 10 added, one removed
	// and added again.
	var handles [][]byte
	var models []map[string]string
	for c := range 30 {
		for i := range 100 {
			set(fmt.Sprintf("group-%06d", (c*100+i)*7%20000), fmt.Sprint(c))
		}
		for i := range 10 {
			ns := fmt.Sprintf("group-%06d", c*10+i+5000)
			_ = b.Delete([]byte(ns), nil)
			delete(model, ns)
			set(fmt.Sprintf("new-%d-%d", c, i), "n")
		}
		_ = b.Delete([]byte("group-019999"), nil)
		set("group-019999", fmt.Sprint("again", c))
		h := finish(t, mustSnapshot(t, b, base.CheckpointID(2+c), files))
		// Up to 121 change records of about 12 bytes each per interval
		// since the base, and the arena's tail, against 20000 slots.
		if len(h) > full/3 {
			t.Fatalf("snapshot %d: handle of %d bytes, the whole slot list is %d", c, len(h), full)
		}
		handles = append(handles, h)
		m := make(map[string]string, len(model))
		for k, v := range model {
			m[k] = v
		}
		models = append(models, m)
	}
	for c, h := range handles {
		r, err := Restore(h, files)
		if err != nil {
			t.Fatalf("restore of snapshot %d: %v", c, err)
		}
		if d := valuesEqual(r, models[c]); d != "" {
			t.Fatalf("restore of snapshot %d: %s", c, d)
		}
	}
	// Changes that outnumber the base: a new base.
	for i := range 20000 {
		set(fmt.Sprintf("group-%06d", i), "last")
	}
	finish(t, mustSnapshot(t, b, 100, files))
	h := finish(t, mustSnapshot(t, b, 101, files))
	if bases, _ := slotFiles(t, dir); len(bases) != 2 {
		t.Fatalf("after 20000 changes, slot base files %v, want two", bases)
	}
	r, err := Restore(h, files)
	if err != nil {
		t.Fatal(err)
	}
	if d := valuesEqual(r, model); d != "" {
		t.Fatal(d)
	}
}

// TestSlotLogMatchesModel runs random histories of sets, removals and
// re-additions (with arena compactions) over a table logged from a few
// entries, with change files from a few bytes, snapshotting at random; every
// handle is restored and compared with a model, and at times the history
// goes on from a restored backend, which must reference the files it was
// restored from.
func TestSlotLogMatchesModel(t *testing.T) {
	defer func(a, b, c int) { slotInline, slotTail, inlineTail = a, b, c }(slotInline, slotTail, inlineTail)
	slotInline, slotTail, inlineTail = 8, 200, 512
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			files, _ := sharedFiles(t)
			b := New()
			model := map[string]string{}
			keys := 20 + rng.IntN(300)
			compactions := uint64(0)
			for step := range 3000 {
				ns := fmt.Sprintf("k%d", rng.IntN(keys))
				switch r := rng.IntN(10); {
				case r < 6:
					v := strings.Repeat("v", rng.IntN(400)) + fmt.Sprint(step)
					_ = b.Set([]byte(ns), nil, []byte(v))
					model[ns] = v
				case r < 9:
					_ = b.Delete([]byte(ns), nil)
					delete(model, ns)
				default:
					id := base.CheckpointID(step + 1)
					h := finish(t, mustSnapshot(t, b, id, files))
					if h[0] != formatSlotLog {
						t.Fatalf("handle of version %d", h[0])
					}
					r, err := Restore(h, files)
					if err != nil {
						t.Fatalf("step %d: %v", step, err)
					}
					if d := valuesEqual(r, model); d != "" {
						t.Fatalf("step %d: %s", step, d)
					}
					if rng.IntN(4) == 0 {
						compactions += b.v.gen
						b = r
					}
				}
			}
			if compactions+b.v.gen == 0 {
				t.Error("no arena compaction in the history")
			}
		})
	}
}

// TestSlotFilesChecked: a damaged or missing slot file fails the restore
// with an error naming it, and a change record that contradicts the base
// is refused as corruption.
func TestSlotFilesChecked(t *testing.T) {
	defer func(n int) { slotTail = n }(slotTail)
	slotTail = 16
	files, dir := sharedFiles(t)
	b := New()
	for i := range slotInline + 10 {
		_ = b.Set(fmt.Appendf(nil, "ns-%05d", i), nil, []byte("value"))
	}
	finish(t, mustSnapshot(t, b, 1, files))
	for i := range 10 {
		_ = b.Set(fmt.Appendf(nil, "ns-%05d", i), nil, []byte("other"))
	}
	h := finish(t, mustSnapshot(t, b, 2, files))
	bases, changes := slotFiles(t, dir)
	if len(bases) != 1 || len(changes) != 1 {
		t.Fatalf("slot files %v %v, want one base and one change file", bases, changes)
	}
	if _, err := Restore(h, files); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{bases[0], changes[0]} {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		bad := bytes.Clone(data)
		bad[len(bad)/2] ^= 1
		if err := os.WriteFile(p, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Restore(h, files); !errors.Is(err, base.ErrChecksum) || !strings.Contains(err.Error(), filepath.Base(p)) {
			t.Errorf("restore with damaged %s: %v, want a checksum error naming it", filepath.Base(p), err)
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if _, err := Restore(h, files); !errors.Is(err, base.ErrNotFound) {
			t.Errorf("restore with %s missing: %v, want not found", filepath.Base(p), err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A removal of an entry the table does not hold.
	r, err := Restore(h, files)
	if err != nil {
		t.Fatal(err)
	}
	s := r.v.slots[mustFind(t, r, "ns-00001")]
	rec := binary.AppendUvarint([]byte{slotDelete}, uint64(s.off))
	rec = binary.AppendUvarint(rec, uint64(s.nsLen))
	_ = r.Delete([]byte("ns-00001"), nil)
	if _, err := r.v.applySlotChanges(rec); !errors.Is(err, base.ErrCorruption) {
		t.Errorf("removal of an absent entry: %v, want corruption", err)
	}
	if _, err := r.v.applySlotChanges([]byte{9, 0, 0}); !errors.Is(err, base.ErrCorruption) {
		t.Errorf("unknown operation: %v, want corruption", err)
	}
}

func mustFind(t *testing.T, b *Backend, ns string) int {
	t.Helper()
	i, ok := b.v.find([]byte(ns), b.v.hash([]byte(ns)))
	if !ok {
		t.Fatalf("%s not found", ns)
	}
	return i
}
