package topology

import (
	"context"
	"fmt"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
	"github.com/stratadb/strata/table"
)

// Read is the result of ReadConsistent: the version handed out and each
// table's rows at its epoch.
type Read struct {
	Version meta.Version
	Rows    map[catalog.ObjectName][]types.Row
}

// ReadConsistent reads tables at one consistent version: it acquires the
// version from svc in mode (pinning it), reads every table at its epoch
// (no rows before its first committed epoch) and releases the pin. holder
// names the reader for the meta service (a session or job name).
func ReadConsistent(ctx context.Context, svc meta.Service, tables map[catalog.ObjectName]*table.Table, mode version.Mode, holder string) (Read, error) {
	names := make([]catalog.ObjectName, 0, len(tables))
	for n := range tables {
		names = append(names, n)
	}
	v, err := svc.AcquireVersion(ctx, meta.VersionRequest{Tables: names, Mode: mode, Holder: holder})
	if err != nil {
		return Read{}, fmt.Errorf("consistent read of %d tables: %w", len(names), err)
	}
	// The pin only protects the read: a failed release is left to the
	// pin's expiry.
	defer func() { _ = svc.ReleasePin(context.WithoutCancel(ctx), v.Pin) }()
	out := Read{Version: v, Rows: make(map[catalog.ObjectName][]types.Row, len(tables))}
	for n, tb := range tables {
		e, ok := v.Epochs[n]
		if !ok {
			return Read{}, fmt.Errorf("consistent read: the version names no epoch for table %s: %w", n, base.ErrNotFound)
		}
		if e == base.NoEpoch {
			out.Rows[n] = nil
			continue
		}
		rows, err := tb.ReadAtEpoch(e)
		if err != nil {
			return Read{}, fmt.Errorf("consistent read of table %s at epoch %d: %w", n, e, err)
		}
		out.Rows[n] = rows
	}
	return out, nil
}
