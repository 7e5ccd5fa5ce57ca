package fileio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/stratadb/strata/internal/base"
)

// Checked JSON (spec in ../FORMAT.md): a JSON object whose last member is
// "crc32c", the CRC32C of the object's encoding without that member, as 8
// lower-case hex digits:
//
//	{"version":1,"id":7,...,"crc32c":"1a2b3c4d"}
//
// The file stays plain JSON for any tool, and a truncated or edited file is
// refused ([checked-read]).

const crcMember = `,"crc32c":"`

// EncodeJSON encodes v (which must encode to a non-empty JSON object) and
// appends the crc32c member.
func EncodeJSON(v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(body) < 3 || body[0] != '{' || body[len(body)-1] != '}' {
		return nil, fmt.Errorf("fileio: EncodeJSON of %T: not a non-empty object: %w", v, base.ErrInvalidArgument)
	}
	crc := Checksum(body)
	out := make([]byte, 0, len(body)+len(crcMember)+10)
	out = append(out, body[:len(body)-1]...)
	out = append(out, crcMember...)
	out = append(out, fmt.Sprintf("%08x", crc)...)
	out = append(out, '"', '}', '\n')
	return out, nil
}

// DecodeJSON checks and decodes what EncodeJSON wrote into v. name is the
// file's path, used in errors. A missing or wrong checksum gives an error
// wrapping base.ErrChecksum; a truncated file base.ErrCorruption.
func DecodeJSON(name string, data []byte, v any) error {
	data = bytes.TrimRight(data, "\n")
	i := bytes.LastIndex(data, []byte(crcMember))
	if i < 0 || len(data) != i+len(crcMember)+10 || data[len(data)-2] != '"' || data[len(data)-1] != '}' {
		return fmt.Errorf("file %s: no crc32c member at the end (truncated?): %w", name, base.ErrCorruption)
	}
	want, err := strconv.ParseUint(string(data[i+len(crcMember):len(data)-2]), 16, 32)
	if err != nil {
		return fmt.Errorf("file %s: bad crc32c member: %w", name, base.ErrCorruption)
	}
	body := make([]byte, 0, i+1)
	body = append(body, data[:i]...)
	body = append(body, '}')
	if got := Checksum(body); got != uint32(want) {
		return fmt.Errorf("file %s: crc32c %08x, recorded %08x: %w", name, got, want, base.ErrChecksum)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("file %s: %v: %w", name, err, base.ErrCorruption)
	}
	return nil
}
