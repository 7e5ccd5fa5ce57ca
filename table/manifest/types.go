package manifest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

// FormatVersion is written into every manifest file and list (the Avro
// header metadata key "strata.format.version") and checked on read.
const FormatVersion = 1

// FileKind says whether an entry adds or deletes a file.
type FileKind int8

// The entry kinds.
const (
	Add    FileKind = 0
	Delete FileKind = 1
)

func (k FileKind) String() string {
	if k == Add {
		return "ADD"
	}
	return "DELETE"
}

// DataFile describes one immutable Parquet data file of a bucket (Paimon's
// DataFileMeta).
type DataFile struct {
	// Name is the file name inside its bucket directory.
	Name string `avro:"name" json:"name"`
	// Size and CRC are the file's length and CRC32C.
	Size int64 `avro:"size" json:"size"`
	CRC  int64 `avro:"crc" json:"crc"`
	// Rows is the number of records in the file (all row kinds).
	Rows int64 `avro:"rows" json:"rows"`
	// MinKey and MaxKey are the smallest and largest memcomparable primary
	// keys in the file (empty for append tables).
	MinKey []byte `avro:"min_key" json:"minKey"`
	MaxKey []byte `avro:"max_key" json:"maxKey"`
	// MinSeq and MaxSeq bound the sequence numbers of the file's records.
	MinSeq int64 `avro:"min_seq" json:"minSeq"`
	MaxSeq int64 `avro:"max_seq" json:"maxSeq"`
	// SchemaID is the schema the file was written with.
	SchemaID int64 `avro:"schema_id" json:"schemaId"`
	// Level is the LSM level (0 for fresh flushes; always 0 in append
	// tables).
	Level int32 `avro:"level" json:"level"`
	// Epoch is the epoch whose writes made the file; for a compaction
	// output, the highest epoch among its inputs.
	Epoch int64 `avro:"epoch" json:"epoch"`
	// CreatedMillis is the creation time, Unix ms.
	CreatedMillis int64 `avro:"created_millis" json:"createdMillis"`
	// NoRetracts is set when the file is known to hold no retraction
	// (-U or -D record): a compaction that drops retractions may then
	// move it to the oldest run without rewriting it. Files written before
	// the field existed read as unset (Paimon's deleteRowCount is null for
	// them, with the same meaning: unknown).
	NoRetracts bool `avro:"no_retracts" json:"noRetracts,omitempty"`
}

// Entry adds or deletes a data file of a bucket (Paimon's ManifestEntry).
type Entry struct {
	Kind   FileKind `avro:"kind" json:"kind"`
	Bucket int32    `avro:"bucket" json:"bucket"`
	File   DataFile `avro:"file" json:"file"`
}

// Key identifies a data file within a table.
type Key struct {
	Bucket int32
	Name   string
}

// Key returns the entry's file identity.
func (e Entry) Key() Key { return Key{e.Bucket, e.File.Name} }

// FileMeta describes one manifest; a manifest list is a sequence of them
// (Paimon's ManifestFileMeta). A manifest is either a file of its own
// (Name, Size and CRC) or, with an empty Name, inline: Entries holds it,
// checked by the snapshot file that holds the list (an inline manifest
// lives only in an inline list, never in a list file). Size and CRC of an
// inline manifest are 0.
//
// A commit writes its delta and changelog manifests inline when they hold
// at most MaxInlineEntries entries, and the base list carries them on
// until they hold more than MaxInlineBaseEntries together (see package
// commit): a manifest file of a few entries cost every commit a file
// creation, an fsync and later a deletion, once or twice over (delta and
// changelog). Paimon always writes manifest files.
type FileMeta struct {
	Name       string `avro:"name" json:"name"`
	Size       int64  `avro:"size" json:"size"`
	CRC        int64  `avro:"crc" json:"crc"`
	NumAdded   int64  `avro:"num_added" json:"numAdded"`
	NumDeleted int64  `avro:"num_deleted" json:"numDeleted"`
	SchemaID   int64  `avro:"schema_id" json:"schemaId"`
	// Entries is the inline manifest, in order; only with an empty Name.
	// List files (Avro) have no such field.
	Entries []Entry `avro:"-" json:"entries,omitempty"`
}

// Inline tells whether m holds its entries itself rather than naming a
// manifest file.
func (m FileMeta) Inline() bool { return m.Name == "" }

// MaxInlineEntries is the most entries a commit writes inline as a delta
// or changelog manifest. An entry takes about 250 bytes of JSON, so an
// inline manifest adds at most about 8 KB to its snapshot; a commit of a
// table of up to a few dozen buckets (a file or two per bucket and epoch)
// stays inline, and a larger one, for which a file's fixed cost matters
// less, gets a file.
const MaxInlineEntries = 32

