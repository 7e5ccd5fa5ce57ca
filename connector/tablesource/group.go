package tablesource

import (
	"sync"
	"time"

	"github.com/stratadb/strata/internal/base"
)

// Group is the table sources of one job (its members, by their names in
// the job). A member closes epoch E only once every member is ready to:
// has given out all of its changes up to E, and its table has committed E
// (invariant close-with-group, package doc). A Group is safe for
// concurrent use.
//
// The idea is DESIGN.md's epoch protocol (a view job emits epoch barrier E
// after it has emitted every input change of epoch E from every input
// table and every input table has committed E), held to by each source of
// the job. Two designs were tried first and dropped: sources that each
// close an epoch as soon as their own table has committed it (one input
// levels ahead of another then ran epochs ahead, and the job's checkpoints
// waited for the slow input to catch up), and sources that wait only until
// every input table has committed E (the source whose changes were all out
// then closed E while another was still reading E's changes, the
// checkpoint its barrier triggered reached that other source before its
// barrier E, and the sink's commit of E waited for the next checkpoint,
// an epoch later).
type Group struct {
	mu struct {
		sync.Mutex
		// ready maps each member to the epoch it is ready to close up to.
		ready map[string]base.Epoch
		// changed is closed when a member's ready epoch rises; nil while
		// nobody waits.
		changed chan struct{}
	}
}

// NewGroup returns an empty group.
func NewGroup() *Group {
	g := &Group{}
	g.mu.ready = map[string]base.Epoch{}
	return g
}

// JoinGroup makes s member of g: s closes no epoch another member is not
// ready to close, and holds the others back until it is ready. The job
// joins every source to its group as it builds them, before any reads; a
// source built again for a new attempt of the job replaces the old one of
// the same member name. A group's members must all be read by the same
// attempt of one job: a member nobody reads holds the others back for
// ever.
func (s *Source) JoinGroup(g *Group, member string) {
	s.group, s.member = g, member
	g.mu.Lock()
	defer g.mu.Unlock()
	g.mu.ready[member] = s.closed
}

// ready raises member's ready epoch to e and wakes the members waiting.
func (g *Group) ready(member string, e base.Epoch) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e <= g.mu.ready[member] {
		return
	}
	g.mu.ready[member] = e
	if g.mu.changed != nil {
		close(g.mu.changed)
		g.mu.changed = nil
	}
}

// allows reports whether every member but member is ready to close e;
// when one is not, it returns the channel the next rise closes.
func (g *Group) allows(member string, e base.Epoch) (bool, <-chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for m, r := range g.mu.ready {
		if m != member && r < e {
			if g.mu.changed == nil {
				g.mu.changed = make(chan struct{})
			}
			return false, g.mu.changed
		}
	}
	return true, nil
}

// groupAllows reports whether s may close epoch e now. It first declares s
// ready up to closeTo (every change up to it is out: Next returned it
// already), then waits for the other members, up to the idle wait: a
// member that becomes ready wakes it, and it answers in the same call, so
// that its barrier goes out before a checkpoint the other member's barrier
// triggered can reach it. Without a group it always allows.
func (s *Source) groupAllows(e base.Epoch) bool {
	if s.group == nil {
		return true
	}
	s.group.ready(s.member, s.closeTo)
	t := time.NewTimer(idleWait(s.cfg.Idle, s.idle))
	defer t.Stop()
	for {
		ok, wake := s.group.allows(s.member, e)
		if ok {
			return true
		}
		select {
		case <-wake:
		case <-t.C:
			return false
		}
	}
}
