package heap

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/internal/base"
)

const formatVersion = 1

// Backend is the heap state backend. The zero value is not usable; call
// New or Restore.
type Backend struct {
	m map[string]map[string][]byte
	// lastSize is the size of the last snapshot, the next one's guess.
	lastSize int
}

func (b *Backend) sizeHint() int { return b.lastSize + b.lastSize/8 + 64 }

var _ state.Backend = (*Backend)(nil)

// New returns an empty backend.
func New() *Backend { return &Backend{m: map[string]map[string][]byte{}} }

// Get implements state.Backend.
func (b *Backend) Get(ns, key []byte) ([]byte, bool, error) {
	v, ok := b.m[string(ns)][string(key)]
	return v, ok, nil
}

// Set implements state.Backend.
func (b *Backend) Set(ns, key, value []byte) error {
	inner, ok := b.m[string(ns)]
	if !ok {
		inner = map[string][]byte{}
		b.m[string(ns)] = inner
	}
	inner[string(key)] = append([]byte(nil), value...)
	return nil
}

// Delete implements state.Backend.
func (b *Backend) Delete(ns, key []byte) error {
	inner, ok := b.m[string(ns)]
	if !ok {
		return nil
	}
	delete(inner, string(key))
	if len(inner) == 0 {
		delete(b.m, string(ns))
	}
	return nil
}

// Iterate implements state.Backend.
func (b *Backend) Iterate(ns []byte, fn func(key, value []byte) error) error {
	inner := b.m[string(ns)]
	keys := make([]string, 0, len(inner))
	for k := range inner {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := fn([]byte(k), inner[k]); err != nil {
			return err
		}
	}
	return nil
}

// DeleteNamespace implements state.Backend.
func (b *Backend) DeleteNamespace(ns []byte) error {
	delete(b.m, string(ns))
	return nil
}

// Snapshot implements state.Backend: the handle is the whole state.
func (b *Backend) Snapshot(_ base.CheckpointID, _ state.SnapshotFiles) (state.Snapshot, error) {
	out := make([]byte, 0, b.sizeHint())
	out = append(out, formatVersion)
	out = binary.AppendUvarint(out, uint64(len(b.m)))
	for ns, inner := range b.m {
		out = binary.AppendUvarint(out, uint64(len(ns)))
		out = append(out, ns...)
		out = binary.AppendUvarint(out, uint64(len(inner)))
		for k, v := range inner {
			out = binary.AppendUvarint(out, uint64(len(k)))
			out = append(out, k...)
			out = binary.AppendUvarint(out, uint64(len(v)))
			out = append(out, v...)
		}
	}
	b.lastSize = len(out)
	return state.Snapshot{Handle: out}, nil
}

// Restore rebuilds a backend from a handle written by Snapshot. A damaged
// handle gives an error wrapping base.ErrCorruption.
func Restore(handle []byte, _ state.SnapshotFiles) (*Backend, error) {
	bad := func(what string) error {
		return fmt.Errorf("heap state handle: %s: %w", what, base.ErrCorruption)
	}
	if len(handle) < 1 || handle[0] != formatVersion {
		return nil, bad("missing or unknown version")
	}
	p := handle[1:]
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, false
		}
		p = p[n:]
		return v, true
	}
	bytesOf := func() ([]byte, bool) {
		n, ok := uv()
		if !ok || n > uint64(len(p)) {
			return nil, false
		}
		out := p[:n]
		p = p[n:]
		return out, true
	}
	b := New()
	nns, ok := uv()
	if !ok {
		return nil, bad("namespace count")
	}
	for range nns {
		ns, ok := bytesOf()
		if !ok {
			return nil, bad("namespace")
		}
		n, ok := uv()
		if !ok || n > uint64(len(p)) {
			return nil, bad("entry count")
		}
		inner := make(map[string][]byte, n)
		for range n {
			k, ok1 := bytesOf()
			v, ok2 := bytesOf()
			if !ok1 || !ok2 {
				return nil, bad("entry")
			}
			inner[string(k)] = append([]byte(nil), v...)
		}
		b.m[string(ns)] = inner
	}
	if len(p) != 0 {
		return nil, bad(fmt.Sprintf("%d trailing bytes", len(p)))
	}
	return b, nil
}

// Close implements state.Backend.
func (b *Backend) Close() error { return nil }
