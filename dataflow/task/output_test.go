package task

import (
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/types"
)

// TestSelectRowsMatchesChunkSelect: the exchange's fast row selection
// gives what Chunk.Select gives, for every representation of a column.
func TestSelectRowsMatchesChunkSelect(t *testing.T) {
	ts := []types.Type{types.Int64, types.Text, types.Float64, types.Numeric, types.Interval, types.Bool}
	c := types.NewChunk(ts, 4)
	for i := range 5 {
		row := types.Row{types.NewInt64(int64(i)), types.NewText(string(rune('a' + i))), types.NewFloat64(float64(i) / 2),
			types.NewNumeric(apd.New(int64(i), -1)), types.NewInterval(types.IntervalValue{Months: int32(i), Days: 1, Micros: int64(i)}), types.NewBool(i%2 == 0)}
		if i == 3 {
			row = types.Row{types.Null, types.Null, types.Null, types.Null, types.Null, types.Null}
		}
		c.Append(types.RowKind(i%4), row)
	}
	sel := []int{4, 0, 3, 3, 1}
	if got, want := selectRows(c, sel).String(), c.Select(sel).String(); got != want {
		t.Fatalf("selectRows:\n%s\nChunk.Select:\n%s", got, want)
	}
}
