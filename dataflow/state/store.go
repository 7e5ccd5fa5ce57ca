package state

import (
	"encoding/binary"
	"fmt"
)

// The kind byte of a namespace.
const (
	kindValue byte = 'v'
	kindMap   byte = 'm'
	kindList  byte = 'l'
)

// Store is the state API operators use: value, map and list state per key,
// in the key's key group, plus operator state. It belongs to one subtask
// and is used by its goroutine only.
type Store struct {
	b        Backend
	maxPar   int
	rng      Range
	curKey   []byte
	curGroup KeyGroup
	ns       []byte
}

// NewStore returns the state of a subtask owning key groups rng of a job
// with maxParallelism key groups, over b.
func NewStore(b Backend, rng Range, maxParallelism int) *Store {
	return &Store{b: b, maxPar: maxParallelism, rng: rng}
}

// Backend returns the backend.
func (s *Store) Backend() Backend { return s.b }

// SetCurrentKey makes key (an encoded key, types.EncodeKey) the key that
// keyed state reads and writes. The key must belong to this subtask's key
// groups; a key routed to the wrong subtask is a bug of the exchange and
// panics. The bytes are copied.
func (s *Store) SetCurrentKey(key []byte) {
	g := KeyGroupOf(key, s.maxPar)
	if !s.rng.Contains(g) {
		panic(fmt.Sprintf("state: key %x of key group %d outside this subtask's groups %d..%d", key, g, s.rng.First, s.rng.Last))
	}
	s.curKey = append(s.curKey[:0], key...)
	s.curGroup = g
}

// CurrentKey returns the current key.
func (s *Store) CurrentKey() []byte { return s.curKey }

func (s *Store) namespace(g KeyGroup, kind byte, name string, key []byte) []byte {
	if len(name) == 0 || len(name) > 255 {
		panic(fmt.Sprintf("state: name %q must have 1..255 bytes", name))
	}
	ns := binary.BigEndian.AppendUint16(s.ns[:0], uint16(g))
	ns = append(ns, kind, byte(len(name)))
	ns = append(ns, name...)
	ns = append(ns, key...)
	s.ns = ns
	return ns
}

// Value is a single value per key.
type Value struct {
	s        *Store
	name     string
	operator bool
}

// Value returns the value state called name, per current key.
func (s *Store) Value(name string) Value { return Value{s: s, name: name} }

// OperatorValue returns the operator (non-keyed) value state called name.
func (s *Store) OperatorValue(name string) Value { return Value{s: s, name: name, operator: true} }

func (v Value) ns() []byte {
	if v.operator {
		return v.s.namespace(OperatorGroup, kindValue, v.name, nil)
	}
	return v.s.namespace(v.s.curGroup, kindValue, v.name, v.s.curKey)
}

// Get returns the value and whether it is set.
func (v Value) Get() ([]byte, bool, error) { return v.s.b.Get(v.ns(), nil) }

// Set sets the value.
func (v Value) Set(b []byte) error { return v.s.b.Set(v.ns(), nil, b) }

// Clear removes the value.
func (v Value) Clear() error { return v.s.b.Delete(v.ns(), nil) }

// Map is a map from user keys to values per key.
type Map struct {
	s    *Store
	name string
}

// Map returns the map state called name, per current key.
func (s *Store) Map(name string) Map { return Map{s: s, name: name} }

func (m Map) ns() []byte { return m.s.namespace(m.s.curGroup, kindMap, m.name, m.s.curKey) }

// Get returns the value of k and whether it is set.
func (m Map) Get(k []byte) ([]byte, bool, error) { return m.s.b.Get(m.ns(), k) }

// Put sets k to v.
func (m Map) Put(k, v []byte) error { return m.s.b.Set(m.ns(), k, v) }

// Delete removes k.
func (m Map) Delete(k []byte) error { return m.s.b.Delete(m.ns(), k) }

// Iterate calls fn for every entry in ascending key order.
func (m Map) Iterate(fn func(k, v []byte) error) error { return m.s.b.Iterate(m.ns(), fn) }

// Clear removes every entry.
func (m Map) Clear() error { return m.s.b.DeleteNamespace(m.ns()) }

// List is an append-only list of values per key, kept in insertion order.
type List struct {
	s    *Store
	name string
}

// List returns the list state called name, per current key.
func (s *Store) List(name string) List { return List{s: s, name: name} }

func (l List) ns() []byte { return l.s.namespace(l.s.curGroup, kindList, l.name, l.s.curKey) }

// lenKey is the user key of a list's length; elements have keys 8-byte
// big-endian indexes, which sort after it and in order.
var lenKey = []byte{}

// Add appends v.
func (l List) Add(v []byte) error {
	ns := l.ns()
	n, err := l.length(ns)
	if err != nil {
		return err
	}
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], n)
	if err := l.s.b.Set(ns, k[:], v); err != nil {
		return err
	}
	binary.BigEndian.PutUint64(k[:], n+1)
	return l.s.b.Set(ns, lenKey, k[:])
}

func (l List) length(ns []byte) (uint64, error) {
	b, ok, err := l.s.b.Get(ns, lenKey)
	if err != nil || !ok {
		return 0, err
	}
	if len(b) != 8 {
		return 0, fmt.Errorf("state: list %q length of %d bytes", l.name, len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

// Get returns the elements in insertion order (copies).
func (l List) Get() ([][]byte, error) {
	var out [][]byte
	err := l.s.b.Iterate(l.ns(), func(k, v []byte) error {
		if len(k) == 8 {
			out = append(out, append([]byte(nil), v...))
		}
		return nil
	})
	return out, err
}

// Clear removes every element.
func (l List) Clear() error { return l.s.b.DeleteNamespace(l.ns()) }
