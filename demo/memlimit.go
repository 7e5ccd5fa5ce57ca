package demo

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// MemoryShare is the share of the machine's memory the demo gives the Go
// runtime as a soft memory limit when the user set none: a quarter, as
// the JVM sizes its default maximum heap (MaxRAMPercentage=25). At the
// default GOGC=100 the heap may grow to twice what is live before a
// collection; the limit makes the collector run sooner once the heap
// nears it, so that the process stays within the share, and it is soft:
// a live heap above it is not an error, the collector just runs more
// often (its CPU is capped at about half the cores, Go's guard against a
// death spiral). A smaller share would make the collector take a core's
// worth of time from a demo that needs both; a larger one leaves little
// room for the OS's file cache, which the table store reads through.
const MemoryShare = 4

// ServerMemoryShare is the share `strata start` gives the Go runtime as a
// soft memory limit when the user set none: half the machine (or the
// container), for a server that has the machine to itself; the other half
// is the OS's file cache, which the table store reads through, and memory
// outside the Go heap (DuckDB's, Pebble's caches, cgo buffers), which the
// limit does not count.
const ServerMemoryShare = 2

// memoryLimit returns the soft limit for a machine of total bytes of
// memory in a container limited to cgroup bytes (0 or above total: no
// smaller limit): the smaller of the two, divided by share. It returns 0
// when both are unknown (0).
func memoryLimit(total, cgroup int64, share int) int64 {
	if cgroup > 0 && (total == 0 || cgroup < total) {
		total = cgroup
	}
	return total / int64(share)
}

// parseMemTotal returns MemTotal of /proc/meminfo's text in bytes, or 0.
func parseMemTotal(meminfo string) int64 {
	sc := bufio.NewScanner(strings.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil || kb <= 0 {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// parseCgroupLimit returns the bytes of a cgroup memory limit file
// (v2 memory.max, v1 memory.limit_in_bytes), or 0 for "max" or no
// limit.
func parseCgroupLimit(s string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 || n >= math.MaxInt64/2 {
		return 0
	}
	return n
}

// SetMemoryLimit sets the Go runtime's soft memory limit
// (debug.SetMemoryLimit) to 1/share of this machine's memory, or of its
// container's cgroup limit when that is smaller, unless GOMEMLIMIT is set
// (the runtime honours it) or a limit is already in place. It returns a
// description for the status ("" when it set none) and a function that
// restores the previous limit. The demo gives MemoryShare, `strata start`
// ServerMemoryShare.
func SetMemoryLimit(share int) (string, func()) {
	if _, ok := os.LookupEnv("GOMEMLIMIT"); ok || debug.SetMemoryLimit(-1) != math.MaxInt64 {
		return "", func() {}
	}
	var total, cgroup int64
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		total = parseMemTotal(string(b))
	}
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		if b, err := os.ReadFile(p); err == nil {
			if cgroup = parseCgroupLimit(string(b)); cgroup > 0 {
				break
			}
		}
	}
	limit := memoryLimit(total, cgroup, share)
	if limit <= 0 {
		return "", func() {}
	}
	prev := debug.SetMemoryLimit(limit)
	return fmt.Sprintf("Go memory limit: %s (1/%d of %s; set GOMEMLIMIT to choose another)",
		byteSize(limit), share, byteSize(limit*int64(share))), func() { debug.SetMemoryLimit(prev) }
}
