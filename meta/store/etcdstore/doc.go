// Package etcdstore is the meta store on etcd (go.etcd.io/etcd/client/v3),
// for a highly available meta service: several instances share one etcd
// cluster, one of them (the leader, see meta/ha) serves, and its writes
// are fenced so that a deposed leader cannot overwrite its successor's
// state.
//
// # Layout
//
// Every key of the meta store lives under a prefix (default
// DefaultPrefix) with the value sealed in the envelope of meta/store
// (FORMAT.md). Load reads the prefix with a linearizable range read.
//
// # Fencing
//
// Fenced(key, rev) returns a store whose every Apply is one etcd
// transaction guarded by "the create revision of key is rev": key is the
// leader's election key, which lives exactly as long as the leader's lease.
// Once the lease expires or the leader resigns, the key is gone (or belongs
// to a successor with another revision), the guard fails, nothing is
// written, and Apply returns an error wrapping ErrFenced (which wraps
// base.ErrClosed). Because every read of a consistent version writes its
// pin, and every clock reservation and commit report writes too, a deposed
// leader can hand out nothing that its successor has not seen
// (Kleppmann's fencing token, with etcd's revision as the token).
//
// Invariant (etcdstore-fenced): a fenced store writes only while its
// election key exists with the revision it was fenced at.
//
// etcd refuses a transaction with more operations than its
// --max-txn-ops (128 by default). The meta service's batches hold a few
// operations each; its sweeper, which may delete many lapsed pins at once,
// writes in chunks of 64.
package etcdstore
