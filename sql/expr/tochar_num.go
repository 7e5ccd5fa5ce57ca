package expr

import (
	"math"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Number templates of to_char (see tochar.go for what is supported).
//
// A template is compiled into nodes and a description: how many digit
// positions come before (pre) and after (post) the decimal point, where
// the first 0 is, and which sign style it asks for. Formatting then has
// two steps, as in PostgreSQL: the value becomes a sign and a digit
// string rounded to post fractional digits (or # in every position when
// the integer part has more digits than pre), and the nodes are written
// out left to right, each digit position taking the next character of
// the digit string, blanks (or zeros after a 0) standing in for the
// integer digits the value lacks.

// numKey names a number keyword.
type numKey uint8

const (
	nkLiteral numKey = iota
	nkComma
	nkDec
	nk0
	nk9
	nkB
	nkC
	nkD
	nkEEEE
	nkFM
	nkG
	nkL
	nkMI
	nkPL
	nkPR
	nkRN
	nkSG
	nkSP
	nkS
	nkTH
	nkThLower
	nkV
)

// numKeywords are PostgreSQL 15's number keywords in its search order.
var numKeywords = []struct {
	name string
	key  numKey
}{
	{",", nkComma}, {".", nkDec}, {"0", nk0}, {"9", nk9}, {"B", nkB}, {"C", nkC}, {"D", nkD},
	{"EEEE", nkEEEE}, {"FM", nkFM}, {"G", nkG}, {"L", nkL}, {"MI", nkMI}, {"PL", nkPL}, {"PR", nkPR},
	{"RN", nkRN}, {"SG", nkSG}, {"SP", nkSP}, {"S", nkS}, {"TH", nkTH}, {"V", nkV},
	{"b", nkB}, {"c", nkC}, {"d", nkD}, {"eeee", nkEEEE}, {"fm", nkFM}, {"g", nkG}, {"l", nkL},
	{"mi", nkMI}, {"pl", nkPL}, {"pr", nkPR}, {"rn", nkRN}, {"sg", nkSG}, {"sp", nkSP}, {"s", nkS},
	{"th", nkThLower}, {"v", nkV},
}

// Number template flags.
const (
	nfDecimal = 1 << iota
	nfZero
	nfFill
	nfLSign
	nfBracket
	nfMinus
	nfPlus
)

// numNode is a keyword or a literal.
type numNode struct {
	key numKey
	lit string
}

// numTemplate is a compiled number template.
type numTemplate struct {
	nodes             []numNode
	pre, post         int
	flags             int
	zeroStart         int // 1-based position of the first 0 before the decimal point; 0 if none
	zeroEnd           int
	lsignPre          bool // S before the digits (else after)
	lsignSet          bool
	preLSignNum       int
	hasDigitsOrPoints bool
}

func numSyntaxError(msg string) error { return errorf(sqlerr.SyntaxError, "%s", msg) }

// parseNumTemplate compiles a number template, with PostgreSQL's errors
// for contradictory patterns and 0A000 for the ones Strata lacks.
func parseNumTemplate(s string) (*numTemplate, error) {
	t := &numTemplate{}
	for len(s) > 0 {
		found := false
		for _, k := range numKeywords {
			if k.name[0] == s[0] && strings.HasPrefix(s, k.name) {
				s = s[len(k.name):]
				if err := t.add(k.key, k.name); err != nil {
					return nil, err
				}
				t.nodes = append(t.nodes, numNode{key: k.key})
				found = true
				break
			}
		}
		if found {
			continue
		}
		var l string
		l, s = templateLiteral(s)
		t.nodes = append(t.nodes, numNode{lit: l})
	}
	return t, nil
}

// add records keyword k (spelled name) in the description.
func (t *numTemplate) add(k numKey, name string) error {
	f := &t.flags
	switch k {
	case nkEEEE, nkRN, nkV:
		return errorf(sqlerr.FeatureNotSupported, "to_char pattern %q is not supported", name)
	case nk9:
		if *f&nfBracket != 0 {
			return numSyntaxError(`"9" must be ahead of "PR"`)
		}
		if *f&nfDecimal != 0 {
			t.post++
		} else {
			t.pre++
		}
	case nk0:
		if *f&nfBracket != 0 {
			return numSyntaxError(`"0" must be ahead of "PR"`)
		}
		if *f&(nfZero|nfDecimal) == 0 {
			*f |= nfZero
			t.zeroStart = t.pre + 1
		}
		if *f&nfDecimal == 0 {
			t.pre++
		} else {
			t.post++
		}
		t.zeroEnd = t.pre + t.post
	case nkD, nkDec:
		if *f&nfDecimal != 0 {
			return numSyntaxError("multiple decimal points")
		}
		*f |= nfDecimal
	case nkFM:
		*f |= nfFill
	case nkS:
		if *f&nfLSign != 0 {
			return numSyntaxError(`cannot use "S" twice`)
		}
		if *f&(nfPlus|nfMinus|nfBracket) != 0 {
			return numSyntaxError(`cannot use "S" and "PL"/"MI"/"SG"/"PR" together`)
		}
		if *f&nfDecimal == 0 {
			t.lsignPre, t.lsignSet = true, true
			t.preLSignNum = t.pre
			*f |= nfLSign
		} else if !t.lsignSet {
			t.lsignSet = true
			*f |= nfLSign
		}
	case nkMI:
		if *f&nfLSign != 0 {
			return numSyntaxError(`cannot use "S" and "MI" together`)
		}
		*f |= nfMinus
	case nkPL:
		if *f&nfLSign != 0 {
			return numSyntaxError(`cannot use "S" and "PL" together`)
		}
		*f |= nfPlus
	case nkSG:
		if *f&nfLSign != 0 {
			return numSyntaxError(`cannot use "S" and "SG" together`)
		}
		*f |= nfMinus | nfPlus
	case nkPR:
		if *f&(nfLSign|nfPlus|nfMinus) != 0 {
			return numSyntaxError(`cannot use "PR" and "S"/"PL"/"MI"/"SG" together`)
		}
		*f |= nfBracket
	}
	return nil
}

// digits returns the sign ('+' or '-') and the digit string of v for
// the template: the absolute value rounded to post fractional digits,
// or # in every digit position when its integer part is too long.
//
// post is the number of fractional digits: the template's, or fewer for
// floating point (PostgreSQL lowers it for the whole formatting).
func (t *numTemplate) digits(v types.Datum) (sign byte, num string, preSpaces, post int) {
	post = t.post
	switch v.Kind() {
	case types.KindInt32, types.KindInt64:
		i := v.Int64()
		num = strconv.FormatInt(i, 10)
		if i < 0 {
			num = num[1:]
		}
		sign = '+'
		if i < 0 {
			sign = '-'
		}
		if post > 0 {
			num += "." + strings.Repeat("0", post)
		}
	case types.KindNumeric:
		num, sign = numericDigits(v.Decimal(), post)
	case types.KindFloat32, types.KindFloat64:
		f, digits := v.Float64(), 15
		if v.Kind() == types.KindFloat32 {
			digits = 6
		}
		num, sign, post = floatDigits(f, post, digits)
	}
	preLen := strings.IndexByte(num, '.')
	if preLen < 0 {
		preLen = len(num)
	}
	switch {
	case preLen < t.pre:
		preSpaces = t.pre - preLen
	case preLen > t.pre:
		num = strings.Repeat("#", t.pre) + "." + strings.Repeat("#", post)
	}
	return sign, num, preSpaces, post
}

// numericDigits is NUMERIC d rounded half away from zero to post
// fractional digits, as text without sign, and its sign (a zero result
// is positive). NaN is "NaN", infinities "Infinity".
func numericDigits(d *apd.Decimal, post int) (string, byte) {
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return "NaN", '+'
	case apd.Infinite:
		if d.Negative {
			return "Infinity", '-'
		}
		return "Infinity", '+'
	}
	var r apd.Decimal
	exp := int64(d.Exponent)
	if exp < 0 {
		exp = -exp
	}
	c := apd.BaseContext.WithPrecision(uint32(d.NumDigits() + exp + int64(post) + 2))
	c.Rounding = apd.RoundHalfUp
	if _, err := c.Quantize(&r, d, -int32(post)); err != nil {
		panic("expr: to_char rounding: " + err.Error())
	}
	sign := byte('+')
	if r.Negative && !r.IsZero() {
		sign = '-'
	}
	r.Negative = false
	return r.Text('f'), sign
}

