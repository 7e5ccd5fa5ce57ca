package stream

import (
	"encoding/binary"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/agg"
)

// TestGroupStateRoundTrip: a group's state keeps its emitted row through
// encodeGroup and decodeGroup, as its results only when the key has one
// spelling (flag 2) and whole when it has several (flag 1); state of
// version 2, which always wrote the whole row, still loads.
func TestGroupStateRoundTrip(t *testing.T) {
	for _, keyTypes := range [][]types.Type{{types.Int64, types.Text}, {types.Numeric}, {}} {
		g := &GroupAgg{KeyTypes: keyTypes, Aggs: []AggCall{{Spec: agg.Spec{Func: "count"}, FilterCol: -1}}}
		var err error
		if g.outT, err = g.OutputTypes(); err != nil {
			t.Fatal(err)
		}
		for _, k := range keyTypes {
			g.spelled = g.spelled || severalSpellings(k.Kind)
		}
		keys := make(types.Row, len(keyTypes))
		for i, k := range keyTypes {
			switch k.Kind {
			case types.KindInt64:
				keys[i] = types.NewInt64(42)
			case types.KindText:
				keys[i] = types.NewText("x")
			default:
				keys[i] = types.NewFloat64(0) // replaced below
			}
		}
		if g.spelled {
			keys = types.Row{mustNumeric(t, "2.50")}
		}
		accs, err := g.newAccs()
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := accs[0].Add(nil); err != nil {
				t.Fatal(err)
			}
		}
		emitted := append(keys.Copy(), types.NewInt64(3))
		gr := &group{keys: keys, rows: 3, accs: accs, emitted: emitted}
		if g.spelled {
			gr.spellings = []spelling{{exact: string(types.AppendRow(nil, keys, keyTypes)), row: keys, n: 3}}
		}
		v2 := binary.AppendVarint([]byte{stateVersionV2}, 3)
		v2 = types.AppendRow(v2, keys, keyTypes)
		if g.spelled {
			v2 = binary.AppendVarint(binary.AppendUvarint(v2, 1), 3)
			v2 = types.AppendRow(v2, keys, keyTypes)
		}
		v2 = types.AppendRow(append(v2, 1), emitted, g.outT)
		st := accs[0].AppendState(nil)
		v2 = append(binary.AppendUvarint(v2, uint64(len(st))), st...)
		for _, b := range [][]byte{g.encodeGroup(gr), v2} {
			fresh, _ := g.newAccs()
			back := &group{accs: fresh}
			if err := g.decodeGroup(back, b); err != nil {
				t.Fatalf("keys %v: %v", keyTypes, err)
			}
			if back.emitted.String() != emitted.String() || back.rows != 3 || back.keys.String() != keys.String() {
				t.Fatalf("keys %v: decoded emitted %v rows %d keys %v, want %v 3 %v", keyTypes, back.emitted, back.rows, back.keys, emitted, keys)
			}
			if res, _ := back.accs[0].Result(); res.String() != "3" {
				t.Fatalf("keys %v: count %s", keyTypes, res)
			}
		}
		if enc := g.encodeGroup(gr); len(keyTypes) > 0 && !g.spelled && len(enc) >= len(v2) {
			t.Fatalf("keys %v: version 3 state (%d bytes) is not smaller than version 2 (%d)", keyTypes, len(enc), len(v2))
		}
	}
}

func mustNumeric(t *testing.T, s string) types.Datum {
	t.Helper()
	d, _, err := apd.NewFromString(s)
	if err != nil {
		t.Fatal(err)
	}
	return types.NewNumeric(d)
}
