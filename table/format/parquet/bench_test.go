package parquet

import (
	"math/rand"
	"strings"
	"syscall"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/record"
	"github.com/stratadb/strata/table/schema"
)

// benchFile returns the schema and records of the table bench's shape
// (BIGINT key, BIGINT value, 84-byte TEXT pad; about 100 bytes a row),
// sorted by key with rows scattered in memory as in a sorted write buffer.
func benchFile(b *testing.B, n int) (*schema.Schema, []record.KV) {
	s, err := schema.New([]schema.Field{
		{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64, Nullable: true}, {Name: "pad", Type: types.Text, Nullable: true},
	}, []string{"k"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	pad := types.NewText(strings.Repeat("x", 84))
	rows := make([]types.Datum, 3*n)
	perm := rand.New(rand.NewSource(1)).Perm(n)
	kvs := make([]record.KV, n)
	for i := range kvs {
		r := types.Row(rows[3*perm[i] : 3*perm[i]+3])
		r[0], r[1], r[2] = types.NewInt64(int64(i)), types.NewInt64(int64(i)*7), pad
		kvs[i] = record.KV{Key: types.EncodeKey(nil, r, []int{0}, []types.Type{types.Int64}), Seq: base.SeqNum(n - i), Kind: types.UpdateAfter, Row: r}
	}
	return s, kvs
}

// BenchmarkEncode measures Encode of 64K bench-shaped rows; rows/s is the
// figure to compare.
func BenchmarkEncode(b *testing.B) {
	s, kvs := benchFile(b, 1<<16)
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		if _, err := Encode(s, kvs); err != nil {
			b.Fatal(err)
		}
	}
	reportRates(b, len(kvs), cpu0)
}

// BenchmarkDecode measures Decode of the file BenchmarkEncode writes.
func BenchmarkDecode(b *testing.B) {
	s, kvs := benchFile(b, 1<<16)
	data, err := Encode(s, kvs)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		if _, err := Decode("bench", data, s, s); err != nil {
			b.Fatal(err)
		}
	}
	reportRates(b, len(kvs), cpu0)
}

// reportRates reports rows per second of wall time and, as the machine may
// be shared (wall time then varies with the load), rows per second of the
// process's CPU time since cpu0.
func reportRates(b *testing.B, rows int, cpu0 int64) {
	b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
	if cpu := cpuTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(b.N*rows)/(float64(cpu)/1e9), "rows/cpu-s")
	}
}

// cpuTime returns the process's user and system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
