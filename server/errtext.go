package server

import (
	"errors"

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
