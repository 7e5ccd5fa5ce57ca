package server

import (
	"errors"
	"regexp"
	"strings"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/sql/ddl"
	"github.com/stratadb/strata/sql/sqlerr"
)

// UserMessage is base.UserMessage (msg without the bare texts of base's
// error markers), kept so that callers above the server (the demo) that
// clean its messages need not import base for it.
func UserMessage(msg string) string { return base.UserMessage(msg) }

// userError returns err with its message cleaned by base.UserMessage and
// a dialect hint for a name of another system (ddl.NameHint): a
// *sqlerr.Error copy (code, position, detail, hint and cause kept, so
// errors.Is and errors.As still see what err wraps) when either changes,
// err itself otherwise.
func userError(err error) error {
	if err == nil {
		return nil
	}
	err = ddl.NameHint(err)
	err = tableOptionHint(err)
	var se *sqlerr.Error
	if !errors.As(err, &se) {
		se = sqlerr.From(err)
	}
	msg := base.UserMessage(se.Message)
	if msg == se.Message {
		return err
	}
	c := *se
	c.Message = msg
	return &c
}

// unknownTableOption matches the engine's refusal of an option that is
// neither the table store's nor, without a connector, a connector's.
var unknownTableOption = regexp.MustCompile(`^table \S+: unknown option "[^"]*" \(table options are `)

// tableOptionsHint names every option of the table store, as README's
// "Options of the table store" lists them.
const tableOptionsHint = "The table store's options are bucket, merge-engine, fields.<col>.aggregate-function, changelog-producer, write-buffer-rows, target-file-rows, num-sorted-run.compaction-trigger, compaction.size-ratio, compaction.max-size-amplification-percent, num-levels, snapshot.num-retained.min, snapshot.num-retained.max and snapshot.time-retained (README, \"Options of the table store\"); any other option belongs to a connector, named with connector = '...'."

// tableOptionHint gives the refusal of an unknown table option (22023)
// a hint naming every option of the table store, which its message
// abbreviates, after the option it suggests when it has one.
func tableOptionHint(err error) error {
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Code != sqlerr.InvalidParameterValue || strings.HasSuffix(se.Hint, tableOptionsHint) || !unknownTableOption.MatchString(se.Message) {
		return err
	}
	c := *se
	c.Hint = strings.TrimSpace(se.Hint + " " + tableOptionsHint)
	return &c
}
