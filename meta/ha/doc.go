// Package ha runs the meta service highly available on etcd: several
// Nodes campaign in an etcd election (go.etcd.io/etcd/client/v3/concurrency);
// the winner opens a meta/service.Meta on an etcd store fenced by its
// election key (meta/store/etcdstore) and serves; the others wait. When the
// leader dies its lease expires after SessionTTL, a follower wins, loads
// the state the old leader persisted and serves.
//
// # Why nothing goes backwards across a fail-over
//
//   - Epochs: the old leader opened only epochs at or below the clock
//     ceiling it persisted; the new leader loads that ceiling and opens the
//     epoch above it (meta/epoch invariant epoch-monotonic).
//   - Committed epochs, strong-read floors, pins, the catalog: every change
//     is persisted before it is visible (meta invariant
//     meta-durable-before-visible), and every write of the old leader is
//     fenced (etcdstore invariant etcdstore-fenced), so the new leader loads
//     a state that contains everything the old one ever showed, and the
//     old one can change nothing after the new one loaded.
//   - A deposed leader that does not know it yet cannot answer a read of a
//     consistent version: every such read writes its pin through the
//     fence. Its epoch clock stops at its ceiling because reserving more
//     is fenced. What it could still do in that window is report the
//     current epoch from memory; the window closes when its session's
//     keep-alive deadline passes, which the etcd client measures from its
//     last successful keep-alive, i.e. before the server lets the lease
//     expire (a leader lease in the sense of Chubby and etcd's own lessor).
//
// # Lifecycle
//
// Start returns at once; the Node campaigns in the background. Service
// returns the served Meta while this node leads. Handler serves the HTTP
// API (meta/api) while leading and answers "closed" otherwise, which the
// failover client takes as "try the next endpoint". Stop resigns, so a
// follower takes over at once; Crash (for tests) stops without resigning
// or revoking, as a killed process would, so the lease must expire.
package ha
