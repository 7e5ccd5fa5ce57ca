package engine

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/stratadb/strata/connector/datagen"
	"github.com/stratadb/strata/connector/file"
	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/connector/kafka"
	"github.com/stratadb/strata/connector/nexmark"
	"github.com/stratadb/strata/meta/catalog"
)

// builtinConnectors returns the ingest connectors every engine has:
//
//   - nexmark: the Nexmark generator (connector/nexmark); the table's
//     columns must be those of the nexmark.table it names, in order;
//   - datagen: random rows for the table's columns (connector/datagen);
//   - file: the files of a path, in csv, json (JSON lines) or
//     debezium-json (connector/file; file.Formats);
//   - kafka: a topic, one source subtask per partition (connector/kafka),
//     in json, debezium-json, csv or avro.
//
// Records that do not parse fail the job unless errors = 'skip' (counted
// and skipped) or errors = 'dead-letter' (kept with their position, error
// and raw bytes in strata_catalog.dead_letters, then skipped).
func (e *Engine) builtinConnectors() map[string]Connector {
	deadLetter := e.deadLetterFunc
	return map[string]Connector{
		nexmark.ConnectorName: func(t catalog.Table, opts map[string]string) ([]ingest.Reader, error) {
			r, err := nexmark.Open(opts)
			if err != nil {
				return nil, err
			}
			if err := r.Schema().Check(t.Columns); err != nil {
				return nil, err
			}
			return []ingest.Reader{r}, nil
		},
		datagen.ConnectorName: func(t catalog.Table, opts map[string]string) ([]ingest.Reader, error) {
			r, err := datagen.Open(t.Columns, opts)
			if err != nil {
				return nil, err
			}
			return []ingest.Reader{r}, nil
		},
		"file": func(t catalog.Table, opts map[string]string) ([]ingest.Reader, error) {
			r, err := file.Open(opts, t.Columns, deadLetter(t))
			if err != nil {
				return nil, err
			}
			return []ingest.Reader{r}, nil
		},
		"kafka": func(t catalog.Table, opts map[string]string) ([]ingest.Reader, error) {
			ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
			defer cancel()
			rs, err := kafka.OpenReaders(ctx, opts, t.Columns, deadLetter(t))
			if err != nil {
				return nil, err
			}
			out := make([]ingest.Reader, len(rs))
			for i, r := range rs {
				out[i] = r
			}
			return out, nil
		},
	}
}

// createOptions returns the options to store for a new table or source of
// connector: opts with the values its connector chooses once, at CREATE,
// so that every reader of the relation, after a restart or in a replay,
// makes the same rows from the catalog's options. A datagen relation
// created without a seed gets a random one (datagen.WithSeed, doc
// "Seed"), which SHOW CREATE then shows; an explicit seed is kept.
// Options stored before this choice existed are never rewritten: a
// datagen relation without a seed keeps datagen.DefaultSeed and replays
// what it generated before. opts is not modified; it is returned as is
// when there is nothing to choose.
func createOptions(connector string, opts map[string]string) map[string]string {
	if connector == datagen.ConnectorName {
		// math/rand/v2's global source is seeded from the operating
		// system: independent across tables and processes.
		return datagen.WithSeed(opts, rand.Uint64())
	}
	return opts
}
