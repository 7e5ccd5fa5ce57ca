package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// Store is the external system behind the test two-phase-commit sink: it
// keeps, per (sink subtask, epoch), the committed rows. It outlives job
// attempts (it stands for a table store) and is safe for concurrent use.
type Store struct {
	// dir, when set, persists every commit as a file, so that the store
	// survives the process (kill -9 tests).
	dir string
	mu  struct {
		sync.Mutex
		committed map[storeKey][]string
		commits   int
	}
}

type storeKey struct {
	subtask int
	epoch   base.Epoch
}

// NewStore returns an empty store.
func NewStore() *Store {
	s := &Store{}
	s.mu.committed = map[storeKey][]string{}
	return s
}

// Committer returns the Committer view of s.
func (s *Store) Committer() operator.Committer { return storeCommitter{s} }

type storeCommitter struct{ s *Store }

// Prepare implements operator.Committer: the descriptor is the encoded
// chunks themselves (a real sink would stage files and name them).
func (c storeCommitter) Prepare(_ int, _ base.Epoch, chunks []*types.Chunk) ([]byte, error) {
	var b []byte
	for _, ch := range chunks {
		b = types.AppendChunk(b, ch)
	}
	return b, nil
}

// Commit implements operator.Committer. A re-commit must carry the same
// rows as the first commit; anything else is an exactly-once violation and
// returns an error wrapping base.ErrConflict.
func (c storeCommitter) Commit(subtask int, e base.Epoch, desc []byte) error {
	var rows []string
	for len(desc) > 0 {
		ch, rest, err := types.DecodeChunk(desc)
		if err != nil {
			return err
		}
		for i := range ch.Len() {
			rows = append(rows, ch.Kind(i).String()+" "+ch.Row(i).String())
		}
		desc = rest
	}
	slices.Sort(rows)
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	k := storeKey{subtask, e}
	if old, ok := s.mu.committed[k]; ok {
		if !slices.Equal(old, rows) {
			return fmt.Errorf("store: re-commit of subtask %d epoch %d with other rows (%d vs %d): %w", subtask, e, len(rows), len(old), base.ErrConflict)
		}
		return nil
	}
	if s.dir != "" {
		if err := writeAtomic(filepath.Join(s.dir, fmt.Sprintf("s%d-e%d", subtask, e)), rows); err != nil {
			return fmt.Errorf("store: commit of subtask %d epoch %d: %w", subtask, e, err)
		}
	}
	s.mu.committed[k] = rows
	s.mu.commits++
	return nil
}

// writeAtomic writes rows, one a line, to name with write-temp-fsync-rename.
func writeAtomic(name string, rows []string) error {
	tmp := name + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	data := strings.Join(rows, "\n") + "\n"
	if _, err := f.WriteString(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, name)
}

// OpenFileStore returns a store that persists its commits under dir and
// starts with the commits already there.
func OpenFileStore(dir string) (*Store, error) {
	s := NewStore()
	s.dir = dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		var sub int
		var ep uint64
		if _, err := fmt.Sscanf(e.Name(), "s%d-e%d", &sub, &ep); err != nil || strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		var rows []string
		for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if l != "" {
				rows = append(rows, l)
			}
		}
		s.mu.committed[storeKey{sub, base.Epoch(ep)}] = rows
	}
	return s, nil
}

// Dump returns the committed rows, one line per row prefixed with its
// subtask and epoch, sorted: two stores hold the same output exactly when
// their dumps are equal.
func (s *Store) Dump() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var lines []string
	for k, rows := range s.mu.committed {
		for _, r := range rows {
			lines = append(lines, fmt.Sprintf("s%d e%06d %s", k.subtask, k.epoch, r))
		}
		if len(rows) == 0 {
			lines = append(lines, fmt.Sprintf("s%d e%06d (empty)", k.subtask, k.epoch))
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// Epochs returns the number of committed (subtask, epoch) pairs.
func (s *Store) Epochs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.mu.committed)
}

// Final returns, per key, the last committed (sum, count) over all
// subtasks and epochs, for KeyedSum output.
func (s *Store) Final() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ks := make([]storeKey, 0, len(s.mu.committed))
	for k := range s.mu.committed {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b storeKey) int { return int(a.epoch) - int(b.epoch) })
	out := map[string]string{}
	for _, k := range ks {
		for _, r := range s.mu.committed[k] {
			// "+U (key, sum, count)"
			inner := strings.TrimSuffix(strings.TrimPrefix(r, "+U ("), ")")
			parts := strings.SplitN(inner, ", ", 2)
			out[parts[0]] = parts[1]
		}
	}
	return out
}

// Collector is an at-least-once sink for runs without checkpoints: it
// appends every row it gets to a shared list.
type Collector struct {
	operator.Base
	mu   *sync.Mutex
	rows *[]string
}

// NewCollector returns a collector appending to rows under mu.
func NewCollector(mu *sync.Mutex, rows *[]string) *Collector {
	return &Collector{mu: mu, rows: rows}
}

// Process implements operator.Operator.
func (c *Collector) Process(_ int, ch *types.Chunk) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range ch.Len() {
		*c.rows = append(*c.rows, ch.Kind(i).String()+" "+ch.Row(i).String())
	}
	return nil
}

// Discard is a sink that drops everything.
type Discard struct{ operator.Base }

// Process implements operator.Operator.
func (Discard) Process(int, *types.Chunk) error { return nil }

// BorrowsInput implements operator.InputBorrower.
func (Discard) BorrowsInput() bool { return true }
