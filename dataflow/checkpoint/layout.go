package checkpoint

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/stratadb/strata/internal/base"
)

// Names under the root (doc.go, Layout).
const (
	chkPrefix    = "chk-"
	fileSuffix   = ".metadata" // chk-<id>.metadata: a single-file checkpoint
	tempSuffix   = ".tmp"      // chk-<id>.metadata.tmp: its metadata being written
	metadataName = "_metadata" // chk-<id>/_metadata: a directory checkpoint's
	sharedDir    = "shared"
)

// form is a set of the forms in which a checkpoint id is stored.
type form uint8

const (
	// inDir is the directory chk-<id>, whose _metadata is the commit
	// point and which holds the checkpoint's state files.
	inDir form = 1 << iota
	// inFile is the single file chk-<id>.metadata of a checkpoint whose
	// subtask states are all inline.
	inFile
)

// slot is what the root holds under one checkpoint id, known by the
// names alone (no file read).
type slot struct {
	id    base.CheckpointID
	forms form // the forms that have a name in the root
	temp  bool // chk-<id>.metadata.tmp: a single-file commit cut short
}

// parseName returns the checkpoint id of name, an entry of the root, and
// what it is: inDir, inFile, or 0 for a temporary metadata file. ok is
// false for any other name (shared, or not the storage's).
func parseName(name string) (id base.CheckpointID, f form, ok bool) {
	rest, found := strings.CutPrefix(name, chkPrefix)
	if !found {
		return 0, 0, false
	}
	f = inDir
	if r, found := strings.CutSuffix(rest, fileSuffix+tempSuffix); found {
		rest, f = r, 0
	} else if r, found := strings.CutSuffix(rest, fileSuffix); found {
		rest, f = r, inFile
	}
	n, err := strconv.ParseUint(rest, 10, 64)
	// Only the canonical decimal form: chk-07 is not checkpoint 7's name.
	if err != nil || n == 0 || strconv.FormatUint(n, 10) != rest {
		return 0, 0, false
	}
	return base.CheckpointID(n), f, true
}

// Dir returns the directory of checkpoint id, which exists only when the
// checkpoint has state files of its own (or was written before the
// single-file form): a checkpoint whose subtask states are all inline is
// the file <root>/chk-<id>.metadata alone (Metadata.Path).
func (s *Storage) Dir(id base.CheckpointID) string {
	return join(s.root, chkPrefix+strconv.FormatUint(uint64(id), 10))
}

// file returns the name of checkpoint id in the single-file form.
func (s *Storage) file(id base.CheckpointID) string {
	return join(s.root, chkPrefix+strconv.FormatUint(uint64(id), 10)+fileSuffix)
}

// metadataPath returns the metadata file of checkpoint id in form f.
func (s *Storage) metadataPath(id base.CheckpointID, f form) string {
	if f == inDir {
		return join(s.Dir(id), metadataName)
	}
	return s.file(id)
}

// slots lists the root: the checkpoint ids it has names for, ascending.
func (s *Storage) slots() ([]slot, error) {
	names, err := s.fs.List(s.root)
	if err != nil {
		return nil, fmt.Errorf("checkpoint storage %s: %w", s.root, err)
	}
	at := map[base.CheckpointID]int{}
	var out []slot
	for _, n := range names {
		id, f, ok := parseName(n)
		if !ok {
			continue
		}
		i, seen := at[id]
		if !seen {
			i = len(out)
			at[id] = i
			out = append(out, slot{id: id})
		}
		if f == 0 {
			out[i].temp = true
		} else {
			out[i].forms |= f
		}
	}
	slices.SortFunc(out, func(a, b slot) int { return cmp.Compare(a.id, b.id) })
	return out, nil
}

// errIncomplete says that a slot holds no readable metadata: it is an
// orphan, not a completed checkpoint.
var errIncomplete = fmt.Errorf("no readable metadata: %w", base.ErrNotFound)

// incomplete reports whether err says a checkpoint is not complete (its
// metadata is missing or damaged) rather than that it could not be read.
func incomplete(err error) bool {
	return errors.Is(err, base.ErrNotFound) || errors.Is(err, base.ErrCorruption)
}

// resolve reads the metadata of the checkpoint in slot x and returns the
// form it was found in. When both forms exist (which no single build
// writes: an older build may have written the directory after a newer
// one's file, on a downgrade), the directory's metadata wins when it is
// readable (invariant directory-wins); else the single file's. No
// readable metadata gives an error that incomplete accepts.
func (s *Storage) resolve(x slot) (*Metadata, form, error) {
	for _, f := range []form{inDir, inFile} {
		if x.forms&f == 0 {
			continue
		}
		m, err := s.readMetadata(x.id, f)
		if err == nil {
			return m, f, nil
		}
		if !incomplete(err) {
			return nil, 0, err
		}
	}
	return nil, 0, fmt.Errorf("checkpoint %d: %w", x.id, errIncomplete)
}

// remove deletes the forms f of checkpoint id.
func (s *Storage) remove(id base.CheckpointID, f form) error {
	if f&inFile != 0 {
		if err := s.fs.RemoveAll(s.file(id)); err != nil {
			return fmt.Errorf("checkpoint %d: %w", id, err)
		}
	}
	if f&inDir != 0 {
		if err := s.fs.RemoveAll(s.Dir(id)); err != nil {
			return fmt.Errorf("checkpoint %d: %w", id, err)
		}
	}
	return nil
}
