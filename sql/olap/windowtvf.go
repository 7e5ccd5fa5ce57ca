package olap

import (
	"fmt"
	"strings"

	"github.com/stratadb/strata/internal/base"
)

// Window TVFs in DuckDB ([window-tvf] in doc.go).

// WindowKind names a window table-valued function DuckDB can be given:
// "tumble", "hop" or "cumulate".
type WindowKind string

// The window kinds WindowTVFsAsSQL writes out.
const (
	Tumble   WindowKind = "tumble"
	Hop      WindowKind = "hop"
	Cumulate WindowKind = "cumulate"
	Session  WindowKind = "session"
)

// Window is one window TVF call resolved by the caller (with Strata's
// binder, so that its meaning is Strata's): what WindowTVFsAsSQL needs to
// write it as a DuckDB subquery.
type Window struct {
	Kind WindowKind
	// Columns are the relation's columns, in order; TimeColumn indexes
	// the time column among them.
	Columns    []string
	TimeColumn int
	// TZ tells a TIMESTAMPTZ time column from a TIMESTAMP one.
	TZ bool
	// Wall computes the windows on the wall clock of the query's time
	// zone (QueryOptions.Location) rather than on UTC instants: Strata
	// does so for a TIMESTAMPTZ column when a size, slide or offset has
	// whole days, so that days are calendar days of the zone.
	Wall bool
	// Size is TUMBLE's and HOP's window size and CUMULATE's largest
	// window; Slide is HOP's slide and CUMULATE's step; Offset shifts
	// every boundary. All in microseconds; Size (and Slide for HOP and
	// CUMULATE) positive, Size a multiple of Slide. SESSION's gap is
	// Size.
	Size, Slide, Offset int64
	// Partition indexes the columns SESSION forms sessions within
	// (none: the whole relation is one partition).
	Partition []int
}

// WindowTVFsAsSQL rewrites every TUMBLE, HOP, CUMULATE and SESSION call after
// FROM, JOIN or a comma in sqlText into a DuckDB subquery over its
// relation, named by the call's alias or else by the relation, with the
// relation's columns followed by window_start and window_end of the time
// column's type: one row per window each row with a finite, non-NULL
// time falls in, as Strata's window operators compute them. resolve is
// given each call's text, e.g. "HOP(bid, date_time, INTERVAL '5'
// SECOND, INTERVAL '10' SECOND)"; its error is returned. changed is
// false when the text has no window TVF call.
func WindowTVFsAsSQL(sqlText string, resolve func(call string) (Window, error)) (out string, changed bool, err error) {
	lower := strings.ToLower(sqlText)
	if !strings.Contains(lower, "tumble") && !strings.Contains(lower, "hop") && !strings.Contains(lower, "cumulate") && !strings.Contains(lower, "session") {
		return sqlText, false, nil
	}
	toks := lex(sqlText)
	for i := range toks {
		if toks[i].kind != tokIdent {
			continue
		}
		switch n, _ := toks[i].identName(); n {
		case "tumble", "hop", "cumulate", "session":
		default:
			continue
		}
		pv := prevSolid(toks, i-1)
		if pv < 0 || !inFromList(toks, pv) {
			continue
		}
		open := nextSolid(toks, i+1)
		if open >= len(toks) || toks[open].text != "(" {
			continue
		}
		end := matchParen(toks, open)
		rel := nextSolid(toks, open+1)
		if rel >= end {
			continue
		}
		w, err := resolve(join(toks[i : end+1]))
		if err != nil {
			return sqlText, false, err
		}
		sub, err := windowSubquery(w, toks[rel].text)
		if err != nil {
			return sqlText, false, err
		}
		// The binder names an unaliased call by its relation.
		a := nextSolid(toks, end+1)
		aliased := a < len(toks) && (toks[a].kind == tokQuoted || toks[a].kind == tokIdent && !isKeyword(toks[a].text))
		if !aliased {
			sub += " AS " + toks[rel].text
		}
		for k := i + 1; k <= end; k++ {
			toks[k] = token{kind: tokSpace}
		}
		toks[i] = token{kind: tokSpace, text: sub}
		changed = true
	}
	if !changed {
		return sqlText, false, nil
	}
	return join(toks), true, nil
}

