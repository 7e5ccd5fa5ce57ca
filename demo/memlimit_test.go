package demo

import "testing"

func TestMemoryLimit(t *testing.T) {
	const gib = int64(1) << 30
	for _, c := range []struct {
		total, cgroup int64
		share         int
		want          int64
	}{
		{24 * gib, 0, MemoryShare, 6 * gib},        // a quarter of the machine
		{24 * gib, 4 * gib, MemoryShare, 1 * gib},  // a container's limit is smaller
		{8 * gib, 16 * gib, MemoryShare, 2 * gib},  // a cgroup limit above the machine's memory
		{0, 2 * gib, MemoryShare, gib / 2},         // no /proc/meminfo
		{0, 0, MemoryShare, 0},                     // nothing known: no limit
		{24 * gib, 0, ServerMemoryShare, 12 * gib}, // a server: half the machine
		{24 * gib, 4 * gib, ServerMemoryShare, 2 * gib},
	} {
		if got := memoryLimit(c.total, c.cgroup, c.share); got != c.want {
			t.Errorf("memoryLimit(%d, %d) = %d, want %d", c.total, c.cgroup, got, c.want)
		}
	}
}

func TestParseMemoryFiles(t *testing.T) {
	meminfo := "MemTotal:       24684352 kB\nMemFree:        15850000 kB\n"
	if got := parseMemTotal(meminfo); got != 24684352<<10 {
		t.Fatalf("MemTotal %d", got)
	}
	if got := parseMemTotal("MemFree: 12 kB\n"); got != 0 {
		t.Fatalf("MemTotal of a file without it: %d", got)
	}
	for s, want := range map[string]int64{
		"max\n":                 0,
		"9223372036854771712\n": 0, // cgroup v1's "no limit"
		"4294967296\n":          4294967296,
		"garbage":               0,
	} {
		if got := parseCgroupLimit(s); got != want {
			t.Errorf("parseCgroupLimit(%q) = %d, want %d", s, got, want)
		}
	}
}
