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

// encoded is a manifest file of a planned snapshot (its lists, and its
// small manifests, are inline in the snapshot); its entries go to the
// manifest cache once a snapshot naming it is published.
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
// (baseList: p's base and delta manifests), the delta and changelog
// manifests (inline when they hold at most manifest.MaxInlineEntries
// entries, files otherwise), and the live files after m. latestSchema is
// the table's newest schema id; nowMillis the commit time. A conflict is
// returned wrapping base.ErrConflict.
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
	// A small manifest goes inline (manifest.FileMeta): no file to
	// create, fsync and later delete.
	newManifest := func(entries []manifest.Entry) (manifest.FileMeta, error) {
		if len(entries) <= manifest.MaxInlineEntries {
			return manifest.InlineManifest(entries, int64(m.SchemaID)), nil
		}
		return addManifest(entries)
	}
	baseMetas, err := baseList(p, addManifest)
	if err != nil {
		return planned{}, err
	}
	// The lists go inline in the snapshot (manifest.FileRef): the base
	// list names at most maxBaseManifests manifest files and its inline
	// manifests hold at most manifest.MaxInlineBaseEntries entries
	// (baseList); the delta and changelog lists hold one manifest each.
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
		meta, err := newManifest(entries)
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
		meta, err := newManifest(cl)
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

// baseList returns the base manifest list of the snapshot on top of p:
// p's base and delta manifests, with two merges that bound it, each
// writing manifest files with write.
//
//   - When the inline manifests hold more than
//     manifest.MaxInlineBaseEntries entries together, each run of
//     consecutive inline manifests becomes one manifest file (flushInline),
//     so that the snapshot stays small; a table of small commits thus
//     writes a manifest file every dozen or so commits.
//   - When the list would then name more than maxBaseManifests manifest
//     files, they are all merged into one holding p's live files
//     (Paimon's manifest full compaction), so that reading the list stays
//     cheap. Inline manifests cost no read and do not count.
func baseList(p parent, write func([]manifest.Entry) (manifest.FileMeta, error)) ([]manifest.FileMeta, error) {
	named, inline, runs := 0, 0, 0
	for i, meta := range p.metas {
		if !meta.Inline() {
			named++
			continue
		}
		inline += len(meta.Entries)
		if i == 0 || !p.metas[i-1].Inline() {
			runs++
		}
	}
	flush := inline > manifest.MaxInlineBaseEntries
	if flush {
		named += runs
	}
	if named > maxBaseManifests {
		meta, err := write(p.live)
		if err != nil {
			return nil, err
		}
		return []manifest.FileMeta{meta}, nil
	}
	if flush {
		return flushInline(p.metas, write)
	}
	return p.metas, nil
}

// flushInline returns metas with each run of consecutive inline manifests
// replaced by one manifest file (written by write) holding the run's
// entries in order ([entry-order]) less the pairs that cancel
// (cancelPairs); a run that cancels out entirely leaves nothing. Each run
// keeps its place among the manifest files, so the list replays to the
// same live files.
func flushInline(metas []manifest.FileMeta, write func([]manifest.Entry) (manifest.FileMeta, error)) ([]manifest.FileMeta, error) {
	out := make([]manifest.FileMeta, 0, len(metas))
	var run []manifest.Entry
	end := func() error {
		es := cancelPairs(run)
		run = nil
		if len(es) == 0 {
			return nil
		}
		meta, err := write(es)
		if err != nil {
			return err
		}
		out = append(out, meta)
		return nil
	}
	for _, meta := range metas {
		if meta.Inline() {
			run = append(run, meta.Entries...)
			continue
		}
		if err := end(); err != nil {
			return nil, err
		}
		out = append(out, meta)
	}
	if err := end(); err != nil {
		return nil, err
	}
	return out, nil
}

// cancelPairs returns entries without each ADD that a later DELETE of the
// same file among entries follows, and without that DELETE: a file is
// never live before its ADD (manifest.Merge refuses a second ADD), so
// the pair changes nothing that a replay of entries, or of a list holding
// them, yields. A compaction of files added a few commits before makes
// such pairs. The other entries keep their order.
func cancelPairs(entries []manifest.Entry) []manifest.Entry {
	added := map[manifest.Key]int{}
	dropped := make([]bool, len(entries))
	for i, e := range entries {
		if e.Kind == manifest.Add {
			added[e.Key()] = i
			continue
		}
		if j, ok := added[e.Key()]; ok {
			dropped[i], dropped[j] = true, true
			delete(added, e.Key())
		}
	}
	out := make([]manifest.Entry, 0, len(entries))
	for i, e := range entries {
		if !dropped[i] {
			out = append(out, e)
		}
	}
	return out
}
