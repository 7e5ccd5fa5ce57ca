package datagen

import (
	"maps"
	"strconv"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// TestDefaultSeed pins what options without a seed generate, which every
// relation created before CREATE chose seeds goes on generating: the
// values of seed 0, here a BIGINT column's first rows as such a table
// stored them.
func TestDefaultSeed(t *testing.T) {
	cols := []catalog.Column{{Name: "id", Type: types.Int64}}
	read := func(opts map[string]string) []types.Row {
		t.Helper()
		r, err := Open(cols, opts)
		if err != nil {
			t.Fatal(err)
		}
		return readAll(t, r, 0)
	}
	none := read(map[string]string{"rows-per-second": "0", "number-of-rows": "3"})
	want := []int64{47461994047746694, 7075712310021170425, 5644142584277115817}
	if len(none) != len(want) {
		t.Fatalf("%d rows, want %d", len(none), len(want))
	}
	for i, w := range want {
		if got := none[i][0].Int64(); got != w {
			t.Fatalf("row %d without a seed: id %d, want %d (seed %d's)", i, got, w, DefaultSeed)
		}
	}
	zero := read(map[string]string{"rows-per-second": "0", "number-of-rows": "3", "seed": "0"})
	if !rowsEqual(none, zero) {
		t.Fatalf("no seed gives %v, seed '0' gives %v", none, zero)
	}
	if one := read(map[string]string{"rows-per-second": "0", "number-of-rows": "3", "seed": "1"}); rowsEqual(none, one) {
		t.Fatalf("seed '1' gives the default seed's rows %v", one)
	}
}

// TestWithSeed: options with a seed come back as they are (the same
// map), options without one come back as a copy with the given seed, and
// the caller's map is never changed.
func TestWithSeed(t *testing.T) {
	for _, c := range []struct {
		name string
		opts map[string]string
		seed uint64
		want map[string]string
		same bool
	}{
		{"explicit seed kept", map[string]string{"connector": "datagen", "seed": "7"}, 99,
			map[string]string{"connector": "datagen", "seed": "7"}, true},
		{"explicit seed 0 kept", map[string]string{"seed": "0"}, 99, map[string]string{"seed": "0"}, true},
		{"bad seed kept for ParseOptions to refuse", map[string]string{"seed": "x"}, 99, map[string]string{"seed": "x"}, true},
		{"no seed", map[string]string{"connector": "datagen", "number-of-rows": "5"}, 18446744073709551615,
			map[string]string{"connector": "datagen", "number-of-rows": "5", "seed": "18446744073709551615"}, false},
		{"no options", nil, 42, map[string]string{"seed": "42"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := maps.Clone(c.opts)
			got := WithSeed(c.opts, c.seed)
			if !maps.Equal(got, c.want) {
				t.Fatalf("WithSeed(%v, %d) = %v, want %v", c.opts, c.seed, got, c.want)
			}
			if !maps.Equal(c.opts, before) {
				t.Fatalf("WithSeed changed its argument to %v", c.opts)
			}
			if c.opts != nil {
				got["probe"] = "x"
				_, shared := c.opts["probe"]
				if shared != c.same {
					t.Fatalf("result shares the argument's map: %v, want %v", shared, c.same)
				}
			}
		})
	}
	// The stored seed makes the rows: a Reader of WithSeed's options
	// gives seed 12345's rows.
	cols := []catalog.Column{{Name: "id", Type: types.Int64}, {Name: "name", Type: types.Text}}
	base := map[string]string{"rows-per-second": "0", "number-of-rows": "50", "fields.name.length": "6"}
	open := func(opts map[string]string) []types.Row {
		t.Helper()
		r, err := Open(cols, opts)
		if err != nil {
			t.Fatal(err)
		}
		return readAll(t, r, 0)
	}
	chosen := open(WithSeed(base, 12345))
	explicit := maps.Clone(base)
	explicit["seed"] = strconv.FormatUint(12345, 10)
	if want := open(explicit); len(chosen) != 50 || !rowsEqual(chosen, want) {
		t.Fatalf("rows of WithSeed(opts, 12345) differ from seed '12345''s")
	}
	if def := open(base); rowsEqual(chosen, def) {
		t.Fatal("rows of WithSeed(opts, 12345) equal the default seed's")
	}
}
