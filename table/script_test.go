package table_test

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/commit"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/maintain"
	"github.com/stratadb/strata/table/scan"
	"github.com/stratadb/strata/table/write"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata scripts")

// Scripted stories (raft's interaction tests, pebble's testdata): each
// file under testdata/ is a sequence of "> command" lines, each followed
// by its expected output. Run with -rewrite to regenerate.
func TestScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no scripts")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { runScript(t, f) })
	}
}

type step struct {
	cmd  string
	want []string
	pre  []string // comment lines before the command
}

func parseScript(t *testing.T, path string) []step {
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var steps []step
	var pre []string
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "> "):
			steps = append(steps, step{cmd: strings.TrimPrefix(line, "> "), pre: pre})
			pre = nil
		case len(steps) > 0 && pre == nil && line != "" && !strings.HasPrefix(line, "#"):
			steps[len(steps)-1].want = append(steps[len(steps)-1].want, line)
		default:
			if strings.HasPrefix(line, "#") || pre != nil && line != "" {
				pre = append(pre, line)
			}
		}
	}
	return steps
}

// scriptEnv is the state a script drives.
type scriptEnv struct {
	tb      *table.Table
	writers map[string]*write.Writer
	pending map[string][]commit.Message
}

func runScript(t *testing.T, path string) {
	steps := parseScript(t, path)
	env := &scriptEnv{writers: map[string]*write.Writer{}, pending: map[string][]commit.Message{}}
	var out strings.Builder
	failed := false
	for _, s := range steps {
		for _, p := range s.pre {
			out.WriteString(p + "\n")
		}
		got := env.run(t, s.cmd)
		out.WriteString("> " + s.cmd + "\n")
		for _, g := range got {
			out.WriteString(g + "\n")
		}
		out.WriteString("\n")
		if !*rewrite && strings.Join(got, "\n") != strings.Join(s.want, "\n") {
			t.Errorf("%s: > %s\ngot:\n%s\nwant:\n%s", path, s.cmd, strings.Join(got, "\n"), strings.Join(s.want, "\n"))
			failed = true
		}
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if failed {
		t.Log("run with -rewrite to regenerate after an intended change")
	}
}

func (env *scriptEnv) writer(t *testing.T, user string) *write.Writer {
	w := env.writers[user]
	if w == nil {
		var err error
		if w, err = env.tb.NewWriter(user); err != nil {
			t.Fatal(err)
		}
		env.writers[user] = w
	}
	return w
}

func errLine(err error) []string {
	msg := err.Error()
	// Random file names change from run to run.
	for _, p := range []string{"data-", "changelog-", "manifest-"} {
		for {
			i := strings.Index(msg, p)
			if i < 0 || !strings.Contains(msg[i:], ".parquet") && p != "manifest-" {
				break
			}
			j := i + len(p)
			for j < len(msg) && (msg[j] >= '0' && msg[j] <= '9' || msg[j] >= 'a' && msg[j] <= 'f') {
				j++
			}
			if j == i+len(p) {
				break
			}
			msg = msg[:i] + p + "*" + msg[j:]
		}
	}
	return []string{"error: " + msg}
}

// run executes one command and returns its output lines.
//
//	create [k=v ...]                 a table with testFields, key k
//	write <user> <epoch> <kind> <k> <a> <s>   (a and s may be NULL)
//	prepare <user> <epoch>           keeps the messages for commit
//	commit <user>                    commits the kept messages (kept for recommit)
//	recommit <user>                  commits the last committed messages again
//	reopen <user>                    drops the writer (as after a restore)
//	compact full|auto
//	expire <n>                       keep n snapshots
//	tag <name> <snapshot>
//	rollback <tag>
//	snapshots                        id kind epoch user for each snapshot
//	read | read-epoch <e> | read-snapshot <id>
//	changelog <from-snapshot>
func (env *scriptEnv) run(t *testing.T, cmd string) []string {
	f := strings.Fields(cmd)
	num := func(i int) int64 {
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			t.Fatalf("%q: %v", cmd, err)
		}
		return v
	}
	rows := func(rs []types.Row, err error) []string {
		if err != nil {
			return errLine(err)
		}
		if len(rs) == 0 {
			return []string{"(empty)"}
		}
		return strings.Split(dump(rs), "\n")
	}
	switch f[0] {
	case "create":
		opts := map[string]string{}
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			opts[k] = v
		}
		tb, err := table.Create(fileio.NewMem(), "wh/db/t", testFields, []string{"k"}, opts)
		if err != nil {
			return errLine(err)
		}
		env.tb = tb
		env.writers, env.pending = map[string]*write.Writer{}, map[string][]commit.Message{}
		return []string{"ok"}
	case "write":
		kind, err := types.ParseRowKind(f[3])
		if err != nil {
			t.Fatal(err)
		}
		r := types.Row{types.NewInt64(num(4)), types.Null, types.Null}
		if f[5] != "NULL" {
			r[1] = types.NewInt64(num(5))
		}
		if f[6] != "NULL" {
			r[2] = types.NewText(f[6])
		}
		if err := env.writer(t, f[1]).Write(base.Epoch(num(2)), kind, r); err != nil {
			return errLine(err)
		}
		return []string{"ok"}
	case "prepare":
		msgs, err := env.writer(t, f[1]).PrepareCommit(base.Epoch(num(2)))
		if err != nil {
			return errLine(err)
		}
		env.pending[f[1]] = append(env.pending[f[1]], msgs...)
		var out []string
		for _, m := range msgs {
			files := 0
			for _, b := range m.Buckets {
				files += len(b.NewFiles)
			}
			out = append(out, fmt.Sprintf("message epoch %d: %d buckets, %d new files", m.Epoch, len(m.Buckets), files))
		}
		return out
	case "commit", "recommit":
		msgs := env.pending[f[1]]
		if f[0] == "recommit" {
			msgs = env.pending["committed:"+f[1]]
		} else {
			env.pending["committed:"+f[1]] = msgs
			delete(env.pending, f[1])
		}
		ids, err := env.tb.Commit(msgs)
		if err != nil {
			return errLine(err)
		}
		ce, _ := env.tb.CommittedEpoch()
		return []string{fmt.Sprintf("snapshots %v, committed epoch %d", ids, ce)}
	case "reopen":
		delete(env.writers, f[1])
		return []string{"ok"}
	case "compact":
		id, err := env.tb.Compact("compactor", f[1] == "full")
		if err != nil {
			return errLine(err)
		}
		return []string{fmt.Sprintf("snapshot %d", id)}
	case "expire":
		n := int(num(1))
		res, err := maintain.Expire(env.tb.Store(), maintain.ExpireOptions{RetainMin: n, RetainMax: n})
		if err != nil {
			return errLine(err)
		}
		return []string{fmt.Sprintf("expired %v", res.Expired)}
	case "tag":
		if err := env.tb.CreateTag(f[1], base.SnapshotID(num(2))); err != nil {
			return errLine(err)
		}
		return []string{"ok"}
	case "rollback":
		id, err := env.tb.RollbackToTag(f[1], "admin")
		if err != nil {
			return errLine(err)
		}
		return []string{fmt.Sprintf("snapshot %d", id)}
	case "snapshots":
		ids, _ := env.tb.Store().Snapshots.IDs()
		var out []string
		for _, id := range ids {
			s, err := env.tb.Store().Snapshots.Get(id)
			if err != nil {
				return errLine(err)
			}
			out = append(out, fmt.Sprintf("%d %s epoch=%d user=%s identifier=%d total=%d changelog=%d",
				s.ID, s.CommitKind, s.Epoch, s.CommitUser, s.CommitIdentifier, s.TotalRecordCount, s.ChangelogRecordCount))
		}
		return out
	case "read":
		return rows(env.tb.ReadLatest())
	case "read-epoch":
		return rows(env.tb.ReadAtEpoch(base.Epoch(num(1))))
	case "read-snapshot":
		return rows(env.tb.ReadSnapshot(base.SnapshotID(num(1))))
	case "changelog":
		s, err := env.tb.StreamFrom(scan.Position{Snapshot: base.SnapshotID(num(1))}, "")
		if err != nil {
			return errLine(err)
		}
		var out []string
		for {
			b, ok, err := s.Next()
			if err != nil {
				return append(out, errLine(err)...)
			}
			if !ok {
				return out
			}
			for _, c := range b.Changes {
				out = append(out, fmt.Sprintf("%s %s", c.Kind, c.Row))
			}
			if b.EndOfEpoch {
				out = append(out, fmt.Sprintf("-- end of epoch %d (snapshot %d)", b.Epoch, b.Snapshot))
			}
		}
	}
	t.Fatalf("unknown command %q", cmd)
	return nil
}
