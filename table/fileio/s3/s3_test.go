package s3_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio/fstest"
	"github.com/stratadb/strata/table/fileio/s3"
	"github.com/stratadb/strata/table/schema"
)

// fake starts an in-process S3 server and returns a client and a bucket.
func fake(t *testing.T) (*minio.Client, string) {
	t.Helper()
	srv := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	t.Cleanup(srv.Close)
	client, err := minio.New(strings.TrimPrefix(srv.URL, "http://"), &minio.Options{
		Creds: credentials.NewStaticV4("key", "secret", ""), Secure: false,
		Region: "us-east-1", BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.MakeBucket(context.Background(), "warehouse", minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
		t.Fatal(err)
	}
	return client, "warehouse"
}

func TestSuite(t *testing.T) {
	client, bucket := fake(t)
	fstest.Run(t, s3.New(client, bucket, ""))
	fstest.Run(t, s3.New(client, bucket, "under/a/prefix"))
}

func TestTableOnS3(t *testing.T) {
	client, bucket := fake(t)
	fs := s3.New(client, bucket, "warehouse")
	tb, err := table.Create(fs, "db/t", []schema.Field{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Text, Nullable: true}},
		[]string{"k"}, map[string]string{"bucket": "2"})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := tb.NewWriter("job")
	for e := 1; e <= 3; e++ {
		for k := 0; k < 5; k++ {
			if err := w.Write(base.Epoch(e), types.Insert, types.Row{types.NewInt64(int64(k)), types.NewText(strings.Repeat("x", e))}); err != nil {
				t.Fatal(err)
			}
		}
		msgs, err := w.PrepareCommit(base.Epoch(e))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tb.Commit(msgs); err != nil {
			t.Fatal(err)
		}
	}
	again, err := table.Open(fs, "db/t")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := again.ReadLatest()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 || rows[0][1].Str() != "xxx" {
		t.Fatalf("rows %v", rows)
	}
	if ce, _ := again.CommittedEpoch(); ce != 3 {
		t.Fatalf("committed epoch %d", ce)
	}
}
