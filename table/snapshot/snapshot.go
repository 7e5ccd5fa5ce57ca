package snapshot

import (
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/schema"
)

// FormatVersion is the "version" member of snapshot, tag, consumer and
// marker files; other versions are refused, but for InlineListsVersion.
const FormatVersion = 1

// InlineListsVersion is the "version" member of a snapshot or tag file
// that holds a manifest list inline (manifest.FileRef.Metas): a reader
// that does not know inline lists refuses it rather than read an empty
// list. Files without one keep FormatVersion.
const InlineListsVersion = 2

// formatVersion is the version s is written with.
func (s *Snapshot) formatVersion() int {
	if s.hasInline() {
		return InlineListsVersion
	}
	return FormatVersion
}

func (s *Snapshot) hasInline() bool {
	return s.BaseManifestList.Inline() || s.DeltaManifestList.Inline() || s.ChangelogManifestList.Inline()
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
