package maintain

import (
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/snapshot"
	"github.com/stratadb/strata/table/store"
)

// refs is a set of referenced files: manifest-dir names and data files.
type refs struct {
	manifests map[string]bool
	data      map[manifest.Key]bool
}

func newRefs() *refs {
	return &refs{manifests: map[string]bool{}, data: map[manifest.Key]bool{}}
}

// addLists adds sn's manifest list files and the manifest files its lists
// name (inline lists and manifests have no file of their own); with
// withDelta it also adds the data files its delta adds and its changelog
// files.
func (r *refs) addLists(st *store.Store, sn *snapshot.Snapshot, withDelta bool) error {
	for _, ref := range []manifest.FileRef{sn.BaseManifestList, sn.DeltaManifestList, sn.ChangelogManifestList} {
		if ref.IsZero() {
			continue
		}
		if !ref.Inline() {
			r.manifests[ref.Name] = true
		}
		metas, err := st.Manifests.ReadList(ref)
		if err != nil {
			return err
		}
		for _, m := range metas {
			// An inline manifest is part of the snapshot file: there is
			// no file to keep or delete.
			if !m.Inline() {
				r.manifests[m.Name] = true
			}
		}
	}
	if !withDelta {
		return nil
	}
	entries, err := st.Manifests.ReadEntries(sn.DeltaManifestList, sn.ChangelogManifestList)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Kind == manifest.Add {
			r.data[e.Key()] = true
		}
	}
	return nil
}

// addFull adds everything snapshot sn references: lists, manifests, live
// data files and changelog files.
func (r *refs) addFull(st *store.Store, sn *snapshot.Snapshot) error {
	if err := r.addLists(st, sn, true); err != nil {
		return err
	}
	live, err := st.LiveFiles(sn)
	if err != nil {
		return err
	}
	for _, e := range live {
		r.data[e.Key()] = true
	}
	return nil
}

// addRange adds everything the consecutive snapshots snaps reference:
// the first in full, the others by their lists and deltas (a snapshot's
// live files are its predecessor's plus its delta's additions).
func (r *refs) addRange(st *store.Store, snaps []*snapshot.Snapshot) error {
	for i, sn := range snaps {
		var err error
		if i == 0 || sn.CommitKind == snapshot.Rollback {
			// A rollback's content is not its predecessor's plus a delta.
			err = r.addFull(st, sn)
		} else {
			err = r.addLists(st, sn, true)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// addTags adds everything every tag references.
func (r *refs) addTags(st *store.Store) error {
	tags, err := st.Snapshots.Tags()
	if err != nil {
		return err
	}
	for _, t := range tags {
		if err := r.addFull(st, t); err != nil {
			return err
		}
	}
	return nil
}
