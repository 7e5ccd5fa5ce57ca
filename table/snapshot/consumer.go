package snapshot

import (
	"errors"
	"fmt"
	"strings"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/fileio"
)

// ConsumerDir is the consumer directory inside a table directory.
const ConsumerDir = "consumer"

// consumer is a consumer file.
type consumer struct {
	Version      int             `json:"version"`
	NextSnapshot base.SnapshotID `json:"nextSnapshot"`
}

func (m *Manager) consumerPath(id string) string {
	return m.table + "/" + ConsumerDir + "/consumer-" + id
}

// SetConsumer records that consumer id will next read snapshot next
// (Paimon's ConsumerManager). Expiration keeps snapshot next and all newer
// ones.
//
// The expiry fence: a reader that wants to start at snapshot S registers
// SetConsumer(id, S) and then calls EarliestFence; if the fence is above S,
// S may be expiring and the reader must start again from the fence.
// Expiration raises the fence before it reads the consumers a second time
// and before it deletes anything, so a registration that saw a fence <= S
// is seen by that second read (Expirer in package maintain).
func (m *Manager) SetConsumer(id string, next base.SnapshotID) error {
	if id == "" || strings.ContainsAny(id, "/\\") {
		return fmt.Errorf("table %s: consumer id %q: %w", m.table, id, base.ErrInvalidArgument)
	}
	b, err := fileio.EncodeJSON(consumer{Version: FormatVersion, NextSnapshot: next})
	if err != nil {
		return err
	}
	return m.fs.WriteFile(m.consumerPath(id), b)
}

// DeleteConsumer unregisters consumer id.
func (m *Manager) DeleteConsumer(id string) error { return m.fs.Delete(m.consumerPath(id)) }

// Consumer returns consumer id's next snapshot; ok is false if it is not
// registered.
func (m *Manager) Consumer(id string) (next base.SnapshotID, ok bool, err error) {
	p := m.consumerPath(id)
	b, err := m.fs.ReadFile(p)
	if errors.Is(err, base.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	var c consumer
	if err := fileio.DecodeJSON(p, b, &c); err != nil {
		return 0, false, fmt.Errorf("table %s: %w", m.table, err)
	}
	return c.NextSnapshot, true, nil
}

// Consumers returns every registered consumer id with its next snapshot.
func (m *Manager) Consumers() (map[string]base.SnapshotID, error) {
	files, err := m.fs.List(m.table + "/" + ConsumerDir)
	if err != nil {
		return nil, err
	}
	out := map[string]base.SnapshotID{}
	for _, f := range files {
		id, ok := strings.CutPrefix(f.Name, "consumer-")
		if !ok {
			continue
		}
		next, ok, err := m.Consumer(id)
		if err != nil {
			return nil, err
		}
		if ok {
			out[id] = next
		}
	}
	return out, nil
}

// MinConsumer returns the smallest next snapshot over all consumers, and
// false if there is none.
func (m *Manager) MinConsumer() (base.SnapshotID, bool, error) {
	all, err := m.Consumers()
	if err != nil || len(all) == 0 {
		return 0, false, err
	}
	var min base.SnapshotID
	found := false
	for _, next := range all {
		if !found || next < min {
			min, found = next, true
		}
	}
	return min, true, nil
}
