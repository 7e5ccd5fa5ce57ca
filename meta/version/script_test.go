package version

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/lineage"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata scripts")

// runScript runs a script of commands ("> command" lines, each followed by
// its expected output) through do, and compares or, with -rewrite,
// regenerates the expected output. Lines starting with # are comments.
func runScript(t *testing.T, path string, do func(cmd []string) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if !strings.HasPrefix(line, "> ") {
			out.WriteString(line + "\n")
			continue
		}
		var want []string
		for i+1 < len(lines) && !strings.HasPrefix(lines[i+1], "> ") && !strings.HasPrefix(lines[i+1], "#") && lines[i+1] != "" {
			i++
			want = append(want, lines[i])
		}
		got := do(strings.Fields(strings.TrimPrefix(line, "> ")))
		out.WriteString(line + "\n" + got + "\n")
		if !*rewrite && got != strings.Join(want, "\n") {
			t.Errorf("%s: %s\ngot:\n%s\nwant:\n%s", filepath.Base(path), line, got, strings.Join(want, "\n"))
		}
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func names(args []string) []Name {
	var out []Name
	for _, a := range args {
		out = append(out, catalog.Name("db", a))
	}
	return out
}

func formatEpochs(m map[Name]base.Epoch) string {
	var parts []string
	for n, e := range m {
		parts = append(parts, fmt.Sprintf("%s=%d", n.Name, e))
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// TestScripts runs testdata/*.txt: stories of lineage changes, commit
// reports and reads in both modes.
//
//	> job NAME READS... -> WRITES...   register a job
//	> drop NAME                        remove a job
//	> commit TABLE EPOCH               report a committed epoch
//	> read strong|weak TABLES...       resolve (and, if not waiting, apply) a read
//	> floors TABLES...                 show strong-read floors
func TestScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no scripts")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			g, tr := lineage.New(), NewTracker(nil, nil)
			runScript(t, f, func(cmd []string) string {
				switch cmd[0] {
				case "job":
					arrow := slices.Index(cmd, "->")
					if err := g.AddJob(cmd[1], names(cmd[2:arrow]), names(cmd[arrow+1:])); err != nil {
						return "error: " + err.Error()
					}
					return "ok"
				case "drop":
					if err := g.RemoveJob(cmd[1]); err != nil {
						return "error: " + err.Error()
					}
					return "ok"
				case "commit":
					e, _ := strconv.ParseUint(cmd[2], 10, 64)
					changed, err := tr.CheckCommit(catalog.Name("db", cmd[1]), base.Epoch(e))
					if err != nil {
						return "error: " + err.Error()
					}
					if !changed {
						return "unchanged"
					}
					tr.Commit(catalog.Name("db", cmd[1]), Committed{Epoch: base.Epoch(e)})
					return "ok"
				case "read":
					res := tr.Resolve(g.Groups(names(cmd[2:])), Mode(cmd[1]))
					var groups []string
					for _, grp := range res.Groups {
						var ns []string
						for _, n := range grp {
							ns = append(ns, n.Name)
						}
						groups = append(groups, "{"+strings.Join(ns, " ")+"}")
					}
					head := "groups " + strings.Join(groups, " ")
					if res.Wait != nil {
						return head + "\nwait: " + res.Wait.Error()
					}
					tr.RaiseFloors(res.RaiseFloors)
					s := head + "\nepochs " + formatEpochs(res.Epochs)
					if len(res.RaiseFloors) > 0 {
						s += "\nraise floors " + formatEpochs(res.RaiseFloors)
					}
					return s
				case "floors":
					m := map[Name]base.Epoch{}
					for _, n := range names(cmd[1:]) {
						m[n] = tr.Floor(n)
					}
					return formatEpochs(m)
				}
				return "unknown command " + cmd[0]
			})
		})
	}
}
