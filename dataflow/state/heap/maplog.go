package heap

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/internal/base"
)

// # Incremental map snapshots
//
// Map and list entries (Backend.m) live in Go maps, so they have no arena
// to write a range of. With checkpoint storage that takes shared files
// from memory they are written as a base and a changelog instead, as
// Flink's changelog state backend (FLIP-158) writes a materialized base
// plus the changes since: the first snapshot writes every entry (the
// base, a shared file once it is inlineTail bytes or more); later ones
// write only the entries changed since the snapshot before, as change
// records appended to a tail the handle carries, which becomes a shared
// file of its own once it reaches inlineTail. Set, Delete and
// DeleteNamespace note what they touch in a log (no value, no hashing:
// an append), and a snapshot writes each touched entry's value as it is
// then, once however often it changed.
//
// A new base is written when the changes since the last one add up to
// more than the base (so that a restore reads at most about twice the
// state, and writing bases costs at most the change records written), or
// when the log outgrew that bound before a snapshot came (it is dropped
// and the next snapshot writes a base). A map section smaller than
// inlineTail is written whole into every handle, as in format 3.
//
// Invariant map-changelog: replaying the base, then the change files in
// order, then the tail gives exactly Backend.m as it was when the
// snapshot was taken.

// Change record operations.
const (
	opPut      byte = 1 // ns, key, value
	opDelete   byte = 2 // ns, key
	opDeleteNS byte = 3 // ns
)

// mapFile is a shared file of map entries: a base (the format 2 map
// section) or change records. data is kept until the file is uploaded.
type mapFile struct {
	name string
	size int
	crc  uint32
	mu   sync.Mutex
	data []byte // nil once uploaded
}

func newMapFile(name string, data []byte) *mapFile {
	return &mapFile{name: name, size: len(data), crc: crc32.Checksum(data, castagnoli), data: data}
}

// upload stores f unless an earlier snapshot's upload already did.
func (f *mapFile) upload(files state.SharedBytes) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.data == nil {
		return nil
	}
	if err := files.WriteSharedBytes(f.name, f.data); err != nil {
		return fmt.Errorf("heap state map file %s: %w", f.name, err)
	}
	f.data = nil
	return nil
}

// mapLog is the backend's side of incremental map snapshots.
type mapLog struct {
	// on is set while a base file exists: changes are logged.
	on bool
	// touched lists the entries changed since the last snapshot, as
	// change records without values: opDelete (ns, key) for an entry set
	// or deleted, opDeleteNS for a namespace deleted.
	touched []byte
	// overflow is set when touched outgrew the base: the next snapshot
	// writes a base.
	overflow bool
	base     *mapFile
	changes  []*mapFile
	// tail holds the change records not yet in a file.
	tail []byte
	// changeBytes counts the change records since the base (files and
	// tail).
	changeBytes int
}

// note logs a change of (ns, key); an empty key with opDeleteNS.
func (l *mapLog) note(op byte, ns, key []byte) {
	if !l.on || l.overflow {
		return
	}
	// Logged without a value: the snapshot reads the entry as it is then.
	if op == opPut {
		op = opDelete
	}
	l.touched = appendRecord(l.touched, op, ns, key, nil)
	if l.base != nil && len(l.touched) > max(l.base.size, inlineTail) {
		l.touched, l.overflow = nil, true
	}
}

// appendRecord appends one change record.
func appendRecord(b []byte, op byte, ns, key, value []byte) []byte {
	b = append(b, op)
	b = binary.AppendUvarint(b, uint64(len(ns)))
	b = append(b, ns...)
	if op == opDeleteNS {
		return b
	}
	b = binary.AppendUvarint(b, uint64(len(key)))
	b = append(b, key...)
	if op == opPut {
		b = binary.AppendUvarint(b, uint64(len(value)))
		b = append(b, value...)
	}
	return b
}

// encodeMaps appends the map section of format 2 (every entry of m).
func encodeMaps(out []byte, m map[string]map[string][]byte) []byte {
	out = binary.AppendUvarint(out, uint64(len(m)))
	for ns, inner := range m {
		out = binary.AppendUvarint(out, uint64(len(ns)))
		out = append(out, ns...)
		out = binary.AppendUvarint(out, uint64(len(inner)))
		for k, v := range inner {
			out = binary.AppendUvarint(out, uint64(len(k)))
			out = append(out, k...)
			out = binary.AppendUvarint(out, uint64(len(v)))
			out = append(out, v...)
		}
	}
	return out
}

