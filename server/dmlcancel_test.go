package server

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCanceledDMLCommitsOnlyWhenItSaysSo: under a statement_timeout short
// enough to cancel some INSERTs, every INSERT that reported 57014 wrote
// nothing and every one that succeeded is there: a write that will commit
// never reports an error.
func TestCanceledDMLCommitsOnlyWhenItSaysSo(t *testing.T) {
	_, c := startConn(t)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE ct (k INT PRIMARY KEY, pad TEXT)")
	var ok []string
	canceled := 0
	for i := 1; i <= 12; i++ {
		timeout := "5ms"
		q := fmt.Sprintf("INSERT INTO ct VALUES (%d, 'x')", i)
		if i%4 == 0 {
			// A large INSERT ... SELECT, canceled while it computes.
			timeout = "30ms"
			q = fmt.Sprintf("INSERT INTO ct SELECT g * 1000 + %d, repeat('x', 100) FROM generate_series(1, 200000) g", i)
		}
		exec(t, c, "SET statement_timeout = '"+timeout+"'")
		_, err := c.Exec(ctx, q)
		switch {
		case err == nil:
			if i%4 == 0 {
				ok = append(ok, "big"+strconv.Itoa(i))
			} else {
				ok = append(ok, strconv.Itoa(i))
			}
		case strings.Contains(err.Error(), "57014"):
			canceled++
		default:
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(t, c, "RESET statement_timeout")
	// A later write settles every earlier one: what was canceled after
	// its append would show up by now.
	exec(t, c, "INSERT INTO ct VALUES (0, 'settle')")
	var got []string
	for _, line := range strings.Split(rowsText(t, c, "SELECT k % 1000, count(*) FROM ct WHERE k > 0 GROUP BY k % 1000 ORDER BY k % 1000"), "\n") {
		if line == "" {
			continue
		}
		parts := strings.Split(line, "|")
		k, _ := strconv.Atoi(parts[0])
		if k%4 == 0 {
			if parts[1] != "200000" {
				t.Fatalf("INSERT ... SELECT %d stored %s rows", k, parts[1])
			}
			got = append(got, "big"+parts[0])
		} else {
			got = append(got, parts[0])
		}
	}
	if strings.Join(got, ",") != strings.Join(ok, ",") {
		t.Fatalf("stored writes %v, reported successes %v (%d canceled)", got, ok, canceled)
	}
	t.Logf("%d of 12 INSERTs canceled", canceled)
}

// TestInsertDuringDropCascade: INSERTs running while DROP TABLE ...
// CASCADE drops their table and a view on it each end, with success or
// 42P01, and none hangs.
func TestInsertDuringDropCascade(t *testing.T) {
	s, c := startConn(t)
	exec(t, c, "CREATE TABLE dt (k INT PRIMARY KEY, v INT)")
	exec(t, c, "CREATE MATERIALIZED VIEW dtv AS SELECT count(*) AS n FROM dt")
	w := connect(t, s)
	defer w.Close(context.Background())
	errs := make(chan error, 1)
	started := make(chan struct{})
	go func() {
		for i := 0; ; i++ {
			_, err := w.Exec(context.Background(), fmt.Sprintf("INSERT INTO dt SELECT g + %d, g FROM generate_series(1, 2000) g", i*2000))
			if i == 0 {
				close(started)
			}
			if err != nil {
				errs <- err
				return
			}
		}
	}()
	<-started
	exec(t, c, "DROP TABLE dt CASCADE")
	select {
	case err := <-errs:
		if !strings.Contains(err.Error(), "42P01") || !strings.Contains(err.Error(), `"dt"`) {
			t.Fatalf("an INSERT during DROP TABLE CASCADE: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("an INSERT during DROP TABLE CASCADE hangs")
	}
}
