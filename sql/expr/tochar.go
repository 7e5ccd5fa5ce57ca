package expr

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// to_char(value, template), as PostgreSQL 15's formatting.c defines it for
// timestamp, timestamptz (a date is cast to timestamptz, as PostgreSQL
// resolves it), integer, bigint, numeric, real and double precision, in
// the C locale (English names, "." and "," as the decimal point and the
// group separator, " " as the currency symbol).
//
// A template is read left to right. At each position a prefix (FM, TM for
// date/time templates) may come first, then the longest keyword that
// starts there (keywords are case-sensitive: Month, MONTH and month differ,
// mm is MM), then, for date/time templates, a suffix (TH, th, SP).
// Anything else is copied: text in double quotes as is (a backslash in it
// quotes the next character), \" outside quotes as a double quote.
//
// Date/time keywords: every one PostgreSQL 15 has (AM, PM, A.M., AD, BC,
// CC, D, DD, DDD, DAY, DY, FF1-FF6, HH, HH12, HH24, I, ID, IDDD, IW, IY,
// IYY, IYYY, J, MI, MM, MON, MONTH, MS, OF, Q, RM, SS, SSSS, SSSSS, TZ,
// TZH, TZM, US, W, WW, Y, YY, YYY, YYYY, Y,YYY and their case variants).
// FM drops the padding (zeros of numbers, blanks after names), TM the
// blanks after names, TH and th append the ordinal suffix; FX and SP do
// nothing on output. TZ is the session zone's abbreviation for
// timestamptz and empty for timestamp, OF the UTC offset (+00 for
// timestamp). Infinite timestamps and an empty template give NULL.
//
// Number keywords: 9, 0, . and D, "," and G, FM, S, MI, PL, SG, PR, L,
// TH and th (B, C and SP are accepted and print nothing, as in
// PostgreSQL). V, RN and EEEE are not supported: the template is refused
// with 0A000 naming the pattern, at plan time when the template is a
// constant (Func.Check). Templates PostgreSQL refuses (two decimal points,
// S with MI, 9 after PR) are refused with its message and 42601. The
// number is rounded to the template's fractional digits (NUMERIC half away
// from zero; floating point from its exact binary value, with at most 15
// significant digits for double precision and 6 for real, as PostgreSQL's
// DBL_DIG and FLT_DIG limits); an integer part longer than the template's
// prints # in every digit position.

// maxToCharCache bounds the compiled-template cache.
const maxToCharCache = 256

// toCharCache holds compiled templates by kind class and text.
var toCharCache struct {
	mu sync.Mutex
	m  map[toCharKey]any // []dchNode, or *numTemplate or the template's error
}

// toCharKey is a template and whether it is for numbers.
type toCharKey struct {
	number bool
	tmpl   string
}

// toCharIsNumber reports whether values of kind k take number templates.
func toCharIsNumber(k types.Kind) bool {
	switch k {
	case types.KindInt16, types.KindInt32, types.KindInt64, types.KindNumeric, types.KindFloat32, types.KindFloat64:
		return true
	}
	return false
}

// compiledToChar returns the compiled template for values of kind k: a
// []dchNode or a *numTemplate.
func compiledToChar(k types.Kind, tmpl string) (any, error) {
	key := toCharKey{toCharIsNumber(k), tmpl}
	toCharCache.mu.Lock()
	v, ok := toCharCache.m[key]
	toCharCache.mu.Unlock()
	if !ok {
		if key.number {
			t, err := parseNumTemplate(tmpl)
			if err != nil {
				v = err
			} else {
				v = t
			}
		} else {
			v = parseDCH(tmpl)
		}
		toCharCache.mu.Lock()
		if toCharCache.m == nil || len(toCharCache.m) >= maxToCharCache {
			toCharCache.m = map[toCharKey]any{}
		}
		toCharCache.m[key] = v
		toCharCache.mu.Unlock()
	}
	if err, ok := v.(error); ok {
		return nil, err
	}
	return v, nil
}

