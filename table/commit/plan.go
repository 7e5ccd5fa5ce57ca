package commit

import (
	"fmt"
	"slices"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/schema"
	"github.com/stratadb/strata/table/snapshot"
)

// parent is what a planned snapshot builds on: the latest snapshot of the
// table, or the snapshot planned before it in the same batch.
type parent struct {
	snap *snapshot.Snapshot // nil: the table has no snapshot
	// live are snap's live files (its base and delta manifests replayed).
	live []manifest.Entry
	// metas are snap's base and delta manifests: the next base list.
	metas []manifest.FileMeta
}

// encoded is a manifest of a planned snapshot (its lists are inline in
// the snapshot); its entries go to the manifest cache once a snapshot
// naming it is published.
type encoded struct {
	name    string
	data    []byte
	meta    manifest.FileMeta
	entries []manifest.Entry
}

// planned is one snapshot of a batch, computed in memory: the snapshot,
// the new files it names, and the parent of the next message.
type planned struct {
	snap  *snapshot.Snapshot
	files []encoded
	next  parent
}

// plan computes the snapshot that message m makes on top of p, with no
// I/O but encoding: the conflict check (Check), the base manifest list
// (p's base and delta manifests, merged into one manifest when there are
// more than maxBaseManifests), the delta and changelog manifests with
// their lists, and the live files after m. latestSchema is the table's
// newest schema id; nowMillis the commit time. A conflict is returned
// wrapping base.ErrConflict.
func plan(table string, p parent, m *Message, latestSchema schema.ID, nowMillis int64, mio *manifest.IO) (planned, error) {
	id := base.SnapshotID(1)
	var total int64
	epoch := m.Epoch
	if p.snap != nil {
		id, total = p.snap.ID+1, p.snap.TotalRecordCount
		if m.Kind != snapshot.Append {
			epoch = p.snap.Epoch
		}
	}
	if err := Check(p.live, m); err != nil {
		return planned{}, fmt.Errorf("table %s: commit of epoch %d by %s on snapshot %d: %w", table, m.Epoch, m.CommitUser, id-1, err)
	}
	var out planned
	addManifest := func(entries []manifest.Entry) (manifest.FileMeta, error) {
		meta, b, err := mio.EncodeManifest(entries, int64(m.SchemaID))
		if err != nil {
			return meta, err
		}
		out.files = append(out.files, encoded{name: meta.Name, data: b, meta: meta, entries: entries})
		return meta, nil
	}
	baseMetas := p.metas
	if len(baseMetas) > maxBaseManifests {
		meta, err := addManifest(p.live)
		if err != nil {
			return planned{}, err
		}
		baseMetas = []manifest.FileMeta{meta}
	}
	// The lists go inline in the snapshot (manifest.FileRef): each holds
	// at most maxBaseManifests+1 metas.
	baseRef := manifest.InlineList(slices.Clone(baseMetas))
	entries := m.Entries()
	var delta int64
	for _, e := range entries {
		if e.Kind == manifest.Add {
			delta += e.File.Rows
		} else {
			delta -= e.File.Rows
		}
	}
	var deltaRef manifest.FileRef
	nextMetas := append([]manifest.FileMeta(nil), baseMetas...)
	if len(entries) > 0 {
		meta, err := addManifest(entries)
		if err != nil {
			return planned{}, err
		}
		deltaRef = manifest.InlineList([]manifest.FileMeta{meta})
		nextMetas = append(nextMetas, meta)
	}
	cl := m.ChangelogEntries()
	var clRows int64
	for _, e := range cl {
		clRows += e.File.Rows
	}
	var clRef manifest.FileRef
	if len(cl) > 0 {
		meta, err := addManifest(cl)
		if err != nil {
			return planned{}, err
		}
		clRef = manifest.InlineList([]manifest.FileMeta{meta})
	}
	live, err := manifest.Merge(append(append(make([]manifest.Entry, 0, len(p.live)+len(entries)), p.live...), entries...))
	if err != nil {
		// A message that adds a live file again: Check looks at deletes
		// and sequence numbers only.
		return planned{}, fmt.Errorf("table %s: commit of epoch %d by %s on snapshot %d: %v: %w", table, m.Epoch, m.CommitUser, id-1, err, base.ErrInvalidArgument)
	}
	// A writer opened before a schema change commits with its older
	// schema; the snapshot takes the table's newest schema, under which
	// older files read with NULL in the added columns.
	schemaID := max(m.SchemaID, latestSchema)
	out.snap = &snapshot.Snapshot{
		ID: id, SchemaID: schemaID,
		BaseManifestList: baseRef, DeltaManifestList: deltaRef, ChangelogManifestList: clRef,
		CommitUser: m.CommitUser, CommitIdentifier: uint64(m.Epoch), CommitKind: m.Kind,
		TimeMillis: nowMillis, TotalRecordCount: total + delta, DeltaRecordCount: delta,
		ChangelogRecordCount: clRows, Watermark: m.Watermark, Epoch: epoch,
	}
	out.next = parent{snap: out.snap, live: live, metas: nextMetas}
	return out, nil
}
