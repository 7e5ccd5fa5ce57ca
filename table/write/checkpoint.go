package write

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/manifest"
)

// StateVersion is the "version" member of an encoded State.
const StateVersion = 1

// State is what a writer must keep in a checkpoint taken in the middle of
// an epoch: the files holding the rows of epochs not prepared yet (Paimon
// flushes its write buffers at a checkpoint the same way). Prepared epochs
// are not part of it; their messages are.
type State struct {
	Version    int            `json:"version"`
	CommitUser string         `json:"commitUser"`
	Prepared   base.Epoch     `json:"prepared"`
	LastEpoch  base.Epoch     `json:"lastEpoch"`
	Pending    []PendingFiles `json:"pending,omitempty"`
}

// PendingFiles are the spilled, unprepared files of one epoch of one
// bucket.
type PendingFiles struct {
	Bucket    int32               `json:"bucket"`
	Epoch     base.Epoch          `json:"epoch"`
	Files     []manifest.DataFile `json:"files,omitempty"`
	Changelog []manifest.DataFile `json:"changelog,omitempty"`
}

// Checkpoint spills every buffered row of unprepared epochs to level-0
// files and returns the State that, with the prepared messages, restores
// the writer exactly (Restore). Orphan cleanup must not run with a grace
// period shorter than the time such files wait for their commit.
func (w *Writer) Checkpoint() (State, error) {
	s := State{Version: StateVersion, CommitUser: w.user, Prepared: w.prepared, LastEpoch: w.lastEpoch}
	ids := make([]int32, 0, len(w.buckets))
	for id := range w.buckets {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		b := w.buckets[id]
		epochs := make([]base.Epoch, 0, len(b.pending))
		for e := range b.pending {
			epochs = append(epochs, e)
		}
		sort.Slice(epochs, func(i, j int) bool { return epochs[i] < epochs[j] })
		for _, e := range epochs {
			ed := b.pending[e]
			if err := w.spill(b, e, ed); err != nil {
				return State{}, err
			}
			if len(ed.files)+len(ed.changelog) > 0 {
				s.Pending = append(s.Pending, PendingFiles{Bucket: id, Epoch: e, Files: ed.files, Changelog: ed.changelog})
			}
		}
	}
	// [names-before-message]: the state names staged files.
	if err := w.syncBuckets(); err != nil {
		return State{}, err
	}
	return s, nil
}

// Marshal encodes s as JSON.
func (s State) Marshal() ([]byte, error) { return json.Marshal(s) }

// UnmarshalState decodes what State.Marshal wrote; an unknown version
// gives an error wrapping base.ErrCorruption.
func UnmarshalState(b []byte) (State, error) {
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("writer state: %v: %w", err, base.ErrCorruption)
	}
	if s.Version != StateVersion {
		return s, fmt.Errorf("writer state: unknown version %d: %w", s.Version, base.ErrCorruption)
	}
	return s, nil
}

// Restore re-attaches a checkpoint's pending files to w, a writer freshly
// opened (New) after the checkpoint's messages were re-committed. Rows of
// the restored epochs keep their sequence numbers; new rows continue above
// them.
func (w *Writer) Restore(s State) error {
	if s.CommitUser != w.user {
		return fmt.Errorf("table %s: writer state of %s restored into writer of %s: %w", w.st.Dir, s.CommitUser, w.user, base.ErrInvalidArgument)
	}
	for _, p := range s.Pending {
		if p.Epoch <= w.prepared {
			continue // committed since: the files are orphans now
		}
		b := w.getBucket(p.Bucket)
		ed := b.pending[p.Epoch]
		if ed == nil {
			ed = &epochData{}
			b.pending[p.Epoch] = ed
		}
		ed.files = append(ed.files, p.Files...)
		ed.changelog = append(ed.changelog, p.Changelog...)
		for _, f := range append(append([]manifest.DataFile(nil), p.Files...), p.Changelog...) {
			b.nextSeq = max(b.nextSeq, base.SeqNum(f.MaxSeq)+1)
		}
		w.lastEpoch = max(w.lastEpoch, p.Epoch)
	}
	w.lastEpoch = max(w.lastEpoch, s.LastEpoch)
	return nil
}