// CheckToChar returns the error to_char gives for template tmpl with
// values of kind k whatever the value (an unsupported or contradictory
// number pattern), or nil. The binder calls it when the template is a
// constant, so that such a query fails when it is planned.
func CheckToChar(k types.Kind, tmpl string) error {
	_, err := compiledToChar(k, tmpl)
	return err
}

// ToChar is to_char(v, tmpl) for a non-NULL v of a kind to_char takes
// (timestamp, timestamptz, date, smallint, integer, bigint, numeric, real,
// double precision): the text, or ok false for PostgreSQL's NULL results
// (an infinite timestamp, an empty date/time template). TIMESTAMPTZ
// values are shown in ctx's time zone; a DATE is read as midnight there,
// as PostgreSQL's cast to timestamptz does. A smallint formats as double
// precision, the overload PostgreSQL picks for it.
func ToChar(ctx *Context, v types.Datum, tmpl string) (s string, ok bool, err error) {
	k := v.Kind()
	switch k {
	case types.KindDate:
		d := v.Date()
		switch d {
		case types.DateInfinity, types.DateNegInfinity:
			return "", false, nil
		}
		us := localToUTC(int64(d)*microsPerDay, ctx.Location())
		v, k = types.NewTimestampTZ(us), types.KindTimestampTZ
	case types.KindInt16:
		v, k = types.NewFloat64(float64(v.Int64())), types.KindFloat64
	}
	if tmpl == "" && !toCharIsNumber(k) {
		return "", false, nil // PostgreSQL's NULL for an empty date/time template
	}
	c, err := compiledToChar(k, tmpl)
	if err != nil {
		return "", false, err
	}
	switch k {
	case types.KindTimestamp, types.KindTimestampTZ:
		return dchToChar(ctx, c.([]dchNode), v)
	case types.KindInt32, types.KindInt64, types.KindNumeric, types.KindFloat32, types.KindFloat64:
		s, err := c.(*numTemplate).format(v)
		return s, err == nil, err
	}
	return "", false, errorf(sqlerr.UndefinedFunction, "function to_char(%s, text) does not exist", strings.ToLower(k.String()))
}

// registerToChar adds the to_char overloads.
func registerToChar(r *Registry) {
	check := func(args []Expr) error {
		c, ok := args[1].(*Const)
		if !ok || c.Value.IsNull() {
			return nil
		}
		return CheckToChar(args[0].Type().Kind, c.Value.Str())
	}
	for _, k := range []types.Kind{types.KindTimestamp, types.KindTimestampTZ, types.KindInt32, types.KindInt64,
		types.KindNumeric, types.KindFloat32, types.KindFloat64} {
		f := strict("to_char", kinds(k, kText), kText, func(ctx *Context, a []types.Datum) (types.Datum, error) {
			s, ok, err := ToChar(ctx, a[0], a[1].Str())
			if err != nil || !ok {
				return types.Null, err
			}
			return text(s)
		})
		f.Check = check
		r.Add(f)
	}
}

// ---- date/time templates ----

// dchID names a date/time keyword's behaviour.
type dchID uint8

const (
	dchLiteral dchID = iota
	dchADdots        // A.D. / B.C.
	dchADdotsLower
	dchAD
	dchADLower
	dchAMdots // A.M. / P.M.
	dchAMdotsLower
	dchAM
	dchAMLower
	dchCC
	dchDAY
	dchDay
	dchDayLower
	dchDDD
	dchDD
	dchDY
	dchDy
	dchDyLower
	dchD
	dchFF1
	dchFF2
	dchFF3
	dchFF4
	dchFF5
	dchFF6
	dchFX
	dchHH24
	dchHH12
	dchIDDD
	dchISODow
	dchIW
	dchIYYY
	dchIYY
	dchIY
	dchI
	dchJ
	dchMI
	dchMM
	dchMONTH
	dchMonth
	dchMonthLower
	dchMON
	dchMon
	dchMonLower
	dchMS
	dchOF
	dchQ
	dchRM
	dchRMLower
	dchSSSS
	dchSS
	dchTZH
	dchTZM
	dchTZ
	dchTZLower
	dchUS
	dchWW
	dchW
	dchYComma
	dchYYYY
	dchYYY
	dchYY
	dchY
)

