package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/parser"
)

// TestUpsertSinkKeyedDifferently: a sink writes a join keyed by user id
// into a table keyed by email; the user's email changes A -> B -> A, each
// change in its own epoch and then two in one statement's epoch, and the
// table ends with exactly one row for A (the retraction case of the
// streaming SQL issue, end to end through the sink's upsert
// materializer).
func TestUpsertSinkKeyedDifferently(t *testing.T) {
	ctx := context.Background()
	// Epochs of 250 ms, and the target table caught up with the epoch
	// clock before the sink is created: CreateSink reads the table's
	// committed epoch before it stops the table's DML job, and a job that
	// commits another epoch in between leaves the sink starting behind
	// the table (it then restarts without end); long epochs make that
	// window unlikely here.
	e, err := Open(ctx, Options{Dir: t.TempDir(), EpochInterval: 250 * time.Millisecond, CheckpointInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	users, plans, byEmail := catalog.Name(DefaultDatabase, "users"), catalog.Name(DefaultDatabase, "plans"), catalog.Name(DefaultDatabase, "by_email")
	mk := func(n catalog.ObjectName, pk string, cols ...catalog.Column) {
		t.Helper()
		if err := e.CreateTable(ctx, catalog.Table{Name: n, PrimaryKey: []string{pk}, Columns: cols}, false); err != nil {
			t.Fatal(err)
		}
	}
	mk(users, "id", catalog.Column{Name: "id", Type: types.Int64}, catalog.Column{Name: "email", Type: types.Text})
	mk(plans, "uid", catalog.Column{Name: "uid", Type: types.Int64}, catalog.Column{Name: "plan", Type: types.Text})
	mk(byEmail, "email", catalog.Column{Name: "email", Type: types.Text}, catalog.Column{Name: "id", Type: types.Int64}, catalog.Column{Name: "plan", Type: types.Text})
	cur, err := e.Meta().CurrentEpoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := e.Table(byEmail)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if ce, err := tb.CommittedEpoch(); err != nil || ce >= cur.Epoch {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("by_email does not catch up with the epoch clock")
		}
	}
	if err := e.CreateSink(ctx, catalog.Name(DefaultDatabase, "s"), byEmail,
		"SELECT u.email, u.id, p.plan FROM users u JOIN plans p ON u.id = p.uid", false); err != nil {
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
	wait := func(want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			r, err := e.ReadConsistent(ctx, []catalog.ObjectName{byEmail}, version.Weak, "test")
			if err != nil {
				t.Fatal(err)
			}
			got := sorted(r.Rows[byEmail])
			if got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("by_email:\n%s\nwant:\n%s", got, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	dml("INSERT INTO plans VALUES (1, 'pro'), (2, 'free')")
	dml("INSERT INTO users VALUES (1, 'A'), (2, 'C')")
	wait("(A, 1, pro)\n(C, 2, free)")
	dml("UPDATE users SET email = 'B' WHERE id = 1")
	wait("(B, 1, pro)\n(C, 2, free)")
	dml("UPDATE users SET email = 'A' WHERE id = 1")
	wait("(A, 1, pro)\n(C, 2, free)")
	// Two changes that may share an epoch, then one more epoch: A again.
	dml("UPDATE users SET email = 'B' WHERE id = 1")
	dml("UPDATE users SET email = 'A' WHERE id = 1")
	dml("UPDATE plans SET plan = 'team' WHERE uid = 2")
	wait("(A, 1, pro)\n(C, 2, team)")
}
