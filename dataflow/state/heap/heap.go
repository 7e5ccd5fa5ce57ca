package heap

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/internal/base"
)

// Handle format versions: 1 wrote every entry in the namespace section; 2
// (written now) writes entries with an empty user key in a section of
// their own. Restore reads both.
const (
	formatV1      = 1
	formatV2      = 2
	formatVersion = formatV2
	// formatShared (version 3) keeps the value arena in shared files
	// (segments.go); written when the snapshot files can take them from
	// memory (state.SharedBytes).
	formatShared = 3
	// formatMapLog (version 4) is version 3 with the map section written
	// incrementally, as a base and change records (maplog.go).
	formatMapLog = 4
	// formatSlotLog (version 5) is version 4 with a slot section that
	// lists the value entries whole or as a base file and change records
	// (slotlog.go).
	formatSlotLog = 5
)

// Backend is the heap state backend. The zero value is not usable; call
// New or Restore.
type Backend struct {
	// m holds the entries with a non-empty user key (map and list
	// state), by namespace.
	m map[string]map[string][]byte
	// v holds the entries with an empty user key (value state, a list's
	// length, a map's empty key).
	v *values
	// lastSize is the size of the last snapshot's namespace section, the
	// next one's guess.
	lastSize int
	// segs are the arena files of format version 3, covering the arena of
	// generation segGen up to the end of the last one (segments.go).
	segs   []*segment
	segGen uint64
	// prefix and seq name this backend's arena files.
	prefix string
	seq    uint64
	// mlog logs the changes of m for incremental snapshots (maplog.go).
	mlog mapLog
	// stab is the incremental slot table of format version 5 (slotlog.go).
	stab slotTable
}

func (b *Backend) sizeHint() int { return b.lastSize + b.lastSize/8 + 64 }

var (
	_ state.Backend          = (*Backend)(nil)
	_ state.AsyncSnapshotter = (*Backend)(nil)
)

// New returns an empty backend.
func New() *Backend { return &Backend{m: map[string]map[string][]byte{}, v: newValues()} }

// Get implements state.Backend. The bytes stay unchanged for as long as the
// caller keeps them (invariant arena-append-only; a Set stores a new copy).
func (b *Backend) Get(ns, key []byte) ([]byte, bool, error) {
	if len(key) == 0 {
		v, ok := b.v.get(ns)
		return v, ok, nil
	}
	v, ok := b.m[string(ns)][string(key)]
	return v, ok, nil
}

// Set implements state.Backend.
func (b *Backend) Set(ns, key, value []byte) error {
	if len(key) == 0 {
		b.v.set(ns, value)
		return nil
	}
	inner, ok := b.m[string(ns)]
	if !ok {
		inner = map[string][]byte{}
		b.m[string(ns)] = inner
	}
	inner[string(key)] = append([]byte(nil), value...)
	b.mlog.note(opPut, ns, key)
	return nil
}

// Delete implements state.Backend.
func (b *Backend) Delete(ns, key []byte) error {
	if len(key) == 0 {
		b.v.del(ns)
		return nil
	}
	inner, ok := b.m[string(ns)]
	if !ok {
		return nil
	}
	b.mlog.note(opDelete, ns, key)
	delete(inner, string(key))
	if len(inner) == 0 {
		delete(b.m, string(ns))
	}
	return nil
}

// Iterate implements state.Backend: the empty user key first, if set.
func (b *Backend) Iterate(ns []byte, fn func(key, value []byte) error) error {
	if v, ok := b.v.get(ns); ok {
		if err := fn([]byte{}, v); err != nil {
			return err
		}
	}
	inner := b.m[string(ns)]
	keys := make([]string, 0, len(inner))
	for k := range inner {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, ok := inner[k]
		if !ok {
			continue // deleted by fn
		}
		if err := fn([]byte(k), v); err != nil {
			return err
		}
	}
	return nil
}

// DeleteNamespace implements state.Backend.
func (b *Backend) DeleteNamespace(ns []byte) error {
	if _, ok := b.m[string(ns)]; ok {
		b.mlog.note(opDeleteNS, ns, nil)
	}
	delete(b.m, string(ns))
	b.v.del(ns)
	return nil
}

// Snapshot implements state.Backend: the handle is the whole state,
// encoded before Snapshot returns.
func (b *Backend) Snapshot(id base.CheckpointID, files state.SnapshotFiles) (state.Snapshot, error) {
	sn, err := b.SnapshotAsync(id, files)
	if err != nil {
		return sn, err
	}
	h, err := sn.Encode()
	return state.Snapshot{Handle: h, Shared: sn.Shared, Upload: sn.Upload}, err
}

