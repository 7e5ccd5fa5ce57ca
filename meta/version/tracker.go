package version

import (
	"fmt"
	"maps"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/catalog"
)

// Name names a table.
type Name = catalog.ObjectName

// Mode is the consistency mode of a read (FLIP-276).
type Mode string

// Modes.
const (
	// Strong reads are consistent and never go back in epochs
	// (invariant version-strong-monotonic).
	Strong Mode = "strong"
	// Weak reads are consistent on their own and as fresh as possible.
	Weak Mode = "weak"
)

// Valid reports whether m is Strong or Weak.
func (m Mode) Valid() bool { return m == Strong || m == Weak }

// ErrEpochBackwards marks a committed-epoch report below the table's
// committed epoch (invariant version-committed-monotonic). It wraps
// base.ErrConflict: the reporter lost to a newer writer.
var ErrEpochBackwards = fmt.Errorf("committed epoch going backwards: %w", base.ErrConflict)

// Committed is a table's committed epoch with its times.
type Committed struct {
	Epoch base.Epoch `json:"epoch"`
	// Start is when Epoch began on the epoch clock (zero when unknown);
	// freshness lag is now minus Start.
	Start time.Time `json:"start"`
	// Reported is when the writer reported it.
	Reported time.Time `json:"reported"`
}

// Tracker holds the committed epochs and strong-read floors of tables.
// The zero Tracker is not usable; start from NewTracker.
type Tracker struct {
	committed map[Name]Committed
	floors    map[Name]base.Epoch
}

// NewTracker returns a tracker restored from persisted committed epochs and
// floors (nil maps for a new deployment).
func NewTracker(committed map[Name]Committed, floors map[Name]base.Epoch) *Tracker {
	t := &Tracker{committed: maps.Clone(committed), floors: maps.Clone(floors)}
	if t.committed == nil {
		t.committed = map[Name]Committed{}
	}
	if t.floors == nil {
		t.floors = map[Name]base.Epoch{}
	}
	return t
}

// CheckCommit says whether a report that table committed epoch e is
// accepted: changed is true when it moves the committed epoch forward, false
// for a repeat of the current one. A report below the current one gives an
// error wrapping ErrEpochBackwards that names the table and both epochs.
func (t *Tracker) CheckCommit(table Name, e base.Epoch) (changed bool, err error) {
	cur := t.committed[table]
	switch {
	case e < cur.Epoch:
		return false, fmt.Errorf("table %s: report of epoch %d is below its committed epoch %d: %w", table, e, cur.Epoch, ErrEpochBackwards)
	case e == cur.Epoch:
		return false, nil
	}
	return true, nil
}

// Commit records c as table's committed epoch. It panics when c goes
// backwards (invariant version-committed-monotonic); callers check with
// CheckCommit first.
func (t *Tracker) Commit(table Name, c Committed) {
	if cur := t.committed[table]; c.Epoch < cur.Epoch {
		panic(fmt.Sprintf("version: invariant version-committed-monotonic: table %s from %d to %d", table, cur.Epoch, c.Epoch))
	}
	t.committed[table] = c
}

// Committed returns table's committed epoch; ok is false when nothing was
// ever reported.
func (t *Tracker) Committed(table Name) (Committed, bool) {
	c, ok := t.committed[table]
	return c, ok
}

// Forget drops a table's committed epoch and floor (the table was dropped).
func (t *Tracker) Forget(table Name) {
	delete(t.committed, table)
	delete(t.floors, table)
}

// Floor returns the highest epoch a strong read was handed for table.
func (t *Tracker) Floor(table Name) base.Epoch { return t.floors[table] }

// Lag describes why a strong read cannot be answered yet: Table has
// committed only Committed, but Other was already read at Floor, and they
// are in one group.
type Lag struct {
	Table     Name
	Committed base.Epoch
	Other     Name
	Floor     base.Epoch
}

// Error describes the lag.
func (l *Lag) Error() string {
	return fmt.Sprintf("table %s has committed epoch %d, behind epoch %d already read from related table %s", l.Table, l.Committed, l.Floor, l.Other)
}

// Resolution is the answer to a read.
type Resolution struct {
	// Epochs maps each table to the epoch to read it at.
	Epochs map[Name]base.Epoch
	// Groups are the groups the epochs were computed over.
	Groups [][]Name
	// RaiseFloors lists the floors a strong read raises; the caller
	// persists them, then calls Tracker.RaiseFloors, then answers.
	RaiseFloors map[Name]base.Epoch
	// Wait is set, and Epochs nil, when a strong read must wait for
	// Wait.Table to commit Wait.Floor.
	Wait *Lag
}

// Resolve computes the read of the tables in groups (lineage.Graph.Groups
// of the tables a query names) in mode m. It does not change the tracker.
func (t *Tracker) Resolve(groups [][]Name, m Mode) Resolution {
	res := Resolution{Epochs: map[Name]base.Epoch{}, Groups: groups}
	for _, g := range groups {
		low := g[0]
		for _, tb := range g[1:] {
			if t.committed[tb].Epoch < t.committed[low].Epoch {
				low = tb
			}
		}
		e := t.committed[low].Epoch
		if m == Strong {
			for _, tb := range g {
				if f := t.floors[tb]; f > e {
					return Resolution{Groups: groups, Wait: &Lag{Table: low, Committed: e, Other: tb, Floor: f}}
				}
				if e > t.floors[tb] {
					if res.RaiseFloors == nil {
						res.RaiseFloors = map[Name]base.Epoch{}
					}
					res.RaiseFloors[tb] = e
				}
			}
		}
		for _, tb := range g {
			res.Epochs[tb] = e
		}
	}
	return res
}

// RaiseFloors applies a Resolution's RaiseFloors after they are persisted.
// A floor never goes down: a lower value is ignored.
func (t *Tracker) RaiseFloors(floors map[Name]base.Epoch) {
	for tb, e := range floors {
		if e > t.floors[tb] {
			t.floors[tb] = e
		}
	}
}
