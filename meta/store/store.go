package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sync"

	"github.com/stratadb/strata/internal/base"
)

// Store is a key-value map applied in atomic batches. Implementations are
// safe for concurrent use.
type Store interface {
	// Load returns every key and value. Values are checked (invariant
	// store-checked-reads).
	Load(ctx context.Context) (map[string][]byte, error)
	// Apply writes b atomically: all of it or none. When Apply returns nil
	// the batch is durable.
	Apply(ctx context.Context, b Batch) error
	// Close releases the store.
	Close() error
}

// Batch is a set of puts and deletes applied together. A key both put and
// deleted is put.
type Batch struct {
	Puts    map[string][]byte
	Deletes []string
}

// Put adds a put to the batch.
func (b *Batch) Put(key string, value []byte) {
	if b.Puts == nil {
		b.Puts = map[string][]byte{}
	}
	b.Puts[key] = value
}

// Delete adds a delete to the batch.
func (b *Batch) Delete(key string) { b.Deletes = append(b.Deletes, key) }

// Empty reports whether the batch does nothing.
func (b *Batch) Empty() bool { return len(b.Puts) == 0 && len(b.Deletes) == 0 }

// EnvelopeVersion is the format byte of the value envelope (FORMAT.md).
const EnvelopeVersion = 1

const envelopeHeader = 5

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Seal wraps a payload in the envelope: format byte, CRC-32C (big endian),
// payload.
func Seal(payload []byte) []byte {
	out := make([]byte, envelopeHeader, envelopeHeader+len(payload))
	out[0] = EnvelopeVersion
	binary.BigEndian.PutUint32(out[1:5], crc32.Checksum(payload, castagnoli))
	return append(out, payload...)
}

// Open checks an envelope and returns its payload. The error names key and
// wraps base.ErrChecksum (payload does not match) or base.ErrCorruption
// (short, or an unknown format).
func Open(key string, sealed []byte) ([]byte, error) {
	if len(sealed) < envelopeHeader {
		return nil, fmt.Errorf("meta store key %q: value of %d bytes is shorter than its %d-byte envelope: %w", key, len(sealed), envelopeHeader, base.ErrCorruption)
	}
	if sealed[0] != EnvelopeVersion {
		return nil, fmt.Errorf("meta store key %q: envelope format %d, this build reads %d: %w", key, sealed[0], EnvelopeVersion, base.ErrCorruption)
	}
	payload := sealed[envelopeHeader:]
	if want, got := binary.BigEndian.Uint32(sealed[1:5]), crc32.Checksum(payload, castagnoli); want != got {
		return nil, fmt.Errorf("meta store key %q: checksum %08x, recorded %08x: %w", key, got, want, base.ErrChecksum)
	}
	return payload, nil
}

// Memory is an in-memory Store for tests. Its content outlives a service
// that uses it, so a second service opened on the same Memory models a
// restart. Closing it only makes later calls fail; Reopen makes it usable
// again.
type Memory struct {
	mu struct {
		sync.Mutex
		data   map[string][]byte // guarded by mu; sealed values
		closed bool              // guarded by mu
		fail   error             // guarded by mu; injected Apply failure
	}
}

// NewMemory returns an empty Memory store.
func NewMemory() *Memory {
	m := &Memory{}
	m.mu.data = map[string][]byte{}
	return m
}

// Load returns a copy of the content.
func (m *Memory) Load(context.Context) (map[string][]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return nil, fmt.Errorf("memory meta store: %w", base.ErrClosed)
	}
	out := make(map[string][]byte, len(m.mu.data))
	for k, v := range m.mu.data {
		p, err := Open(k, v)
		if err != nil {
			return nil, err
		}
		out[k] = p
	}
	return out, nil
}

// Apply applies b.
func (m *Memory) Apply(_ context.Context, b Batch) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		return fmt.Errorf("memory meta store: %w", base.ErrClosed)
	}
	if m.mu.fail != nil {
		return m.mu.fail
	}
	for _, k := range b.Deletes {
		delete(m.mu.data, k)
	}
	for k, v := range b.Puts {
		m.mu.data[k] = Seal(v)
	}
	return nil
}

// FailApply makes every later Apply return err (nil to stop).
func (m *Memory) FailApply(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.fail = err
}

// Close makes later calls fail with base.ErrClosed.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.closed = true
	return nil
}

// Reopen undoes Close, as reopening a file would.
func (m *Memory) Reopen() *Memory {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.closed = false
	return m
}