// dchKeyword is one date/time keyword as written in a template.
type dchKeyword struct {
	name string
	id   dchID
}

// dchKeywords are PostgreSQL 15's, in its search order: keywords that
// share a first letter are tried in this order and the first that the
// template continues with wins (HH24 before HH).
var dchKeywords = []dchKeyword{
	{"A.D.", dchADdots}, {"A.M.", dchAMdots}, {"AD", dchAD}, {"AM", dchAM},
	{"B.C.", dchADdots}, {"BC", dchAD},
	{"CC", dchCC},
	{"DAY", dchDAY}, {"DDD", dchDDD}, {"DD", dchDD}, {"DY", dchDY}, {"Day", dchDay}, {"Dy", dchDy}, {"D", dchD},
	{"FF1", dchFF1}, {"FF2", dchFF2}, {"FF3", dchFF3}, {"FF4", dchFF4}, {"FF5", dchFF5}, {"FF6", dchFF6}, {"FX", dchFX},
	{"HH24", dchHH24}, {"HH12", dchHH12}, {"HH", dchHH12},
	{"IDDD", dchIDDD}, {"ID", dchISODow}, {"IW", dchIW}, {"IYYY", dchIYYY}, {"IYY", dchIYY}, {"IY", dchIY}, {"I", dchI},
	{"J", dchJ},
	{"MI", dchMI}, {"MM", dchMM}, {"MONTH", dchMONTH}, {"MON", dchMON}, {"MS", dchMS}, {"Month", dchMonth}, {"Mon", dchMon},
	{"OF", dchOF},
	{"P.M.", dchAMdots}, {"PM", dchAM},
	{"Q", dchQ},
	{"RM", dchRM},
	{"SSSSS", dchSSSS}, {"SSSS", dchSSSS}, {"SS", dchSS},
	{"TZH", dchTZH}, {"TZM", dchTZM}, {"TZ", dchTZ},
	{"US", dchUS},
	{"WW", dchWW}, {"W", dchW},
	{"Y,YYY", dchYComma}, {"YYYY", dchYYYY}, {"YYY", dchYYY}, {"YY", dchYY}, {"Y", dchY},
	{"a.d.", dchADdotsLower}, {"a.m.", dchAMdotsLower}, {"ad", dchADLower}, {"am", dchAMLower},
	{"b.c.", dchADdotsLower}, {"bc", dchADLower},
	{"cc", dchCC},
	{"day", dchDayLower}, {"ddd", dchDDD}, {"dd", dchDD}, {"dy", dchDyLower}, {"d", dchD},
	{"ff1", dchFF1}, {"ff2", dchFF2}, {"ff3", dchFF3}, {"ff4", dchFF4}, {"ff5", dchFF5}, {"ff6", dchFF6}, {"fx", dchFX},
	{"hh24", dchHH24}, {"hh12", dchHH12}, {"hh", dchHH12},
	{"iddd", dchIDDD}, {"id", dchISODow}, {"iw", dchIW}, {"iyyy", dchIYYY}, {"iyy", dchIYY}, {"iy", dchIY}, {"i", dchI},
	{"j", dchJ},
	{"mi", dchMI}, {"mm", dchMM}, {"month", dchMonthLower}, {"mon", dchMonLower}, {"ms", dchMS},
	{"of", dchOF},
	{"p.m.", dchAMdotsLower}, {"pm", dchAMLower},
	{"q", dchQ},
	{"rm", dchRMLower},
	{"sssss", dchSSSS}, {"ssss", dchSSSS}, {"ss", dchSS},
	{"tzh", dchTZH}, {"tzm", dchTZM}, {"tz", dchTZLower},
	{"us", dchUS},
	{"ww", dchWW}, {"w", dchW},
	{"y,yyy", dchYComma}, {"yyyy", dchYYYY}, {"yyy", dchYYY}, {"yy", dchYY}, {"y", dchY},
}

// Suffix flags of a date/time keyword.
const (
	sufFM = 1 << iota // FM prefix: no padding
	sufTM             // TM prefix: names unpadded
	sufTH             // TH: upper-case ordinal
	sufth             // th: lower-case ordinal
)