// SnapshotAsync implements state.AsyncSnapshotter. The synchronous part
// encodes the map and list entries and freezes the value entries (a copy of
// their slots; the arena is shared, invariant arena-append-only); Encode
// appends the value entries, on any goroutine, while the backend goes on
// changing. Value state is most of a keyed aggregation's state, so most of
// the encoding leaves the subtask's goroutine.
//
// With files that take shared files from memory (state.SharedBytes) the
// value arena goes to shared files instead (format version 3), written by
// Upload: only the bytes appended since the last snapshot, unless the
// arena was compacted since (segments.go). A restore then reads the arena
// files straight into the arena on every core.
func (b *Backend) SnapshotAsync(_ base.CheckpointID, files state.SnapshotFiles) (state.Snapshot, error) {
	sb, shared := files.(state.SharedBytes)
	if shared {
		out, maps := b.mapSection([]byte{formatSlotLog})
		sn := b.snapshotShared(out, sb)
		for _, f := range maps {
			sn.Shared = append(sn.Shared, f.name)
		}
		uploadArena := sn.Upload
		sn.Upload = func() error {
			if err := uploadMaps(maps, sb); err != nil {
				return err
			}
			return uploadArena()
		}
		return sn, nil
	}
	out := encodeMaps(append(make([]byte, 0, b.sizeHint()), formatVersion), b.m)
	b.lastSize = len(out)
	f := b.v.freeze()
	return state.Snapshot{Encode: func() ([]byte, error) {
		size := len(out) + binary.MaxVarintLen64
		for i := range f.slots {
			size += 2*binary.MaxVarintLen32 + int(f.slots[i].nsLen) + int(f.slots[i].vLen)
		}
		h := slices.Grow(out, size-len(out))
		h = binary.AppendUvarint(h, uint64(len(f.slots)))
		for i := range f.slots {
			s := &f.slots[i]
			h = binary.AppendUvarint(h, uint64(s.nsLen))
			h = append(h, s.ns(f.arena)...)
			h = binary.AppendUvarint(h, uint64(s.vLen))
			h = append(h, s.value(f.arena)...)
		}
		return h, nil
	}}, nil
}

// Restore rebuilds a backend from a handle written by Snapshot, reading
// its arena files from files (format version 3). A damaged handle gives an
// error wrapping base.ErrCorruption, a damaged arena file one wrapping
// base.ErrChecksum.
func Restore(handle []byte, files state.SnapshotFiles) (*Backend, error) {
	bad := func(what string) error {
		return fmt.Errorf("heap state handle: %s: %w", what, base.ErrCorruption)
	}
	if len(handle) < 1 || handle[0] < formatV1 || handle[0] > formatSlotLog {
		return nil, bad("missing or unknown version")
	}
	p := handle[1:]
	b := New()
	if handle[0] >= formatMapLog {
		var err error
		if p, err = b.restoreMaps(p, files); err != nil {
			return nil, err
		}
	} else {
		var err error
		if p, err = b.readMaps(p); err != nil {
			return nil, err
		}
	}
	switch handle[0] {
	case formatV2:
		var err error
		if p, err = b.restoreValues(p); err != nil {
			return nil, err
		}
	case formatShared, formatMapLog, formatSlotLog:
		var err error
		if p, err = b.restoreShared(p, files, handle[0]); err != nil {
			return nil, err
		}
	}
	if len(p) != 0 {
		return nil, bad(fmt.Sprintf("%d trailing bytes", len(p)))
	}
	return b, nil
}

// readMaps reads a map section of format 1 or 2 from p into b (format 1
// kept empty user keys there, which go to the value entries) and returns
// what is left of p.
func (b *Backend) readMaps(p []byte) ([]byte, error) {
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
	bytesOf := func() ([]byte, bool) {
		n, ok := uv()
		if !ok || n > uint64(len(p)) {
			return nil, false
		}
		out := p[:n]
		p = p[n:]
		return out, true
	}
	nns, ok := uv()
	if !ok {
		return nil, bad("namespace count")
	}
	for range nns {
		ns, ok := bytesOf()
		if !ok {
			return nil, bad("namespace")
		}
		n, ok := uv()
		if !ok || n > uint64(len(p)) {
			return nil, bad("entry count")
		}
		inner := make(map[string][]byte, n)
		for range n {
			k, ok1 := bytesOf()
			v, ok2 := bytesOf()
			if !ok1 || !ok2 {
				return nil, bad("entry")
			}
			if len(k) == 0 {
				// Version 1 kept empty user keys here.
				b.v.set(ns, v)
				continue
			}
			inner[string(k)] = append([]byte(nil), v...)
		}
		if len(inner) > 0 {
			b.m[string(ns)] = inner
		}
	}
	return p, nil
}

// restoreValues reads the value section of a version 2 handle from p into
// one arena sized for it, and returns what is left of p.
func (b *Backend) restoreValues(p []byte) ([]byte, error) {
	bad := func(what string) error {
		return fmt.Errorf("heap state handle: %s: %w", what, base.ErrCorruption)
	}
	nv, n := binary.Uvarint(p)
	if n <= 0 || nv > uint64(len(p)) {
		return nil, bad("value count")
	}
	p = p[n:]
	// Two passes: the first checks the lengths and sums them, the second
	// copies into an arena of that size.
	total, q := 0, p
	for range 2 * nv {
		l, n := binary.Uvarint(q)
		if n <= 0 || l > uint64(len(q)-n) {
			return nil, bad("value entry")
		}
		q = q[n+int(l):]
		total += int(l)
	}
	arena := make([]byte, 0, total+total/16+64)
	entries := make([]slot, nv)
	for i := range entries {
		off := len(arena)
		var lens [2]uint32
		for j := range lens {
			l, n := binary.Uvarint(p)
			arena = append(arena, p[n:n+int(l)]...)
			p = p[n+int(l):]
			lens[j] = uint32(l)
		}
		entries[i] = slot{off: off, voff: off + int(lens[0]), nsLen: lens[0], vLen: lens[1]}
	}
	return p, b.v.restore(arena, entries, 0)
}

// Close implements state.Backend.
func (b *Backend) Close() error { return nil }
