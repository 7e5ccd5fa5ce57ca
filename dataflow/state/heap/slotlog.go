package heap

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"sync"

	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/internal/base"
)

// # Incremental slot tables
//
// The arena files make a snapshot write only the arena bytes appended since
// the one before, but a handle of format 3 or 4 still lists every live
// entry's slot (offset and lengths, about 12 bytes each): a keyed
// aggregation of 60,000 groups checkpointed every 100 ms wrote 0.7 MB of
// slot list per checkpoint, 7 MB a second, almost all of it unchanged. In
// format 5 a table of slotInline entries or more is written as the map
// entries are (maplog.go, after Flink's changelog state backend, FLIP-158):
// a base file listing every slot, then change records, a put (off nsLen
// voff vLen) for an entry added or set since the snapshot before and a
// delete (off nsLen) for one removed, in a tail the handle carries, which
// becomes a file of its own once it reaches slotTail bytes. A new base is
// written when the change records since the last one outnumber its
// entries, and when a compaction starts a new arena generation (whose
// offsets no earlier record means).
//
// Set and Delete log what they change (values.log): an entry the first
// time it changes after a snapshot, an entry added, and an entry removed
// that was live at the snapshot (its namespace lies below mark, the arena
// length after the snapshot and one byte of garbage appended then, so
// that an entry with an empty value or namespace at the arena's end is
// below it too; a namespace removed and added again gets a new offset). The
// snapshot looks each logged entry up once, by its hash, and writes it as
// it is then: removals first, then puts.
//
// Invariant slot-changelog: the base's slots, then the change records of
// the files in order, then the tail, applied to an empty table, give
// exactly the live slots the table had when the snapshot was taken. An
// entry's namespace offset names it within one arena generation: a put
// finds its namespace absent or at the same offset, a delete finds it
// there; anything else is a damaged handle.

// Slot change record operations.
const (
	slotPut    byte = 1 // off nsLen voff vLen, each a uvarint
	slotDelete byte = 2 // off nsLen
)

// slotInline is the number of live entries from which a table's slots are
// written as a base and changes rather than whole into every handle (below
// it the list is at most about 50 KB). A variable so that tests can log
// small tables.
var slotInline = 4096

// slotTail is the size from which the change records a handle carries go
// to a shared file of their own, so that the handle, with the arena's tail,
// usually stays within the checkpoint's inline limit (256 KiB) and needs no
// file of its own. A variable so that tests can make change files.
var slotTail = 64 << 10

// loggedSlot names an entry changed since the last snapshot: its hash and
// its namespace's place in the arena.
type loggedSlot struct {
	hash  uint64
	off   int
	nsLen uint32
}

// slotChanges is the log values keeps while an incremental slot table is
// on: the entries added or set (once each) and the entries removed since
// the last snapshot, whose arena length was mark.
type slotChanges struct {
	on      bool
	mark    int
	touched []loggedSlot
	deleted []loggedSlot
}

// changed logs s before its value is replaced: once, the first time after
// a snapshot (a later value lies at mark or beyond).
func (l *slotChanges) changed(s *slot) {
	if l.on && s.voff < l.mark {
		l.touched = append(l.touched, loggedSlot{hash: s.hash, off: s.off, nsLen: s.nsLen})
	}
}

// added logs a new entry s.
func (l *slotChanges) added(s *slot) {
	if l.on {
		l.touched = append(l.touched, loggedSlot{hash: s.hash, off: s.off, nsLen: s.nsLen})
	}
}

// del logs s before it is removed, if it was live at the last snapshot.
func (l *slotChanges) del(s *slot) {
	if l.on && s.off < l.mark {
		l.deleted = append(l.deleted, loggedSlot{hash: s.hash, off: s.off, nsLen: s.nsLen})
	}
}

// startLog begins a new interval of the log after a snapshot. It first
// appends one byte of garbage to the arena, so that every entry live now
// lies strictly below mark, its empty namespace or value included: an
// empty value appended last sits at the arena's length, as one set after
// the snapshot would, and without the byte its next change went
// unlogged.
func (t *values) startLog() {
	t.reserve(1)
	t.arena = append(t.arena, 0)
	t.garbage++
	l := &t.log
	l.on, l.mark = true, len(t.arena)
	l.touched, l.deleted = l.touched[:0], l.deleted[:0]
}

