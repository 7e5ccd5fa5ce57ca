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
//     alone in a loop, and the generator through the engine into a sink
//     that drops everything. Its JSON form has the keys rows_per_sec,
//     rows_per_sec_no_checkpoint and generator_rows_per_sec
//     (`strata bench pipeline --json`), plus per-core and generator-job
//     figures.
//
// Run the benchmarks with
//
//	go test ./dataflow/bench -run XXX -bench . -benchtime=1x -v
package bench
