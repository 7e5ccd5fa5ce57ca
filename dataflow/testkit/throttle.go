package testkit

import (
	"time"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/types"
)

// Throttle wraps an operator so that it sleeps Delay before each chunk it
// processes: a slow sink that fills the queues in front of it.
type Throttle struct {
	operator.Operator
	Delay time.Duration
}

// Process implements operator.Operator.
func (t Throttle) Process(input int, c *types.Chunk) error {
	time.Sleep(t.Delay)
	return t.Operator.Process(input, c)
}

// BorrowsInput implements operator.InputBorrower for the wrapped operator.
func (t Throttle) BorrowsInput() bool { return operator.BorrowsInput(t.Operator) }
