// Command strata is Strata's single binary: the streaming ETL engine, the
// table store, the meta service and the query server, chosen by
// sub-command. This package is wiring only: flags, configuration and the
// start of services that live in the packages below it.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/stratadb/strata/internal/base"
)

func main() {
	code, msg := exitStatus(newRootCommand().Execute())
	if msg != "" {
		fmt.Fprintln(os.Stderr, "strata:", msg)
	}
	os.Exit(code)
}

// exitError is an error that ends the process with status code. With err
// nil the command has printed all there was to say (`strata sql` prints
// its statements' errors as psql does), and nothing more is printed.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// exitStatus returns the process's exit status for the error of a command
// and the message to print after "strata:" ("" for none): 0 for no error,
// an exitError's code, 2 for errVerifyFailed, else 1.
func exitStatus(err error) (code int, msg string) {
	if err == nil {
		return 0, ""
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err == nil {
			return ee.code, ""
		}
		return ee.code, base.UserMessage(err.Error())
	}
	if errors.Is(err, errVerifyFailed) {
		return 2, base.UserMessage(err.Error())
	}
	return 1, base.UserMessage(err.Error())
}
