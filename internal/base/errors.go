package base

import "errors"

// Error markers. Producers wrap them with context (fmt.Errorf("table %q
// snapshot %d: %w", ..., ErrCorruption)); consumers classify with errors.Is.
var (
	// ErrCorruption marks persisted data that cannot be trusted: a truncated
	// file, an unknown format version, a record that does not decode.
	ErrCorruption = errors.New("strata: corruption")

	// ErrChecksum marks a file whose checksum does not match its content.
	// It wraps ErrCorruption.
	ErrChecksum = &narrowError{msg: "strata: checksum mismatch", broad: ErrCorruption}

	// ErrNotFound marks a named thing (table, snapshot, checkpoint, file)
	// that does not exist.
	ErrNotFound = errors.New("strata: not found")

	// ErrInvalidArgument marks bad input from a user or a caller: an unknown
	// type name, a value out of range, a malformed literal.
	ErrInvalidArgument = errors.New("strata: invalid argument")

	// ErrOutOfRange marks a value that does not fit its type (SQLSTATE
	// 22003 numeric_value_out_of_range and 22008 datetime_field_overflow).
	// It wraps ErrInvalidArgument.
	ErrOutOfRange = &narrowError{msg: "strata: value out of range", broad: ErrInvalidArgument}

	// ErrConflict marks an optimistic operation that lost a race (a commit
	// whose base snapshot moved, a second writer to a table).
	ErrConflict = errors.New("strata: conflict")

	// ErrClosed marks an operation on something already closed or stopped.
	ErrClosed = errors.New("strata: closed")
)

// narrowError is a marker that also matches a broader marker with errors.Is,
// as iceberg-go's errors do.
type narrowError struct {
	msg   string
	broad error
}

func (e *narrowError) Error() string { return e.msg }

// Unwrap returns the broader marker.
func (e *narrowError) Unwrap() error { return e.broad }