// mapSection appends the map part of a format 4 handle and returns the
// shared files it references (to upload, and for the checkpoint's list):
//
//	inline:1 (0: base:file, 1: len:uvarint maps)
//	nchanges:uvarint file* len:uvarint tail
//	file = len:uvarint name size:uvarint crc32c:4
//
// It writes a new base when there is none, when the log overflowed or
// when the changes since the base outweigh it; otherwise it turns the
// logged changes into change records.
func (b *Backend) mapSection(out []byte) ([]byte, []*mapFile) {
	l := &b.mlog
	if !l.on || l.overflow || l.changeBytes+len(l.tail) > l.base.size {
		// Sized for the last base and the changes since, so that a
		// growing state is not copied as the buffer grows.
		full := encodeMaps(make([]byte, 0, b.sizeHint()+l.changeBytes+len(l.tail)+len(l.touched)), b.m)
		b.lastSize = len(full)
		*l = mapLog{}
		if len(full) < inlineTail {
			// Small: written whole every time, nothing logged.
			out = append(out, 1)
			out = binary.AppendUvarint(out, uint64(len(full)))
			return append(out, full...), nil
		}
		l.on, l.base = true, newMapFile(b.fileName(".maps"), full)
	} else if len(l.touched) > 0 {
		l.tail = b.changeRecords(l.tail, l.touched)
		l.touched = l.touched[:0]
		if len(l.tail) >= inlineTail {
			l.changeBytes += len(l.tail)
			l.changes = append(l.changes, newMapFile(b.fileName(".mlog"), l.tail))
			l.tail = nil
		}
	}
	out = append(out, 0)
	out = appendFileRef(out, l.base)
	out = binary.AppendUvarint(out, uint64(len(l.changes)))
	for _, f := range l.changes {
		out = appendFileRef(out, f)
	}
	out = binary.AppendUvarint(out, uint64(len(l.tail)))
	out = append(out, l.tail...)
	files := append([]*mapFile{l.base}, l.changes...)
	return out, files
}

func appendFileRef(out []byte, f *mapFile) []byte {
	out = binary.AppendUvarint(out, uint64(len(f.name)))
	out = append(out, f.name...)
	out = binary.AppendUvarint(out, uint64(f.size))
	return binary.LittleEndian.AppendUint32(out, f.crc)
}

// changeRecords appends to dst the change records of the logged changes
// in touched: the namespaces deleted first, then, once each, every
// touched entry as it is now (a put, or a delete when it is gone).
// Replayed after the previous snapshot's state this gives the current
// one: a namespace deleted and written again since is deleted, then its
// live entries put back.
func (b *Backend) changeRecords(dst, touched []byte) []byte {
	seenNS, seen := map[string]bool{}, map[string]bool{}
	var entries [][2][]byte
	for p := touched; len(p) > 0; {
		op := p[0]
		ns, rest := splitBytes(p[1:])
		if op == opDeleteNS {
			p = rest
			if !seenNS[string(ns)] {
				seenNS[string(ns)] = true
				dst = appendRecord(dst, opDeleteNS, ns, nil, nil)
			}
			continue
		}
		key, rest := splitBytes(rest)
		p = rest
		// The entry's identity: ns length-prefixed, then key.
		id := string(binary.AppendUvarint(nil, uint64(len(ns)))) + string(ns) + string(key)
		if seen[id] {
			continue
		}
		seen[id] = true
		entries = append(entries, [2][]byte{ns, key})
	}
	for _, e := range entries {
		if v, ok := b.m[string(e[0])][string(e[1])]; ok {
			dst = appendRecord(dst, opPut, e[0], e[1], v)
		} else {
			dst = appendRecord(dst, opDelete, e[0], e[1], nil)
		}
	}
	return dst
}

// splitBytes reads a length-prefixed byte string written by appendRecord
// (from the backend's own log, so well formed).
func splitBytes(p []byte) ([]byte, []byte) {
	n, k := binary.Uvarint(p)
	return p[k : k+int(n)], p[k+int(n):]
}

// fileName names a new shared file of this backend: heap-<backend's
// random prefix>-<sequence number><ext>.
func (b *Backend) fileName(ext string) string {
	if b.prefix == "" {
		b.prefix = strconv.FormatUint(rand.Uint64(), 16)
	}
	b.seq++
	return "heap-" + b.prefix + "-" + strconv.FormatUint(b.seq, 10) + ext
}

// uploadMaps stores the map files not stored yet.
func uploadMaps(fs []*mapFile, files state.SharedBytes) error {
	for _, f := range fs {
		if err := f.upload(files); err != nil {
			return err
		}
	}
	return nil
}

