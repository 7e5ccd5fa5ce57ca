package service

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/store"
	"github.com/stratadb/strata/meta/version"
)

// benchService opens a service on a bbolt file with one source and two
// related tables, both committed up to the current epoch.
func benchService(b *testing.B) *Meta {
	st, err := store.OpenBolt(filepath.Join(b.TempDir(), "meta.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	m, err := Open(context.Background(), Options{Store: st, EpochInterval: time.Hour, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = m.Close() })
	ctx := context.Background()
	cols := []catalog.Column{{Name: "a", Type: types.Int64}}
	for _, err := range []error{
		m.CreateDatabase(ctx, catalog.Database{Name: "d"}),
		m.CreateSource(ctx, catalog.Source{Name: catalog.Name("d", "s"), Connector: "gen"}),
		m.CreateTable(ctx, catalog.Table{Name: catalog.Name("d", "a"), Kind: catalog.KindTable, Columns: cols}),
		m.CreateTable(ctx, catalog.Table{Name: catalog.Name("d", "b"), Kind: catalog.KindView, Columns: cols, Query: "SELECT a FROM d.a"}),
		m.RegisterJob(ctx, catalog.Job{Name: "ja", Kind: catalog.JobIngest, Reads: []catalog.ObjectName{catalog.Name("d", "s")}, Writes: []catalog.ObjectName{catalog.Name("d", "a")}}),
		m.RegisterJob(ctx, catalog.Job{Name: "jb", Kind: catalog.JobView, Reads: []catalog.ObjectName{catalog.Name("d", "a")}, Writes: []catalog.ObjectName{catalog.Name("d", "b")}}),
		m.CommitEpoch(ctx, catalog.Name("d", "a"), 1),
		m.CommitEpoch(ctx, catalog.Name("d", "b"), 1),
	} {
		if err != nil {
			b.Fatal(err)
		}
	}
	return m
}

// BenchmarkAcquireAndReleaseBolt measures a strong read of two related
// tables and the release of its pin: two fsynced bbolt transactions.
func BenchmarkAcquireAndReleaseBolt(b *testing.B) {
	m := benchService(b)
	ctx := context.Background()
	req := meta.VersionRequest{Tables: []catalog.ObjectName{catalog.Name("d", "a"), catalog.Name("d", "b")}, Mode: version.Strong, Holder: "bench"}
	for b.Loop() {
		v, err := m.AcquireVersion(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if err := m.ReleasePin(ctx, v.Pin); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCommitRepeatBolt measures a repeated committed-epoch report,
// which writes nothing.
func BenchmarkCommitRepeatBolt(b *testing.B) {
	m := benchService(b)
	ctx := context.Background()
	for b.Loop() {
		if err := m.CommitEpoch(ctx, catalog.Name("d", "a"), 1); err != nil {
			b.Fatal(err)
		}
	}
}