// stop drops the log (a compaction, or a table written whole).
func (l *slotChanges) stop() { *l = slotChanges{} }

// slotBase is a base file of slots, encoded when first needed (on the
// goroutine that uploads or encodes the snapshot), from a copy of the slots
// taken at the snapshot.
type slotBase struct {
	name    string
	entries int
	once    sync.Once
	slots   []slot
	file    *mapFile
}

func (sb *slotBase) get() *mapFile {
	sb.once.Do(func() {
		sb.file = newMapFile(sb.name, appendSlots(make([]byte, 0, 8+len(sb.slots)*12), sb.slots))
		sb.slots = nil
	})
	return sb.file
}

// slotTable is the backend's side of incremental slot tables: the files
// and tail that the next snapshot's handle references, for arena
// generation gen. base is nil while the table is written whole.
type slotTable struct {
	gen     uint64
	base    *slotBase
	changes []*mapFile
	tail    []byte
	// records counts the change records since the base (files and tail).
	records int
}

// slotSnap is what one snapshot writes of the slots: the whole list
// (inline), or a base, change files and a tail.
type slotSnap struct {
	inline  []slot
	base    *slotBase
	changes []*mapFile
	tail    []byte
}

// slotSection takes the slot part of a snapshot (on the subtask's
// goroutine): the whole list when the table is small, a new base when
// there is none for this generation or the changes since outnumber it,
// and otherwise the change records of the entries logged since the last
// snapshot.
func (b *Backend) slotSection() slotSnap {
	t, l := b.v, &b.stab
	switch {
	case t.n < slotInline:
		*l = slotTable{}
		t.log.stop()
		return slotSnap{inline: t.freeze().slots}
	case l.base == nil || l.gen != t.gen || !t.log.on || l.records > l.base.entries:
		slots := t.freeze().slots
		*l = slotTable{gen: t.gen, base: &slotBase{name: b.fileName(".slots"), entries: len(slots), slots: slots}}
	default:
		var n int
		l.tail, n = t.changeRecords(l.tail)
		l.records += n
		if len(l.tail) >= slotTail {
			l.changes = append(l.changes, newMapFile(b.fileName(".slog"), l.tail))
			l.tail = nil
		}
	}
	t.startLog()
	return slotSnap{base: l.base, changes: slices.Clone(l.changes), tail: l.tail[:len(l.tail):len(l.tail)]}
}

// changeRecords appends to dst the change records of the logged entries:
// removals, then every entry added or set that is still live, as it is
// now. It returns dst and the number of records appended.
func (t *values) changeRecords(dst []byte) ([]byte, int) {
	n := 0
	for _, d := range t.log.deleted {
		dst = append(dst, slotDelete)
		dst = binary.AppendUvarint(dst, uint64(d.off))
		dst = binary.AppendUvarint(dst, uint64(d.nsLen))
		n++
	}
	for _, e := range t.log.touched {
		i, ok := t.find(t.arena[e.off:e.off+int(e.nsLen)], e.hash)
		if !ok || t.slots[i].off != e.off {
			continue // removed since, perhaps added again (logged anew)
		}
		s := &t.slots[i]
		dst = append(dst, slotPut)
		dst = binary.AppendUvarint(dst, uint64(s.off))
		dst = binary.AppendUvarint(dst, uint64(s.nsLen))
		dst = binary.AppendUvarint(dst, uint64(s.voff))
		dst = binary.AppendUvarint(dst, uint64(s.vLen))
		n++
	}
	return dst, n
}

// appendSlots appends a slot list: nvalues:uvarint (off nsLen voff vLen)*.
func appendSlots(h []byte, slots []slot) []byte {
	h = binary.AppendUvarint(h, uint64(len(slots)))
	for i := range slots {
		s := &slots[i]
		h = binary.AppendUvarint(h, uint64(s.off))
		h = binary.AppendUvarint(h, uint64(s.nsLen))
		h = binary.AppendUvarint(h, uint64(s.voff))
		h = binary.AppendUvarint(h, uint64(s.vLen))
	}
	return h
}

