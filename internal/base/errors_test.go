package base

import (
	"errors"
	"fmt"
	"testing"
)

func TestNarrowErrorsMatchBroad(t *testing.T) {
	for _, tc := range []struct {
		err           error
		narrow, broad error
	}{
		{fmt.Errorf("file x: %w", ErrChecksum), ErrChecksum, ErrCorruption},
		{fmt.Errorf("column c: %w", ErrOutOfRange), ErrOutOfRange, ErrInvalidArgument},
	} {
		if !errors.Is(tc.err, tc.narrow) || !errors.Is(tc.err, tc.broad) {
			t.Errorf("%v: want both %v and %v to match", tc.err, tc.narrow, tc.broad)
		}
	}
	if errors.Is(fmt.Errorf("x: %w", ErrCorruption), ErrChecksum) {
		t.Error("a broad marker must not match a narrow one")
	}
}

func TestEpochNext(t *testing.T) {
	if got := Epoch(41).Next(); got != 42 {
		t.Fatalf("Next = %d, want 42", got)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Next at max did not panic")
		}
	}()
	_ = (^Epoch(0)).Next()
}
