package format

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/stratadb/strata/internal/base"
)

// ErrorMode is what a source does with a record that does not decode
// (option errors).
type ErrorMode string

// The error modes.
const (
	// Fail stops the job with an error naming the source, the position
	// and the field (the default: DESIGN.md invariant 6).
	Fail ErrorMode = "fail"
	// Skip drops the record and counts it (Errors.Skipped).
	Skip ErrorMode = "skip"
	// DeadLetter drops the record and hands its bytes and error to the
	// caller's DeadLetterFunc.
	DeadLetter ErrorMode = "dead-letter"
)

// OptErrors is the option that sets the error mode.
const OptErrors = "errors"

// ParseErrorMode reads the errors option ("" is Fail).
func ParseErrorMode(v string) (ErrorMode, error) {
	switch m := ErrorMode(strings.ToLower(strings.TrimSpace(v))); m {
	case "":
		return Fail, nil
	case Fail, Skip, DeadLetter:
		return m, nil
	}
	return "", fmt.Errorf("option %q: %q is not one of fail, skip, dead-letter: %w", OptErrors, v, base.ErrInvalidArgument)
}

// BadRecord is a record that did not decode, as a dead-letter sink gets
// it.
type BadRecord struct {
	// Source names the input ("file data/a.csv", "kafka orders").
	Source string
	// Where is the record's place in it: "line 7 (byte 120)" or
	// "partition 2 offset 41". Position is the ingest position of the
	// record (a replay after a restore hands the same record again with
	// the same Position: key dead letters by it to keep them once).
	Where    string
	Position uint64
	// Key is the record's key, when the input has one (Kafka).
	Key []byte
	Raw []byte
	Err error
}

// DeadLetterFunc receives bad records in DeadLetter mode. An error it
// returns fails the source.
type DeadLetterFunc func(BadRecord) error

// Errors applies an error mode to bad records; it is shared by the
// readers of one source and safe for concurrent use.
type Errors struct {
	Mode       ErrorMode
	DeadLetter DeadLetterFunc
	// skipped counts the records Skip and DeadLetter dropped.
	skipped atomic.Uint64
}

// NewErrors returns an Errors of mode; DeadLetter mode needs dl.
func NewErrors(mode ErrorMode, dl DeadLetterFunc) (*Errors, error) {
	if mode == DeadLetter && dl == nil {
		return nil, fmt.Errorf("option %q = %q needs a dead-letter receiver: %w", OptErrors, DeadLetter, base.ErrInvalidArgument)
	}
	if mode == "" {
		mode = Fail
	}
	return &Errors{Mode: mode, DeadLetter: dl}, nil
}

// Skipped returns how many bad records were dropped (Skip and DeadLetter
// modes). A record read again after a restore counts again.
func (e *Errors) Skipped() uint64 { return e.skipped.Load() }

// Handle applies the mode to a bad record: nil means drop it and go on;
// otherwise the error to fail with, naming r.Source and r.Where.
func (e *Errors) Handle(r BadRecord) error {
	switch e.Mode {
	case Skip:
		e.skipped.Add(1)
		return nil
	case DeadLetter:
		if err := e.DeadLetter(r); err != nil {
			return fmt.Errorf("%s %s: dead-letter receiver: %w", r.Source, r.Where, err)
		}
		e.skipped.Add(1)
		return nil
	}
	return fmt.Errorf("%s %s: %w", r.Source, r.Where, r.Err)
}
