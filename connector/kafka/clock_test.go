package kafka_test

import (
	"context"
	"time"

	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/epoch"
)

// heldClock is the meta service's epoch clock, except that it shows no
// epoch at or above until while hold returns true: a test's job then ends
// after its whole input however slow the machine is (the ingest source
// closes epochs by the clock, and would otherwise reach the last epoch
// before the input on a loaded machine).
type heldClock struct {
	ingest.Clock
	until base.Epoch
	hold  func() bool
}

func (c heldClock) capped(info epoch.Info) (epoch.Info, bool) {
	if info.Epoch >= c.until && c.hold() {
		return epoch.Info{Epoch: c.until - 1, Start: info.Start}, true
	}
	return info, false
}

func (c heldClock) CurrentEpoch(ctx context.Context) (epoch.Info, error) {
	info, err := c.Clock.CurrentEpoch(ctx)
	if err != nil {
		return info, err
	}
	info, _ = c.capped(info)
	return info, nil
}

func (c heldClock) WaitEpoch(ctx context.Context, after base.Epoch) (epoch.Info, error) {
	for {
		if !c.hold() {
			return c.Clock.WaitEpoch(ctx, after)
		}
		if after < c.until-1 {
			info, err := c.Clock.WaitEpoch(ctx, after)
			if err != nil {
				return info, err
			}
			if info, _ = c.capped(info); info.Epoch > after {
				return info, nil
			}
		}
		select {
		case <-ctx.Done():
			return epoch.Info{}, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}
