package sqlerr

import (
	"errors"
	"fmt"

	"github.com/stratadb/strata/internal/base"
)

// SQLSTATE codes Strata uses (PostgreSQL Appendix A, errcodes.txt).
const (
	SuccessfulCompletion         = "00000"
	FeatureNotSupported          = "0A000"
	CardinalityViolation         = "21000"
	DataException                = "22000"
	StringDataRightTruncation    = "22001"
	NumericValueOutOfRange       = "22003"
	NullValueNotAllowed          = "22004"
	InvalidDatetimeFormat        = "22007"
	DatetimeFieldOverflow        = "22008"
	InvalidTimeZoneDisplacement  = "22009"
	DivisionByZero               = "22012"
	InvalidParameterValue        = "22023"
	InvalidRegularExpression     = "2201B"
	InvalidTextRepresentation    = "22P02"
	InvalidEscapeSequence        = "22025"
	InvalidJSONText              = "22032"
	IntegrityConstraintViolation = "23000"
	NotNullViolation             = "23502"
	UniqueViolation              = "23505"
	InvalidCursorState           = "24000"
	UnableToConnect              = "08001" // sqlclient_unable_to_establish_sqlconnection, as postgres_fdw reports a remote it cannot reach
	ProtocolViolation            = "08P01"
	InvalidTransactionState      = "25000"
	InvalidSQLStatementName      = "26000"
	InvalidAuthorization         = "28000"
	InvalidPassword              = "28P01"
	InvalidCatalogName           = "3D000"
	InvalidSchemaName            = "3F000"
	SerializationFailure         = "40001"
	SyntaxError                  = "42601"
	InsufficientPrivilege        = "42501"
	DatatypeMismatch             = "42804"
	WrongObjectType              = "42809"
	UndefinedColumn              = "42703"
	UndefinedFunction            = "42883"
	UndefinedTable               = "42P01"
	UndefinedObject              = "42704"
	DuplicateColumn              = "42701"
	DuplicateTable               = "42P07"
	DuplicateObject              = "42710"
	AmbiguousColumn              = "42702"
	AmbiguousFunction            = "42725"
	IndeterminateDatatype        = "42P18"
	GroupingError                = "42803"
	InvalidColumnReference       = "42P10"
	InvalidObjectDefinition      = "42P17"
	InvalidTableDefinition       = "42P16"
	InvalidColumnDefinition      = "42611"
	NameTooLong                  = "42622"
	DependentObjectsStillExist   = "2BP01"
	ProgramLimitExceeded         = "54000"
	ObjectNotInPrerequisiteState = "55000"
	QueryCanceled                = "57014"
	AdminShutdown                = "57P01"
	IOError                      = "58030"
	InternalError                = "XX000"
	DataCorrupted                = "XX001"
)

// Error is a SQL error: SQLSTATE code, message, and the 1-based character
// position in the statement it refers to (0: none). It may wrap a cause.
type Error struct {
	Code     string
	Message  string
	Position int
	Detail   string
	Hint     string
	cause    error
}

// Error returns the message (Postgres clients show the code apart).
func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause, so errors.Is sees base markers through it.
func (e *Error) Unwrap() error { return e.cause }

// New returns an Error with code and a formatted message.
func New(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an Error with code whose message is err's; errors.Is and
// errors.As see err through it. Its hint is that of an error in err's
// chain with a SQLHint() string method (a connector's refusal of an
// unknown option, internal/suggest), which cannot import this package.
func Wrap(code string, err error) *Error {
	w := &Error{Code: code, Message: err.Error(), cause: err}
	var hinted interface{ SQLHint() string }
	if errors.As(err, &hinted) {
		w.Hint = hinted.SQLHint()
	}
	return w
}

// WithPosition returns a copy of e at 1-based character position pos.
func (e *Error) WithPosition(pos int) *Error {
	c := *e
	c.Position = pos
	return &c
}

// Code returns the SQLSTATE of err: the code of the outermost *Error in its
// chain, else that of an error in the chain with a SQLState() string
// method (as types.ValueError has), else one derived from base markers,
// else XX000 internal_error.
// A nil error is 00000.
func Code(err error) string {
	if err == nil {
		return SuccessfulCompletion
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	var coded interface{ SQLState() string }
	if errors.As(err, &coded) {
		return coded.SQLState()
	}
	switch {
	case errors.Is(err, base.ErrOutOfRange):
		return NumericValueOutOfRange
	case errors.Is(err, base.ErrInvalidArgument):
		return InvalidTextRepresentation
	case errors.Is(err, base.ErrNotFound):
		return UndefinedObject
	case errors.Is(err, base.ErrConflict):
		return SerializationFailure
	case errors.Is(err, base.ErrCorruption):
		return DataCorrupted
	}
	return InternalError
}

// From returns err as an *Error: itself if it is one, else wrapped with
// Code(err) (Wrap), with the detail of an error in its chain with a
// SQLDetail() string method.
func From(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	w := Wrap(Code(err), err)
	var detailed interface{ SQLDetail() string }
	if errors.As(err, &detailed) {
		w.Detail = detailed.SQLDetail()
	}
	return w
}
