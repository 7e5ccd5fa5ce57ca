package lineage

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/catalog"
)

func n(name string) Name { return catalog.Name("db", name) }

func names(ss ...string) []Name {
	out := make([]Name, len(ss))
	for i, s := range ss {
		out[i] = n(s)
	}
	return out
}

func mustAdd(t *testing.T, g *Graph, job string, reads, writes []Name) {
	t.Helper()
	if err := g.AddJob(job, reads, writes); err != nil {
		t.Fatalf("AddJob(%s): %v", job, err)
	}
}

// diamond builds S -> T1 -> T2, T1 -> T3, T2+T3 -> T4.
func diamond(t *testing.T) *Graph {
	g := New()
	mustAdd(t, g, "ingest", names("s"), names("t1"))
	mustAdd(t, g, "v2", names("t1"), names("t2"))
	mustAdd(t, g, "v3", names("t1"), names("t3"))
	mustAdd(t, g, "v4", names("t2", "t3"), names("t4"))
	return g
}

func TestDiamondIsAccepted(t *testing.T) {
	g := diamond(t)
	if got := g.Upstream(n("t4")); !reflect.DeepEqual(got, Set{Nodes: names("s", "t1", "t2", "t3"), Jobs: []string{"ingest", "v2", "v3", "v4"}}) {
		t.Errorf("Upstream(t4) = %+v", got)
	}
	if got := g.Downstream(n("t1")); !reflect.DeepEqual(got, Set{Nodes: names("t2", "t3", "t4"), Jobs: []string{"v2", "v3", "v4"}}) {
		t.Errorf("Downstream(t1) = %+v", got)
	}
	if got := g.Downstream(n("t4")); len(got.Nodes) != 0 || len(got.Jobs) != 0 {
		t.Errorf("Downstream(t4) = %+v, want empty", got)
	}
	up, err := g.UpstreamOfJob("v4")
	if err != nil || !reflect.DeepEqual(up, Set{Nodes: names("s", "t1", "t2", "t3"), Jobs: []string{"ingest", "v2", "v3"}}) {
		t.Errorf("UpstreamOfJob(v4) = %+v, %v", up, err)
	}
	down, err := g.DownstreamOfJob("v2")
	if err != nil || !reflect.DeepEqual(down, Set{Nodes: names("t2", "t4"), Jobs: []string{"v4"}}) {
		t.Errorf("DownstreamOfJob(v2) = %+v, %v", down, err)
	}
	if w, ok := g.Writer(n("t4")); !ok || w != "v4" {
		t.Errorf("Writer(t4) = %q, %v", w, ok)
	}
	for _, tb := range []string{"t1", "t2", "t3", "t4"} {
		if got := g.Roots(n(tb)); !reflect.DeepEqual(got, names("s")) {
			t.Errorf("Roots(%s) = %v, want [db.s]", tb, got)
		}
	}
}

func TestCycleIsRefusedNamingBothSides(t *testing.T) {
	// The diamond without its ingest job: t1 is filled from outside.
	g := diamond(t)
	if err := g.RemoveJob("ingest"); err != nil {
		t.Fatal(err)
	}
	err := g.AddJob("back", names("t4"), names("t1"))
	if !errors.Is(err, ErrCycle) || !errors.Is(err, base.ErrConflict) {
		t.Fatalf("AddJob(back) = %v, want ErrCycle", err)
	}
	msg := err.Error()
	// The new job, the tables it would connect, and a job on the existing
	// path all appear.
	for _, want := range []string{`job "back"`, "db.t4", "db.t1", `job "v4"`, `job "v2"`, "db.t1 -> job \"v2\" -> db.t2 -> job \"v4\" -> db.t4 -> job \"back\" -> db.t1"} {
		if !strings.Contains(msg, want) {
			t.Errorf("cycle error %q does not name %s", msg, want)
		}
	}
	if _, _, ok := g.Edges("back"); ok {
		t.Fatal("refused job was registered")
	}
	if err := g.AddJob("self", names("t5"), names("t5")); !errors.Is(err, ErrCycle) || !strings.Contains(err.Error(), `db.t5 -> job "self" -> db.t5`) {
		t.Fatalf("self loop: %v", err)
	}
}

func TestSecondWriterIsRefusedNamingBothJobs(t *testing.T) {
	g := diamond(t)
	err := g.AddJob("other", names("s"), names("t3"))
	if !errors.Is(err, ErrSecondWriter) || !errors.Is(err, base.ErrConflict) {
		t.Fatalf("AddJob(other) = %v, want ErrSecondWriter", err)
	}
	for _, want := range []string{`job "other"`, `job "v3"`, "db.t3"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if w, _ := g.Writer(n("t3")); w != "v3" {
		t.Fatalf("writer of t3 changed to %q", w)
	}
	if err := g.AddJob("v2", names("s"), names("x")); !errors.Is(err, base.ErrConflict) {
		t.Fatalf("duplicate job name: %v", err)
	}
}

func TestRemoveJobFreesTheTable(t *testing.T) {
	g := diamond(t)
	if err := g.RemoveJob("v3"); err != nil {
		t.Fatal(err)
	}
	if err := g.RemoveJob("v3"); !errors.Is(err, base.ErrNotFound) {
		t.Fatalf("second RemoveJob = %v", err)
	}
	// t3 has no writer now: it is its own root and unrelated to t1.
	if got := g.Roots(n("t3")); !reflect.DeepEqual(got, names("t3")) {
		t.Fatalf("Roots(t3) = %v", got)
	}
	if !g.Related(n("t3"), n("t4")) || g.Related(n("t3"), n("t1")) {
		t.Fatal("relation after removal is wrong")
	}
	mustAdd(t, g, "v3b", names("t2"), names("t3"))
	if got := g.Downstream(n("t2")); !reflect.DeepEqual(got.Nodes, names("t3", "t4")) {
		t.Fatalf("Downstream(t2) = %+v", got)
	}
}

func TestGroupsAreComponentsOfSharedRoots(t *testing.T) {
	// a from s1; b from s1 and s2; c from s2; d from s3; e written by nobody.
	g := New()
	mustAdd(t, g, "ja", names("s1"), names("a"))
	mustAdd(t, g, "jb", names("s1", "s2"), names("b"))
	mustAdd(t, g, "jc", names("s2"), names("c"))
	mustAdd(t, g, "jd", names("s3"), names("d"))
	if !g.Related(n("a"), n("b")) || !g.Related(n("b"), n("c")) || g.Related(n("a"), n("c")) {
		t.Fatal("relation is wrong")
	}
	for _, tc := range []struct {
		in   []Name
		want [][]Name
	}{
		{names("a", "c"), [][]Name{names("a"), names("c")}},
		{names("c", "a", "b"), [][]Name{names("a", "b", "c")}},
		{names("a", "d", "e", "a"), [][]Name{names("a"), names("d"), names("e")}},
		{names("e", "s1", "a"), [][]Name{names("a", "s1"), names("e")}},
	} {
		if got := g.Groups(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Groups(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestCloneIsIndependent(t *testing.T) {
	g := diamond(t)
	c := g.Clone()
	mustAdd(t, c, "v5", names("t4"), names("t5"))
	if _, _, ok := g.Edges("v5"); ok {
		t.Fatal("clone shares jobs with the original")
	}
	if got := g.Downstream(n("t4")); len(got.Nodes) != 0 {
		t.Fatalf("original sees the clone's edge: %+v", got)
	}
}
