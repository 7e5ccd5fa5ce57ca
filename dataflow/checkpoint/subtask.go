package checkpoint

import (
	"encoding/binary"
	"fmt"

	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/internal/base"
)

const subtaskVersion = 1

// SubtaskState is what one subtask stores for one checkpoint.
type SubtaskState struct {
	// Handle is the state backend's snapshot handle.
	Handle []byte
	// Align is the barrier handler's AlignState at the snapshot.
	Align barrier.AlignState
	// Channels is the encoded channel state (chanstate.Append), empty for
	// an aligned checkpoint.
	Channels []byte
}

// Encode returns the payload of a subtask state file (format.md).
func (s *SubtaskState) Encode() []byte {
	b := []byte{subtaskVersion}
	b = binary.AppendUvarint(b, uint64(len(s.Handle)))
	b = append(b, s.Handle...)
	b = binary.AppendUvarint(b, uint64(s.Align.LastEpoch))
	b = binary.AppendUvarint(b, uint64(s.Align.PendingEpoch))
	b = binary.AppendUvarint(b, uint64(len(s.Align.Arrived)))
	for _, ch := range s.Align.Arrived {
		b = binary.AppendUvarint(b, uint64(ch))
	}
	b = binary.AppendUvarint(b, uint64(len(s.Channels)))
	return append(b, s.Channels...)
}

// DecodeSubtaskState decodes a payload written by Encode. Errors wrap
// base.ErrCorruption.
func DecodeSubtaskState(b []byte) (*SubtaskState, error) {
	bad := func(what string) error {
		return fmt.Errorf("subtask state: %s: %w", what, base.ErrCorruption)
	}
	if len(b) < 1 || b[0] != subtaskVersion {
		return nil, bad("missing or unknown version")
	}
	b = b[1:]
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	bytesOf := func() ([]byte, bool) {
		n, ok := uv()
		if !ok || n > uint64(len(b)) {
			return nil, false
		}
		out := b[:n:n]
		b = b[n:]
		return out, true
	}
	s := &SubtaskState{}
	var ok bool
	if s.Handle, ok = bytesOf(); !ok {
		return nil, bad("handle")
	}
	last, ok1 := uv()
	pending, ok2 := uv()
	n, ok3 := uv()
	if !ok1 || !ok2 || !ok3 || n > uint64(len(b)) {
		return nil, bad("align state")
	}
	s.Align.LastEpoch, s.Align.PendingEpoch = base.Epoch(last), base.Epoch(pending)
	for range n {
		ch, ok := uv()
		if !ok {
			return nil, bad("align state channel")
		}
		s.Align.Arrived = append(s.Align.Arrived, int(ch))
	}
	if s.Channels, ok = bytesOf(); !ok {
		return nil, bad("channel state")
	}
	if len(b) != 0 {
		return nil, bad(fmt.Sprintf("%d trailing bytes", len(b)))
	}
	return s, nil
}