// floatDigits is f printed as C's %.*f with post fractional digits, post
// first reduced so that at most maxDigits digits are printed (the integer
// part's digits count), without its sign, and the sign; NaN is "NaN" and
// infinities "Infinity", as PostgreSQL's snprintf prints them. It also
// returns the lowered post.
func floatDigits(f float64, post, maxDigits int) (string, byte, int) {
	sign := byte('+')
	if math.Signbit(f) && !math.IsNaN(f) {
		sign = '-'
	}
	special := ""
	switch {
	case math.IsNaN(f):
		special, sign = "NaN", '+'
	case math.IsInf(f, 0):
		special = "Infinity"
	}
	preLen := len(special)
	if special == "" {
		preLen = len(strconv.FormatFloat(math.Abs(f), 'f', 0, 64))
	}
	if preLen >= maxDigits {
		post = 0
	} else if preLen+post > maxDigits {
		post = maxDigits - preLen
	}
	if special != "" {
		return special, sign, post
	}
	return strconv.FormatFloat(math.Abs(f), 'f', post, 64), sign, post
}

// numWriter is the state of writing one number out.
type numWriter struct {
	t         *numTemplate
	flags     int
	out       []byte
	cut       int // length of the output where a digit position ran past the digit string; -1 if none
	num       string
	p         int // next character of num
	sign      byte
	signDone  bool
	inNumber  bool // the last digit position wrote a digit
	cur       int  // digit positions written
	preSpaces int
	post      int // fractional digits
	count     int
	lastRel   int // index in num of the last fractional digit to show (FM), -1 for all
	zeroStart int // 0-based, -1 if none
	lsignPre  bool
}