// windowSubquery writes w over relation rel (as written in the query).
//
// A row's time t is taken in microseconds (epoch_us; for Wall, of the
// time as a wall-clock TIMESTAMP of the query's zone). With
// fm(a, b) = ((a % b) + b) % b, a modulus that is never negative:
//
//	TUMBLE:   start = t - fm(t - offset, size), end = start + size
//	HOP:      start = t - fm(t - offset, slide) - i*slide for i in
//	          [0, size/slide), end = start + size
//	CUMULATE: start = t - fm(t - offset, size), end = start + (i+1)*step
//	          for i in [0, size/step) where end > t
//
// which is stream.AppendWindows, the arithmetic of the streaming
// operator and of the batch executor. The index i comes from a cross
// join with range(n), so DuckDB streams the expansion.
func windowSubquery(w Window, rel string) (string, error) {
	if w.Size <= 0 || ((w.Kind == Hop || w.Kind == Cumulate) && (w.Slide <= 0 || w.Size%w.Slide != 0)) || w.TimeColumn < 0 || w.TimeColumn >= len(w.Columns) {
		return "", fmt.Errorf("window %s over %s: size %d us, slide %d us, time column %d of %d: %w", w.Kind, rel, w.Size, w.Slide, w.TimeColumn, len(w.Columns), base.ErrInvalidArgument)
	}
	tc := quoteIdent(w.Columns[w.TimeColumn])
	t := "epoch_us(" + tc + ")"
	mk := func(us string) string { return "make_timestamp(" + us + ")" }
	switch {
	case w.Wall:
		t = "epoch_us(CAST(" + tc + " AS TIMESTAMP))"
		mk = func(us string) string { return "CAST(make_timestamp(" + us + ") AS TIMESTAMPTZ)" }
	case w.TZ:
		mk = func(us string) string { return "(make_timestamp(" + us + ") AT TIME ZONE 'UTC')" }
	}
	if w.Kind == Session {
		return sessionSubquery(w, rel, tc, t, mk), nil
	}
	fm := func(a string, b int64) string { return fmt.Sprintf("(((%s) %% %d) + %d) %% %d", a, b, b, b) }
	var n int64
	var start, end, where string
	switch w.Kind {
	case Tumble:
		n = 1
		start = fmt.Sprintf("strata_wt - %s", fm(fmt.Sprintf("strata_wt - %d", w.Offset), w.Size))
		end = fmt.Sprintf("strata_ws + %d", w.Size)
	case Hop:
		n = w.Size / w.Slide
		start = fmt.Sprintf("strata_wt - %s - strata_wi * %d", fm(fmt.Sprintf("strata_wt - %d", w.Offset), w.Slide), w.Slide)
		end = fmt.Sprintf("strata_ws + %d", w.Size)
	case Cumulate:
		n = w.Size / w.Slide
		start = fmt.Sprintf("strata_wt - %s", fm(fmt.Sprintf("strata_wt - %d", w.Offset), w.Size))
		end = fmt.Sprintf("strata_ws + (strata_wi + 1) * %d", w.Slide)
		where = " WHERE " + end + " > strata_wt"
	default:
		return "", fmt.Errorf("window %s over %s has no DuckDB form: %w", w.Kind, rel, base.ErrInvalidArgument)
	}
	cols := make([]string, len(w.Columns))
	for i, c := range w.Columns {
		cols[i] = quoteIdent(c)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "(SELECT %s, %s AS window_start, %s AS window_end FROM ", strings.Join(cols, ", "), mk("strata_ws"), mk(end))
	fmt.Fprintf(&b, "(SELECT *, %s AS strata_ws FROM ", start)
	fmt.Fprintf(&b, "(SELECT *, %s AS strata_wt FROM %s WHERE %s IS NOT NULL AND isfinite(%s)) AS strata_w0, ", t, rel, tc, tc)
	fmt.Fprintf(&b, "range(0, %d) AS strata_wr(strata_wi)) AS strata_w1%s)", n, where)
	return b.String(), nil
}

// sessionSubquery writes a SESSION window: within a partition, in time
// order, a row starts a new session unless it is less than the gap after
// the row before it (lag); a running sum of those starts numbers the
// sessions, and a session's window is [its first time, its last time +
// gap), Flink's merging session windows as sql/stream.SessionWindow
// computes them. Rows of equal time are peers of the sum's default RANGE
// frame, so they share a session whatever their order.
func sessionSubquery(w Window, rel, tc, t string, mk func(string) string) string {
	var part []string
	for _, p := range w.Partition {
		part = append(part, quoteIdent(w.Columns[p]))
	}
	by := ""
	if len(part) > 0 {
		by = "PARTITION BY " + strings.Join(part, ", ") + " "
	}
	sessionBy := "PARTITION BY " + strings.Join(append(part, "strata_wsid"), ", ")
	cols := make([]string, len(w.Columns))
	for i, c := range w.Columns {
		cols[i] = quoteIdent(c)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "(SELECT %s, %s AS window_start, %s AS window_end FROM ", strings.Join(cols, ", "),
		mk("min(strata_wt) OVER ("+sessionBy+")"), mk(fmt.Sprintf("max(strata_wt) OVER (%s) + %d", sessionBy, w.Size)))
	fmt.Fprintf(&b, "(SELECT *, sum(strata_wnew) OVER (%sORDER BY strata_wt) AS strata_wsid FROM ", by)
	fmt.Fprintf(&b, "(SELECT *, CASE WHEN strata_wt - lag(strata_wt) OVER (%sORDER BY strata_wt) < %d THEN 0 ELSE 1 END AS strata_wnew FROM ", by, w.Size)
	fmt.Fprintf(&b, "(SELECT *, %s AS strata_wt FROM %s WHERE %s IS NOT NULL AND isfinite(%s)) AS strata_w0) AS strata_w1) AS strata_w2)", t, rel, tc, tc)
	return b.String()
}
