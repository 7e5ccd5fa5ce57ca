package maintain

import (
	"errors"
	"fmt"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/snapshot"
	"github.com/stratadb/strata/table/store"
)

// ExpireOptions bound the retained history (schema.Options has the table
// defaults).
type ExpireOptions struct {
	RetainMin, RetainMax int
	TimeRetained         time.Duration
	// KeepFrom, when not zero, is a snapshot id that is kept with every
	// newer one, whatever the other options say: it acts as one more
	// consumer at KeepFrom. A caller that knows of readers the table does
	// not (the meta service's pinned versions) passes the oldest snapshot
	// they may still read.
	KeepFrom base.SnapshotID
}

// ExpireResult reports what Expire did.
type ExpireResult struct {
	// Expired are the deleted snapshot ids.
	Expired []base.SnapshotID
	// DeletedFiles counts the manifest, data and changelog files removed.
	DeletedFiles int
}

// Expire runs the expiration protocol of the package doc. It is safe to
// run beside a writer and readers, but not beside another Expire of the
// same table.
func Expire(st *store.Store, o ExpireOptions) (ExpireResult, error) {
	var res ExpireResult
	if o.RetainMin < 1 {
		o.RetainMin = 1
	}
	if o.RetainMax < o.RetainMin {
		o.RetainMax = o.RetainMin
	}
	ids, err := st.Snapshots.IDs()
	if err != nil || len(ids) <= o.RetainMin {
		return res, err
	}
	// Step 1: choose the new earliest.
	n := max(0, len(ids)-o.RetainMax)
	cutoff := st.Now().Add(-o.TimeRetained).UnixMilli()
	for i := n; i < len(ids)-o.RetainMin; i++ {
		sn, err := st.Snapshots.Get(ids[i])
		if err != nil {
			return res, err
		}
		if sn.TimeMillis >= cutoff {
			break
		}
		n = i + 1
	}
	newEarliest := ids[n]
	lower := func() error {
		c, ok, err := st.Snapshots.MinConsumer()
		if err != nil {
			return err
		}
		if ok && c < newEarliest {
			newEarliest = max(c, ids[0])
		}
		if o.KeepFrom > 0 && o.KeepFrom < newEarliest {
			newEarliest = max(o.KeepFrom, ids[0])
		}
		return nil
	}
	if err := lower(); err != nil {
		return res, err
	}
	if newEarliest <= ids[0] {
		return res, nil
	}
	// Step 2: the fence.
	if err := st.Snapshots.SetEarliestFence(newEarliest); err != nil {
		return res, err
	}
	// Step 3: consumers again, then the commits in flight in this
	// process ([commit-lease]): none of them may publish over an id
	// deleted here.
	fence := newEarliest
	if err := lower(); err != nil {
		return res, err
	}
	newEarliest = st.Snapshots.LimitExpiry(newEarliest, ids[0])
	if newEarliest != fence {
		if err := st.Snapshots.SetEarliestFence(newEarliest); err != nil {
			return res, err
		}
	}
	if newEarliest <= ids[0] {
		return res, nil
	}
	// Load what is about to go, then what stays.
	var expired, retained []*snapshot.Snapshot
	for _, id := range ids {
		sn, err := st.Snapshots.Get(id)
		if errors.Is(err, base.ErrNotFound) && id < newEarliest {
			continue // expired by an earlier, interrupted run
		}
		if err != nil {
			return res, err
		}
		if id < newEarliest {
			expired = append(expired, sn)
		} else {
			retained = append(retained, sn)
		}
	}
	keep := newRefs()
	if err := keep.addRange(st, retained); err != nil {
		return res, err
	}
	if err := keep.addTags(st); err != nil {
		return res, err
	}
	// What the expired snapshots reference: the oldest in full, the
	// others by their lists and deltas (refs.addRange), since a file live
	// in one of them was live in the oldest or added by a later delta.
	// Reading each one's live files in full cost the number of expired
	// snapshots times the table's files, which grows with an append table.
	gone := newRefs()
	if err := gone.addRange(st, expired); err != nil {
		return res, err
	}
	// Step 4: pointers first, oldest first.
	for _, sn := range expired {
		if err := st.Snapshots.Delete(sn.ID); err != nil {
			return res, fmt.Errorf("table %s: expire snapshot %d: %w", st.Dir, sn.ID, err)
		}
		res.Expired = append(res.Expired, sn.ID)
	}
	// Step 5: files only the expired snapshots referenced.
	for k := range gone.data {
		if keep.data[k] {
			continue
		}
		if err := st.FS.Delete(st.DataPath(k.Bucket, k.Name)); err != nil {
			return res, err
		}
		res.DeletedFiles++
	}
	for name := range gone.manifests {
		if keep.manifests[name] {
			continue
		}
		if err := st.FS.Delete(st.Manifests.Path(name)); err != nil {
			return res, err
		}
		res.DeletedFiles++
	}
	return res, nil
}
