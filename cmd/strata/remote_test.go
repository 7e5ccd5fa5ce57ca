package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/meta/store/etcdstore/etcdtest"
	"github.com/stratadb/strata/server"
)

// TestEtcdMetaAndS3Warehouse opens an engine on --meta etcd://... and
// --warehouse s3://... (an in-process etcd and S3), creates a table and a
// view, writes, closes, opens again with a fresh local directory for the
// data directory's remainder, and reads the same rows back.
func TestEtcdMetaAndS3Warehouse(t *testing.T) {
	etcd := etcdtest.Start(t)
	fake := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	defer fake.Close()
	host := strings.TrimPrefix(fake.URL, "http://")
	mc, err := minio.New(host, &minio.Options{Creds: credentials.NewStaticV4("key", "secret", ""), BucketLookup: minio.BucketLookupPath, Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := mc.MakeBucket(ctx, "warehouse", minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "key")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	metaSpec := "etcd://" + strings.TrimPrefix(etcd.Endpoint, "http://") + "/strata-test"
	whSpec := "s3://warehouse/tables?endpoint=" + host + "&secure=false&region=us-east-1"
	open := func(dir string) *engine.Engine {
		ms, err := openMetaStore(ctx, metaSpec)
		if err != nil {
			t.Fatal(err)
		}
		wh, err := openWarehouse(whSpec)
		if err != nil {
			t.Fatal(err)
		}
		e, err := engine.Open(ctx, engine.Options{Dir: dir, MetaStore: ms, Warehouse: wh,
			EpochInterval: 50 * time.Millisecond, CheckpointInterval: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	dir := t.TempDir()
	e := open(dir)
	s := server.NewSession(e, engine.DefaultDatabase)
	run := func(s *server.Session, q string) string {
		t.Helper()
		st, err := s.Prepare(ctx, q, nil)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		res, err := s.Execute(ctx, st, nil)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var out []string
		for _, r := range res.Rows {
			out = append(out, r.String())
		}
		return strings.Join(out, " ")
	}
	run(s, "CREATE TABLE kv (k INT PRIMARY KEY, v TEXT)")
	run(s, "CREATE MATERIALIZED VIEW n AS SELECT count(*) AS c FROM kv")
	run(s, "INSERT INTO kv VALUES (1, 'one'), (2, 'two')")
	if got := run(s, "SELECT c FROM n"); got != "(2)" {
		t.Fatalf("view n: %s", got)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	objs := 0
	for range mc.ListObjects(ctx, "warehouse", minio.ListObjectsOptions{Prefix: "tables/", Recursive: true}) {
		objs++
	}
	if objs == 0 {
		t.Fatal("nothing was written to the S3 warehouse")
	}
	e = open(dir)
	defer e.Close()
	s = server.NewSession(e, engine.DefaultDatabase)
	run(s, "INSERT INTO kv VALUES (3, 'three')")
	if got := run(s, "SELECT k, v FROM kv ORDER BY k"); got != "(1, one) (2, two) (3, three)" {
		t.Fatalf("kv after reopening: %s", got)
	}
	if got := run(s, "SELECT c FROM n"); got != "(3)" {
		t.Fatalf("view n after reopening: %s", got)
	}
}