func (w *numWriter) write(s string) { w.out = append(w.out, s...) }

func (w *numWriter) has(f int) bool { return w.flags&f != 0 }

// predecimalSpace: the integer part is a lone 0 that a template without
// 0 shows as a blank ('0.1' with 9.9 is "  .1").
func (w *numWriter) predecimalSpace() bool {
	return !w.has(nfZero) && w.p == 0 && len(w.num) > 0 && w.num[0] == '0' && w.post != 0
}

func (w *numWriter) lastRelIsPoint() bool { return w.lastRel >= 0 && w.num[w.lastRel] == '.' }

// format writes v with the template. The only error is PostgreSQL's for
// TH after a digit string that does not end in a digit (no digit
// positions, NaN).
func (t *numTemplate) format(v types.Datum) (string, error) {
	sign, num, preSpaces, post := t.digits(v)
	w := &numWriter{t: t, flags: t.flags, num: num, sign: sign, preSpaces: preSpaces, post: post, cut: -1, lastRel: -1,
		zeroStart: t.zeroStart - 1, lsignPre: t.lsignPre}
	if w.has(nfPlus) || w.has(nfMinus) {
		w.signDone = !(w.has(nfPlus) && !w.has(nfMinus))
	} else {
		if sign != '-' && w.has(nfFill) {
			w.flags &^= nfBracket
		}
		w.signDone = sign == '+' && w.has(nfFill) && !w.has(nfLSign)
		if w.lsignPre && t.pre == t.preLSignNum {
			w.lsignPre = false
		}
	}
	w.count = post + t.pre - 1
	if w.has(nfFill) && w.has(nfDecimal) {
		w.lastRel = lastRelevantDigit(num)
		if w.lastRel >= 0 && t.zeroEnd > preSpaces {
			if last := min(len(num)-1, t.zeroEnd-preSpaces); w.lastRel < last {
				w.lastRel = last
			}
		}
	}
	if !w.signDone && preSpaces == 0 {
		w.count++
	}
	for _, n := range t.nodes {
		switch n.key {
		case nkLiteral:
			w.write(n.lit)
		case nk9, nk0, nkDec, nkD:
			w.digitPosition(n.key)
		case nkComma, nkG:
			if w.inNumber {
				w.write(",")
			} else if !w.has(nfFill) {
				w.write(" ")
			}
		case nkL:
			w.write(" ")
		case nkTH, nkThLower:
			if num[0] == '#' || sign == '-' || w.has(nfDecimal) {
				continue
			}
			if c := num[len(num)-1]; c < '0' || c > '9' {
				return "", errorf(sqlerr.InvalidTextRepresentation, "%q is not a number", num)
			}
			w.write(ordinal(num, n.key == nkTH))
		case nkMI:
			if sign == '-' {
				w.write("-")
			} else if !w.has(nfFill) {
				w.write(" ")
			}
		case nkPL:
			if sign == '+' {
				w.write("+")
			} else if !w.has(nfFill) {
				w.write(" ")
			}
		case nkSG:
			w.out = append(w.out, sign)
		}
	}
	if w.cut >= 0 {
		return string(w.out[:w.cut]), nil
	}
	return string(w.out), nil
}

