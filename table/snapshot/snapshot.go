package snapshot

import (
	"fmt"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/schema"
)

// FormatVersion is the "version" member of snapshot, tag, consumer and
// marker files; other versions are refused, but for InlineListsVersion and
// InlineManifestsVersion in snapshot and tag files.
const FormatVersion = 1

// InlineListsVersion is the "version" member of a snapshot or tag file
// that holds a manifest list inline (manifest.FileRef.Metas) but no inline
// manifest: a reader that does not know inline lists refuses it rather
// than read an empty list. Files without one keep FormatVersion.
const InlineListsVersion = 2

// InlineManifestsVersion is the "version" member of a snapshot or tag
// file that holds a manifest inline (manifest.FileMeta.Entries, within an
// inline list): a reader that knows inline lists but not inline manifests
// refuses it rather than read a manifest without a name. Snapshots of
// versions 1 and 2 are read, committed on and expired as before.
const InlineManifestsVersion = 3

// formatVersion is the version s is written with: the lowest that holds
// what s holds, so that a snapshot that needs nothing new stays readable
// by older readers.
func (s *Snapshot) formatVersion() int {
	switch {
	case s.hasInlineManifest():
		return InlineManifestsVersion
	case s.hasInline():
		return InlineListsVersion
	}
	return FormatVersion
}

func (s *Snapshot) lists() [3]manifest.FileRef {
	return [3]manifest.FileRef{s.BaseManifestList, s.DeltaManifestList, s.ChangelogManifestList}
}

func (s *Snapshot) hasInline() bool {
	return s.BaseManifestList.Inline() || s.DeltaManifestList.Inline() || s.ChangelogManifestList.Inline()
}

func (s *Snapshot) hasInlineManifest() bool {
	for _, ref := range s.lists() {
		if manifest.HasInline(ref.Metas) {
			return true
		}
	}
	return false
}

// checkFormat checks a decoded snapshot or tag file against its version:
// a known version, nothing inline that the version does not allow, no list
// both named and inline, and well-formed inline manifests
// (manifest.CheckInline). The error does not name the file.
func (s *Snapshot) checkFormat() error {
	switch s.Version {
	case FormatVersion, InlineListsVersion, InlineManifestsVersion:
	default:
		return fmt.Errorf("unknown format version %d", s.Version)
	}
	if s.hasInline() && s.Version < InlineListsVersion {
		return fmt.Errorf("an inline manifest list in format version %d", s.Version)
	}
	if s.hasInlineManifest() && s.Version < InlineManifestsVersion {
		return fmt.Errorf("an inline manifest in format version %d", s.Version)
	}
	for _, ref := range s.lists() {
		if ref.Name != "" && len(ref.Metas) > 0 {
			return fmt.Errorf("manifest list %s is both named and inline", ref.Name)
		}
		if err := manifest.CheckInline(ref.Metas); err != nil {
			return err
		}
	}
	return nil
}

// CommitKind says what a snapshot did.
type CommitKind string

// The commit kinds (Paimon's Snapshot.CommitKind, plus ROLLBACK).
const (
	// Append adds written data (and maybe compaction results of the same
	// writer).
	Append CommitKind = "APPEND"
	// Compact rewrites files without changing what a read returns.
	Compact CommitKind = "COMPACT"
	// Rollback restores the content of an older snapshot or tag.
	Rollback CommitKind = "ROLLBACK"
)

// Snapshot is one version of a table (see the package doc).
type Snapshot struct {
	Version  int             `json:"version"`
	ID       base.SnapshotID `json:"id"`
	SchemaID schema.ID       `json:"schemaId"`
	// BaseManifestList lists the manifests of the previous snapshot's
	// files; DeltaManifestList the changes of this commit;
	// ChangelogManifestList the changelog files of this commit (may be
	// zero).
	BaseManifestList      manifest.FileRef `json:"baseManifestList"`
	DeltaManifestList     manifest.FileRef `json:"deltaManifestList"`
	ChangelogManifestList manifest.FileRef `json:"changelogManifestList"`
	// CommitUser identifies the writer (a job's sink); CommitIdentifier
	// is the epoch it committed, so (CommitUser, CommitIdentifier) makes a
	// commit idempotent.
	CommitUser       string     `json:"commitUser"`
	CommitIdentifier uint64     `json:"commitIdentifier"`
	CommitKind       CommitKind `json:"commitKind"`
	// TimeMillis is the commit time, Unix ms.
	TimeMillis int64 `json:"timeMillis"`
	// TotalRecordCount counts the records of all live data files;
	// DeltaRecordCount the records added minus deleted by this commit;
	// ChangelogRecordCount the changelog records of this commit.
	TotalRecordCount     int64 `json:"totalRecordCount"`
	DeltaRecordCount     int64 `json:"deltaRecordCount"`
	ChangelogRecordCount int64 `json:"changelogRecordCount"`
	// Watermark is the event-time watermark at the commit, or nil.
	Watermark *int64 `json:"watermark,omitempty"`
	// Epoch is the epoch this snapshot completes: its content is the table
	// as of the end of Epoch. Compaction and rollback snapshots carry the
	// epoch of the content they hold.
	Epoch base.Epoch `json:"epoch"`
}
