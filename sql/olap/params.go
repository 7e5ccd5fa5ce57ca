package olap

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/stratadb/strata/internal/types"
)

// duckParamTypes are the DuckDB spellings CastParams gives parameters of
// each kind. NUMERIC is absent on purpose: a NUMERIC value is cast to its
// own scale when it is bound (castNumericParams), as Postgres compares it
// at its own precision; JSONB has no DuckDB counterpart a parameter could
// take.
var duckParamTypes = map[types.Kind]string{
	types.KindBool:        "BOOLEAN",
	types.KindInt16:       "SMALLINT",
	types.KindInt32:       "INTEGER",
	types.KindInt64:       "BIGINT",
	types.KindFloat32:     "FLOAT",
	types.KindFloat64:     "DOUBLE",
	types.KindChar:        "VARCHAR",
	types.KindVarchar:     "VARCHAR",
	types.KindText:        "VARCHAR",
	types.KindUUID:        "UUID",
	types.KindBytea:       "BLOB",
	types.KindDate:        "DATE",
	types.KindTime:        "TIME",
	types.KindTimestamp:   "TIMESTAMP",
	types.KindTimestampTZ: "TIMESTAMPTZ",
	types.KindInterval:    "INTERVAL",
}

// CastParams writes each parameter $n of sqlText (outside strings and
// comments) as CAST($n AS t), t the DuckDB spelling of ts[n-1], and
// returns the new text; parameters beyond ts, of kind UNKNOWN, NUMERIC or
// JSONB stay as they are.
//
// It is how a statement whose parameters DuckDB cannot type on its own
// ($1 + 1, $1 IS NULL: DuckDB then describes a single column named
// "unknown" in place of the statement's columns) is described and run
// with the types Postgres's rules give its parameters: with every
// parameter typed, DuckDB describes the real columns, and the statement
// runs with the same text so that its rows have the described columns.
func CastParams(sqlText string, ts []types.Type) string {
	cast := map[string]string{}
	for i, t := range ts {
		if name, ok := duckParamTypes[t.Kind]; ok {
			cast[strconv.Itoa(i+1)] = name
		}
	}
	return castParamsAs(sqlText, cast)
}

// castParamsAs writes each parameter $n of sqlText (outside strings and
// comments) whose number n has a type in cast ("1" -> "BIGINT") as
// CAST($n AS type) and returns the new text; the others stay as they are.
// It is the one rewrite behind CastParams (types Postgres's rules chose)
// and castNumericParams (the scale of a bound NUMERIC value).
func castParamsAs(sqlText string, cast map[string]string) string {
	if len(cast) == 0 {
		return sqlText
	}
	toks := lex(sqlText)
	var b strings.Builder
	for i := 0; i < len(toks); i++ {
		if toks[i].text == "$" && i+1 < len(toks) && toks[i+1].kind == tokNumber {
			if name, ok := cast[toks[i+1].text]; ok {
				fmt.Fprintf(&b, "CAST($%s AS %s)", toks[i+1].text, name)
				i++
				continue
			}
		}
		b.WriteString(toks[i].text)
	}
	return b.String()
}