// lastRelevantDigit is the index of the last fractional digit of num that
// is not 0, or of its decimal point when there is none; -1 without a
// decimal point.
func lastRelevantDigit(num string) int {
	i := strings.IndexByte(num, '.')
	if i < 0 {
		return -1
	}
	last := i
	for j := i + 1; j < len(num); j++ {
		if num[j] != '0' {
			last = j
		}
	}
	return last
}

// digitPosition writes a 9, 0 or decimal point of the template, with the
// sign before the first digit written.
func (w *numWriter) digitPosition(k numKey) {
	w.inNumber = false
	if !w.signDone && (w.cur >= w.preSpaces || w.has(nfZero) && w.zeroStart == w.cur) &&
		(!w.predecimalSpace() || w.lastRelIsPoint()) {
		switch {
		case w.has(nfLSign):
			if w.lsignPre {
				w.writeSign()
				w.signDone = true
			}
		case w.has(nfBracket):
			if w.sign == '+' {
				w.write(" ")
			} else {
				w.write("<")
			}
			w.signDone = true
		case w.sign == '+':
			if !w.has(nfFill) {
				w.write(" ")
			}
			w.signDone = true
		case w.sign == '-':
			w.write("-")
			w.signDone = true
		}
	}
	switch {
	case w.cur < w.preSpaces && (w.zeroStart > w.cur || !w.has(nfZero)):
		if !w.has(nfFill) {
			w.write(" ")
		}
	case w.has(nfZero) && w.cur < w.preSpaces && w.zeroStart <= w.cur:
		w.write("0")
		w.inNumber = true
	default:
		if w.p < len(w.num) && w.num[w.p] == '.' {
			w.write(".")
		} else {
			switch {
			case w.lastRel >= 0 && w.p > w.lastRel && k != nk0:
			case w.predecimalSpace():
				if !w.has(nfFill) {
					w.write(" ")
				} else if w.lastRelIsPoint() {
					w.write("0")
				}
			default:
				if w.p >= len(w.num) {
					if w.cut < 0 {
						w.cut = len(w.out) // PostgreSQL writes the string's end here
					}
				} else {
					w.out = append(w.out, w.num[w.p])
				}
				w.inNumber = true
			}
		}
		if w.p < len(w.num) {
			w.p++
		}
	}
	end := w.count
	if w.preSpaces > 0 {
		end++
	}
	if w.has(nfDecimal) {
		end++
	}
	if w.lastRel >= 0 && w.lastRel == w.p {
		end = w.cur
	}
	if w.cur+1 == end {
		switch {
		case w.signDone && w.has(nfBracket):
			if w.sign == '+' {
				w.write(" ")
			} else {
				w.write(">")
			}
		case w.has(nfLSign) && !w.lsignPre:
			w.writeSign()
		}
	}
	w.cur++
}

func (w *numWriter) writeSign() {
	if w.sign == '-' {
		w.write("-")
	} else {
		w.write("+")
	}
}
