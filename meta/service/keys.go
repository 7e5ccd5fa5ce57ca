package service

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
)

// Store keys (meta/store/FORMAT.md).
const (
	keyCatalog   = "catalog"
	keyClock     = "clock"
	keyPinSeq    = "pinseq"
	prefixCommit = "committed/"
	prefixFloor  = "floor/"
	prefixPin    = "pin/"
	prefixJob    = "job/"
)

func commitKey(t catalog.ObjectName) string { return prefixCommit + t.String() }
func floorKey(t catalog.ObjectName) string  { return prefixFloor + t.String() }
func pinKey(id version.PinID) string        { return fmt.Sprintf("%s%020d", prefixPin, uint64(id)) }
func jobKey(name string) string             { return prefixJob + name }

// jobRecord is the persisted runtime state of a job.
type jobRecord struct {
	Status     meta.JobStatus    `json:"status"`
	Checkpoint base.CheckpointID `json:"checkpoint"`
	Reason     string            `json:"reason,omitempty"`
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Only our own plain structs are marshalled here.
		panic(fmt.Sprintf("service: marshalling %T: %v", v, err))
	}
	return b
}

func decodeJSON(key string, b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("meta store key %q does not decode: %v: %w", key, err, base.ErrCorruption)
	}
	return nil
}

func parseObjectKey(key, prefix string) (catalog.ObjectName, error) {
	n, err := catalog.ParseObjectName(strings.TrimPrefix(key, prefix))
	if err != nil {
		return n, fmt.Errorf("meta store key %q: %v: %w", key, err, base.ErrCorruption)
	}
	return n, nil
}
