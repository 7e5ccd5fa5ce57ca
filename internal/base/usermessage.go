package base

import "strings"

// Error markers in messages.
//
// Packages wrap the markers of errors.go with context
// (fmt.Errorf("option %q: %w", k, ErrInvalidArgument)), so that callers
// classify errors with errors.Is and the SQL layer derives SQLSTATEs from
// them. The marker's own text ("strata: invalid argument") then ends the
// message, where a user reads it as noise after the words that already
// say what was wrong ("schema: option bucket="x": not a non-negative
// integer: strata: invalid argument"). Everything that leaves the process
// as a message (a wire ErrorResponse, an HTTP answer, the CLI's last
// line, the error column of strata_catalog.jobs) goes through
// UserMessage: the markers that only classify are cut out, the ones that
// tell something (corrupt data, a checksum mismatch) are kept in plain
// words. The error values themselves are untouched, so errors.Is still
// sees the markers.

// markerWords maps each marker's text to what a message says instead of
// it: nothing for the markers that only classify.
var markerWords = []struct{ marker, words string }{
	// No marker's text contains another's, so the order does not matter.
	{ErrOutOfRange.Error(), ""},
	{ErrInvalidArgument.Error(), ""},
	{ErrNotFound.Error(), ""},
	{ErrConflict.Error(), ""},
	{ErrClosed.Error(), "closed"},
	{ErrChecksum.Error(), "checksum mismatch"},
	{ErrCorruption.Error(), "corrupt data"},
}

// UserMessage returns msg without the bare texts of the error markers
// (see "Error markers in messages" above): a marker ending a clause
// (": strata: invalid argument") goes with its separator, one that tells
// something is kept in plain words ("corrupt data"). A message that was
// nothing but a marker keeps the marker's plain words.
func UserMessage(msg string) string {
	for _, m := range markerWords {
		if !strings.Contains(msg, m.marker) {
			continue
		}
		if m.words == "" {
			// The clause that carries the marker goes, with the separator
			// before it (or after it, when the message starts with it).
			msg = strings.ReplaceAll(msg, ": "+m.marker, "")
			msg = strings.ReplaceAll(msg, m.marker+": ", "")
			if strings.TrimSpace(msg) == m.marker {
				msg = strings.TrimPrefix(m.marker, "strata: ")
			}
			continue
		}
		msg = strings.ReplaceAll(msg, m.marker, m.words)
	}
	return msg
}
