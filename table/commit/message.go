package commit

import (
	"encoding/json"
	"fmt"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/schema"
	"github.com/stratadb/strata/table/snapshot"
)

// MessageVersion is the "version" member of encoded messages.
const MessageVersion = 1

// BucketChange is what one message does to one bucket.
type BucketChange struct {
	Bucket int32 `json:"bucket"`
	// NewFiles are level-0 files of newly written records.
	NewFiles []manifest.DataFile `json:"newFiles,omitempty"`
	// CompactBefore are files a compaction replaced by CompactAfter.
	CompactBefore []manifest.DataFile `json:"compactBefore,omitempty"`
	CompactAfter  []manifest.DataFile `json:"compactAfter,omitempty"`
	// Changelog are the changelog files of the epoch.
	Changelog []manifest.DataFile `json:"changelog,omitempty"`
}

// Message is the prepared, not yet visible, outcome of one epoch of one
// writer (or of one dedicated compaction). It is what a sink stores in its
// checkpoint and hands to Commit after the checkpoint completes.
type Message struct {
	Version    int                 `json:"version"`
	CommitUser string              `json:"commitUser"`
	Epoch      base.Epoch          `json:"epoch"`
	Kind       snapshot.CommitKind `json:"kind"`
	SchemaID   schema.ID           `json:"schemaId"`
	Watermark  *int64              `json:"watermark,omitempty"`
	Buckets    []BucketChange      `json:"buckets,omitempty"`
}

// Empty reports whether the message changes no file.
func (m *Message) Empty() bool {
	for _, b := range m.Buckets {
		if len(b.NewFiles)+len(b.CompactBefore)+len(b.CompactAfter)+len(b.Changelog) > 0 {
			return false
		}
	}
	return true
}

// Marshal encodes messages as JSON.
func Marshal(msgs []Message) ([]byte, error) {
	for i := range msgs {
		msgs[i].Version = MessageVersion
	}
	return json.Marshal(msgs)
}

// Unmarshal decodes what Marshal wrote; an unknown version gives an error
// wrapping base.ErrCorruption.
func Unmarshal(b []byte) ([]Message, error) {
	var msgs []Message
	if err := json.Unmarshal(b, &msgs); err != nil {
		return nil, fmt.Errorf("commit messages: %v: %w", err, base.ErrCorruption)
	}
	for _, m := range msgs {
		if m.Version != MessageVersion {
			return nil, fmt.Errorf("commit message of epoch %d: unknown version %d: %w", m.Epoch, m.Version, base.ErrCorruption)
		}
	}
	return msgs, nil
}

// Entries returns the manifest entries of the message's data changes, in
// the order they must be applied: new files, then compaction deletes, then
// compaction adds ([entry-order]).
func (m *Message) Entries() []manifest.Entry {
	var out []manifest.Entry
	for _, b := range m.Buckets {
		for _, f := range b.NewFiles {
			out = append(out, manifest.Entry{Kind: manifest.Add, Bucket: b.Bucket, File: f})
		}
	}
	for _, b := range m.Buckets {
		for _, f := range b.CompactBefore {
			out = append(out, manifest.Entry{Kind: manifest.Delete, Bucket: b.Bucket, File: f})
		}
		for _, f := range b.CompactAfter {
			out = append(out, manifest.Entry{Kind: manifest.Add, Bucket: b.Bucket, File: f})
		}
	}
	return out
}

// ChangelogEntries returns ADD entries for the message's changelog files.
func (m *Message) ChangelogEntries() []manifest.Entry {
	var out []manifest.Entry
	for _, b := range m.Buckets {
		for _, f := range b.Changelog {
			out = append(out, manifest.Entry{Kind: manifest.Add, Bucket: b.Bucket, File: f})
		}
	}
	return out
}
