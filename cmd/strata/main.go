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
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "strata:", base.UserMessage(err.Error()))
		if errors.Is(err, errVerifyFailed) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}
