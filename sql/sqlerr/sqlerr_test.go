package sqlerr

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stratadb/strata/internal/base"
)

func TestCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, SuccessfulCompletion},
		{New(DivisionByZero, "division by zero"), DivisionByZero},
		{fmt.Errorf("ctx: %w", New(UndefinedColumn, "column %q does not exist", "x")), UndefinedColumn},
		{fmt.Errorf("x: %w", base.ErrOutOfRange), NumericValueOutOfRange},
		{fmt.Errorf("x: %w", base.ErrInvalidArgument), InvalidTextRepresentation},
		{fmt.Errorf("x: %w", base.ErrChecksum), DataCorrupted},
		{errors.New("boom"), InternalError},
	} {
		if got := Code(tc.err); got != tc.want {
			t.Errorf("Code(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
}

func TestWrapKeepsCause(t *testing.T) {
	cause := fmt.Errorf("value 1e99: %w", base.ErrOutOfRange)
	e := Wrap(NumericValueOutOfRange, cause).WithPosition(7)
	if !errors.Is(e, base.ErrOutOfRange) || e.Position != 7 || e.Message != cause.Error() {
		t.Fatalf("Wrap lost something: %+v", e)
	}
	if From(e) != e {
		t.Fatal("From of an *Error must return it")
	}
	if got := From(cause); got.Code != NumericValueOutOfRange {
		t.Fatalf("From(cause).Code = %s", got.Code)
	}
}

type codedErr struct{}

func (codedErr) Error() string     { return "value too long for type character varying(3)" }
func (codedErr) SQLState() string  { return StringDataRightTruncation }
func (codedErr) SQLDetail() string { return "detail" }

func TestCodeFromCodedError(t *testing.T) {
	err := fmt.Errorf("column x: %w", codedErr{})
	if Code(err) != StringDataRightTruncation {
		t.Fatalf("Code = %s", Code(err))
	}
	if e := From(err); e.Code != StringDataRightTruncation || e.Detail != "detail" {
		t.Fatalf("From = %+v", e)
	}
}
