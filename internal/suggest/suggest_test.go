package suggest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stratadb/strata/internal/base"
)

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"auctoin", "auction", 1},
		{"prot", "port", 1},
		{"ca", "abc", 3},
		{"rows-per-secnd", "rows-per-second", 1},
		{"hostnme", "hostname", 1},
		{"kitten", "sitting", 3},
		{"été", "ete", 2},
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestNearest(t *testing.T) {
	datagen := []string{"connector", "rows-per-second", "number-of-rows", "seed"}
	cdc := []string{"connector", "hostname", "port", "username", "password", "database.name", "slot.name", "publication.name"}
	for _, tc := range []struct {
		name  string
		known []string
		want  string
	}{
		{"rows-per-secnd", datagen, "rows-per-second"},
		{"row-per-second", datagen, "rows-per-second"},
		{"Rows-Per-Second", datagen, "rows-per-second"},
		{"numer-of-rows", datagen, "number-of-rows"},
		{"rows", datagen, "rows-per-second"}, // the start of one option
		{"sed", datagen, "seed"},
		{"hostnme", cdc, "hostname"},
		{"prot", cdc, "port"},
		{"slot", cdc, "slot.name"},
		{"database", cdc, "database.name"},
		{"colour", datagen, ""},
		{"x", datagen, ""},    // one character: anything is two edits away
		{"seed", datagen, ""}, // known: nothing to suggest
		{"ab", []string{"ac", "ad"}, ""},
		{"abcd", []string{"abce", "abcf"}, ""}, // a tie suggests nothing
		{"abc", []string{"abcx", "abcy"}, ""},  // so does the start of two
	} {
		if got := Nearest(tc.name, tc.known); got != tc.want {
			t.Errorf("Nearest(%q, %v) = %q, want %q", tc.name, tc.known, got, tc.want)
		}
	}
}

func TestUnknownOption(t *testing.T) {
	err := UnknownOption("datagen: ", "rows-per-secnd", []string{"connector", "rows-per-second", "fields.<column>.<kind|start>"})
	if got, want := err.Error(), `datagen: unknown option "rows-per-secnd" (known: connector, rows-per-second, fields.<column>.<kind|start>)`; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if got, want := err.SQLHint(), `Perhaps you meant the option "rows-per-second".`; got != want {
		t.Errorf("hint %q, want %q", got, want)
	}
	var wrapped error = fmt.Errorf("table t: %w", err)
	if !errors.Is(wrapped, base.ErrInvalidArgument) {
		t.Error("the refusal does not wrap base.ErrInvalidArgument")
	}
	var h interface{ SQLHint() string }
	if !errors.As(wrapped, &h) || h.SQLHint() == "" {
		t.Error("the hint is not found through a wrapping error")
	}
	if got := UnknownOption("", "colour", []string{"connector", "path"}).SQLHint(); got != "" {
		t.Errorf("hint for an option near none: %q, want none", got)
	}
	if got := UnknownOption("", "buckt", []string{"path"}, "bucket").Suggestion; got != "bucket" {
		t.Errorf("suggestion among the options not listed: %q, want bucket", got)
	}
	if got := UnknownOption("", "fields.x.kind", []string{"fields.<column>.<kind>"}).Suggestion; got != "" {
		t.Errorf("a pattern was suggested: %q", got)
	}
}

func TestWithHint(t *testing.T) {
	base := errors.New("bad")
	if WithHint(base, "") != base {
		t.Error("WithHint with no hint changed the error")
	}
	err := WithHint(base, "try this")
	var h interface{ SQLHint() string }
	if err.Error() != "bad" || !errors.Is(err, base) || !errors.As(err, &h) || h.SQLHint() != "try this" {
		t.Errorf("WithHint: %v", err)
	}
}

// Levenshtein counts a swap of neighbours as two edits, unlike Distance.
func TestLevenshtein(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "abc", 3}, {"nme", "name", 1}, {"kitten", "sitting", 3}, {"éa", "ea", 1}, {"same", "same", 0}, {"auctoin", "auction", 2}} {
		if got := Levenshtein(c.a, c.b); got != c.d {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
