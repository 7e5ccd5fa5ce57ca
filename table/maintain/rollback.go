package maintain

import (
	"fmt"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/snapshot"
	"github.com/stratadb/strata/table/store"
)

// RollbackToTag publishes a ROLLBACK snapshot holding tag name's content
// (package doc) and returns its id. Losing the publish race to a
// concurrent commit gives an error wrapping base.ErrConflict; stop the
// writer before rolling back.
func RollbackToTag(st *store.Store, name, user string) (base.SnapshotID, error) {
	tag, err := st.Snapshots.Tag(name)
	if err != nil {
		return 0, err
	}
	latest, err := st.Snapshots.Latest()
	if err != nil {
		return 0, err
	}
	if latest == nil {
		return 0, fmt.Errorf("table %s: rollback to tag %s: no snapshot: %w", st.Dir, name, base.ErrNotFound)
	}
	var metas []manifest.FileMeta
	for _, ref := range []manifest.FileRef{tag.BaseManifestList, tag.DeltaManifestList} {
		ms, err := st.Manifests.ReadList(ref)
		if err != nil {
			return 0, err
		}
		metas = append(metas, ms...)
	}
	// The list goes inline, as a commit's (manifest.FileRef): the
	// snapshot names only manifest files that exist and are durable
	// already, and copies the tag's inline manifests (up to a base's and a
	// delta's worth; the next commit writes them out if they are many).
	baseRef := manifest.InlineList(metas)
	sn := &snapshot.Snapshot{
		ID: latest.ID + 1, SchemaID: tag.SchemaID, BaseManifestList: baseRef,
		CommitUser: user, CommitIdentifier: uint64(latest.Epoch), CommitKind: snapshot.Rollback,
		TimeMillis: st.Now().UnixMilli(), TotalRecordCount: tag.TotalRecordCount,
		DeltaRecordCount: tag.TotalRecordCount - latest.TotalRecordCount, Epoch: latest.Epoch,
	}
	if err := st.Snapshots.Publish(sn); err != nil {
		return 0, err
	}
	_ = st.Snapshots.SetLatestHint(sn.ID) // a hint
	return sn.ID, nil
}
