package heap

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/internal/base"
)

// maxSegment bounds an arena file: a restore reads the files on every core
// at once, and checks and hashes each one's bytes right after reading
// them, while they are still in the processor's cache (8 MiB: a 1 GB
// arena is 128 files; at 64 MiB the checksum and the hashing ran from
// memory, and the hashing, visiting entries in table order, missed the
// cache for every entry).
const maxSegment = 8 << 20

// inlineTail is how many arena bytes past the last file a handle carries
// itself rather than in a file of their own: a small state then needs no
// shared file at all (its handle, inlined in the checkpoint metadata or in
// the subtask's file, is the whole of it), and a large one that changes a
// little per checkpoint writes a file only every inlineTail bytes, not a
// file (created, fsynced, renamed, its directory fsynced) per checkpoint.
// A variable so that tests can make files of small states.
var inlineTail = 256 << 10

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maxArena bounds the arena size a handle may give (1 TiB), so that a
// damaged one fails as corrupt rather than in an allocation.
const maxArena = 1 << 40

// segment is the range [start, end) of one generation of the value arena,
// stored as one shared file of the checkpoint storage (format version 3).
// Invariant arena-append-only makes the bytes of a range final once
// written, so a file is written once and referenced by every later
// snapshot of the same arena generation.
type segment struct {
	name       string
	start, end int
	crcOnce    sync.Once
	crc        uint32
	// uploaded is set once the file is stored; Uploads of one backend
	// run one at a time, but perhaps not on the subtask's goroutine.
	uploaded atomic.Bool
}

// checksum returns the CRC-32C of the segment's bytes in arena (any arena
// slice of its generation at least end long: they hold the same bytes).
func (s *segment) checksum(arena []byte) uint32 {
	s.crcOnce.Do(func() { s.crc = crc32.Checksum(arena[s.start:s.end], castagnoli) })
	return s.crc
}

// segmentsFor returns the segments that cover an arena of n bytes of the
// current generation, leaving out a tail of less than inlineTail bytes
// (which the handle carries), cutting new ones for bytes no segment holds
// yet (pieces of at most maxSegment) and merging small ones at the tail: the
// last two merge while the one before is less than twice the last and the
// merged range fits in maxSegment, so that a snapshot every 100 ms adds a
// logarithmic number of files, not one per snapshot (a binary counter, as
// size-tiered compaction). A compaction of the arena (a new generation)
// starts over.
func (b *Backend) segmentsFor(n int) []*segment {
	if b.segGen != b.v.gen {
		b.segs, b.segGen = nil, b.v.gen
	}
	covered := 0
	if len(b.segs) > 0 {
		covered = b.segs[len(b.segs)-1].end
	}
	if n-covered < inlineTail {
		return slices.Clone(b.segs)
	}
	for covered < n {
		end := min(n, covered+maxSegment)
		b.segs = append(b.segs, b.newSegment(covered, end))
		covered = end
	}
	for k := len(b.segs); k >= 2; k = len(b.segs) {
		a, c := b.segs[k-2], b.segs[k-1]
		if a.end-a.start >= 2*(c.end-c.start) || c.end-a.start > maxSegment {
			break
		}
		b.segs = append(b.segs[:k-2:k-2], b.newSegment(a.start, c.end))
	}
	return slices.Clone(b.segs)
}

func (b *Backend) newSegment(start, end int) *segment {
	return &segment{name: b.fileName(".arena"), start: start, end: end}
}

// snapshotShared is SnapshotAsync for storage that takes shared files from
// memory (format version 5): maps is the encoded map section, the value
// arena goes to shared files, and the handle lists them and the live
// slots, whole or as a base file and changes (slotlog.go).
func (b *Backend) snapshotShared(maps []byte, files state.SharedBytes) state.Snapshot {
	arena := b.v.arena
	segs := b.segmentsFor(len(arena))
	slots := b.slotSection()
	names := make([]string, len(segs))
	for i, s := range segs {
		names[i] = s.name
	}
	names = append(names, slots.names()...)
	upload := func() error {
		for _, s := range segs {
			if s.uploaded.Load() {
				continue
			}
			s.checksum(arena)
			if err := files.WriteSharedBytes(s.name, arena[s.start:s.end]); err != nil {
				return fmt.Errorf("heap state arena file %s: %w", s.name, err)
			}
			s.uploaded.Store(true)
		}
		return slots.upload(files)
	}
	covered := 0
	if len(segs) > 0 {
		covered = segs[len(segs)-1].end
	}
	encode := func() ([]byte, error) {
		tail := arena[covered:]
		h := slices.Grow(maps, 64+len(segs)*40+len(tail)+len(slots.inline)*4*binary.MaxVarintLen32+len(slots.tail))
		h = binary.AppendUvarint(h, uint64(len(segs)))
		for _, s := range segs {
			h = binary.AppendUvarint(h, uint64(len(s.name)))
			h = append(h, s.name...)
			h = binary.AppendUvarint(h, uint64(s.end-s.start))
			h = binary.LittleEndian.AppendUint32(h, s.checksum(arena))
		}
		h = binary.AppendUvarint(h, uint64(len(tail)))
		h = append(h, tail...)
		return slots.appendTo(h), nil
	}
	return state.Snapshot{Shared: names, Upload: upload, Encode: encode}
}

