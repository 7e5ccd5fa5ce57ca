package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/stratadb/strata/connector/pgcdc"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/sqlerr"
)

// DROP SOURCE of a postgres-cdc source removes what the source made on
// the upstream server, as RisingWave does: the replication slot, which
// would otherwise keep the upstream's WAL forever once nothing reads it,
// and the publication when the source created it (connector/pgcdc,
// cleanup.go: such a publication carries a comment naming the slot; one
// the user created stays, and so does one another source of the catalog
// still names).
//
// The upstream is changed only after the catalog change commits, so a
// DROP that fails leaves the source working. A drop intent naming the
// source and its options is made durable before the change
// (dropintent.go); a crash between the change and the upstream drop is
// finished by the next start, which drops the slot when the catalog no
// longer holds the source (the drops are idempotent). An upstream that
// cannot be reached does not fail the DROP: the statement returns a
// notice naming the slot to drop by hand, and a replay at start logs the
// same.

// upstreamDropTimeout bounds the upstream drops of one DROP SOURCE: the
// connection, and the wait for a walsender still using the slot.
const upstreamDropTimeout = 15 * time.Second

// upstreamDrop is what DROP SOURCE removes upstream; its fields are
// stored in the drop intent.
type upstreamDrop struct {
	Source  string            `json:"source"`  // the source, db.name
	Options map[string]string `json:"options"` // the source's WITH options
	// KeepPublication is set when another source of the catalog names
	// the same publication of the same database.
	KeepPublication bool `json:"keep_publication,omitempty"`
}

// planUpstreamDrop returns what dropping source name removes upstream,
// nil for a source of another connector. It does no I/O.
func planUpstreamDrop(cat *catalog.Catalog, name catalog.ObjectName) (*upstreamDrop, error) {
	src, err := cat.Source(name)
	if err != nil || src.Connector != PostgresCDC {
		return nil, nil
	}
	o, err := pgcdc.ParseOptions(src.Options)
	if err != nil {
		return nil, sqlerr.Wrap(sqlerr.InvalidParameterValue, fmt.Errorf("source %s: %w", name.Name, err))
	}
	up := &upstreamDrop{Source: name.String(), Options: src.Options}
	for _, other := range cat.Sources() {
		if other.Name == name || other.Connector != PostgresCDC {
			continue
		}
		oo, err := pgcdc.ParseOptions(other.Options)
		if err == nil && oo.Hostname == o.Hostname && oo.Port == o.Port && oo.Database == o.Database && oo.Publication == o.Publication {
			up.KeepPublication = true
		}
	}
	return up, nil
}

// dropUpstream drops the slot (and the publication) of up, and returns
// nil, or the notice that tells what is left to drop by hand.
func (e *Engine) dropUpstream(ctx context.Context, up upstreamDrop) *sqlerr.Error {
	o, err := pgcdc.ParseOptions(up.Options)
	if err != nil {
		return sqlerr.New(sqlerr.SuccessfulCompletion, "source %s: %v", up.Source, err)
	}
	ctx, cancel := context.WithTimeout(ctx, upstreamDropTimeout)
	defer cancel()
	d, err := pgcdc.DropUpstream(ctx, o, up.KeepPublication)
	if err != nil {
		e.log.Warn("replication slot left on the upstream server", "source", up.Source, "slot", o.Slot,
			"server", fmt.Sprintf("%s:%d", o.Hostname, o.Port), "database", o.Database, "err", err)
		n := sqlerr.New(sqlerr.SuccessfulCompletion,
			"replication slot %s of source %s could not be dropped on %s:%d; drop it there by hand: SELECT pg_drop_replication_slot('%s')",
			o.Slot, up.Source, o.Hostname, o.Port, o.Slot)
		n.Detail = err.Error()
		if !up.KeepPublication {
			n.Hint = fmt.Sprintf("If Strata created publication %s in database %s, drop it too: DROP PUBLICATION %s", o.Publication, o.Database, o.Publication)
		}
		return n
	}
	e.log.Info("dropped upstream", "source", up.Source, "slot", o.Slot, "slot_dropped", d.Slot,
		"publication", o.Publication, "publication_dropped", d.Publication)
	return nil
}
