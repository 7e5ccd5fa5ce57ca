package commit

import (
	"errors"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/manifest"
)

func TestCheck(t *testing.T) {
	live := []manifest.Entry{
		{Bucket: 0, File: manifest.DataFile{Name: "a", MinSeq: 1, MaxSeq: 10}},
		{Bucket: 1, File: manifest.DataFile{Name: "b", MinSeq: 1, MaxSeq: 5}},
	}
	for _, tc := range []struct {
		name string
		msg  Message
		want string // "" for no conflict, else a word of the error
	}{
		{"new files above", Message{Buckets: []BucketChange{{Bucket: 0, NewFiles: []manifest.DataFile{{Name: "c", MinSeq: 11, MaxSeq: 12}}}}}, ""},
		{"second writer", Message{Buckets: []BucketChange{{Bucket: 1, NewFiles: []manifest.DataFile{{Name: "c", MinSeq: 5, MaxSeq: 9}}}}}, "second writer"},
		{"new bucket", Message{Buckets: []BucketChange{{Bucket: 7, NewFiles: []manifest.DataFile{{Name: "c", MinSeq: 1}}}}}, ""},
		{"compact live", Message{Buckets: []BucketChange{{Bucket: 0, CompactBefore: []manifest.DataFile{{Name: "a"}}, CompactAfter: []manifest.DataFile{{Name: "d"}}}}}, ""},
		{"compact gone", Message{Buckets: []BucketChange{{Bucket: 1, CompactBefore: []manifest.DataFile{{Name: "a"}}}}}, "removed by a concurrent commit"},
		{"compact own new file", Message{Buckets: []BucketChange{{Bucket: 0, NewFiles: []manifest.DataFile{{Name: "n", MinSeq: 20}}, CompactBefore: []manifest.DataFile{{Name: "n"}, {Name: "a"}}}}}, ""},
		{"compact twice", Message{Buckets: []BucketChange{{Bucket: 0, CompactBefore: []manifest.DataFile{{Name: "a"}, {Name: "a"}}}}}, "removed"},
	} {
		err := Check(live, &tc.msg)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (!errors.Is(err, base.ErrConflict) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: got %v, want a conflict about %q", tc.name, err, tc.want)
		}
	}
}
