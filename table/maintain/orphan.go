package maintain

import (
	"strings"
	"time"

	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/snapshot"
	"github.com/stratadb/strata/table/store"
)

// OrphanFiles returns the paths of files in the table's manifest and
// bucket directories (and temporary files anywhere in the table's known
// directories) that no snapshot or tag references and that are older than
// grace; unless dry, it deletes them ([orphans-unreferenced]).
func OrphanFiles(st *store.Store, grace time.Duration, dry bool) ([]string, error) {
	ids, err := st.Snapshots.IDs()
	if err != nil {
		return nil, err
	}
	var snaps []*snapshot.Snapshot
	for _, id := range ids {
		sn, err := st.Snapshots.Get(id)
		if err != nil {
			return nil, err
		}
		snaps = append(snaps, sn)
	}
	keep := newRefs()
	if err := keep.addRange(st, snaps); err != nil {
		return nil, err
	}
	if err := keep.addTags(st); err != nil {
		return nil, err
	}
	cutoff := st.Now().Add(-grace).UnixMilli()
	var out []string
	consider := func(dir, name string, mod int64, referenced bool) {
		tmp := strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".tmp")
		if (referenced && !tmp) || mod > cutoff {
			return
		}
		out = append(out, dir+"/"+name)
	}
	files, err := st.FS.List(st.Dir + "/" + manifest.Dir)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		consider(st.Dir+"/"+manifest.Dir, f.Name, f.ModUnixMilli, keep.manifests[f.Name])
	}
	dirs, err := st.FS.ListDirs(st.Dir)
	if err != nil {
		return nil, err
	}
	for _, d := range dirs {
		switch {
		case strings.HasPrefix(d, "bucket-"):
			var b int32
			for _, c := range strings.TrimPrefix(d, "bucket-") {
				b = b*10 + int32(c-'0')
			}
			files, err := st.FS.List(st.Dir + "/" + d)
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				consider(st.Dir+"/"+d, f.Name, f.ModUnixMilli, keep.data[manifest.Key{Bucket: b, Name: f.Name}])
			}
		default:
			files, err := st.FS.List(st.Dir + "/" + d)
			if err != nil {
				return nil, err
			}
			for _, f := range files {
				if strings.HasPrefix(f.Name, ".") && strings.HasSuffix(f.Name, ".tmp") {
					consider(st.Dir+"/"+d, f.Name, f.ModUnixMilli, false)
				}
			}
		}
	}
	if !dry {
		for _, p := range out {
			if err := st.FS.Delete(p); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}
