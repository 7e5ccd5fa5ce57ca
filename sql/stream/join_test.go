package stream

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"

	"github.com/stratadb/strata/internal/types"
)

// TestAppendJoinedIsAppendRow: the joined row's encoding spliced from both
// sides' encodings is byte for byte AppendRow of the joined row, for any
// widths (NULL bitmaps crossing byte boundaries), any NULLs, and a side
// encoded with fewer columns than its width (written before columns were
// added), whose missing columns are NULL.
func TestAppendJoinedIsAppendRow(t *testing.T) {
	pool := []types.Type{types.Int64, types.Text, types.Float64, types.Bool, types.Timestamp}
	value := func(t *rapid.T, ty types.Type) types.Datum {
		if rapid.IntRange(0, 3).Draw(t, "null") == 0 {
			return types.Null
		}
		switch ty.Kind {
		case types.KindInt64:
			return types.NewInt64(rapid.Int64().Draw(t, "i"))
		case types.KindText:
			return types.NewText(rapid.String().Draw(t, "s"))
		case types.KindFloat64:
			return types.NewFloat64(rapid.Float64().Draw(t, "f"))
		case types.KindBool:
			return types.NewBool(rapid.Bool().Draw(t, "b"))
		}
		return types.NewTimestamp(rapid.Int64Range(-1e15, 1e15).Draw(t, "ts"))
	}
	side := func(t *rapid.T, name string) (ts []types.Type, row types.Row, enc []byte) {
		n := rapid.IntRange(0, 12).Draw(t, name+" width")
		for range n {
			ty := rapid.SampledFrom(pool).Draw(t, name+" type")
			ts = append(ts, ty)
			row = append(row, value(t, ty))
		}
		written := rapid.IntRange(0, n).Draw(t, name+" written")
		if rapid.Bool().Draw(t, name+" full") {
			written = n
		}
		for i := written; i < n; i++ {
			row[i] = types.Null
		}
		return ts, row, types.AppendRow(nil, row[:written], ts[:written])
	}
	rapid.Check(t, func(t *rapid.T) {
		lt, lrow, lenc := side(t, "left")
		rt, rrow, renc := side(t, "right")
		got, err := appendJoined([]byte("prefix"), lenc, renc, len(lt), len(rt))
		if err != nil {
			t.Fatal(err)
		}
		want := types.AppendRow([]byte("prefix"), append(append(types.Row(nil), lrow...), rrow...), append(append([]types.Type(nil), lt...), rt...))
		if !bytes.Equal(got, want) {
			t.Fatalf("spliced %x, AppendRow %x", got, want)
		}
	})
	if _, err := appendJoined(nil, []byte{9}, types.AppendRow(nil, nil, nil), 0, 0); err == nil {
		t.Fatal("a bad row version was accepted")
	}
	if _, err := appendJoined(nil, types.AppendRow(nil, types.Row{types.NewInt64(1)}, []types.Type{types.Int64}), types.AppendRow(nil, nil, nil), 0, 0); err == nil {
		t.Fatal("a row wider than its side was accepted")
	}
}
