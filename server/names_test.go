package server

import (
	"testing"
)

// TestQuotedNamesOverTheWire creates tables whose names differ only in
// case or use letters beyond ASCII and reads them through DuckDB: quoted
// names are exact, bare names fold ASCII letters only, and "MixedCase"
// and mixedcase are two relations in one query.
func TestQuotedNamesOverTheWire(t *testing.T) {
	_, c := startConn(t)
	for _, q := range []string{
		`CREATE TABLE "Ünïcødé_表" (id BIGINT PRIMARY KEY, v TEXT)`,
		`CREATE TABLE "ÄB" (id BIGINT PRIMARY KEY)`,
		`CREATE TABLE Вид (id BIGINT PRIMARY KEY)`,
		`CREATE TABLE "MixedCase" (id BIGINT PRIMARY KEY, v TEXT)`,
		`CREATE TABLE mixedcase (id BIGINT PRIMARY KEY, w TEXT)`,
		`INSERT INTO "Ünïcødé_表" VALUES (1, 'a'), (2, 'b')`,
		`INSERT INTO "ÄB" VALUES (7)`,
		`INSERT INTO "Вид" VALUES (8)`,
		`INSERT INTO "MixedCase" VALUES (1, 'upper')`,
		`INSERT INTO mixedcase VALUES (1, 'lower')`,
	} {
		exec(t, c, q)
	}
	for _, tc := range []struct{ q, want string }{
		{`SELECT * FROM "Ünïcødé_表" ORDER BY id`, "1|a\n2|b"},
		{`SELECT id FROM "ÄB"`, "7"},
		{`SELECT id FROM "Вид"`, "8"},
		{`SELECT id FROM Вид`, "8"},
		{`SELECT m.v, n.w FROM "MixedCase" m, mixedcase n WHERE m.id = n.id`, "upper|lower"},
		{`SELECT v FROM "MixedCase"`, "upper"},
		{`SELECT w FROM MIXEDCASE`, "lower"},
	} {
		if got := rowsText(t, c, tc.q); got != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.q, got, tc.want)
		}
	}
}
