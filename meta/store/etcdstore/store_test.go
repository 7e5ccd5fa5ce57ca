package etcdstore

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/store"
	"github.com/stratadb/strata/meta/store/etcdstore/etcdtest"
)

func TestStoreRoundTripAndFencing(t *testing.T) {
	ctx := context.Background()
	srv := etcdtest.Start(t)
	cli := srv.Client(t)
	s := New(cli, "/test/meta/")
	want := map[string][]byte{}
	for i := range 20 {
		var b store.Batch
		k := fmt.Sprintf("committed/db.t%02d", i)
		b.Put(k, []byte(fmt.Sprint(i)))
		want[k] = []byte(fmt.Sprint(i))
		if i > 0 && i%5 == 0 {
			b.Delete(fmt.Sprintf("committed/db.t%02d", i-1))
			delete(want, fmt.Sprintf("committed/db.t%02d", i-1))
		}
		if err := s.Apply(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Load(ctx)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Load = %v, %v", got, err)
	}

	// Fence on an election key: writes pass while it lives, fail after.
	sess, err := concurrency.NewSession(cli, concurrency.WithTTL(5))
	if err != nil {
		t.Fatal(err)
	}
	el := concurrency.NewElection(sess, s.ElectionPrefix())
	if err := el.Campaign(ctx, "node-a"); err != nil {
		t.Fatal(err)
	}
	f := s.Fenced(el.Key(), el.Rev())
	if err := f.Apply(ctx, store.Batch{Puts: map[string][]byte{"clock": []byte("1")}}); err != nil {
		t.Fatalf("fenced write while leader: %v", err)
	}
	if got, _ := s.Load(ctx); string(got["clock"]) != "1" || len(got) != len(want)+1 {
		t.Fatalf("election keys leak into Load, or the write is missing: %v", got)
	}
	if err := el.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	err = f.Apply(ctx, store.Batch{Puts: map[string][]byte{"clock": []byte("2")}})
	if !errors.Is(err, ErrFenced) || !errors.Is(err, base.ErrClosed) {
		t.Fatalf("fenced write after resigning = %v", err)
	}
	if got, _ := s.Load(ctx); string(got["clock"]) != "1" {
		t.Fatalf("a fenced-off write landed: %q", got["clock"])
	}
	_ = sess.Close()

	// A value scribbled over in etcd is refused by Load.
	if _, err := cli.Put(ctx, "/test/meta/catalog", "garbage"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ctx); !errors.Is(err, base.ErrCorruption) {
		t.Fatalf("Load of a scribbled value = %v", err)
	}
}
