package engine

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// Dead letters of connector tables with errors = 'dead-letter' go to
// DIR/dead_letters.jsonl, one JSON object a line, appended and synced
// before the record is skipped; strata_catalog.dead_letters reads them,
// once per (table, source, position) since a replay after a restore hands
// the same record again.

type deadLetter struct {
	Table    string `json:"table"`
	Source   string `json:"source"`
	Position uint64 `json:"position"`
	Where    string `json:"where"`
	Error    string `json:"error"`
	Raw      []byte `json:"raw"`
}

func (e *Engine) deadLetterPath() string { return filepath.Join(e.opts.Dir, "dead_letters.jsonl") }

// deadLetterFunc records the dead letters of table t.
func (e *Engine) deadLetterFunc(t catalog.Table) format.DeadLetterFunc {
	return func(r format.BadRecord) error {
		d := deadLetter{Table: t.Name.String(), Source: r.Source, Position: r.Position, Where: r.Where, Raw: r.Raw}
		if r.Err != nil {
			d.Error = r.Err.Error()
		}
		b, err := json.Marshal(d)
		if err != nil {
			return err
		}
		e.deadMu.Lock()
		defer e.deadMu.Unlock()
		f, err := os.OpenFile(e.deadLetterPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("dead letter of %s: %w", t.Name, err)
		}
		_, werr := f.Write(append(b, '\n'))
		return errors.Join(werr, f.Sync(), f.Close())
	}
}

// deadLetterRows reads the dead letters for the system table.
func (e *Engine) deadLetterRows() ([]types.Row, error) {
	e.deadMu.Lock()
	defer e.deadMu.Unlock()
	f, err := os.Open(e.deadLetterPath())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	seen := map[string]bool{}
	var out []types.Row
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<26)
	for sc.Scan() {
		var d deadLetter
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			continue // a line torn by a crash during its append
		}
		key := fmt.Sprintf("%s\x00%s\x00%d", d.Table, d.Source, d.Position)
		if seen[key] {
			continue
		}
		seen[key] = true
		name, _ := catalog.ParseObjectName(d.Table)
		out = append(out, types.Row{text(name.Name), text(d.Source), i64(int64(d.Position)), text(d.Where), text(d.Error), types.NewBytea(d.Raw)})
	}
	return out, sc.Err()
}
