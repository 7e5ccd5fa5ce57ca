// Package dataflow is Strata's streaming runtime: jobs as DAGs of operators
// whose parallel subtasks exchange Chunks and in-band control messages over
// bounded queues, close epochs with aligned epoch barriers, and take aligned
// or unaligned checkpoints for exactly-once recovery (DESIGN.md "The epoch
// protocol" and "The checkpoint protocol").
//
// The runtime is split by role, imports pointing downward:
//
//	message       the in-band messages: chunk, watermark, epoch barrier,
//	              checkpoint barrier, end of stream
//	queue         the bounded per-channel queue (backpressure, priority
//	              put-at-head, capture of overtaken content, promotion)
//	barrier       the pure barrier-handling state machine of one subtask
//	chanstate     the codec of channel state (in-flight messages)
//	state         keyed and operator state over a key-value backend, with
//	              key groups; state/heap and state/pebble implement it,
//	              state/statetest is the suite both pass
//	checkpoint    checkpoint storage: a chk-<id>.metadata file per
//	              checkpoint, or a chk-<id> directory when it has state
//	              files, checksummed files, metadata written last,
//	              retention, orphan cleanup;
//	              checkpoint/coordinator is the coordinator's pure core
//	operator      the operator and source interfaces, the two-phase-commit
//	              sink
//	graph         the job graph: vertices with parallelism, forward, hash
//	              (through key groups) and broadcast edges
//	task          the driver: one goroutine per subtask, the job loop with
//	              the coordinator driver, recovery and the restart strategy
//	testkit       generator source, keyed sum, test 2PC store, failure
//	              injection: the pieces tests and benchmarks are built of
//	bench         checkpoint and pipeline benchmarks (go test -bench and the
//	              CLI call the same functions)
//
// # How the pieces meet the contract
//
//   - Epochs come from sources (operator.Item.Epoch), travel as epoch
//     barriers, are always aligned (barrier), and an operator emits an
//     epoch's results in OnEpoch before the barrier is forwarded.
//   - Checkpoints are triggered by the coordinator at the sources; aligned
//     barriers travel in band, unaligned ones jump the queues carrying the
//     messages they overtook, and the timeout policy switches from the
//     first to the second (task, barrier, queue).
//   - A checkpoint is complete when its metadata file exists; recovery
//     restores state, barrier alignment state and channel state (replayed
//     before new input) from the latest complete one, in-process after a
//     panic and across processes after kill -9 (task, checkpoint).
//   - Sinks commit an epoch only once a checkpoint taken after its barrier
//     is complete, and re-commit idempotently after a restore
//     (operator.TwoPhaseCommitSink).
//
// Decisions where DESIGN.md is silent, and known limits:
//
//   - An aligned checkpoint barrier that crosses an epoch barrier (before
//     it on one input, after it on another) would deadlock alignment; the
//     aligned policy declines such a checkpoint, the others turn it
//     unaligned (barrier doc). Sources of one job see triggers in one
//     order, so this only happens when source subtasks close epochs at
//     different moments.
//   - The final checkpoint follows FLIP-147: subtasks that reached end of
//     stream stay up, snapshot on direct triggers, commit on its
//     notification and then exit.
//   - Watermarks are forwarded (minimum over inputs) but operators do not
//     see them yet; rescaling (moving key groups) is not implemented; the
//     parallelism of a job must not change across a restore.
//
// The runtime knows nothing of SQL, tables or the meta service: connectors
// plug sources and sinks in through the operator package.
package dataflow
