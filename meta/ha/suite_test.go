package ha

import (
	"context"
	"testing"
	"time"

	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/api"
	"github.com/stratadb/strata/meta/metatest"
	"github.com/stratadb/strata/meta/store/etcdstore/etcdtest"
)

// TestSuiteOnEtcd runs the conformance suite against two nodes on one
// etcd through the failover client; a restart stops the leader (it
// resigns) and the same client goes on with the follower.
func TestSuiteOnEtcd(t *testing.T) {
	metatest.Run(t, func(t *testing.T) *metatest.Harness {
		srv := etcdtest.Start(t)
		a, ha := startNode(t, srv, "node-a")
		b, hb := startNode(t, srv, "node-b")
		c := api.NewFailoverClient([]string{ha.URL, hb.URL}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if _, err := c.CurrentEpoch(ctx); err != nil {
			t.Fatalf("no leader: %v", err)
		}
		return &metatest.Harness{Service: c, Restart: func(t *testing.T) meta.Service {
			leader, follower := a, b
			if _, ok := b.Service(); ok {
				leader, follower = b, a
			}
			leader.Stop()
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			if _, err := follower.WaitLeader(ctx); err != nil {
				t.Fatal(err)
			}
			return c
		}}
	})
}