// MaxInlineBaseEntries bounds the entries of the inline manifests a base
// list carries: a commit whose parent's base and delta manifests hold more
// inline entries than this writes each run of consecutive inline manifests
// out as one manifest file. With a delta and a changelog of at most
// MaxInlineEntries each, a snapshot holds at most about 128 inline entries
// (some 32 KB; a rollback's base may hold a delta more), and a table whose
// commits add a few entries each writes a manifest file every dozen or so
// commits instead of one or two every commit.
const MaxInlineBaseEntries = 64

// InlineManifest returns the inline FileMeta holding entries (counted) for
// schema schemaID. entries must not be modified afterwards.
func InlineManifest(entries []Entry, schemaID int64) FileMeta {
	meta := FileMeta{SchemaID: schemaID, Entries: entries[:len(entries):len(entries)]}
	meta.count(entries)
	return meta
}

// count sets NumAdded and NumDeleted from entries.
func (m *FileMeta) count(entries []Entry) {
	m.NumAdded, m.NumDeleted = 0, 0
	for _, e := range entries {
		if e.Kind == Add {
			m.NumAdded++
		} else {
			m.NumDeleted++
		}
	}
}

// CheckInline checks the inline manifests of metas, as a snapshot file
// holding them is decoded: an inline manifest has entries of a known kind
// and no size or CRC, a named one no entries. The error names the
// offending manifest (the caller adds file and table).
func CheckInline(metas []FileMeta) error {
	for i, m := range metas {
		if !m.Inline() {
			if len(m.Entries) > 0 {
				return fmt.Errorf("manifest %s is both named and inline", m.Name)
			}
			continue
		}
		if len(m.Entries) == 0 {
			return fmt.Errorf("manifest %d of a list is inline but holds no entries", i)
		}
		if m.Size != 0 || m.CRC != 0 {
			return fmt.Errorf("manifest %d of a list is inline but has a size or CRC", i)
		}
		for j, e := range m.Entries {
			if e.Kind != Add && e.Kind != Delete {
				return fmt.Errorf("inline manifest %d of a list: entry %d has kind %d", i, j, e.Kind)
			}
		}
	}
	return nil
}

// HasInline tells whether metas hold an inline manifest.
func HasInline(metas []FileMeta) bool {
	for _, m := range metas {
		if m.Inline() {
			return true
		}
	}
	return false
}

// FileRef is a manifest list as a snapshot holds it: either a reference
// to a list file (its name, size and CRC32C) or, with an empty name, the
// list itself (Metas, an inline list, checked by the snapshot file's own
// checksum; its manifests may be inline too, see FileMeta). The zero
// FileRef means "no list"; so does an inline list without metas.
//
// A commit writes its lists inline: a list is small (a commit's base list
// holds at most a few dozen manifests, see commit's maxBaseManifests) and
// a file of its own cost every commit a file creation, an fsync and later
// a deletion, two or three times over (base, delta and changelog lists).
// Paimon always writes list files; files written by earlier versions and
// by rollback still use them.
type FileRef struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
	CRC  int64  `json:"crc"`
	// Metas is the inline list, in order; only with an empty Name.
	Metas []FileMeta `json:"metas,omitempty"`
}

// IsZero tells whether r lists nothing: no file and no inline metas.
func (r FileRef) IsZero() bool { return r.Name == "" && len(r.Metas) == 0 }

// Inline tells whether r holds its list itself rather than naming a file.
func (r FileRef) Inline() bool { return r.Name == "" && len(r.Metas) > 0 }

// InlineList returns the inline FileRef of metas (the zero FileRef when
// metas is empty). metas must not be modified afterwards.
func InlineList(metas []FileMeta) FileRef {
	if len(metas) == 0 {
		return FileRef{}
	}
	return FileRef{Metas: metas[:len(metas):len(metas)]}
}

// NewName returns a fresh random file name with prefix and suffix, e.g.
// "manifest-3f2a...-0".
func NewName(prefix, suffix string) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("manifest: no randomness: %v", err))
	}
	return prefix + "-" + hex.EncodeToString(b[:]) + suffix
}

// Merge replays entries in order ([entry-order]) and returns the live
// files: every ADD not followed by a DELETE of the same file. The result
// keeps the order of the ADDs. A DELETE of a file that is not live is an
// error naming the file (the caller adds table and snapshot).
func Merge(entries []Entry) ([]Entry, error) {
	live := map[Key]int{}
	out := make([]Entry, 0, len(entries))
	for _, e := range entries {
		switch e.Kind {
		case Add:
			if _, dup := live[e.Key()]; dup {
				return nil, fmt.Errorf("bucket %d file %s added twice", e.Bucket, e.File.Name)
			}
			live[e.Key()] = len(out)
			out = append(out, e)
		case Delete:
			i, ok := live[e.Key()]
			if !ok {
				return nil, fmt.Errorf("bucket %d file %s deleted but not live", e.Bucket, e.File.Name)
			}
			out[i].Kind = Delete // tombstone, dropped below
			delete(live, e.Key())
		}
	}
	res := out[:0]
	for _, e := range out {
		if e.Kind == Add {
			res = append(res, e)
		}
	}
	return res, nil
}
