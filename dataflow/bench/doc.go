// Package bench measures the runtime: checkpoint durations under full
// backpressure per checkpoint mode, and pipeline throughput with and
// without checkpoints against the generator alone. Nothing here asserts a
// speed; the figures are printed.
//
// Two entry points, shared by `go test -bench` (bench_test.go) and the
// CLI:
//
//   - Checkpoint(ctx, CheckpointConfig) runs generator -> hash -> keyed
//     SUM/COUNT -> sink throttled to far below 1% of the generator's speed,
//     with full queues, once per mode (aligned, unaligned, aligned with a
//     200 ms timeout), and returns per mode the checkpoint duration p50 and
//     p99, the channel-state bytes and the throughput. Its JSON form has
//     the keys aligned_p50_ms, unaligned_p50_ms, timeout_p50_ms and
//     unaligned_channel_state_bytes (`strata bench checkpoint --json`).
//   - Pipeline(ctx, PipelineConfig) runs generator -> hash -> keyed count
//     with checkpoints every second and with checkpoints off, the generator
//     alone in a loop, and one generator subtask through the engine into a
//     sink that drops everything. Its JSON form has the keys rows_per_sec,
//     rows_per_sec_no_checkpoint and generator_rows_per_sec
//     (`strata bench pipeline --json`), plus every run's rate per CPU
//     second of the process, the two ratios engine_vs_generator (wall
//     clock) and engine_vs_generator_per_cpu, checkpoint_cost, and the
//     shape of the job (source_parallelism, count_parallelism,
//     rows_per_epoch, cores).
//
// # What each pipeline figure means
//
// The keyed pipeline is N source subtasks (PipelineConfig.Parallelism,
// --parallelism, by default one per core: GOMAXPROCS), each generating
// its own disjoint share of rows from testkit.GeneratorConfig.Row of its
// subtask index, a hash exchange on the key, and N counting subtasks (at
// least two, so that rows always cross a real exchange). Its goroutines
// use every core. rows_per_sec counts the rows the counting subtasks took
// in per second of wall clock.
//
// The generator-only baseline, generator_rows_per_sec, is one source
// subtask (testkit.Generator, same configuration) called in a loop on one
// goroutine, whatever N is: it builds every chunk in full, as each of the
// pipeline's sources does, and drops it; nothing is routed or counted. It
// uses one core for the generator and part of the other for the garbage
// collector, which frees the chunks it drops. So engine_vs_generator
// compares the engine's throughput on the whole machine with one
// generator goroutine's, and engine_vs_generator_per_cpu compares the
// work per row (rows per CPU second of the process in each), which does
// not depend on the number of cores: it is the "rows/s per core"
// against the generator's per core. On a machine shared with other work
// the wall-clock rates move with the load; the per-CPU-second rates move
// much less (other processes still evict the caches, which costs the
// pipeline, whose counting tables do not fit in them, more than the
// generator).
//
// Both sides allocate a new chunk for every 1024 rows. A source could
// reuse its chunk once the exchange has copied the rows out (it always
// does with two or more counting subtasks), but a fair baseline would
// then reuse its chunk too, and that saves the same allocation, zeroing
// and collection per row on both sides. On the quiet machine the
// generator alone spends about 10.5 µs of CPU per chunk, 6.8 µs of them on
// its own goroutine, and the pipeline about 28 µs: saving a few µs a chunk
// on each side would raise the generator alone by a larger share than the
// pipeline and lower both ratios (an estimate from those figures, not a
// measurement). It is not done.
//
// # Default shape: one source subtask per core
//
// A Flink user runs Nexmark-style jobs with every operator at the
// parallelism of the machine's cores, sources included, and since the job
// gives every aligned checkpoint trigger a cut (dataflow/task, invariant
// barrier-cut) two sources no longer leave a checkpoint barrier on two
// sides of an epoch barrier. Measured before the last two changes below
// on the quiet 2-core machine (10 s runs), two sources and two counting
// subtasks made 75.5 million rows a second with checkpoints every second
// (39 million per CPU second) against 58 million (36.6 million) with one
// source: the
// single source goroutine, generating and routing, bounded the wall-clock
// rate while the counting subtasks waited for it. So the default is one
// source per core, the shape a Flink user would expect. Under heavy load
// (below) it is the other way round: four goroutines that meet at every
// epoch barrier run at the pace of whichever the operating system
// descheduled, and two sources made 6-8 million rows a second where one
// made 15-19 million (--parallelism 1 keeps the old shape).
//
// Each source subtask closes an epoch every DefaultRowsPerEpoch rows (5
// million, 0.09 to 0.13 s at the quiet machine's rates; --rows-per-epoch),
// and each epoch makes every counting subtask sort and emit all of its
// changed keys. Epochs of a million rows, as the benchmark had before,
// closed every 20 to 35 ms, more often than the epoch clock's shortest
// interval (50 ms, DESIGN.md); the two measured the same, within the
// noise (BenchmarkPipelineRun/no-checkpoint-epochs-of-1M).
//
// BenchmarkPipelineRun runs each job alone (for -cpuprofile), with the
// default shape and with one source (the cases ending in -p1), and the
// micro-benchmarks BenchmarkGenerator, BenchmarkKeyedSum
// (dataflow/testkit), BenchmarkExchange (dataflow/task) and
// BenchmarkHashKeysInt64 (dataflow/state) report the thread's CPU time
// per chunk of 1024 rows (cpu-ns/op).
//
// # Where the keyed pipeline's time goes
//
// Per chunk of 1024 rows, in thread CPU time on the 2-core development
// machine (micro-benchmarks above, the least of several interleaved runs,
// with the machine shared with other builds throughout, so within about
// 15%). The first column is from before the hash and routing changes
// below, the other two from before and after the last two changes (load
// average 15 to 20):
//
//	                                               first  before  after
//	generator builds a chunk                        6.1 µs   6.0 µs  (same)
//	key-group hash of the BIGINT key (HashKeys)     6.3 µs   2.9 µs  2.9 µs
//	hash exchange, hash included, recycled chunks   9.8 µs   6.0 µs  5.9 µs
//	  (new chunks instead of recycled ones)        15.2 µs  11.7 µs 11.4 µs
//	keyed count, 1,000 keys (table in the caches)   3.8 µs   3.4 µs  3.0 µs
//	keyed count, 50,000 keys (one of two subtasks) 10.2 µs   8.7 µs  8.2 µs
//	keyed count, 100,000 keys                      15.8 µs  13.3 µs 12.0 µs
//
// and in instructions, which do not depend on the load (valgrind
// --tool=cachegrind over 20,000 chunks): the keyed count 55 -> 42 a row
// (1,000 keys), the exchange with recycled chunks 79 -> 75 a row, of
// which the hash is 36 before and after.
//
// The changes, oldest first:
//
//   - Key-group hash version 2 (state.KeyGroupHash): the encoded key is
//     folded a 64-bit word at a time, one multiplication a word, then
//     murmur3's finalizer, instead of FNV-1a's multiplication per byte; a
//     BIGINT key's nine bytes cost two multiplications instead of nine
//     before the finalizer, computed straight from the integer on the
//     exchange's columnar path. Key groups are persisted, so checkpoints
//     record the version and a job refuses, naming it, a checkpoint of
//     another version (dataflow/task); routing and keyed state both go
//     through state.Hash64, so they cannot disagree.
//   - The exchange's routing loop keeps its tables in locals and sizes each
//     target's selection for the whole chunk (0.8 µs of the 3.7).
//   - The keyed count's per-row loop (testkit.KeyedSum.countHits) calls
//     nothing: the table's slots, shift and mask are locals, a key missing
//     from the table ends the loop (it is loaded, and the loop resumes),
//     and the changed list has room for the whole chunk beforehand, so
//     marking a key changed is a store. With the call to load and the
//     append inside it, the compiler kept the loop's slices on the stack
//     and reloaded them, and the table's fields, for every row. Fewer
//     instructions a row also let the processor keep more rows' cache
//     misses in flight.
//   - For two targets (the default shape on two cores) and a key of one
//     8-byte integer column without NULLs, the exchange hashes each key
//     (state.HashInt64Key, inlined) and picks its target in one loop that
//     writes the row's number into both selections and advances only its
//     target's count, in registers; the general path writes the hashes out
//     and reads them back, and appends, and an append keeps a selection's
//     length in memory, so a row waited for the previous row's store
//     whenever both went to the same target.
//
// In the pipeline the source subtasks (generator and exchange) and the
// counting subtasks take about the same CPU time (a CPU profile of
// BenchmarkPipelineRun/no-checkpoint-p1 before the last two changes: 46%
// and 45%; the generator 20%, the exchange 26% of which the hash 14%, the
// counting 44% of which the table probe 32%; pprof attributes 10-30% of
// its samples to runtime.asyncPreempt inside these loops, and turning
// asynchronous preemption off changes no rate, so those samples belong to
// the loops they interrupt). What remains is memory: a counting table of
// 50,000 keys (2 MB of 32-byte slots) does not fit in a core's 1 MB
// second-level cache, and a row's probe misses it, 5 ns over the same
// count on a table that fits; the hash is 3 ns a row.
//
// # The vector hash and the home-slot shortcut
//
// Three later changes, measured the same way (thread CPU time per chunk
// of 1024 rows, medians of four or five interleaved runs of the code
// before and after, load average 5 to 15; the exchange with recycled
// chunks went to 2.88 µs with the hash, to 2.69 µs with the gather):
//
//	                                                before   after
//	key-group hash of the BIGINT key (HashKeys)     2.97 µs  0.71 µs
//	hash exchange, hash included, recycled chunks   5.98 µs  2.69 µs
//	  (new chunks instead of recycled ones)        12.4 µs   9.2 µs
//	keyed count, 1,000 keys                         3.5 µs   3.3 µs
//	keyed count, 50,000 keys                        8.6 µs   8.2 µs
//	keyed count, 100,000 keys                      16.8 µs  14.2 µs
//
// The changes:
//
//   - state.HashInt64Keys hashes a BIGINT key column eight keys a step
//     in AVX-512 registers (dataflow/state/hashvec_amd64.s, where the
//     processor has AVX-512 F, DQ and BW; the same steps as
//     state.HashInt64Key lane by lane, so the same key groups, which the
//     tests check on both paths), and the two-target exchange hashes the
//     whole key column first, then routes from the hashes
//     (task.edgeOut.splitInt64). The scalar hash was four dependent
//     multiplications and about twenty other instructions a key; routing
//     from precomputed hashes is faster even with the scalar loop (4.9
//     against 5.8 µs a chunk, build tag purego).
//   - A recycled target chunk's Ints are gathered two columns at a time,
//     one pass over the selection for both (task.gatherInto2).
//   - The keyed count compares a row's key with its home slot's first and
//     walks the probe sequence only when that is not it
//     (testkit.KeyedSum.countHits).
//
// BenchmarkPipelineRun (default shape, two sources and two counting
// subtasks, 3 s runs), the code before these three changes and after,
// alternated run after run while the machine was nearly quiet (load
// average 2 to 3, other work taking a fraction of a core), medians in
// million rows a second of wall clock / per CPU second of the process:
//
//	                                  before      after
//	pipeline, checkpoints every 1 s   81.4/42.4   94.2/49.9   (six runs each)
//	pipeline, checkpoints off         84.5/43.8   99.4/51.6   (four runs each)
//	generator alone                  150/119     150/119      (three runs each)
//
// so 54% -> 63% of the generator alone's wall-clock speed with checkpoints,
// 36% -> 42% per CPU second, and checkpoints every second cost 4-5% of the
// rows (3% per CPU second). Every run of the new code did more rows per
// CPU second than every run of the old in both series, and all but one
// more rows a second. `strata bench pipeline` in the same hour swung more
// (its rounds ran 37 to 90 million rows a second as other work came and
// went); its quiet rounds, where the generator alone ran at 130 million
// rows a second or more, gave 75-77 million rows a second before and
// 80-90 after.
//
// A CPU profile of BenchmarkPipelineRun/no-checkpoint after the hash and
// the home-slot shortcut (with GODEBUG=asyncpreemptoff=1, so that no
// samples land in runtime.asyncPreempt): the counting loop 55%, the
// generator 23%, the exchange 10% (of which gathering the targets' rows
// 6% and the hash 1%), the rest allocation and the garbage collector;
// before, the exchange was 21% (the hash and routing loop 13%) and the
// counting loop 45-50%. What the pipeline spends beyond the generator is
// now mostly the counting table's cache misses (see above and the designs
// below).
//
// # Measured
//
// `strata bench pipeline --duration 4s --json`, the code before the last
// two changes and after, alternated run after run (six runs of each of
// four variants), on the 2-core machine while other builds and test runs
// took most of it (load average 14 to 19; the process got well under a
// core of wall clock); medians, in million rows a second of wall clock /
// per CPU second of the process:
//
//	                                      one source        one source per core
//	                                    before    after      before    after
//	pipeline, checkpoints every 1 s  15.2/29.0 18.8/31.4    6.3/23.0  8.2/25.7
//	pipeline, checkpoints off        16.3/30.1 19.4/32.9    7.5/26.9 10.2/29.6
//	generator alone                  20.5/67.3 31.8/68.5   21.7/70.1 23.1/64.1
//	engine_vs_generator_per_cpu         0.44      0.45        0.36      0.42
//
// Under that load the wall-clock rates, and the wall-clock ratio
// engine_vs_generator, measure the scheduler more than the engine (single
// runs of the ratio ranged from 0.21 to 1.43), and so does
// checkpoint_cost, whose single runs ranged from -95% to +50%.
//
// A second series, 10 s runs, three of each variant (load average 10 to
// 22), gave with checkpoints 19.4/29.1 -> 16.5/27.9 with one source and
// 7.5/23.0 -> 13.2/27.6 with one source per core (without: 17.0/30.1 ->
// 22.8/31.0 and 10.5/28.5 -> 12.7/29.2). A third, when the load had
// fallen to 4 to 11 (10 s runs, two of each), gave with checkpoints
// 30.0/35.7 -> 28.1/35.7 with one source per core and 23.2/31.6 ->
// 25.9/32.8 with one source; without checkpoints 31.4/35.2 -> 32.5/38.1
// and 26.2/33.8 -> 32.4/34.7; the generator alone 58-71/73-80;
// engine_vs_generator_per_cpu 0.45 -> 0.46 (one source per core) and 0.43
// -> 0.46 (one source), engine_vs_generator 0.38-0.48 before and
// 0.38-0.63 after. There one source per core did more work per CPU second
// than one source (35.7 against 31.6-32.8), as on the quiet machine.
//
// So the keyed pipeline's rows per CPU second rose in ten of the twelve
// comparisons, from -4% to +20%, median +6% (with checkpoints, one source
// per core: +12%, +20%, 0%; one source: +8%, -4%, +4%; without
// checkpoints +2% to +10%): about what the instruction counts predict,
// at the edge of what these loads let one see. Neither target can be judged from these runs, and none is claimed
// here. On the quiet machine, before these two changes, one source per
// core gave 48% of the generator's wall-clock speed and 38% per CPU
// second; an older quiet measurement (one source, 5 s runs) found that
// checkpoints every second cost 1% of the rows.
//
// Earlier, with the hash and exchange changes above, measured the same
// way while other builds ran (load average 12 to 26, one source, medians
// of 24-32 runs): pipeline with checkpoints 8.5/20.1 -> 12.1/26.4,
// without 9.9/22.3 -> 16.8/30.4, generator alone 23.5/65.8 -> 24.8/66.5,
// engine_vs_generator_per_cpu 0.30 -> 0.38.
//
// Tried and dropped:
//
//   - Counting partitioned by slot range (radix-partitioned aggregation):
//     once the table outgrew 256 KB, inserted rows were buffered by the
//     top bits of their key's hash, which are the top bits of their home
//     slot, up to eight rows per cache line of the table (256,000 rows,
//     4 MB, at 50,000 keys), and a flush counted them partition after
//     partition, each in a quarter-megabyte stretch of the table that
//     stays in the second-level cache. Slower: 12.6-15.2 against
//     10.4-11.6 µs a chunk at 50,000 keys and no faster at 100,000 (the
//     same interleaved runs); writing and reading back 16 bytes a row
//     through the caches cost as much as the misses it saved (the
//     processor already overlaps a chunk's independent misses). Inserting
//     new keys partition after partition also filled one stretch of a
//     linear-probing table before its overall load made it grow, with
//     probe runs of thousands of slots: new keys would have to be
//     inserted in arrival order.
//   - A counting table at most half full instead of four fifths (fewer
//     probes, twice the memory): no better at 50,000 keys, worse at
//     100,000 (interleaved runs, heavy load).
//   - A pass that loads every row's home slot before the probes (group
//     prefetching), and a load of the home slot of the row twelve rows
//     ahead inside the counting loop: no faster, or slower.
//   - A counting table whose probes walk one control byte a slot (five
//     bits of the key's hash as a tag, as in Abseil's Swiss tables) apart
//     from keys and accumulators: the same as one array of 32-byte slots.
//     Slots of 24 bytes (key, sum, count) with the used, dirty and changed
//     flags in bitsets beside them (1.5 MB for 50,000 keys): faster at
//     100,000 keys (14.0 against 16.8 µs a chunk), not at the 50,000 of a
//     pipeline subtask (9.7 against 9.2 µs), slower at 1,000 (4.5 against
//     3.8 µs: the bit operations cost more than the bytes they save).
//   - Compacting the source chunk in place for one target, which would
//     save a copy: unsafe, since an emitted chunk may share its slices
//     with other chunks.
//   - Bucketized cuckoo hashing for the counting table (two buckets of
//     two 32-byte slots, one cache line each, both read for every row and
//     the slot picked with masks, no branch on the loaded keys): 2.5 times
//     slower at 1,000 keys and slower at 50,000 and 100,000. With the
//     generator's keys Fibonacci hashing already puts nearly every key in
//     its home slot (all of them at 1,000 and 100,000 keys, 96% at 50,000),
//     so linear probing reads one line a row and its branches are
//     predicted; reading two lines doubled the traffic. (Go will not turn
//     a branch into a conditional move when the result feeds a load
//     address, so the selection had to be written with masks.)
//   - Prefetching the home slots of the next 32 rows with PREFETCHT0 (an
//     assembly loop, since a prefetch, unlike a load, retires without
//     waiting for its line) while counting the current ones: no faster at
//     50,000 and 100,000 keys, 25% slower at 1,000. The processor already
//     overlaps the rows' misses.
//   - Again 24-byte slots, with the flags in a byte array beside them
//     instead of bitsets, and the home-slot shortcut: 2.77 -> 2.97 µs a
//     chunk at 1,000 keys, 7.12 -> 7.23 at 50,000, the same at 100,000.
//     A row touches one line of the table either way.
//   - A larger GOGC: it speeds the generator alone more than the pipeline
//     (its heap is smaller, so it collects more often), so it would move
//     the ratio the wrong way; the benchmark leaves the collector alone.
//
// Run the benchmarks with
//
//	go test ./dataflow/bench -run XXX -bench . -benchtime=1x -v
//	strata bench pipeline [--json] [--parallelism N] [--rows-per-epoch N]
package bench
