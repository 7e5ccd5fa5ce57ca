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

// memoryLimit returns the soft limit for a machine of total bytes of
// memory in a container limited to cgroup bytes (0 or above total: no
// smaller limit): the smaller of the two, divided by MemoryShare. It
// returns 0 when total is unknown (0).
func memoryLimit(total, cgroup int64) int64 {
	if cgroup > 0 && (total == 0 || cgroup < total) {
		total = cgroup
	}
	return total / MemoryShare
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

// setMemoryLimit sets the runtime's soft memory limit to memoryLimit of
// this machine unless GOMEMLIMIT is set or a limit is already in place,
// and returns a description for the status ("" when it set none) and a
// function that restores the previous limit.
func setMemoryLimit() (string, func()) {
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
	limit := memoryLimit(total, cgroup)
	if limit <= 0 {
		return "", func() {}
	}
	prev := debug.SetMemoryLimit(limit)
	return fmt.Sprintf("Go memory limit: %s (1/%d of %s; set GOMEMLIMIT to choose another)",
		byteSize(limit), MemoryShare, byteSize(limit*MemoryShare)), func() { debug.SetMemoryLimit(prev) }
}