// dchNode is a keyword with its suffixes, or literal text.
type dchNode struct {
	id  dchID
	suf uint8
	lit string // for dchLiteral
}

// matchDCH returns the first date/time keyword, in dchKeywords' order,
// that s starts with.
func matchDCH(s string) (dchKeyword, bool) {
	for _, k := range dchKeywords {
		if k.name[0] == s[0] && strings.HasPrefix(s, k.name) {
			return k, true
		}
	}
	return dchKeyword{}, false
}

// parseDCH compiles a date/time template; every template compiles.
func parseDCH(s string) []dchNode {
	var out []dchNode
	lit := func(t string) {
		if n := len(out); n > 0 && out[n-1].id == dchLiteral {
			out[n-1].lit += t
			return
		}
		out = append(out, dchNode{lit: t})
	}
	for len(s) > 0 {
		var suf uint8
		switch {
		case strings.HasPrefix(s, "FM"), strings.HasPrefix(s, "fm"):
			suf, s = sufFM, s[2:]
		case strings.HasPrefix(s, "TM"), strings.HasPrefix(s, "tm"):
			suf, s = sufTM, s[2:]
		}
		if len(s) == 0 {
			break
		}
		if k, ok := matchDCH(s); ok {
			s = s[len(k.name):]
			switch {
			case strings.HasPrefix(s, "TH"):
				suf, s = suf|sufTH, s[2:]
			case strings.HasPrefix(s, "th"):
				suf, s = suf|sufth, s[2:]
			case strings.HasPrefix(s, "SP"):
				s = s[2:]
			}
			out = append(out, dchNode{id: k.id, suf: suf})
			continue
		}
		var l string
		l, s = templateLiteral(s)
		lit(l)
	}
	return out
}

// templateLiteral reads the literal text at the start of s (a double-
// quoted string, or one character) and returns it with the rest of s.
func templateLiteral(s string) (lit, rest string) {
	if s[0] == '"' {
		var b strings.Builder
		i := 1
		for i < len(s) {
			if s[i] == '"' {
				i++
				break
			}
			if s[i] == '\\' && i+1 < len(s) {
				i++
			}
			n := utf8Len(s[i:])
			b.WriteString(s[i : i+n])
			i += n
		}
		return b.String(), s[i:]
	}
	if s[0] == '\\' && len(s) > 1 && s[1] == '"' {
		return `"`, s[2:]
	}
	n := utf8Len(s)
	return s[:n], s[n:]
}

// utf8Len is the byte length of the character s starts with.
func utf8Len(s string) int {
	for i := 1; i < len(s) && i < 4; i++ {
		if s[i]&0xC0 != 0x80 {
			return i
		}
	}
	return min(len(s), 4)
}

var (
	monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July",
		"August", "September", "October", "November", "December"}
	dayNames = [...]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	// eraNames and meridiemNames are indexed from dchADdots and dchAMdots.
	eraNames      = [...][2]string{{"A.D.", "B.C."}, {"a.d.", "b.c."}, {"AD", "BC"}, {"ad", "bc"}}
	meridiemNames = [...][2]string{{"A.M.", "P.M."}, {"a.m.", "p.m."}, {"AM", "PM"}, {"am", "pm"}}
	romanMonths   = [...]string{"I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"}
	toCharPadding = "         " // names pad to 9 characters, roman months to 4
)

// appendPad appends v in decimal, zero-padded to width (the sign
// counts), as C's %0*d.
func appendPad(out []byte, v int64, width int) []byte {
	var buf [20]byte
	d := strconv.AppendInt(buf[:0], absInt(v), 10)
	w := width
	if v < 0 {
		out = append(out, '-')
		w--
	}
	for i := len(d); i < w; i++ {
		out = append(out, '0')
	}
	return append(out, d...)
}

// ordinal is PostgreSQL's get_th: st, nd, rd or th for the number whose
// text s ends with a digit, upper-case if upper.
func ordinal(s string, upper bool) string {
	th := "th"
	if n := len(s); n > 0 && !(n > 1 && s[n-2] == '1') {
		switch s[n-1] {
		case '1':
			th = "st"
		case '2':
			th = "nd"
		case '3':
			th = "rd"
		}
	}
	if upper {
		return strings.ToUpper(th)
	}
	return th
}

