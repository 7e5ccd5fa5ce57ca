package commit

import (
	"fmt"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/manifest"
)

// Check reports whether message m can be applied on top of the live files
// of the latest snapshot. The error wraps base.ErrConflict and names the
// bucket and file.
func Check(live []manifest.Entry, m *Message) error {
	liveSet := make(map[manifest.Key]bool, len(live))
	maxSeq := map[int32]int64{}
	for _, e := range live {
		liveSet[e.Key()] = true
		if s, ok := maxSeq[e.Bucket]; !ok || e.File.MaxSeq > s {
			maxSeq[e.Bucket] = e.File.MaxSeq
		}
	}
	added := map[manifest.Key]bool{}
	for _, b := range m.Buckets {
		for _, f := range b.NewFiles {
			if s, ok := maxSeq[b.Bucket]; ok && f.MinSeq <= s {
				return fmt.Errorf("bucket %d: new file %s has sequence numbers from %d but the bucket already holds up to %d: a second writer races this bucket: %w",
					b.Bucket, f.Name, f.MinSeq, s, base.ErrConflict)
			}
			added[manifest.Key{Bucket: b.Bucket, Name: f.Name}] = true
		}
	}
	for _, b := range m.Buckets {
		for _, f := range b.CompactBefore {
			k := manifest.Key{Bucket: b.Bucket, Name: f.Name}
			if !liveSet[k] && !added[k] {
				return fmt.Errorf("bucket %d: file %s to be compacted was removed by a concurrent commit: %w", b.Bucket, f.Name, base.ErrConflict)
			}
			delete(liveSet, k)
			delete(added, k)
		}
	}
	return nil
}