// appendSlotSection appends the slot section of a format 5 handle:
//
//	1 slots                              the whole list (appendSlots)
//	0 base nchanges:uvarint file* len:uvarint tail
//	file = len:uvarint name size:uvarint crc32c:4
func (sn *slotSnap) appendTo(h []byte) []byte {
	if sn.base == nil {
		return appendSlots(append(h, 1), sn.inline)
	}
	h = append(h, 0)
	h = appendFileRef(h, sn.base.get())
	h = binary.AppendUvarint(h, uint64(len(sn.changes)))
	for _, f := range sn.changes {
		h = appendFileRef(h, f)
	}
	h = binary.AppendUvarint(h, uint64(len(sn.tail)))
	return append(h, sn.tail...)
}

// upload stores the snapshot's slot files not stored yet.
func (sn *slotSnap) upload(files state.SharedBytes) error {
	if sn.base == nil {
		return nil
	}
	if err := sn.base.get().upload(files); err != nil {
		return err
	}
	return uploadMaps(sn.changes, files)
}

// names lists the snapshot's slot files.
func (sn *slotSnap) names() []string {
	if sn.base == nil {
		return nil
	}
	out := []string{sn.base.name}
	for _, f := range sn.changes {
		out = append(out, f.name)
	}
	return out
}

// decodeSlots reads a slot list (appendSlots) from p for an arena of total
// bytes, returning the slots, their live bytes and what is left of p.
func decodeSlots(p []byte, total int) ([]slot, int, []byte, error) {
	bad := func(what string) error {
		return fmt.Errorf("heap state handle: %s: %w", what, base.ErrCorruption)
	}
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, false
		}
		p = p[n:]
		return v, true
	}
	nv, ok := uv()
	if !ok || nv > uint64(len(p))/4 {
		return nil, 0, nil, bad("value count")
	}
	entries := make([]slot, nv)
	live := 0
	for i := range entries {
		off, ok1 := uv()
		nsLen, ok2 := uv()
		voff, ok3 := uv()
		vLen, ok4 := uv()
		if !ok1 || !ok2 || !ok3 || !ok4 || !within(total, off, nsLen) || !within(total, voff, vLen) {
			return nil, 0, nil, bad("value entry")
		}
		entries[i] = slot{off: int(off), voff: int(voff), nsLen: uint32(nsLen), vLen: uint32(vLen)}
		live += int(nsLen + vLen)
	}
	return entries, live, p, nil
}

// within reports whether [o, o+n) lies in an arena of total bytes and n
// fits a slot's length.
func within(total int, o, n uint64) bool {
	return o <= uint64(total) && n <= uint64(total)-o && n <= 1<<32-1
}

// slotRefs is the parsed slot section of a format 5 handle that names
// files.
type slotRefs struct {
	base    *mapFile
	changes []*mapFile
	tail    []byte
}

// parseSlotRefs reads the file part of a slot section (after its 0 byte)
// from p and returns what is left of p.
func parseSlotRefs(p []byte) (slotRefs, []byte, error) {
	bad := func(what string) error {
		return fmt.Errorf("heap state handle: %s: %w", what, base.ErrCorruption)
	}
	var r slotRefs
	var ok bool
	if r.base, p, ok = parseFileRef(p); !ok {
		return r, nil, bad("slot base file")
	}
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)) {
		return r, nil, bad("slot change file count")
	}
	p = p[k:]
	for range n {
		var f *mapFile
		if f, p, ok = parseFileRef(p); !ok {
			return r, nil, bad("slot change file")
		}
		r.changes = append(r.changes, f)
	}
	n, k = binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)-k) {
		return r, nil, bad("slot change tail")
	}
	r.tail = p[k : k+int(n)]
	return r, p[k+int(n):], nil
}

// parseFileRef reads a file reference (appendFileRef); the file's data is
// nil (it is stored).
func parseFileRef(p []byte) (*mapFile, []byte, bool) {
	n, k := binary.Uvarint(p)
	if k <= 0 || n > uint64(len(p)-k) {
		return nil, nil, false
	}
	name := string(p[k : k+int(n)])
	p = p[k+int(n):]
	size, k := binary.Uvarint(p)
	if k <= 0 || size > 1<<40 || len(p)-k < 4 {
		return nil, nil, false
	}
	p = p[k:]
	return &mapFile{name: name, size: int(size), crc: binary.LittleEndian.Uint32(p)}, p[4:], true
}