// dchToChar formats a timestamp or timestamptz.
func dchToChar(ctx *Context, nodes []dchNode, v types.Datum) (string, bool, error) {
	us := v.Micros()
	if isInfTimestamp(us) {
		return "", false, nil
	}
	wall, off, zone := us, int64(0), ""
	hasZone := v.Kind() == types.KindTimestampTZ
	if hasZone {
		t := time.Unix(floorDiv(us, microsPerSecond), 0).In(ctx.Location())
		name, o := t.Zone()
		off, zone = int64(o), name
		wall = us + off*microsPerSecond
	}
	c := civilOf(wall)
	out := make([]byte, 0, 2*len(nodes)+16)
	for _, n := range nodes {
		fm := n.suf&sufFM != 0
		width := func(w int) int {
			if fm {
				return 0
			}
			return w
		}
		name := func(s string, pad bool) {
			out = append(out, s...)
			if pad && !fm && n.suf&sufTM == 0 && len(s) < 9 {
				out = append(out, toCharPadding[:9-len(s)]...)
			}
		}
		start, isNum := len(out), false
		year := c.year
		adjYear := year
		if adjYear <= 0 {
			adjYear = -(adjYear - 1)
		}
		isoYear := int64(c.isoYear)
		if isoYear <= 0 {
			isoYear = -(isoYear - 1)
		}
		twoOrThree := func(out []byte, v int64, w int) []byte { // %0*d with w, one more for negatives
			if v < 0 {
				w++
			}
			return appendPad(out, v, width(w))
		}
		switch n.id {
		case dchLiteral:
			out = append(out, n.lit...)
		case dchADdots, dchADdotsLower, dchAD, dchADLower:
			s := eraNames[n.id-dchADdots]
			if year <= 0 {
				out = append(out, s[1]...)
			} else {
				out = append(out, s[0]...)
			}
		case dchAMdots, dchAMdotsLower, dchAM, dchAMLower:
			s := meridiemNames[n.id-dchAMdots]
			if c.hour >= 12 {
				out = append(out, s[1]...)
			} else {
				out = append(out, s[0]...)
			}
		case dchHH12:
			h := int64(c.hour % 12)
			if h == 0 {
				h = 12
			}
			out, isNum = appendPad(out, h, width(2)), true
		case dchHH24:
			out, isNum = appendPad(out, int64(c.hour), width(2)), true
		case dchMI:
			out, isNum = appendPad(out, int64(c.minute), width(2)), true
		case dchSS:
			out, isNum = appendPad(out, int64(c.second), width(2)), true
		case dchFF1, dchFF2, dchFF3, dchFF4, dchFF5, dchFF6:
			digits := int(n.id-dchFF1) + 1
			out, isNum = appendPad(out, c.usec/int64(pow10[6-digits]), digits), true
		case dchMS:
			out, isNum = appendPad(out, c.usec/1000, 3), true
		case dchUS:
			out, isNum = appendPad(out, c.usec, 6), true
		case dchSSSS:
			out, isNum = strconv.AppendInt(out, int64(c.hour*3600+c.minute*60+c.second), 10), true
		case dchTZ:
			out = append(out, zone...)
		case dchTZLower:
			out = append(out, strings.ToLower(zone)...)
		case dchTZH:
			sign := byte('+')
			if off < 0 {
				sign = '-'
			}
			out = append(out, sign)
			out = appendPad(out, absInt(off)/3600, 2)
		case dchTZM:
			out = appendPad(out, absInt(off)%3600/60, 2)
		case dchOF:
			sign := byte('+')
			if off < 0 {
				sign = '-'
			}
			out = append(out, sign)
			out = appendPad(out, absInt(off)/3600, width(2))
			if m := absInt(off) % 3600; m != 0 {
				out = appendPad(append(out, ':'), m/60, 2)
			}
		case dchMONTH:
			name(strings.ToUpper(monthNames[c.month-1]), true)
		case dchMonth:
			name(monthNames[c.month-1], true)
		case dchMonthLower:
			name(strings.ToLower(monthNames[c.month-1]), true)
		case dchMON:
			out = append(out, strings.ToUpper(monthNames[c.month-1][:3])...)
		case dchMon:
			out = append(out, monthNames[c.month-1][:3]...)
		case dchMonLower:
			out = append(out, strings.ToLower(monthNames[c.month-1][:3])...)
		case dchMM:
			out, isNum = appendPad(out, int64(c.month), width(2)), true
		case dchDAY:
			name(strings.ToUpper(dayNames[c.dow]), true)
		case dchDay:
			name(dayNames[c.dow], true)
		case dchDayLower:
			name(strings.ToLower(dayNames[c.dow]), true)
		case dchDY:
			out = append(out, strings.ToUpper(dayNames[c.dow][:3])...)
		case dchDy:
			out = append(out, dayNames[c.dow][:3]...)
		case dchDyLower:
			out = append(out, strings.ToLower(dayNames[c.dow][:3])...)
		case dchDDD:
			out, isNum = appendPad(out, int64(c.yday), width(3)), true
		case dchIDDD:
			isodow := c.dow
			if isodow == 0 {
				isodow = 7
			}
			out, isNum = appendPad(out, int64((c.isoWeek-1)*7+isodow), width(3)), true
		case dchDD:
			out, isNum = appendPad(out, int64(c.day), width(2)), true
		case dchD:
			out, isNum = strconv.AppendInt(out, int64(c.dow+1), 10), true
		case dchISODow:
			isodow := c.dow
			if isodow == 0 {
				isodow = 7
			}
			out, isNum = strconv.AppendInt(out, int64(isodow), 10), true
		case dchWW:
			out, isNum = appendPad(out, int64((c.yday-1)/7+1), width(2)), true
		case dchIW:
			out, isNum = appendPad(out, int64(c.isoWeek), width(2)), true
		case dchQ:
			out, isNum = strconv.AppendInt(out, int64((c.month-1)/3+1), 10), true
		case dchCC:
			var cc int64
			if year > 0 {
				cc = (year-1)/100 + 1
			} else {
				cc = year/100 - 1
			}
			if cc <= 99 && cc >= -99 {
				out, isNum = twoOrThree(out, cc, 2), true
			} else {
				out, isNum = strconv.AppendInt(out, cc, 10), true
			}
		case dchYComma:
			i := adjYear / 1000
			out = append(strconv.AppendInt(out, i, 10), ',')
			out, isNum = appendPad(out, adjYear-i*1000, 3), true
		case dchYYYY:
			out, isNum = twoOrThree(out, adjYear, 4), true
		case dchIYYY:
			out, isNum = twoOrThree(out, isoYear, 4), true
		case dchYYY:
			out, isNum = appendPad(out, adjYear%1000, width(3)), true
		case dchIYY:
			out, isNum = appendPad(out, isoYear%1000, width(3)), true
		case dchYY:
			out, isNum = appendPad(out, adjYear%100, width(2)), true
		case dchIY:
			out, isNum = appendPad(out, isoYear%100, width(2)), true
		case dchY:
			out, isNum = strconv.AppendInt(out, adjYear%10, 10), true
		case dchI:
			out, isNum = strconv.AppendInt(out, isoYear%10, 10), true
		case dchRM, dchRMLower:
			s := romanMonths[c.month-1]
			if n.id == dchRMLower {
				s = strings.ToLower(s)
			}
			out = append(out, s...)
			if !fm && len(s) < 4 {
				out = append(out, toCharPadding[:4-len(s)]...)
			}
		case dchW:
			out, isNum = strconv.AppendInt(out, int64((c.day-1)/7+1), 10), true
		case dchJ:
			out, isNum = strconv.AppendInt(out, c.days+unixEpochJulian, 10), true
		case dchFX:
		}
		if isNum && n.suf&(sufTH|sufth) != 0 {
			out = append(out, ordinal(string(out[start:]), n.suf&sufTH != 0)...)
		}
	}
	return string(out), true, nil
}