// restoreMaps reads the map part of a format 4 handle from p into b.m,
// reading its files from sf, and sets up b.mlog so that the next snapshot
// references them. It returns what is left of p.
func (b *Backend) restoreMaps(p []byte, sf state.SnapshotFiles) ([]byte, error) {
	bad := func(what string) error {
		return fmt.Errorf("heap state handle: %s: %w", what, base.ErrCorruption)
	}
	if len(p) < 1 {
		return nil, bad("map section")
	}
	inline := p[0]
	p = p[1:]
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, false
		}
		p = p[n:]
		return v, true
	}
	if inline == 1 {
		n, ok := uv()
		if !ok || n > uint64(len(p)) {
			return nil, bad("inline map section")
		}
		if err := b.decodeMaps(p[:n]); err != nil {
			return nil, err
		}
		return p[n:], nil
	}
	if inline != 0 {
		return nil, bad("map section kind")
	}
	ref := func() (*mapFile, bool) {
		f, rest, ok := parseFileRef(p)
		if ok {
			p = rest
		}
		return f, ok
	}
	baseFile, ok := ref()
	if !ok {
		return nil, bad("map base file")
	}
	nch, ok := uv()
	if !ok || nch > uint64(len(p)) {
		return nil, bad("map change file count")
	}
	changes := make([]*mapFile, 0, nch)
	for range nch {
		f, ok := ref()
		if !ok {
			return nil, bad("map change file")
		}
		changes = append(changes, f)
	}
	n, ok := uv()
	if !ok || n > uint64(len(p)) {
		return nil, bad("map change tail")
	}
	tail := p[:n]
	p = p[n:]
	sb, ok := sf.(state.SharedBytes)
	if !ok {
		return nil, fmt.Errorf("heap state handle references map files and the checkpoint storage given cannot read them: %w", base.ErrInvalidArgument)
	}
	read := func(f *mapFile) ([]byte, error) { return readChecked(sb, f, "map") }
	data, err := read(baseFile)
	if err != nil {
		return nil, err
	}
	if err := b.decodeMaps(data); err != nil {
		return nil, fmt.Errorf("heap state map file %s: %w", baseFile.name, err)
	}
	changeBytes := len(tail)
	for _, f := range changes {
		data, err := read(f)
		if err != nil {
			return nil, err
		}
		if err := b.applyChanges(data); err != nil {
			return nil, fmt.Errorf("heap state map file %s: %w", f.name, err)
		}
		changeBytes += f.size
	}
	if err := b.applyChanges(tail); err != nil {
		return nil, err
	}
	b.lastSize = baseFile.size
	b.mlog = mapLog{on: true, base: baseFile, changes: changes, tail: append([]byte(nil), tail...), changeBytes: changeBytes - len(tail)}
	return p, nil
}

// decodeMaps reads a format 2 map section (the whole of p) into b.
func (b *Backend) decodeMaps(p []byte) error {
	rest, err := b.readMaps(p)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return fmt.Errorf("heap state map section: %d trailing bytes: %w", len(rest), base.ErrCorruption)
	}
	return nil
}

// applyChanges replays change records onto b.m.
func (b *Backend) applyChanges(p []byte) error {
	bad := fmt.Errorf("heap state map change records: damaged record: %w", base.ErrCorruption)
	str := func() ([]byte, bool) {
		n, k := binary.Uvarint(p)
		if k <= 0 || n > uint64(len(p)-k) {
			return nil, false
		}
		s := p[k : k+int(n)]
		p = p[k+int(n):]
		return s, true
	}
	for len(p) > 0 {
		op := p[0]
		p = p[1:]
		ns, ok := str()
		if !ok {
			return bad
		}
		switch op {
		case opDeleteNS:
			delete(b.m, string(ns))
		case opDelete:
			key, ok := str()
			if !ok || len(key) == 0 {
				return bad
			}
			if inner := b.m[string(ns)]; inner != nil {
				delete(inner, string(key))
				if len(inner) == 0 {
					delete(b.m, string(ns))
				}
			}
		case opPut:
			key, ok1 := str()
			v, ok2 := str()
			if !ok1 || !ok2 || len(key) == 0 {
				return bad
			}
			inner := b.m[string(ns)]
			if inner == nil {
				inner = map[string][]byte{}
				b.m[string(ns)] = inner
			}
			inner[string(key)] = append([]byte(nil), v...)
		default:
			return bad
		}
	}
	return nil
}
