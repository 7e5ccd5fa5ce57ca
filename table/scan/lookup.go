package scan

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/mergetree"
	"github.com/stratadb/strata/table/record"
	"github.com/stratadb/strata/table/schema"
	"github.com/stratadb/strata/table/snapshot"
	"github.com/stratadb/strata/table/store"
)

// Lookup returns the row of primary key key (the key columns' values, in
// key order) in snapshot sn, or nil if the key is absent. It reads only
// the files of the key's bucket whose key range holds the key, and
// binary-searches each.
func Lookup(st *store.Store, sn *snapshot.Snapshot, key types.Row) (types.Row, error) {
	sc, err := st.Schemas.Get(sn.SchemaID)
	if err != nil {
		return nil, err
	}
	if !sc.HasPrimaryKey() || len(key) != len(sc.PrimaryKey) {
		return nil, fmt.Errorf("table %s: lookup needs the %d primary-key values: %w", st.Dir, len(sc.PrimaryKey), base.ErrInvalidArgument)
	}
	opts, err := schema.ParseOptions(sc)
	if err != nil {
		return nil, err
	}
	idx := make([]int, len(key))
	for i := range idx {
		idx[i] = i
	}
	enc := types.EncodeKey(nil, key, idx, sc.KeyTypes())
	bucket := record.Bucket(enc, opts.Buckets)
	live, err := st.LiveFiles(sn)
	if err != nil {
		return nil, err
	}
	var recs []record.KV
	for _, e := range live {
		if e.Bucket != bucket || bytes.Compare(enc, e.File.MinKey) < 0 || bytes.Compare(enc, e.File.MaxKey) > 0 {
			continue
		}
		blk, err := st.ReadBlock(e.Bucket, e.File, sc)
		if err != nil {
			return nil, fmt.Errorf("snapshot %d: %w", sn.ID, err)
		}
		i := sort.Search(blk.Len(), func(i int) bool { return bytes.Compare(blk.Key(i), enc) >= 0 })
		for ; i < blk.Len() && bytes.Equal(blk.Key(i), enc); i++ {
			recs = append(recs, blk.KV(i))
		}
	}
	mergetree.SortKVs(recs)
	out := mergetree.MergeSorted(recs, mergetree.NewFunc(sc, opts), true)
	if len(out) == 0 {
		return nil, nil
	}
	return out[0].Row, nil
}
