package expr

import (
	"math"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Expected values are what Postgres 15 prints.
func TestJSONAccess(t *testing.T) {
	doc := jsonS(`{"a":[1,{"b":null}], "c":{"d":"x"}, "e":1.50, "f":"x\\ny"}`)
	runCases(t, &Context{}, []fcase{
		{"->", []any{jsonS(`[1,"x",null]`), 1}, `"x"`, ""},
		{"->>", []any{jsonS(`[1,"x",null]`), 1}, "x", ""},
		{"->>", []any{jsonS(`[1,"x",null]`), 2}, "NULL", ""},
		{"->", []any{jsonS(`[1,"x",null]`), 2}, "null", ""},
		{"->", []any{jsonS(`[1,2,3]`), -1}, "3", ""},
		{"->", []any{jsonS(`[1,2,3]`), 5}, "NULL", ""},
		{"->", []any{jsonS(`[1,2,3]`), -4}, "NULL", ""},
		{"->", []any{jsonS(`"s"`), 0}, `"s"`, ""},
		{"->", []any{jsonS(`"s"`), -1}, `"s"`, ""},
		{"->", []any{jsonS(`"s"`), 1}, "NULL", ""},
		{"->", []any{jsonS(`{"a":1}`), 0}, "NULL", ""},
		{"->", []any{jsonS(`[1]`), "a"}, "NULL", ""},
		{"->", []any{doc, "c"}, `{"d": "x"}`, ""},
		{"->>", []any{doc, "c"}, `{"d": "x"}`, ""},
		{"->>", []any{doc, "e"}, "1.50", ""},
		{"->>", []any{jsonS(`{"a":"q\"b\\s\u0001\ud83d\ude00\t"}`), "a"}, "q\"b\\s\x01😀\t", ""},
		{"->", []any{jsonS(`{"a":"q\"b\\s\u0001\ud83d\ude00\t"}`), "a"}, `"q\"b\\s\u0001😀\t"`, ""},
		{"->>", []any{jsonS(`{"a":"\b\f\/"}`), "a"}, "\b\f/", ""},
		{"->>", []any{jsonS(`{"a":-1.5e-3}`), "a"}, "-0.0015", ""},
		{"->>", []any{doc, "f"}, `x\ny`, ""},
		{"->", []any{doc, "zz"}, "NULL", ""},
		{"->", []any{doc, nullOf(types.KindText)}, "NULL", ""},
		{"#>", []any{doc, "{a,1,b}"}, "null", ""},
		{"#>>", []any{doc, "{a,1,b}"}, "NULL", ""},
		{"#>", []any{doc, "{a,-1}"}, `{"b": null}`, ""},
		{"#>", []any{doc, "{a,x}"}, "NULL", ""},
		{"#>", []any{doc, "{e,b}"}, "NULL", ""},
		{"#>", []any{doc, "{NULL}"}, "NULL", ""},
		{"#>", []any{doc, "{ c , d }"}, `"x"`, ""},
		{"#>>", []any{doc, "{c,d}"}, "x", ""},
		{"#>", []any{jsonS(`{"a b":1}`), `{"a b"}`}, "1", ""},
		{"#>", []any{jsonS(`{"a,b":{"}":2}}`), `{"a,b","}"}`}, "2", ""},
		{"#>", []any{jsonS(`[1,2]`), "{}"}, "[1, 2]", ""},
		{"#>>", []any{jsonS(`"a"`), "{}"}, "a", ""},
		{"#>>", []any{jsonS(`{"a":1}`), "{}"}, `{"a": 1}`, ""},
		{"#>", []any{jsonS(`"s"`), "{0}"}, "NULL", ""},
		{"#>", []any{doc, "{a"}, `malformed array literal: "{a"`, sqlerr.InvalidTextRepresentation},
		{"#>", []any{doc, "a"}, `malformed array literal: "a"`, sqlerr.InvalidTextRepresentation},
		{"jsonb_extract_path", []any{jsonS(`{"a":{"b":[7]}}`), "a", "b", "0"}, "7", ""},
		{"jsonb_extract_path", []any{jsonS(`{"a":{"b":[7]}}`), "a", nil}, "NULL", ""},
		{"jsonb_extract_path_text", []any{jsonS(`{"a":{"b":"t"}}`), "a", "b"}, "t", ""},
		{"jsonb_typeof", []any{jsonS("1.5")}, "number", ""},
		{"jsonb_typeof", []any{jsonS("null")}, "null", ""},
		{"jsonb_typeof", []any{jsonS("{}")}, "object", ""},
		{"jsonb_typeof", []any{jsonS("[]")}, "array", ""},
		{"jsonb_typeof", []any{jsonS(`"x"`)}, "string", ""},
		{"jsonb_typeof", []any{jsonS("true")}, "boolean", ""},
		{"jsonb_array_length", []any{jsonS("[1,[2,3]]")}, "2", ""},
		{"jsonb_array_length", []any{jsonS("[]")}, "0", ""},
		{"jsonb_array_length", []any{jsonS("5")}, "cannot get array length of a scalar", sqlerr.InvalidParameterValue},
		{"jsonb_array_length", []any{jsonS("{}")}, "cannot get array length of a non-array", sqlerr.InvalidParameterValue},
	})
}

func TestJSONPredicates(t *testing.T) {
	runCases(t, &Context{}, []fcase{
		{"?", []any{jsonS(`"s"`), "s"}, "t", ""},
		{"?", []any{jsonS(`["a",1]`), "a"}, "t", ""},
		{"?", []any{jsonS(`["a",1]`), "1"}, "f", ""},
		{"?", []any{jsonS(`{"a":null}`), "a"}, "t", ""},
		{"?", []any{jsonS(`{"a":{"b":1}}`), "b"}, "f", ""},
		{"@>", []any{jsonS(`{"a":1,"b":[1,2,{"c":3}]}`), jsonS(`{"b":[{"c":3}]}`)}, "t", ""},
		{"@>", []any{jsonS(`[1,2,[3,4]]`), jsonS(`[[3]]`)}, "t", ""},
		{"@>", []any{jsonS(`[1,2]`), jsonS(`1`)}, "t", ""},
		{"@>", []any{jsonS(`1`), jsonS(`[1]`)}, "f", ""},
		{"@>", []any{jsonS(`{"a":1}`), jsonS(`{}`)}, "t", ""},
		{"@>", []any{jsonS(`[1,2]`), jsonS(`[]`)}, "t", ""},
		{"@>", []any{jsonS(`{"a":[1,2]}`), jsonS(`{"a":1}`)}, "f", ""},
		{"@>", []any{jsonS(`[{"a":1}]`), jsonS(`{"a":1}`)}, "f", ""},
		{"@>", []any{jsonS(`"x"`), jsonS(`"x"`)}, "t", ""},
		{"@>", []any{jsonS(`[[1,2]]`), jsonS(`[1]`)}, "f", ""},
		{"@>", []any{jsonS(`[1,1]`), jsonS(`[1,1,1]`)}, "t", ""},
		{"@>", []any{jsonS(`{"a":{}}`), jsonS(`{"a":[]}`)}, "f", ""},
		{"@>", []any{jsonS(`[]`), jsonS(`{}`)}, "f", ""},
		{"@>", []any{jsonS(`{"a":1.0}`), jsonS(`{"a":1}`)}, "t", ""},
		{"<@", []any{jsonS(`{"a":1}`), jsonS(`{"a":1,"b":2}`)}, "t", ""},
		{"<@", []any{jsonS(`{"a":1,"b":2}`), jsonS(`{"a":1}`)}, "f", ""},
	})
}

func TestJSONBuild(t *testing.T) {
	paris := &Context{Loc: mustZone(t, "Europe/Paris")}
	runCases(t, paris, []fcase{
		{"jsonb_build_object", []any{"a", 1, "b", "x", "c", nil, "d", true, "e", numS("1.50"), 1, 2.5,
			"f", jsonS(`{"z":1}`), "g", dateS("2024-02-29"), "h", tsS("2024-02-29 12:00:00.5"), "i", ivS(0, 1, 0)},
			`{"1": 2.5, "a": 1, "b": "x", "c": null, "d": true, "e": 1.50, "f": {"z": 1}, "g": "2024-02-29", "h": "2024-02-29T12:00:00.5", "i": "1 day"}`, ""},
		{"jsonb_build_object", []any{"a", 1, "a", 2}, `{"a": 2}`, ""},
		{"jsonb_build_object", nil, "{}", ""},
		{"jsonb_build_object", []any{"a"}, "argument list must have even number of elements", sqlerr.InvalidParameterValue},
		{"jsonb_build_object", []any{nil, 1}, "argument 1: key must not be null", sqlerr.InvalidParameterValue},
		{"jsonb_build_array", []any{1, "x", nil, types.NewFloat64(nan()), numS("Infinity"), types.NewChar("a  ")}, `[1, "x", null, "NaN", "Infinity", "a  "]`, ""},
		{"jsonb_build_array", nil, "[]", ""},
		{"to_jsonb", []any{tstzS("2024-02-29 13:00:00")}, `"2024-02-29T13:00:00+01:00"`, ""},
		{"to_jsonb", []any{types.NewTimestampTZ(1709188200123000)}, `"2024-02-29T07:30:00.123+01:00"`, ""},
		{"to_jsonb", []any{1e20}, "100000000000000000000", ""},
		{"to_jsonb", []any{`a"b`}, `"a\"b"`, ""},
		{"to_jsonb", []any{timeS("10:00:00")}, `"10:00:00"`, ""},
		{"to_jsonb", []any{true}, "true", ""},
		{"to_jsonb", []any{types.NewDate(types.DateInfinity)}, `"infinity"`, ""},
		{"to_jsonb", []any{jsonS(`{"b":1,"a":2}`)}, `{"a": 2, "b": 1}`, ""},
		{"to_jsonb", []any{nullOf(types.KindInt32)}, "NULL", ""},
		{"jsonb_strip_nulls", []any{jsonS(`{"a":null,"b":[null,{"c":null,"d":1}]}`)}, `{"b": [null, {"d": 1}]}`, ""},
		{"jsonb_set", []any{jsonS(`{"a":[1,2]}`), "{a,0}", jsonS("9")}, `{"a": [9, 2]}`, ""},
		{"jsonb_set", []any{jsonS(`{"a":[1,2]}`), "{a,5}", jsonS("9")}, `{"a": [1, 2, 9]}`, ""},
		{"jsonb_set", []any{jsonS(`{"a":[1,2]}`), "{a,-5}", jsonS("9")}, `{"a": [9, 1, 2]}`, ""},
		{"jsonb_set", []any{jsonS(`{"a":1}`), "{b}", jsonS("2")}, `{"a": 1, "b": 2}`, ""},
		{"jsonb_set", []any{jsonS(`{"a":1}`), "{b}", jsonS("2"), false}, `{"a": 1}`, ""},
		{"jsonb_set", []any{jsonS(`{"a":1}`), "{x,y}", jsonS("2")}, `{"a": 1}`, ""},
		{"jsonb_set", []any{jsonS(`1`), "{a}", jsonS("2")}, "cannot set path in scalar", sqlerr.InvalidParameterValue},
		{"jsonb_set", []any{jsonS(`[1]`), "{x}", jsonS("2")}, `path element at position 1 is not an integer: "x"`, sqlerr.InvalidTextRepresentation},
	})
}

func TestParseTextArray(t *testing.T) {
	for _, tc := range []struct {
		in    string
		elems []string
		nulls []bool
		bad   bool
	}{
		{"{}", nil, nil, false},
		{"{a,b}", []string{"a", "b"}, []bool{false, false}, false},
		{` { a , "b c" , NULL, "NULL", \,x } `, []string{"a", "b c", "NULL", "NULL", ",x"}, []bool{false, false, true, false, false}, false},
		{`{"a\"b"}`, []string{`a"b`}, []bool{false}, false},
		{"{a,,b}", nil, nil, true},
		{"a,b", nil, nil, true},
		{"{a", nil, nil, true},
		{"{{a}}", nil, nil, true},
	} {
		elems, nulls, err := parseTextArray(tc.in)
		if tc.bad {
			if sqlerr.Code(err) != sqlerr.InvalidTextRepresentation {
				t.Errorf("parseTextArray(%q) = %q, %v; want 22P02", tc.in, elems, err)
			}
			continue
		}
		if err != nil || len(elems) != len(tc.elems) {
			t.Errorf("parseTextArray(%q) = %q, %v, %v; want %q", tc.in, elems, nulls, err, tc.elems)
			continue
		}
		for i := range elems {
			if elems[i] != tc.elems[i] || nulls[i] != tc.nulls[i] {
				t.Errorf("parseTextArray(%q)[%d] = %q null=%v; want %q null=%v", tc.in, i, elems[i], nulls[i], tc.elems[i], tc.nulls[i])
			}
		}
	}
}

func nan() float64 { return math.NaN() }
