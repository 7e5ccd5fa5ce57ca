package engine

import (
	"github.com/stratadb/strata/connector/datagen"
	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/connector/nexmark"
	"github.com/stratadb/strata/meta/catalog"
)

// builtinConnectors returns the ingest connectors every engine has:
//
//   - nexmark: the Nexmark generator (connector/nexmark); the table's
//     columns must be those of the nexmark.table it names (or the
//     generator's, in order);
//   - datagen: random rows for the table's columns (connector/datagen).
func builtinConnectors() map[string]Connector {
	return map[string]Connector{
		nexmark.ConnectorName: func(t catalog.Table, opts map[string]string) (ingest.Reader, error) {
			r, err := nexmark.Open(opts)
			if err != nil {
				return nil, err
			}
			if err := r.Schema().Check(t.Columns); err != nil {
				return nil, err
			}
			return r, nil
		},
		"datagen": func(t catalog.Table, opts map[string]string) (ingest.Reader, error) {
			return datagen.Open(t.Columns, opts)
		},
	}
}
