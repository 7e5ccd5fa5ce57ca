package version

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/stratadb/strata/internal/base"
)

// PinID identifies a pin; ids are never reused (the counter is persisted).
type PinID uint64

// Pin holds epochs of tables for a reader until it is released or expires.
type Pin struct {
	ID     PinID               `json:"id"`
	Holder string              `json:"holder"`
	Epochs map[Name]base.Epoch `json:"epochs"`
	// Expires is when the pin lapses unless renewed.
	Expires time.Time `json:"expires"`
}

// Pins is the set of live pins. The zero Pins is not usable; start from
// NewPins.
type Pins struct {
	next PinID
	pins map[PinID]Pin
}

// NewPins returns the pins restored from persisted ones; next is the next
// id to hand out (above every restored id).
func NewPins(next PinID, restored []Pin) *Pins {
	p := &Pins{next: max(next, 1), pins: map[PinID]Pin{}}
	for _, pin := range restored {
		p.pins[pin.ID] = pin
		p.next = max(p.next, pin.ID+1)
	}
	return p
}

// Next returns the id the next Add hands out.
func (p *Pins) Next() PinID { return p.next }

// Make returns the pin Add would add, without adding it: the caller
// persists it (and Next()+1) first.
func (p *Pins) Make(holder string, epochs map[Name]base.Epoch, expires time.Time) Pin {
	return Pin{ID: p.next, Holder: holder, Epochs: maps.Clone(epochs), Expires: expires}
}

// Add adds a pin made by Make. It panics when the id is not the next one.
func (p *Pins) Add(pin Pin) {
	if pin.ID != p.next {
		panic(fmt.Sprintf("version: pin %d added out of order, next is %d", pin.ID, p.next))
	}
	p.pins[pin.ID] = pin
	p.next++
}

// Get returns a pin; the error wraps base.ErrNotFound (it was released or
// expired).
func (p *Pins) Get(id PinID) (Pin, error) {
	pin, ok := p.pins[id]
	if !ok {
		return Pin{}, fmt.Errorf("pin %d does not exist (released or expired): %w", id, base.ErrNotFound)
	}
	pin.Epochs = maps.Clone(pin.Epochs)
	return pin, nil
}

// SetExpiry changes a pin's expiry (a renewal). The error wraps
// base.ErrNotFound.
func (p *Pins) SetExpiry(id PinID, expires time.Time) error {
	pin, ok := p.pins[id]
	if !ok {
		return fmt.Errorf("pin %d does not exist (released or expired): %w", id, base.ErrNotFound)
	}
	pin.Expires = expires
	p.pins[id] = pin
	return nil
}

// Remove removes a pin; it reports whether the pin existed.
func (p *Pins) Remove(id PinID) bool {
	_, ok := p.pins[id]
	delete(p.pins, id)
	return ok
}

// Expired returns the ids of pins whose expiry is at or before now, sorted.
func (p *Pins) Expired(now time.Time) []PinID {
	var out []PinID
	for id, pin := range p.pins {
		if !pin.Expires.After(now) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// Held returns the ids of pins held by holder, sorted.
func (p *Pins) Held(holder string) []PinID {
	var out []PinID
	for id, pin := range p.pins {
		if pin.Holder == holder {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// Min returns the lowest epoch pinned for table; ok is false when no pin
// holds the table.
func (p *Pins) Min(table Name) (e base.Epoch, ok bool) {
	for _, pin := range p.pins {
		if pe, has := pin.Epochs[table]; has && (!ok || pe < e) {
			e, ok = pe, true
		}
	}
	return e, ok
}

// All returns every pin, sorted by id.
func (p *Pins) All() []Pin {
	out := make([]Pin, 0, len(p.pins))
	for _, pin := range p.pins {
		pin.Epochs = maps.Clone(pin.Epochs)
		out = append(out, pin)
	}
	slices.SortFunc(out, func(a, b Pin) int { return cmp.Compare(a.ID, b.ID) })
	return out
}
