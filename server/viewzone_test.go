package server

import (
	"testing"
)

// TestViewTimeZone: a view created in a session with a time zone
// evaluates its date and time functions in that zone, as the same SELECT
// does in the session, and verifies in it; a view from a UTC session
// stays in UTC.
func TestViewTimeZone(t *testing.T) {
	s, c := startConn(t)
	exec(t, c, "CREATE TABLE ev (id INT PRIMARY KEY, t TIMESTAMPTZ NOT NULL)")
	exec(t, c, "INSERT INTO ev VALUES (1, '2024-01-01 23:30:00+00'), (2, '2024-01-02 10:00:00+00')")
	exec(t, c, "CREATE MATERIALIZED VIEW per_day_utc AS SELECT t::date AS d, count(*) AS n FROM ev GROUP BY 1")
	exec(t, c, "SET TIME ZONE 'Asia/Tokyo'")
	exec(t, c, "CREATE MATERIALIZED VIEW per_day_tokyo AS SELECT t::date AS d, count(*) AS n FROM ev GROUP BY 1")
	exec(t, c, "INSERT INTO ev VALUES (3, '2024-01-02 16:00:00+00')")
	wantRows(t, c, "SELECT d, n FROM per_day_tokyo ORDER BY d", "2024-01-02|2\n2024-01-03|1")
	if got, want := rowsText(t, c, "SELECT d, n FROM per_day_tokyo ORDER BY d"), rowsText(t, c, "SELECT t::date AS d, count(*) FROM ev GROUP BY 1 ORDER BY 1"); got != want {
		t.Fatalf("the view (%q) differs from its SELECT in the session (%q)", got, want)
	}
	wantRows(t, c, "SELECT d, n FROM per_day_utc ORDER BY d", "2024-01-01|1\n2024-01-02|2")
	wantVerified(t, s, "per_day_tokyo", "per_day_utc")
}
