package server

import (
	"context"
	"strings"
	"testing"
)

// TestVerifyNamesWhatIsNotAView: verify of a plain table says that verify
// checks materialized views and that the name is a table, instead of
// saying that no such view exists; an unknown name still gets "does not
// exist", and a view verifies.
func TestVerifyNamesWhatIsNotAView(t *testing.T) {
	s, c := startConn(t)
	exec(t, c, "CREATE TABLE orders (id INT PRIMARY KEY, amount INT)")
	exec(t, c, "INSERT INTO orders VALUES (1, 5), (2, 7)")
	exec(t, c, "CREATE MATERIALIZED VIEW total AS SELECT sum(amount) AS s FROM orders")
	ctx := context.Background()
	res := Verify(ctx, s.Engine, "orders", 0)
	for _, w := range []string{"orders is a table, not a materialized view", "verify recomputes a materialized view's query"} {
		if !strings.Contains(res.Error, w) {
			t.Fatalf("verify of a table: %q does not say %q", res.Error, w)
		}
	}
	if strings.Contains(res.Error, "does not exist") {
		t.Fatalf("verify of a table says it does not exist: %q", res.Error)
	}
	if res := Verify(ctx, s.Engine, "nothing", 0); !strings.Contains(res.Error, `materialized view "nothing" does not exist`) {
		t.Fatalf("verify of an unknown name: %+v", res)
	}
	if res := Verify(ctx, s.Engine, "total", 0); !res.OK || res.Error != "" {
		t.Fatalf("verify of a view: %+v", res)
	}
}