// readChecked reads shared file f whole and checks its size (before it
// allocates a buffer for it, checkSize) and its CRC-32C.
func readChecked(sb state.SharedBytes, f *mapFile, kind string) ([]byte, error) {
	if err := checkSize(sb, f.name, f.size, kind); err != nil {
		return nil, err
	}
	data := make([]byte, f.size)
	if err := sb.ReadSharedBytes(f.name, data); err != nil {
		return nil, fmt.Errorf("heap state %s file %s: %w", kind, f.name, err)
	}
	if crc32.Checksum(data, castagnoli) != f.crc {
		return nil, fmt.Errorf("heap state %s file %s: %w", kind, f.name, base.ErrChecksum)
	}
	return data, nil
}

// checkSize checks that shared file name has the size a handle gives,
// when sb can tell it without reading the file (state.SharedSizer): a
// damaged handle could give terabytes, which a restore would allocate
// before the read found the file shorter. Another size gives an error
// wrapping base.ErrChecksum, as ReadSharedBytes does.
func checkSize(sb state.SharedBytes, name string, size int, kind string) error {
	sz, ok := sb.(state.SharedSizer)
	if !ok {
		return nil
	}
	n, err := sz.SharedSize(name)
	if err != nil {
		return fmt.Errorf("heap state %s file %s: %w", kind, name, err)
	}
	if n != int64(size) {
		return fmt.Errorf("heap state %s file %s has %d bytes, the handle gives %d: %w", kind, name, n, size, base.ErrChecksum)
	}
	return nil
}

// applySlotChanges replays change records onto the table t, whose arena is
// whole (invariant slot-changelog).
func (t *values) applySlotChanges(p []byte) (int, error) {
	bad := func(what string) error {
		return fmt.Errorf("heap state slot change records: %s: %w", what, base.ErrCorruption)
	}
	total := len(t.arena)
	n := 0
	for len(p) > 0 {
		op := p[0]
		p = p[1:]
		var v [4]uint64
		fields := 2
		if op == slotPut {
			fields = 4
		} else if op != slotDelete {
			return n, bad(fmt.Sprintf("unknown operation %d", op))
		}
		for j := range fields {
			x, k := binary.Uvarint(p)
			if k <= 0 {
				return n, bad("damaged record")
			}
			v[j], p = x, p[k:]
		}
		if !within(total, v[0], v[1]) || (op == slotPut && !within(total, v[2], v[3])) {
			return n, bad("record outside the arena")
		}
		ns := t.arena[v[0] : v[0]+v[1]]
		h := t.hash(ns)
		i, found := t.find(ns, h)
		if found && t.slots[i].off != int(v[0]) {
			return n, bad(fmt.Sprintf("namespace %x at offset %d, recorded at %d", ns, t.slots[i].off, v[0]))
		}
		n++
		if op == slotDelete {
			if !found {
				return n, bad(fmt.Sprintf("namespace %x removed but absent", ns))
			}
			t.removeAt(i)
			continue
		}
		s := slot{hash: h, off: int(v[0]), nsLen: uint32(v[1]), voff: int(v[2]), vLen: uint32(v[3])}
		if !found {
			if 5*(t.n+1) > 4*len(t.slots) {
				t.grow()
				i, _ = t.find(ns, h)
			}
			t.n++
		}
		t.slots[i] = s
	}
	return n, nil
}

// replaySlots applies the change files and tail of refs to the restored
// base (of baseEntries slots), and keeps them for the next snapshot, which references the same
// files and appends to the same tail.
func (b *Backend) replaySlots(sb state.SharedBytes, refs slotRefs, baseEntries int) error {
	records := 0
	for _, f := range refs.changes {
		data, err := readChecked(sb, f, "slot change")
		if err != nil {
			return err
		}
		n, err := b.v.applySlotChanges(data)
		if err != nil {
			return fmt.Errorf("heap state slot change file %s: %w", f.name, err)
		}
		records += n
	}
	n, err := b.v.applySlotChanges(refs.tail)
	if err != nil {
		return err
	}
	base := &slotBase{name: refs.base.name, entries: baseEntries}
	base.once.Do(func() { base.file = refs.base })
	b.stab = slotTable{gen: b.v.gen, base: base, changes: refs.changes, tail: slices.Clone(refs.tail), records: records + n}
	b.v.startLog()
	return nil
}
