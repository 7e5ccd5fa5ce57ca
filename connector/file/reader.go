package file

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// relistInterval is the least time between two listings of a watched
// directory.
const relistInterval = 20 * time.Millisecond

// Reader reads the records of a file or of a directory's files for an
// ingest source (it implements connector/ingest.Reader; see doc.go). It
// is safe for concurrent use.
type Reader struct {
	opts  Options
	dir   bool
	dec   format.Decoder
	csv   *format.CSVDecoder // dec, when the format is csv
	types []types.Type
	errs  *format.Errors

	mu struct {
		sync.Mutex
		// files are the names read so far, in name order; a file's
		// ordinal is its index. Append-only.
		files    []string
		listed   bool
		listedAt time.Time
		// The open file: ordinal, reader at byte offset off, whose line
		// starts at line line (1-based), and the header decoder of a csv
		// file with a header.
		f      *os.File
		br     *bufio.Reader
		ord    int
		off    int64
		line   int64
		header *format.CSVDecoder
		buf    []format.Change
	}
}

// Open parses opts (ParseOptions) and returns a Reader of cols. dl
// receives bad records in dead-letter mode (nil otherwise).
func Open(opts map[string]string, cols []catalog.Column, dl format.DeadLetterFunc) (*Reader, error) {
	o, err := ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	return NewReader(o, cols, dl)
}

// NewReader returns a Reader of o over cols. A path that does not exist
// gives an error wrapping base.ErrNotFound; watch on a single file, or a
// format other than csv, json and debezium-json, base.ErrInvalidArgument.
func NewReader(o Options, cols []catalog.Column, dl format.DeadLetterFunc) (*Reader, error) {
	st, err := os.Stat(o.Path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("option %q: path %s does not exist: %w", OptPath, o.Path, base.ErrNotFound)
		}
		return nil, fmt.Errorf("option %q: path %s cannot be read: %w", OptPath, o.Path, err)
	}
	if o.Watch && !st.IsDir() {
		return nil, fmt.Errorf("file source: option %q needs a directory, and %s is a file: %w", OptWatch, o.Path, base.ErrInvalidArgument)
	}
	if o.Format.Format == format.Avro {
		return nil, fmt.Errorf("file source: format avro is not a line format: %w", base.ErrInvalidArgument)
	}
	if o.ChunkRows <= 0 {
		o.ChunkRows = 1024
	}
	dec, err := format.New(o.Format, cols)
	if err != nil {
		return nil, fmt.Errorf("file source %s: %w", o.Path, err)
	}
	errs, err := format.NewErrors(o.Errors, dl)
	if err != nil {
		return nil, fmt.Errorf("file source %s: %w", o.Path, err)
	}
	r := &Reader{opts: o, dir: st.IsDir(), dec: dec, types: format.Types(cols), errs: errs}
	r.csv, _ = dec.(*format.CSVDecoder)
	return r, nil
}

// Errors returns the error mode in force, with its count of dropped
// records.
func (r *Reader) Errors() *format.Errors { return r.errs }

// Files returns the files listed so far, in ordinal order.
func (r *Reader) Files() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.mu.files)
}

// Exhausted reports whether no record remains at or after pos: a bounded
// Reader (watch off) has read every file it listed. A watching Reader is
// never exhausted.
func (r *Reader) Exhausted(pos uint64) bool {
	if r.opts.Watch {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.listLocked(); err != nil {
		return false // Next reports it
	}
	ord, _ := Unpack(pos)
	return ord >= len(r.mu.files)
}

// Backlog implements connector/ingest.Backlogger: the position of the
// start of the file after the last one there now, Pack(n, 0) for n files
// listed (the position Next returns at the end of the last file). A
// watching Reader lists the directory again; files added later are not
// counted.
func (r *Reader) Backlog() (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.opts.Watch {
		r.mu.listedAt = time.Time{}
	}
	if err := r.listLocked(); err != nil {
		return 0, err
	}
	return Pack(len(r.mu.files), 0), nil
}

// Next implements connector/ingest.Reader: the transaction at pos is the
// next ChunkRows records of the file at pos, fewer at the end of the file;
// a transaction that reaches the end of its file returns the position of
// the next file's start. It returns a nil chunk when no file is at pos
// (yet). Errors name the file, the line and the field.
func (r *Reader) Next(pos uint64) (*types.Chunk, uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ord, off := Unpack(pos)
	if ord >= len(r.mu.files) || !r.mu.listed {
		if err := r.listLocked(); err != nil {
			return nil, pos, err
		}
		if ord >= len(r.mu.files) {
			return nil, pos, nil
		}
	}
	if err := r.seekLocked(ord, off); err != nil {
		return nil, pos, err
	}
	dec := r.dec
	if r.mu.header != nil {
		dec = r.mu.header
	}
	name := r.mu.files[ord]
	c := types.NewChunk(r.types, 0)
	for n := 0; n < r.opts.ChunkRows; n++ {
		start, line := r.mu.off, r.mu.line
		rec, err := r.readRecordLocked()
		if err == io.EOF {
			r.closeLocked()
			return c, Pack(ord+1, 0), nil
		}
		if err != nil {
			r.closeLocked()
			return nil, pos, err
		}
		if len(bytes.TrimSpace(rec)) == 0 {
			continue // a blank line
		}
		changes, err := dec.Decode(r.mu.buf[:0], rec)
		if err != nil {
			herr := r.errs.Handle(format.BadRecord{Source: "file " + name, Where: fmt.Sprintf("line %d (byte %d)", line, start),
				Position: Pack(ord, start), Raw: bytes.Clone(rec), Err: err})
			if herr != nil {
				r.closeLocked() // the next call reads the record again
				return nil, pos, herr
			}
			continue
		}
		for _, ch := range changes {
			c.Append(ch.Kind, ch.Row)
		}
		clear(changes)
		r.mu.buf = changes[:0]
	}
	return c, Pack(ord, r.mu.off), nil
}

// readRecordLocked reads the next record at r.mu.off, line break
// included: a line, or for csv as many lines as a quoted field spans. At
// the end of the file the last record may lack its line break; io.EOF
// means no record is left.
func (r *Reader) readRecordLocked() ([]byte, error) {
	var rec []byte
	for {
		b, err := r.mu.br.ReadBytes('\n')
		rec = append(rec, b...)
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("file source: read %s: %w", r.mu.f.Name(), err)
		}
		if err == io.EOF {
			if len(rec) == 0 {
				return nil, io.EOF
			}
			break
		}
		if r.csv == nil || r.csv.RecordEnd(rec) == len(rec) {
			break
		}
	}
	if r.mu.off+int64(len(rec)) >= MaxOffset {
		return nil, fmt.Errorf("file source: %s is larger than %d bytes, the most a position holds: %w", r.mu.f.Name(), MaxOffset, base.ErrOutOfRange)
	}
	r.mu.off += int64(len(rec))
	r.mu.line += int64(bytes.Count(rec, []byte{'\n'}))
	return rec, nil
}

