package filesink

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// Config configures one sink subtask attempt.
type Config struct {
	Options Options
	// Name starts every file name; it must be the same across restarts
	// and differ between sinks that share a directory (the engine passes
	// the sink's name).
	Name string
	// Columns are the columns of the changes written.
	Columns []catalog.Column
}

// Sink is the two-phase-commit Committer of one file sink subtask attempt
// (see doc.go): Prepare writes an epoch's changes to a hidden temporary
// file, Commit renames it to its final name. Use one Sink per subtask
// attempt; NewSinkOperator runs it.
type Sink struct {
	cfg Config
	enc *Encoder
	// token makes this attempt's temporary file names its own.
	token string
	// swept says the temporary files earlier attempts left were removed
	// (on the first Prepare).
	swept bool
}

// NewSink returns the Committer of one subtask attempt. The name must be
// a plain file name part and no column may be named like the op field;
// errors wrap base.ErrInvalidArgument.
func NewSink(cfg Config) (*Sink, error) {
	if cfg.Name == "" || strings.ContainsAny(cfg.Name, `/\`) || strings.HasPrefix(cfg.Name, ".") {
		return nil, fmt.Errorf("file sink: name %q is not a plain file name: %w", cfg.Name, base.ErrInvalidArgument)
	}
	if cfg.Options.OpField == "" {
		cfg.Options.OpField = DefaultOpField
	}
	if cfg.Options.Format == "" {
		cfg.Options.Format = CSV
	}
	for _, c := range cfg.Columns {
		if c.Name == cfg.Options.OpField {
			return nil, fmt.Errorf("file sink %s: column %q has the name of the field that holds the row kind; choose another with option %q: %w",
				cfg.Name, c.Name, OptOpField, base.ErrInvalidArgument)
		}
	}
	var tok [6]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return nil, fmt.Errorf("file sink %s: %w", cfg.Name, err)
	}
	return &Sink{cfg: cfg, enc: NewEncoder(cfg.Columns, cfg.Options.Format, cfg.Options.OpField), token: hex.EncodeToString(tok[:])}, nil
}

// epochDigits is the width of the epoch in file names, so that names sort
// in epoch order.
const epochDigits = 20

// FileName returns the final name of the file of sink name's subtask
// and epoch e in format f: <name>-<epoch, 20 digits>-<subtask, 3
// digits>.<csv|json>.
func FileName(name string, e base.Epoch, subtask int, f Format) string {
	return fmt.Sprintf("%s-%0*d-%03d.%s", name, epochDigits, uint64(e), subtask, f)
}

// FileName returns the final name of the file of subtask's epoch e.
func (s *Sink) FileName(subtask int, e base.Epoch) string {
	return FileName(s.cfg.Name, e, subtask, s.cfg.Options.Format)
}

// tempName returns the name of the temporary file of this attempt.
func (s *Sink) tempName(subtask int, e base.Epoch) string {
	return "." + s.FileName(subtask, e) + "." + s.token + tempSuffix
}

const tempSuffix = ".tmp"

// prepared is the descriptor of a prepared epoch, kept in checkpoints
// until its commit (JSON).
type prepared struct {
	// Temp and File are the temporary and final names, in the directory;
	// absent when the epoch had no changes (no file).
	Temp    string `json:"temp,omitempty"`
	File    string `json:"file,omitempty"`
	Changes int    `json:"changes"`
}

// Prepare implements operator.Committer: epoch e's changes go into a new
// temporary file, synced to disk with its directory entry. The directory
// must exist (CreateDir): one that vanished is an error, not silently
// made anew without the files committed in it. An epoch
// without changes writes no file. The first Prepare of an attempt removes
// the temporary files of this subtask that earlier attempts left: by then
// the operator has re-committed every epoch of the restored checkpoint,
// so the rest belong to epochs that are replayed.
func (s *Sink) Prepare(subtask int, e base.Epoch, chunks []*types.Chunk) ([]byte, error) {
	dir := s.cfg.Options.Dir
	if !s.swept {
		if err := s.sweep(subtask); err != nil {
			return nil, err
		}
		s.swept = true
	}
	n := 0
	for _, c := range chunks {
		n += c.Len()
	}
	if n == 0 {
		return json.Marshal(prepared{})
	}
	p := prepared{Temp: s.tempName(subtask, e), File: s.FileName(subtask, e), Changes: n}
	path := filepath.Join(dir, p.Temp)
	if err := s.write(path, chunks); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("file sink %s, epoch %d: %w", s.cfg.Name, e, err)
	}
	if err := syncDir(dir); err != nil {
		return nil, fmt.Errorf("file sink %s, epoch %d: %w", s.cfg.Name, e, err)
	}
	return json.Marshal(p)
}

// write writes the changes into a new file at path and syncs it.
func (s *Sink) write(path string, chunks []*types.Chunk) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	buf := s.enc.Header(nil)
	var row types.Row
	for _, c := range chunks {
		for i := range c.Len() {
			row = c.AppendRowTo(row[:0], i)
			buf = s.enc.Append(buf, c.Kind(i), row)
			if len(buf) >= 32<<10 {
				if _, err := w.Write(buf); err != nil {
					f.Close()
					return err
				}
				buf = buf[:0]
			}
		}
	}
	if _, err := w.Write(buf); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Commit implements operator.Committer: it renames the epoch's temporary
// file to its final name and syncs the directory. When the final file
// exists already the epoch was committed before (a re-commit after a
// restore): Commit removes a leftover temporary file and changes nothing
// else. A prepared epoch whose temporary file is gone and whose final
// file does not exist cannot be committed: that error wraps
// base.ErrNotFound and names both files.
func (s *Sink) Commit(_ int, e base.Epoch, desc []byte) error {
	var p prepared
	if err := json.Unmarshal(desc, &p); err != nil {
		return fmt.Errorf("file sink %s, epoch %d: prepared descriptor: %v: %w", s.cfg.Name, e, err, base.ErrCorruption)
	}
	if p.Changes == 0 {
		return nil
	}
	dir := s.cfg.Options.Dir
	temp, final := filepath.Join(dir, p.Temp), filepath.Join(dir, p.File)
	if _, err := os.Lstat(final); err == nil {
		if err := os.Remove(temp); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("file sink %s, epoch %d: %w", s.cfg.Name, e, err)
		}
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("file sink %s, epoch %d: %w", s.cfg.Name, e, err)
	}
	if err := os.Rename(temp, final); err != nil {
		if _, derr := os.Stat(dir); errors.Is(err, os.ErrNotExist) && derr != nil {
			return fmt.Errorf("file sink %s: commit of epoch %d: the directory %s is missing: %w", s.cfg.Name, e, dir, derr)
		}
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("file sink %s: commit of epoch %d: the prepared file %s is gone and %s does not exist (%d changes lost): %w",
				s.cfg.Name, e, temp, final, p.Changes, base.ErrNotFound)
		}
		return fmt.Errorf("file sink %s: commit of epoch %d: %w", s.cfg.Name, e, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("file sink %s: commit of epoch %d: %w", s.cfg.Name, e, err)
	}
	return nil
}

// sweep removes the temporary files of subtask that earlier attempts left
// in the directory (any attempt's: their names differ only in the token).
func (s *Sink) sweep(subtask int) error {
	ents, err := os.ReadDir(s.cfg.Options.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("file sink %s: %w", s.cfg.Name, err)
	}
	for _, ent := range ents {
		name, ok := ParseName(s.cfg.Name, ent.Name())
		if !ok || !name.Temp || name.Subtask != subtask {
			continue
		}
		if err := os.Remove(filepath.Join(s.cfg.Options.Dir, ent.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("file sink %s: removing a file of an aborted attempt: %w", s.cfg.Name, err)
		}
	}
	return nil
}

// Name is what a file name of a sink says.
type Name struct {
	Epoch   base.Epoch
	Subtask int
	Format  Format
	// Temp says the file is a temporary file of a prepared epoch (not
	// committed, or of an aborted attempt).
	Temp bool
}

// ParseName reads file, a name in a sink's directory, as a file of sink
// sinkName; ok is false for files of other sinks and other files.
func ParseName(sinkName, file string) (n Name, ok bool) {
	rest := file
	if strings.HasPrefix(rest, ".") {
		n.Temp = true
		rest = rest[1:]
		i := strings.LastIndexByte(rest, '.') // .tmp
		if i < 0 || rest[i:] != tempSuffix {
			return Name{}, false
		}
		rest = rest[:i]
		if i = strings.LastIndexByte(rest, '.'); i < 0 { // .token
			return Name{}, false
		}
		rest = rest[:i]
	}
	rest, ok = strings.CutPrefix(rest, sinkName+"-")
	if !ok || len(rest) < epochDigits+2 || rest[epochDigits] != '-' {
		return Name{}, false
	}
	e, err := strconv.ParseUint(rest[:epochDigits], 10, 64)
	if err != nil {
		return Name{}, false
	}
	sub, ext, ok := strings.Cut(rest[epochDigits+1:], ".")
	if !ok || !slices.Contains([]Format{CSV, JSON}, Format(ext)) {
		return Name{}, false
	}
	k, err := strconv.Atoi(sub)
	if err != nil || k < 0 {
		return Name{}, false
	}
	n.Epoch, n.Subtask, n.Format = base.Epoch(e), k, Format(ext)
	return n, true
}

// CreateDir creates the sink's directory when it is missing (at CREATE
// SINK).
func CreateDir(o Options) error {
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return fmt.Errorf("file sink: path %s: %w", o.Dir, err)
	}
	return nil
}

// syncDir makes the directory's entries durable (renames and new files).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

// NewSinkOperator returns the sink operator of one subtask attempt over s
// (operator.TwoPhaseCommitSink: prepare on epoch barriers, commit on
// checkpoint completion, re-commit on restore).
func NewSinkOperator(s *Sink) operator.Operator {
	return operator.NewTwoPhaseCommitSink(s)
}
