package pgcdc

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
)

// What a source leaves upstream, and who removes it (DROP SOURCE):
//
//   - The replication slot is the source's own (Options.Slot; Next(0)
//     creates it). An inactive slot keeps every WAL segment after its
//     confirmed position, so a slot left behind fills the upstream's disk
//     in time: DropUpstream drops it.
//   - The publication is the source's when Open created it (it did not
//     exist). Open marks such a publication with a comment naming the
//     slot (publicationComment), in the transaction that creates it, so
//     that DropUpstream knows it later without any state of Strata's: a
//     publication with that comment is dropped too, one the user created
//     (no such comment) stays, as RisingWave leaves a publication it did
//     not create. A publication created before the comment existed stays.
//
// Both drops are idempotent: a slot or publication already gone is no
// error, so the engine may run DropUpstream again after a restart.

// publicationComment is the comment of a publication the source of slot
// created.
func publicationComment(slot string) string {
	return "created by Strata for replication slot " + slot
}

// commentPublication is the statement that marks publication pub as made
// by the source of slot.
func commentPublication(pub, slot string) string {
	return "COMMENT ON PUBLICATION " + quoteIdent(pub) + " IS " + quoteLiteral(publicationComment(slot))
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string {
	b := []byte{'\''}
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			b = append(b, '\'')
		}
		b = append(b, s[i])
	}
	return string(append(b, '\''))
}

// Dropped tells what DropUpstream removed.
type Dropped struct {
	Slot        bool // the replication slot existed and was dropped
	Publication bool // the publication was the source's and was dropped
}

// DropUpstream removes what the source of o made upstream: its
// replication slot (waiting for a connection still streaming from it to
// end, until ctx ends), and its publication when the source created it
// and keepPublication is false (the caller sets it when another source
// still names the same publication). What is already gone is no error.
// An error names the source and what could not be dropped; an upstream
// that cannot be reached fails before anything is dropped.
func DropUpstream(ctx context.Context, o Options, keepPublication bool) (Dropped, error) {
	var d Dropped
	if err := o.Validate(); err != nil {
		return d, err
	}
	// A walsender takes the simple query protocol only, so the
	// publication is looked up over a plain connection.
	conn, err := o.connect(ctx, false)
	if err != nil {
		return d, fmt.Errorf("postgres-cdc slot %s: %w", o.Slot, err)
	}
	defer closeConn(conn)
	rconn, err := o.connect(ctx, true)
	if err != nil {
		return d, fmt.Errorf("postgres-cdc slot %s: %w", o.Slot, err)
	}
	defer closeConn(rconn)
	if d.Slot, err = dropSlot(ctx, rconn, o.Slot); err != nil {
		return d, err
	}
	if keepPublication {
		return d, nil
	}
	d.Publication, err = dropOwnPublication(ctx, conn, o.Publication, o.Slot)
	return d, err
}

// dropSlot drops slot when it exists, over a replication connection,
// waiting for a walsender still using it. It reports whether it existed.
func dropSlot(ctx context.Context, conn *pgconn.PgConn, slot string) (bool, error) {
	if _, ok, err := slotConfirmed(ctx, conn, slot); err != nil || !ok {
		return false, err
	}
	if err := pglogrepl.DropReplicationSlot(ctx, conn, slot, pglogrepl.DropReplicationSlotOptions{Wait: true}); err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42704" { // dropped meanwhile
			return false, nil
		}
		return false, fmt.Errorf("drop replication slot %s: %w", slot, err)
	}
	return true, nil
}

// dropOwnPublication drops publication pub when its comment says that
// the source of slot created it, and reports whether it did.
func dropOwnPublication(ctx context.Context, conn *pgconn.PgConn, pub, slot string) (bool, error) {
	rows, err := query(ctx, conn, "SELECT coalesce(obj_description(oid, 'pg_publication'), '') FROM pg_publication WHERE pubname = $1", pub)
	if err != nil {
		return false, fmt.Errorf("look up publication %s: %w", pub, err)
	}
	if len(rows) == 0 || rows[0][0] != publicationComment(slot) {
		return false, nil
	}
	if _, err := conn.Exec(ctx, "DROP PUBLICATION IF EXISTS "+quoteIdent(pub)).ReadAll(); err != nil {
		return false, fmt.Errorf("drop publication %s: %w", pub, err)
	}
	return true, nil
}
