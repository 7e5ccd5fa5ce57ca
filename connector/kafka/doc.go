// Package kafka connects Strata to Apache Kafka with
// github.com/twmb/franz-go: a source that reads a topic's partitions into
// an ingest job (connector/ingest), and an exactly-once sink that writes a
// job's changelog into a topic with Kafka transactions.
//
// # Source: positions
//
// An ingest source subtask keeps one uint64 position, and a replay after a
// restore must re-read exactly the same records into the same
// transactions (connector/ingest, Replay). A topic has many partitions,
// each with its own offsets, and no order across them that a replay could
// reproduce without writing one down. So a Reader reads one partition, and
// an ingest job runs one source subtask per partition (OpenReaders returns
// the Readers in partition order; subtask i takes Readers[i]). Its
// position is the partition's offset: the offset of the next record to
// consider. The epoch barriers of the job thus record every partition's
// offset (DESIGN.md "The epoch protocol": the (epoch, position) pairs of
// subtask i are partition i's offsets), and the truth about progress lives
// in Strata's checkpoints, never in committed consumer-group offsets (the
// Reader joins no group and commits nothing).
//
// One record is one transaction: Next(pos) returns the changes of the
// first record at an offset >= pos and the position after it (its offset
// plus one). Records are immutable once in the log, and with
// read_committed (the default) a record becomes visible only with its
// whole producer transaction, so the transaction at a position depends
// only on the log: the invariant record-purity, which makes replays meet
// the epoch positions of the first run. Offsets missing from the log
// (control records of transactions, aborted records, compacted ones) are
// simply stepped over. Batches of several records per transaction were
// considered and dropped: where one batch ends would depend on what the
// broker had when the first run fetched it, and a replay fetching more
// would pass the position where the first run closed an epoch. The cost
// is one chunk per record between the source and the next operator
// (BenchmarkReaderJSON prints what one Reader reads alone: about 300,000
// small JSON records a second from an in-process broker on a 2-core
// machine); a Debezium update gives its -U and +U in one chunk, never
// split by an epoch.
//
// A record that gives no change (a tombstone, or a bad record dropped by
// the error mode) is an empty transaction: its position still advances.
//
// Position 0 means "start": the first record of the partition with
// scan.startup.mode = 'earliest' (the default), or the end of the
// partition as the Reader first sees it with 'latest'. A Reader resolves
// 'latest' once, so a restore in the same process to a checkpoint taken
// before any record starts at the same offset; a new process resolves it
// anew, which only drops records that no committed epoch contains.
//
// Fetching runs in the background, one franz-go client per Reader
// consuming its partition directly, into a bounded buffer of a few polls;
// Next never waits for the broker. A Next at another position than the
// one the previous call returned (a restore) closes that client and
// starts a new one at the position, so nothing fetched for an old
// position is returned for a new one. An offset that is no longer in the
// log (retention passed it) fails the source instead of silently
// resetting.
//
// # Source: bad records
//
// The errors option chooses what happens to a record the format cannot
// decode (connector/format, Errors): 'fail' (the default) fails the job
// with an error naming topic, partition, offset and field, e.g. `kafka
// topic orders partition 0 offset 1: field "price": value "lots": invalid
// input syntax for type numeric: "lots"`; 'skip' drops it and counts it
// (Reader.Errors().Skipped()); 'dead-letter' hands its key, bytes, offset
// and error to the caller's receiver. A replay after a restore meets the
// same bad records again: a receiver keeps dead letters once by their
// (partition, offset).
//
// # Source options
//
//	connector                    kafka (optional; another value is an error)
//	properties.bootstrap.server  host:port[,host:port...] (required; also ...servers)
//	topic                        the topic (required)
//	format                       json, debezium-json, csv or avro (required), with
//	                             csv.delimiter, csv.quote, avro.schema, avro.wire
//	scan.startup.mode            earliest (default) or latest
//	properties.isolation.level   read_committed (default) or read_uncommitted
//	errors                       fail (default), skip or dead-letter
//
// Unknown options and bad values are refused with an error wrapping
// base.ErrInvalidArgument that names the option.
//
// # Sink
//
// Sink is the operator.Committer of a two-phase-commit sink
// (operator.TwoPhaseCommitSink; NewSinkOperator runs it), exactly-once
// with Kafka transactions in the manner of Flink's KafkaSink, with epochs
// as the unit of commit:
//
//   - Prepare(E), at epoch barrier E: the epoch's changes are encoded
//     (Encoder: upsert JSON keyed by the primary key with tombstones for
//     deletes, or Debezium JSON) and written in a transaction of its own,
//     under the transactional id <prefix>-<subtask>-<E>, flushed and left
//     open: durable, invisible to read_committed consumers. The descriptor
//     kept in the checkpoint is the id, the producer id and epoch, and the
//     message count.
//   - Commit(E), when a checkpoint taken after barrier E completes: the
//     producer that opened the transaction commits it. After a restore
//     the producer is gone; the commit is an EndTxn request carrying the
//     descriptor's producer id and epoch, which the broker accepts again
//     for a transaction it already committed, so re-commits are
//     idempotent.
//   - Abort on restore: the first Prepare of an attempt initializes the
//     transactional ids of its epoch and the following ones
//     (InitProducerID), until one that was never used. Initializing an id
//     fences its old producer and aborts its open transaction, so the
//     epochs a failed attempt prepared beyond the restored checkpoint
//     vanish before the replay prepares them again. Every prepared epoch,
//     empty ones too, initializes its id, which keeps the used ids
//     contiguous for this sweep.
//
// One transactional id per epoch, not one per subtask: several epochs are
// prepared and not yet committed at once (epochs close faster than
// checkpoints complete), and Kafka allows one open transaction per id.
// The broker keeps an id until transactional.id.expiration.ms (7 days by
// default) after its last use.
//
// The transaction timeout (properties.transaction.timeout.ms, default 15
// minutes, the broker's default maximum) must outlast the time from a
// prepare to its commit, restarts included: a transaction the broker
// aborted on timeout cannot be committed, and its re-commit fails with an
// error naming the epoch and its message count (base.ErrConflict) rather
// than losing them silently.
//
// Sink options: connector, properties.bootstrap.server, topic, format
// ('json', upsert, the default, needs a primary key; or 'debezium-json'),
// transactional.id.prefix (unique per sink in the cluster, the same across
// restarts: the engine passes the job and sink names), and
// properties.transaction.timeout.ms.
package kafka
