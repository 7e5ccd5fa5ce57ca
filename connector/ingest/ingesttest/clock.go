package ingesttest

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/epoch"
)

// HeldClock is an epoch clock (the meta service's, usually) that shows no
// epoch at or above Until while Hold returns true. An ingest source closes
// epochs by the clock; on a loaded machine the clock could reach a test's
// last epoch before the source has read the test's input, and a restore
// late in the run would close the remaining epochs at the restored
// position. With Hold reporting "input not read yet", the last epoch always
// closes after the whole input.
type HeldClock struct {
	ingest.Clock
	Until base.Epoch
	Hold  func() bool
}

func (c HeldClock) capped(info epoch.Info) epoch.Info {
	if info.Epoch >= c.Until && c.Hold() {
		return epoch.Info{Epoch: c.Until - 1, Start: info.Start}
	}
	return info
}

// CurrentEpoch implements ingest.Clock.
func (c HeldClock) CurrentEpoch(ctx context.Context) (epoch.Info, error) {
	info, err := c.Clock.CurrentEpoch(ctx)
	if err != nil {
		return info, err
	}
	return c.capped(info), nil
}

// WaitEpoch implements ingest.Clock.
func (c HeldClock) WaitEpoch(ctx context.Context, after base.Epoch) (epoch.Info, error) {
	for {
		if !c.Hold() {
			return c.Clock.WaitEpoch(ctx, after)
		}
		if after < c.Until-1 {
			info, err := c.Clock.WaitEpoch(ctx, after)
			if err != nil {
				return info, err
			}
			if info = c.capped(info); info.Epoch > after {
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

// Tracked is a Reader that remembers the position after the last
// transaction it handed out (or the position it was last asked for, when
// it had nothing): where the source reading it stands, for a HeldClock's
// Hold. After a restore it follows the replay.
type Tracked struct {
	ingest.Reader
	at atomic.Uint64
}

// Track wraps r.
func Track(r ingest.Reader) *Tracked { return &Tracked{Reader: r} }

// Next implements ingest.Reader.
func (t *Tracked) Next(pos uint64) (*types.Chunk, uint64, error) {
	c, next, err := t.Reader.Next(pos)
	if err == nil {
		t.at.Store(next)
	}
	return c, next, err
}

// Pos returns where the source stands.
func (t *Tracked) Pos() uint64 { return t.at.Load() }

var _ ingest.StatefulReader = (*Tracked)(nil)

// SnapshotState implements ingest.StatefulReader for the wrapped Reader.
func (t *Tracked) SnapshotState() ([]byte, error) { return ingest.SnapshotState(t.Reader) }

// RestoreState implements ingest.StatefulReader for the wrapped Reader.
func (t *Tracked) RestoreState(state []byte) error { return ingest.RestoreState(t.Reader, state) }