// seekLocked makes the open file the one of ordinal ord, at off, reading
// its header first when it has one.
func (r *Reader) seekLocked(ord int, off int64) error {
	if r.mu.f != nil && r.mu.ord == ord && r.mu.off == off {
		return nil
	}
	r.closeLocked()
	name := r.mu.files[ord]
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("file source: open %s (file %d of the source): %w", name, ord, err)
	}
	r.mu.f, r.mu.br, r.mu.ord, r.mu.off, r.mu.line, r.mu.header = f, bufio.NewReaderSize(f, 256<<10), ord, 0, 1, nil
	if r.csv != nil && r.opts.Format.CSVHeader {
		h, err := r.readRecordLocked()
		if err != nil && err != io.EOF {
			r.closeLocked()
			return err
		}
		if err == nil {
			if r.mu.header, err = r.csv.WithHeader(h); err != nil {
				r.closeLocked()
				return fmt.Errorf("file %s line 1: %w", name, err)
			}
		}
		off = max(off, r.mu.off) // a position inside the header is its end
	}
	// Skip to off, counting lines for messages.
	for r.mu.off < off {
		b, err := r.mu.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			err = nil
		}
		if int64(len(b)) > off-r.mu.off {
			r.closeLocked()
			return fmt.Errorf("file source: position %d is inside a line of %s: %w", off, name, base.ErrCorruption)
		}
		r.mu.off += int64(len(b))
		r.mu.line += int64(bytes.Count(b, []byte{'\n'}))
		if err == io.EOF && r.mu.off < off {
			r.closeLocked()
			return fmt.Errorf("file source: position %d is past the end of %s (%d bytes): the file shrank: %w", off, name, r.mu.off, base.ErrCorruption)
		}
		if err != nil && err != io.EOF {
			r.closeLocked()
			return fmt.Errorf("file source: read %s: %w", name, err)
		}
	}
	return nil
}

func (r *Reader) closeLocked() {
	if r.mu.f != nil {
		r.mu.f.Close()
		r.mu.f, r.mu.br, r.mu.header = nil, nil, nil
	}
}

// Close closes the open file.
func (r *Reader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closeLocked()
	return nil
}

// listLocked lists the source's files: once for a single file or a
// bounded directory, again at most every relistInterval for a watched
// one. Files only join at the end of the list (invariant files-append):
// a new name that sorts before a listed one is refused, since it would
// shift the ordinals in positions already checkpointed.
func (r *Reader) listLocked() error {
	if r.mu.listed && (!r.opts.Watch || time.Since(r.mu.listedAt) < relistInterval) {
		return nil
	}
	r.mu.listedAt = time.Now()
	if !r.dir {
		r.mu.files, r.mu.listed = []string{r.opts.Path}, true
		return nil
	}
	ents, err := os.ReadDir(r.opts.Path)
	if err != nil {
		return fmt.Errorf("file source: list %s: %w", r.opts.Path, err)
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || !e.Type().IsRegular() {
			continue // hidden and in-progress files, directories
		}
		names = append(names, filepath.Join(r.opts.Path, n))
	}
	slices.Sort(names)
	known := r.mu.files
	for i, n := range known {
		if i >= len(names) || names[i] != n {
			return fmt.Errorf("file source %s: file %s (file %d of the source) is gone or a new file sorts before it; files may only be added, with names sorting after all others: %w",
				r.opts.Path, n, i, base.ErrInvalidArgument)
		}
	}
	if len(names) > MaxFiles {
		return fmt.Errorf("file source %s: %d files, more than the %d a position can number: %w", r.opts.Path, len(names), MaxFiles, base.ErrOutOfRange)
	}
	r.mu.files, r.mu.listed = names, true
	return nil
}
