// Package nexmark runs the Nexmark benchmark's queries q0 to q22 as
// materialized views of an embedded Strata (package engine) and measures
// them; `strata bench nexmark` prints its results.
//
// # Queries
//
// Queries holds each query twice: the view's SELECT in Strata's
// PostgreSQL dialect, translated from the reference Flink SQL of the
// Nexmark benchmark (github.com/nexmark/nexmark) with RisingWave's
// snake_case column names, and a batch form in DuckDB SQL that gives the
// same rows. Window TVFs are Strata's table functions (TUMBLE(bid,
// date_time, INTERVAL '10 seconds'), HOP, SESSION); their batch forms use
// time_bucket. Top-N is ROW_NUMBER() OVER (...) <= N, with ties broken
// by further columns wherever the reference leaves the order open, so
// that both engines must pick the same rows. Each Query's Note names how
// its translation departs from the reference. Queries the SQL layer
// cannot run yet are kept as written: the run reports them unsupported
// with the planner's error. q12 windows over processing time: its bid
// table gets a stored processing-time column (ProcTimeColumn), and its
// batch form reads those stored stamps (bid_proctime), not the events.
//
// # A run [one-engine-per-query]
//
// Runner.Query gives each query a fresh engine in a data directory of its
// own, so that no query's state, files or memory carry into the next:
//
//  1. open the engine with epochs every EpochInterval (1 s) and checkpoints
//     every CheckpointInterval (10 s); collect garbage first;
//  2. start the clock and the CPU counter (getrusage: user + system time of
//     the whole process), create the query's input tables with the nexmark
//     connector bounded to Events events (events = 'N', all three tables
//     counting, as Flink's Nexmark counts events), then the view;
//  3. wait until each input's ingest job has closed an epoch at a position
//     past its last event (engine.IngestPosition, nexmark.Reader.Exhausted)
//     and the view has committed the highest of those epochs: the view then
//     holds every event;
//  4. stop the clock and the counter; read the view at its committed epoch.
//
// Seconds thus include the wait for the checkpoint that commits the last
// epoch (up to one CheckpointInterval per job on the path), and CPU seconds
// include generating the events and writing the input tables, work a
// Flink Nexmark run does not have (its generator feeds the query
// directly). Events per CPU second (Events / CPUSeconds) is the figure to
// set beside Flink's events per second per core. Peak RSS is sampled from
// /proc/self/status every 50 ms during the run; checkpoint p99 is over
// the completed checkpoints of the run's jobs, as engine.Jobs reports
// them.
//
// Ingest is a baseline beside the queries: the three tables filled and
// committed with no view, the part of every query's CPU seconds that is not
// the view's.
//
// # Sources instead of tables [input-source]
//
// Config.Input = InputSource (`--input source`) creates person, auction
// and bid with CREATE SOURCE instead of CREATE TABLE: the same columns
// and connector options, no primary key, nothing stored. The view's job
// runs the generator itself (engine, source.go), as Flink's and
// RisingWave's Nexmark runs feed the generator straight into the query,
// so CPU seconds count the generator, the query and the view's table
// writes, and not the input tables'. Step 3 then waits on the view's own
// readers (engine.SourcePosition) instead of the ingest jobs. A query
// that names a table twice reads its source twice (each scan has its
// readers). The Ingest baseline has nothing to fill and is reported
// unsupported, as is q12, whose bid needs a stored processing-time
// column a source cannot have; BidKey is refused (a source has no key).
// Since the generator is deterministic, VsDuckDB still compares each view
// with DuckDB over Parquet of the same events.
//
// # Keys [bid-key]
//
// Strata keeps a view as a primary-key table, keyed by what the planner
// can infer (engine, "Keys of views"); a view that keeps bid's rows has
// no such key, because bid is an append table without a key. One whose
// changes are insert-only (q0, q1, q13's lookup join, q14, ...) is an
// append table; one that retracts (q7, q20: bid joined with an updating
// side) is a multiset view (engine, "Multiset views"), read back with each row as
// often as it occurs. Config.BidKey (`--bid-key`) declares BidKeyColumns
// as bid's primary key instead; it makes bid a primary-key table, and a
// result says so (bid_key).
//
// # Against DuckDB
//
// With Config.VsDuckDB the Runner first writes the same events (same seed
// and count) to Parquet files, one per table (WriteParquet), and opens
// DuckDB with views over them. After each query it runs the batch form as
// CREATE TABLE AS (timed: DuckDB's own work) and compares the rows with
// the view's as multisets, numbers at 12 significant digits (DuckDB's avg
// is DOUBLE where Strata's is NUMERIC). A difference makes the result a
// mismatch with examples. DuckDB is a batch engine reading all events at
// once; the ratio strata_seconds / duckdb_seconds sets the price of
// incremental maintenance with exactly-once checkpoints beside it.
//
// # Flink's figures and charts
//
// FlinkFigures are Flink 2.0's published Nexmark results (another
// machine; see FlinkFigure). WriteCharts draws, as PNG, the events per CPU
// second of each measured query beside Flink's events per second per core,
// and strata_seconds / duckdb_seconds.
//
// # Recovery
//
// RecoverySetup and RecoveryResume are the two halves of `strata bench
// recovery`, each run in a child process: the first builds a view with one
// group per bid (about RecoveryConfig.StateBytes of state, measured as its
// checkpoint) and prints LineReady once the view holds every bid; the
// parent kills it with SIGKILL and starts the second on the same data
// directory, which prints LineRecovered with the time the view committed
// its first epoch after the restart, then (verify) LineVerified with the
// outcome of engine.Verify.
package nexmark
