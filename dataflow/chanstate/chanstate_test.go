package chanstate

import (
	"errors"
	"testing"

	"github.com/stratadb/strata/dataflow/message"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

func TestRoundTrip(t *testing.T) {
	c := types.NewChunk([]types.Type{types.Int64, types.Text}, 2)
	c.Append(types.Insert, types.Row{types.NewInt64(1), types.NewText("a")})
	c.Append(types.Delete, types.Row{types.NewInt64(2), types.Null})
	in := [][]message.Message{
		{message.Chunk(c), message.EpochBarrier(4), message.Watermark(-5)},
		nil,
		{message.Watermark(1 << 40)},
	}
	b := Append(nil, in)
	out, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 || len(out[0]) != 3 || len(out[1]) != 0 || len(out[2]) != 1 {
		t.Fatalf("shape = %v", out)
	}
	if got := out[0][0].Chunk.String(); got != c.String() {
		t.Fatalf("chunk = %q, want %q", got, c.String())
	}
	if out[0][1].Epoch != 4 || out[0][2].Watermark != -5 || out[2][0].Watermark != 1<<40 {
		t.Fatalf("control messages = %v %v", out[0], out[2])
	}
	for i := range len(b) {
		if _, err := Decode(b[:i]); !errors.Is(err, base.ErrCorruption) {
			t.Fatalf("truncated at %d: %v", i, err)
		}
	}
}
