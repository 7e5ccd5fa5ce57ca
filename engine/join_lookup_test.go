package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/parser"
)

// TestLookupJoinView runs a view that enriches an append-only table of
// orders with a customers table read by key at each order's epoch: an
// order meets the customer as it is at its epoch, and a later change of
// the customer leaves the orders already joined as they were. The view's
// plan shows the lookup join, and the customers table cannot be dropped
// while the view reads it.
func TestLookupJoinView(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	cust := catalog.Name(DefaultDatabase, "cust")
	ord := catalog.Name(DefaultDatabase, "ord")
	view := catalog.Name(DefaultDatabase, "enriched")
	if err := e.CreateTable(ctx, catalog.Table{Name: cust, PrimaryKey: []string{"id"},
		Columns: []catalog.Column{{Name: "id", Type: types.Int64}, {Name: "name", Type: types.Text}}}, false); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateTable(ctx, catalog.Table{Name: ord,
		Columns: []catalog.Column{{Name: "id", Type: types.Int64}, {Name: "cust", Type: types.Int64}}}, false); err != nil {
		t.Fatal(err)
	}
	// A view needs a key: the orders (an append table) have none, so
	// the view groups by the customer's name.
	const q = "SELECT coalesce(c.name, '?') AS name, count(*) AS n, sum(o.id) AS ids FROM ord o LEFT JOIN LOOKUP(cust) c ON c.id = o.cust GROUP BY coalesce(c.name, '?')"
	plan, err := e.ExplainView(ctx, DefaultDatabase, q)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "LeftLookupJoin cust by (id = o.cust) at the epoch (parallelism 1, append-only)") {
		t.Fatalf("plan:\n%s", plan)
	}
	if err := e.CreateView(ctx, view, q, nil, false); err != nil {
		t.Fatal(err)
	}
	ectx := &expr.Context{}
	dml := func(text string) {
		t.Helper()
		st, err := parser.ParseOne(text)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case st.Node.GetInsertStmt() != nil:
			_, _, err = e.Insert(ctx, DefaultDatabase, st.Node.GetInsertStmt(), text, ectx, nil)
		case st.Node.GetUpdateStmt() != nil:
			_, _, err = e.Update(ctx, DefaultDatabase, st.Node.GetUpdateStmt(), text, ectx, nil)
		}
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
	}
	waitView := func(want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			r, err := e.ReadConsistent(ctx, []catalog.ObjectName{view}, version.Weak, "test")
			if err != nil {
				t.Fatal(err)
			}
			got := sorted(r.Rows[view])
			if got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("view:\n%s\nwant:\n%s", got, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	dml("INSERT INTO cust VALUES (1, 'ann'), (2, 'bob')")
	dml("INSERT INTO ord VALUES (10, 1), (11, 3)")
	waitView("(?, 1, 11)\n(ann, 1, 10)")
	// The customers change; orders 10 and 11 keep what they met, orders
	// after the change meet the new rows.
	dml("UPDATE cust SET name = 'zed' WHERE id = 1")
	dml("INSERT INTO cust VALUES (3, 'cy')")
	waitCust := time.Now().Add(20 * time.Second)
	for {
		r, err := e.ReadConsistent(ctx, []catalog.ObjectName{cust}, version.Weak, "test")
		if err != nil {
			t.Fatal(err)
		}
		if sorted(r.Rows[cust]) == "(1, zed)\n(2, bob)\n(3, cy)" {
			break
		}
		if time.Now().After(waitCust) {
			t.Fatalf("customers: %s", sorted(r.Rows[cust]))
		}
		time.Sleep(20 * time.Millisecond)
	}
	dml("INSERT INTO ord VALUES (12, 1), (13, 3), (14, 2)")
	waitView("(?, 1, 11)\n(ann, 1, 10)\n(bob, 1, 14)\n(cy, 1, 13)\n(zed, 1, 12)")
	// A one-shot query reads LOOKUP(cust) as cust at its version: every
	// order meets today's customer.
	const once = "SELECT o.id, c.name FROM ord o JOIN LOOKUP(cust) c ON c.id = o.cust"
	oq, ok, err := e.PlanOLAP(ctx, DefaultDatabase, once)
	if err != nil || !ok || len(oq.Tables) != 2 {
		t.Fatalf("plan %s: %v, %v, %+v", once, ok, err, oq)
	}
	res, _, err := e.RunOLAP(ctx, oq, once, ReadSpec{Mode: version.Strong}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := sorted(res.Rows); got != "(10, zed)\n(11, cy)\n(12, zed)\n(13, cy)\n(14, bob)" {
		t.Fatalf("one-shot lookup:\n%s", got)
	}
	if err := e.Drop(ctx, "table", cust, false, false); err == nil {
		t.Fatal("dropped a table a lookup join reads")
	}
}
