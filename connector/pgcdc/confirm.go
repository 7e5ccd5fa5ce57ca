package pgcdc

import (
	"sync"

	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/internal/base"
)

// Confirmer turns committed epochs into confirmed positions for a Stream:
// it learns where the ingest source closed each epoch (give OnClose to
// ingest.Config.OnClose) and, when told that every table of the source has
// committed epoch E (Committed), confirms the position where E was closed:
// every transaction before it belongs to an epoch up to E, so Strata has
// committed it and the server may drop its WAL (DESIGN.md: the confirmed
// LSN advances only after Strata committed the epoch that contains it).
//
// Flink CDC's Postgres source does the same with checkpoints: it commits
// the LSN to the slot in notifyCheckpointComplete, never earlier; here the
// unit is the committed epoch, which is what the tables show.
//
// After a restore an epoch may be told again; the last telling counts, as
// in ingest.Config.OnClose (a committed epoch's position never changes,
// because its pair is in the checkpoint that committed it).
type Confirmer struct {
	stream *Stream
	mu     struct {
		sync.Mutex
		closedAt map[base.Epoch]uint64
	}
}

// NewConfirmer returns a Confirmer for s.
func NewConfirmer(s *Stream) *Confirmer {
	c := &Confirmer{stream: s}
	c.mu.closedAt = map[base.Epoch]uint64{}
	return c
}

// OnClose records that the source closed p.Epoch at p.Position.
func (c *Confirmer) OnClose(p ingest.Pair) {
	c.mu.Lock()
	c.mu.closedAt[p.Epoch] = p.Position
	c.mu.Unlock()
}

// Committed confirms the position where the highest known epoch up to e
// was closed, and forgets the epochs up to e. Call it with the lowest
// committed epoch over the source's tables.
func (c *Confirmer) Committed(e base.Epoch) {
	c.mu.Lock()
	var (
		best  base.Epoch
		pos   uint64
		found bool
	)
	for ep, p := range c.mu.closedAt {
		if ep <= e {
			if !found || ep > best {
				best, pos, found = ep, p, true
			}
			delete(c.mu.closedAt, ep)
		}
	}
	c.mu.Unlock()
	if found {
		c.stream.Confirm(pos)
	}
}
