package maintain_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/maintain"
	"github.com/stratadb/strata/table/schema"
)

// Expiration by age: snapshots younger than TimeRetained stay, down to
// RetainMin and up to RetainMax.
func TestExpireByAge(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	tb, err := table.Create(fileio.NewMem(), "t", []schema.Field{{Name: "k", Type: types.Int64}}, []string{"k"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := tb.Store()
	st.Now = func() time.Time { return now }
	w, _ := tb.NewWriter("job")
	for e := base.Epoch(1); e <= 8; e++ {
		w.Write(e, types.Insert, types.Row{types.NewInt64(int64(e))})
		msgs, _ := w.PrepareCommit(e)
		if _, err := tb.Commit(msgs); err != nil {
			t.Fatal(err)
		}
		now = now.Add(10 * time.Minute) // snapshot e is at (e-1)*10 minutes
	}
	// now = 80 minutes; snapshots 1..8 at 0..70 minutes.
	for _, tc := range []struct {
		o    maintain.ExpireOptions
		want string
	}{
		{maintain.ExpireOptions{RetainMin: 1, RetainMax: 100, TimeRetained: time.Hour, KeepFrom: 1}, "[]"}, // kept from 1
		{maintain.ExpireOptions{RetainMin: 1, RetainMax: 100, TimeRetained: time.Hour, KeepFrom: 2}, "[1]"},
		{maintain.ExpireOptions{RetainMin: 1, RetainMax: 100, TimeRetained: time.Hour}, "[2]"},                 // cutoff 20 min: 2 (10)
		{maintain.ExpireOptions{RetainMin: 1, RetainMax: 100, TimeRetained: 45 * time.Minute}, "[3 4]"},        // cutoff 35 min: 3 (20), 4 (30)
		{maintain.ExpireOptions{RetainMin: 4, RetainMax: 100, TimeRetained: time.Minute}, "[]"},                // 5..8 left: keeps 4 at least
		{maintain.ExpireOptions{RetainMin: 1, RetainMax: 2, TimeRetained: 24 * time.Hour, KeepFrom: 6}, "[5]"}, // at most 2, but 6 is kept
		{maintain.ExpireOptions{RetainMin: 1, RetainMax: 2, TimeRetained: 24 * time.Hour}, "[6]"},              // at most 2, however young
		{maintain.ExpireOptions{RetainMin: 1, RetainMax: 2, TimeRetained: 24 * time.Hour}, "[]"},
	} {
		res, err := maintain.Expire(st, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(res.Expired); got != tc.want {
			t.Errorf("%+v: expired %s, want %s", tc.o, got, tc.want)
		}
	}
	rows, err := tb.ReadLatest()
	if err != nil || len(rows) != 8 {
		t.Fatalf("read after expiry: %d rows, %v", len(rows), err)
	}
}
