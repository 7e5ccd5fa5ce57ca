package catalog

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stratadb/strata/internal/base"
)

// MaxNameLength is the longest catalog name in bytes. Postgres stops at 63;
// Strata allows more but keeps names well under the 255-byte limit of a
// path component on common file systems.
const MaxNameLength = 128

// ValidateName checks name against invariant catalog-safe-names. what says
// what the name is for ("table", "column", ...) and appears in the error,
// which wraps base.ErrInvalidArgument and quotes the name.
func ValidateName(what, name string) error {
	bad := func(why string) error {
		return fmt.Errorf("%s name %q %s: %w", what, name, why, base.ErrInvalidArgument)
	}
	if name == "" {
		return fmt.Errorf("%s name is empty: %w", what, base.ErrInvalidArgument)
	}
	if len(name) > MaxNameLength {
		return bad(fmt.Sprintf("is %d bytes long, more than %d", len(name), MaxNameLength))
	}
	if !utf8.ValidString(name) {
		return bad("is not valid UTF-8")
	}
	for i, r := range name {
		switch {
		case r == '_' || unicode.IsLetter(r):
		case i > 0 && (unicode.IsDigit(r) || r == '-' || r == '$'):
		case r == '/' || r == '\\':
			return bad("holds a path separator")
		case r == '.':
			return bad("holds a dot")
		case i == 0:
			return bad("must start with a letter or '_'")
		default:
			return bad(fmt.Sprintf("holds %q; only letters, digits, '_', '-' and '$' are allowed", r))
		}
	}
	return nil
}

// ObjectName names a table, view or source: the database and the object's
// name in it. Its text form is "database.name".
type ObjectName struct {
	Database string `json:"database"`
	Name     string `json:"name"`
}

// Name returns the ObjectName of name in database db.
func Name(db, name string) ObjectName { return ObjectName{Database: db, Name: name} }

// String returns "database.name".
func (n ObjectName) String() string { return n.Database + "." + n.Name }

// Validate checks both parts with ValidateName.
func (n ObjectName) Validate(what string) error {
	if err := ValidateName("database", n.Database); err != nil {
		return fmt.Errorf("%s %s: %w", what, n, err)
	}
	return ValidateName(what, n.Name)
}

// Less orders names by database, then name.
func (n ObjectName) Less(o ObjectName) bool {
	if n.Database != o.Database {
		return n.Database < o.Database
	}
	return n.Name < o.Name
}

// ParseObjectName parses "database.name". The error wraps
// base.ErrInvalidArgument.
func ParseObjectName(s string) (ObjectName, error) {
	db, name, ok := strings.Cut(s, ".")
	if !ok {
		return ObjectName{}, fmt.Errorf("object name %q is not of the form database.name: %w", s, base.ErrInvalidArgument)
	}
	n := ObjectName{Database: db, Name: name}
	if err := n.Validate("object"); err != nil {
		return ObjectName{}, err
	}
	return n, nil
}

// MarshalText encodes n as "database.name" so that names can key JSON maps.
func (n ObjectName) MarshalText() ([]byte, error) { return []byte(n.String()), nil }

// UnmarshalText parses what MarshalText wrote.
func (n *ObjectName) UnmarshalText(b []byte) error {
	p, err := ParseObjectName(string(b))
	if err != nil {
		return err
	}
	*n = p
	return nil
}
