package heap

import (
	"errors"
	"testing"

	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/dataflow/state/statetest"
	"github.com/stratadb/strata/internal/base"
)

func TestSuite(t *testing.T) {
	statetest.Run(t, statetest.Factory{
		New: func(*testing.T) state.Backend { return New() },
		Restore: func(t *testing.T, h []byte, f state.SnapshotFiles) state.Backend {
			b, err := Restore(h, f)
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
	})
}

func TestRestoreRejectsDamage(t *testing.T) {
	b := New()
	_ = b.Set([]byte("ns"), []byte("k"), []byte("v"))
	sn, _ := b.Snapshot(1, nil)
	h := sn.Handle
	for _, bad := range [][]byte{nil, {9}, h[:len(h)-1], append(h, 0)} {
		if _, err := Restore(bad, nil); !errors.Is(err, base.ErrCorruption) {
			t.Errorf("Restore(%x) = %v, want corruption", bad, err)
		}
	}
}
