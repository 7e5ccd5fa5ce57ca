package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/lineage"
	"github.com/stratadb/strata/meta/version"
)

// codes maps error codes to markers and HTTP statuses, most specific
// first: the server sends the first code whose marker matches.
var codes = []struct {
	code   string
	marker error
	status int
}{
	{"cycle", lineage.ErrCycle, http.StatusConflict},
	{"second_writer", lineage.ErrSecondWriter, http.StatusConflict},
	{"epoch_backwards", version.ErrEpochBackwards, http.StatusConflict},
	{"checksum", base.ErrChecksum, http.StatusInternalServerError},
	{"corruption", base.ErrCorruption, http.StatusInternalServerError},
	{"out_of_range", base.ErrOutOfRange, http.StatusBadRequest},
	{"invalid_argument", base.ErrInvalidArgument, http.StatusBadRequest},
	{"not_found", base.ErrNotFound, http.StatusNotFound},
	{"conflict", base.ErrConflict, http.StatusConflict},
	{"closed", base.ErrClosed, http.StatusServiceUnavailable},
	{"deadline_exceeded", context.DeadlineExceeded, http.StatusGatewayTimeout},
	{"canceled", context.Canceled, 499},
}

// classify returns the code and HTTP status of err.
func classify(err error) (string, int) {
	for _, c := range codes {
		if errors.Is(err, c.marker) {
			return c.code, c.status
		}
	}
	return "internal", http.StatusInternalServerError
}

// remoteError is an error from the server: its text, matching the marker
// of its code (and, through the marker, the broader ones).
type remoteError struct {
	msg    string
	marker error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.marker }

// rebuild turns a code and message back into an error.
func rebuild(code, msg string) error {
	for _, c := range codes {
		if c.code == code {
			return &remoteError{msg: msg, marker: c.marker}
		}
	}
	return errors.New(msg)
}