// restoreShared reads the value section of a version 3, 4 or 5 handle
// from p: the arena files, read into one buffer by every core at once and
// checked, the tail the handle carries, and the live slots (in version 5
// perhaps a base file and change records, slotlog.go), hashed on every
// core and placed in a table sized for them. It returns what is left of p.
func (b *Backend) restoreShared(p []byte, sf state.SnapshotFiles, version byte) ([]byte, error) {
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
	nseg, ok := uv()
	if !ok || nseg > uint64(len(p)) {
		return nil, bad("arena file count")
	}
	segs := make([]*segment, 0, nseg)
	total := 0
	for range nseg {
		n, ok := uv()
		if !ok || n > uint64(len(p)) {
			return nil, bad("arena file name")
		}
		name := string(p[:n])
		p = p[n:]
		size, ok := uv()
		if !ok || size == 0 || size > 1<<40 || len(p) < 4 {
			return nil, bad("arena file " + name)
		}
		if total+int(size) > maxArena {
			return nil, bad("arena file " + name + " size")
		}
		s := &segment{name: name, start: total, end: total + int(size)}
		crc := binary.LittleEndian.Uint32(p)
		p = p[4:]
		s.crcOnce.Do(func() { s.crc = crc })
		s.uploaded.Store(true)
		segs = append(segs, s)
		total = s.end
	}
	n, ok := uv()
	if !ok || n > uint64(len(p)) {
		return nil, bad("arena tail")
	}
	tail := p[:n]
	p = p[n:]
	files := total
	total += len(tail)
	var refs slotRefs
	logged := false
	if version >= formatSlotLog {
		if len(p) < 1 || p[0] > 1 {
			return nil, bad("slot section kind")
		}
		logged = p[0] == 0
		p = p[1:]
	}
	var entries []slot
	var live int
	var err error
	if logged {
		if refs, p, err = parseSlotRefs(p); err != nil {
			return nil, err
		}
	} else if entries, live, p, err = decodeSlots(p, total); err != nil {
		return nil, err
	}
	if len(p) != 0 {
		// Checked before any file is read.
		return nil, bad(fmt.Sprintf("%d trailing bytes", len(p)))
	}
	sb, ok := sf.(state.SharedBytes)
	if !ok && (nseg > 0 || logged) {
		return nil, fmt.Errorf("heap state handle references %d arena files and the checkpoint storage given cannot read them: %w", nseg+uint64(len(refs.changes)), base.ErrInvalidArgument)
	}
	// Sizes are checked before the arena is allocated (checkSize).
	if total > maxArena {
		return nil, bad(fmt.Sprintf("arena of %d bytes", total))
	}
	for _, s := range segs {
		if err := checkSize(sb, s.name, s.end-s.start, "arena"); err != nil {
			return nil, err
		}
	}
	if logged {
		data, err := readChecked(sb, refs.base, "slot")
		if err != nil {
			return nil, err
		}
		var rest []byte
		if entries, _, rest, err = decodeSlots(data, total); err != nil || len(rest) != 0 {
			return nil, fmt.Errorf("heap state slot file %s: damaged: %w", refs.base.name, base.ErrCorruption)
		}
	}
	// Entries by the file their namespace starts in (a counting sort), so
	// that each is hashed right after its file is read; those that run
	// past their file's end or lie in the tail are hashed at the end.
	bucket := func(off int) int {
		if off >= files {
			return len(segs)
		}
		return sort.Search(len(segs), func(i int) bool { return segs[i].end > off }) // file of off
	}
	starts := make([]int, len(segs)+2)
	for i := range entries {
		starts[bucket(entries[i].off)+1]++
	}
	for i := 1; i < len(starts); i++ {
		starts[i] += starts[i-1]
	}
	order := make([]int32, len(entries))
	fill := slices.Clone(starts)
	for i := range entries {
		b := bucket(entries[i].off)
		order[fill[b]] = int32(i)
		fill[b]++
	}
	// Room to grow, so that the first writes after a restore do not copy
	// the whole arena; pages not written are not touched.
	arena := make([]byte, total, total+total/16+4096)
	copy(arena[files:], tail)
	hash := func(idx []int32, end int) {
		for _, i := range idx {
			e := &entries[i]
			if e.off+int(e.nsLen) <= end {
				e.hash = b.v.hash(e.ns(arena))
			}
		}
	}
	err = parallel(len(segs), func(i int) error {
		s := segs[i]
		dst := arena[s.start:s.end]
		if err := sb.ReadSharedBytes(s.name, dst); err != nil {
			return fmt.Errorf("heap state arena file %s: %w", s.name, err)
		}
		if crc32.Checksum(dst, castagnoli) != s.crc {
			return fmt.Errorf("heap state arena file %s: %w", s.name, base.ErrChecksum)
		}
		hash(order[starts[i]:starts[i+1]], s.end)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, i := range order {
		if e := &entries[i]; e.hash == 0 {
			e.hash = b.v.hash(e.ns(arena))
		}
	}
	if err := b.v.restoreHashed(arena, entries, 0); err != nil {
		return nil, err
	}
	if logged {
		if err := b.replaySlots(sb, refs, len(entries)); err != nil {
			return nil, err
		}
		live = 0
		for i := range b.v.slots {
			if s := &b.v.slots[i]; s.hash != 0 {
				live += int(s.nsLen) + int(s.vLen)
			}
		}
	}
	b.v.garbage = len(b.v.arena) - live // with the byte startLog appended
	b.segs, b.segGen = segs, b.v.gen
	return p, nil
}

// parallel runs fn(0..n-1) on up to GOMAXPROCS goroutines and returns the
// first error.
func parallel(n int, fn func(i int) error) error {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			if err := fn(i); err != nil {
				return err
			}
		}
		return nil
	}
	var next atomic.Int64
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || errs[w] != nil {
					return
				}
				errs[w] = fn(i)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
