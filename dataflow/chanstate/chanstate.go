package chanstate

import (
	"encoding/binary"
	"fmt"

	"github.com/stratadb/strata/dataflow/message"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// Version is the first byte of encoded channel state.
const Version = 1

const (
	tagChunk     = 1
	tagWatermark = 2
	tagEpoch     = 3
)

// Append appends the encoding of channels (per input channel, its messages
// oldest first) to dst. A checkpoint barrier or end of stream among the
// messages panics: the driver never records them.
func Append(dst []byte, channels [][]message.Message) []byte {
	dst = append(dst, Version)
	dst = binary.AppendUvarint(dst, uint64(len(channels)))
	for _, msgs := range channels {
		dst = binary.AppendUvarint(dst, uint64(len(msgs)))
		for _, m := range msgs {
			switch m.Kind {
			case message.KindChunk:
				dst = append(dst, tagChunk)
				dst = types.AppendChunk(dst, m.Chunk)
			case message.KindWatermark:
				dst = append(dst, tagWatermark)
				dst = binary.AppendVarint(dst, m.Watermark)
			case message.KindEpochBarrier:
				dst = append(dst, tagEpoch)
				dst = binary.AppendUvarint(dst, uint64(m.Epoch))
			default:
				panic(fmt.Sprintf("chanstate: %s is never channel state", m))
			}
		}
	}
	return dst
}

// Decode decodes channel state written by Append. Errors wrap
// base.ErrCorruption.
func Decode(b []byte) ([][]message.Message, error) {
	bad := func(what string) error {
		return fmt.Errorf("channel state: %s: %w", what, base.ErrCorruption)
	}
	if len(b) < 1 || b[0] != Version {
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
	nch, ok := uv()
	if !ok || nch > uint64(len(b))+1 {
		return nil, bad("channel count")
	}
	out := make([][]message.Message, nch)
	for ch := range out {
		n, ok := uv()
		if !ok || n > uint64(len(b)) {
			return nil, bad(fmt.Sprintf("channel %d message count", ch))
		}
		for range n {
			if len(b) == 0 {
				return nil, bad(fmt.Sprintf("channel %d truncated", ch))
			}
			tag := b[0]
			b = b[1:]
			switch tag {
			case tagChunk:
				c, rest, err := types.DecodeChunk(b)
				if err != nil {
					return nil, fmt.Errorf("channel state: channel %d: %w", ch, err)
				}
				b = rest
				out[ch] = append(out[ch], message.Chunk(c))
			case tagWatermark:
				v, k := binary.Varint(b)
				if k <= 0 {
					return nil, bad("watermark")
				}
				b = b[k:]
				out[ch] = append(out[ch], message.Watermark(v))
			case tagEpoch:
				v, ok := uv()
				if !ok {
					return nil, bad("epoch")
				}
				out[ch] = append(out[ch], message.EpochBarrier(base.Epoch(v)))
			default:
				return nil, bad(fmt.Sprintf("message tag %d", tag))
			}
		}
	}
	if len(b) != 0 {
		return nil, bad(fmt.Sprintf("%d trailing bytes", len(b)))
	}
	return out, nil
}
