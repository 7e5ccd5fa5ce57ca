package expr

import (
	"crypto/md5"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// String functions with PostgreSQL 15 semantics in a UTF-8 database:
// lengths and positions count characters (runes), not bytes, except
// octet_length. CHAR and VARCHAR arguments reach these functions through
// the binder's implicit cast to TEXT (which drops CHAR's trailing blanks,
// as bpchar-to-text does), so every overload here takes TEXT.

// SQLSTATEs that package sqlerr does not name yet.
const (
	codeSubstringError       = "22011" // substring_error
	codeInvalidLogArgument   = "2201E" // invalid_argument_for_logarithm
	codeInvalidPowerArgument = "2201F" // invalid_argument_for_power_function
)

// maxStringBytes is the largest string value Postgres can hold (1 GB less
// a header); longer results are "requested length too large" (54000).
const maxStringBytes = 1<<30 - 1

var errLengthTooLarge = sqlerr.New(sqlerr.ProgramLimitExceeded, "requested length too large")

// strict returns a strict overload of name; the usual shape of a
// built-in function.
func strict(name string, params []types.Kind, res types.Kind, eval func(ctx *Context, a []types.Datum) (types.Datum, error)) *Func {
	return &Func{Name: name, Params: params, Strict: true, ResultKind: res, Eval: eval}
}

// kinds is a shorthand for a parameter list.
func kinds(ks ...types.Kind) []types.Kind { return ks }

const (
	kText  = types.KindText
	kInt   = types.KindInt32
	kBool  = types.KindBool
	kFloat = types.KindFloat64
	kNum   = types.KindNumeric
	kJSONB = types.KindJSONB
)

func text(s string) (types.Datum, error) { return types.NewText(s), nil }

// runeSlice returns the characters of s from 0-based rune index from,
// count runes long (clamped to s).
func runeSlice(s string, from, count int64) string {
	if from < 0 {
		count += from
		from = 0
	}
	if count <= 0 {
		return ""
	}
	i := 0
	for range from {
		if i >= len(s) {
			return ""
		}
		_, n := utf8.DecodeRuneInString(s[i:])
		i += n
	}
	j := i
	for range count {
		if j >= len(s) {
			break
		}
		_, n := utf8.DecodeRuneInString(s[j:])
		j += n
	}
	return s[i:j]
}

// substring is Postgres's text_substring: characters from 1-based start
// for count characters (to the end when count < 0 is "not given"); a
// start before 1 shortens the result, as the SQL standard says.
func substring(s string, start, count int64, haveCount bool) (types.Datum, error) {
	if !haveCount {
		if start < 1 {
			start = 1
		}
		return text(runeSlice(s, start-1, int64(len(s))+1))
	}
	if count < 0 {
		return types.Null, errorf(codeSubstringError, "negative substring length not allowed")
	}
	end := start + count // exclusive, 1-based
	if end < start {     // overflow: to the end
		end = int64(len(s)) + 2
	}
	s1 := max(start, 1)
	if end < s1 {
		return text("")
	}
	return text(runeSlice(s, s1-1, end-s1))
}

// strpos returns the 1-based character position of the first sub in s,
// 0 when absent; an empty sub is found at 1.
func strpos(s, sub string) int32 {
	i := strings.Index(s, sub)
	if i < 0 {
		return 0
	}
	return int32(utf8.RuneCountInString(s[:i])) + 1
}

// pad is lpad/rpad: s cut or filled with fill to n characters.
func pad(s string, n int64, fill string, left bool) (types.Datum, error) {
	if n < 0 {
		n = 0
	}
	have := int64(utf8.RuneCountInString(s))
	if have >= n {
		return text(runeSlice(s, 0, n))
	}
	if fill == "" {
		return text(s)
	}
	if n*utf8.UTFMax > maxStringBytes {
		return types.Null, errLengthTooLarge
	}
	fr := []rune(fill)
	var b strings.Builder
	if !left {
		b.WriteString(s)
	}
	for i := int64(0); i < n-have; i++ {
		b.WriteRune(fr[i%int64(len(fr))])
	}
	if left {
		b.WriteString(s)
	}
	return text(b.String())
}

// trimSet removes characters of set from the start and/or end of s.
func trimSet(s, set string, leading, trailing bool) string {
	in := func(r rune) bool { return strings.ContainsRune(set, r) }
	if leading {
		s = strings.TrimLeftFunc(s, in)
	}
	if trailing {
		s = strings.TrimRightFunc(s, in)
	}
	return s
}

// initcap upper-cases the first letter of each run of letters and digits
// and lower-cases the rest, as Postgres's initcap.
func initcap(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	inWord := false
	for _, r := range s {
		if inWord {
			b.WriteRune(unicode.ToLower(r))
		} else {
			b.WriteRune(unicode.ToUpper(r))
		}
		inWord = unicode.IsLetter(r) || unicode.IsDigit(r)
	}
	return b.String()
}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// translate replaces each character of s found in from by the character
// at the same position in to, deleting it when to is shorter.
func translate(s, from, to string) string {
	fr, tr := []rune(from), []rune(to)
	var b strings.Builder
	for _, r := range s {
		i := -1
		for k, f := range fr {
			if f == r {
				i = k
				break
			}
		}
		switch {
		case i < 0:
			b.WriteRune(r)
		case i < len(tr):
			b.WriteRune(tr[i])
		}
	}
	return b.String()
}

// splitPart returns field n (1-based; negative counts from the end) of s
// split at delim; the empty string past the last field.
func splitPart(s, delim string, n int64) (types.Datum, error) {
	if n == 0 {
		return types.Null, errorf(sqlerr.InvalidParameterValue, "field position must not be zero")
	}
	return text(splitPartStr(s, delim, n))
}

// splitPartStr is splitPart for n != 0.
func splitPartStr(s, delim string, n int64) string {
	if s == "" {
		return ""
	}
	if delim == "" {
		if n == 1 || n == -1 {
			return s
		}
		return ""
	}
	if len(delim) == 1 && n > 0 {
		// One byte: a plain scan, cheaper than a strings.Index call per
		// field when fields are short (url path segments).
		d, start := delim[0], 0
		for i := 0; i < len(s); i++ {
			if s[i] == d {
				if n--; n == 0 {
					return s[start:i]
				}
				start = i + 1
			}
		}
		if n == 1 {
			return s[start:]
		}
		return ""
	}
	// The fields are those of strings.Split(s, delim), found one at a time
	// so that no slice of them is built: a negative n counts them first
	// (strings.Count finds the same non-overlapping delimiters, from the
	// left, as Split does).
	if n < 0 {
		n += int64(strings.Count(s, delim)) + 2
		if n < 1 {
			return ""
		}
	}
	rest := s
	for ; n > 1; n-- {
		j := strings.Index(rest, delim)
		if j < 0 {
			return ""
		}
		rest = rest[j+len(delim):]
	}
	if j := strings.Index(rest, delim); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

func repeat(s string, n int64) (types.Datum, error) {
	if n <= 0 || s == "" {
		return text("")
	}
	if int64(len(s))*n > maxStringBytes || n > maxStringBytes {
		return types.Null, errLengthTooLarge
	}
	return text(strings.Repeat(s, int(n)))
}

// chr returns the character with code point n, with Postgres's errors.
func chr(n int64) (types.Datum, error) {
	switch {
	case n < 0:
		return types.Null, errorf(sqlerr.InvalidParameterValue, "character number must be positive")
	case n == 0:
		return types.Null, errorf(sqlerr.ProgramLimitExceeded, "null character not permitted")
	case n > unicode.MaxRune:
		return types.Null, errorf(sqlerr.ProgramLimitExceeded, "requested character too large for encoding: %d", n)
	case n >= 0xD800 && n <= 0xDFFF:
		return types.Null, errorf(sqlerr.ProgramLimitExceeded, "requested character not valid for encoding: %d", n)
	}
	return text(string(rune(n)))
}

// outputText is a value's text output form, as concat and format use it
// (a BOOLEAN prints as t or f, a TIMESTAMPTZ in the session time zone).
func outputText(ctx *Context, d types.Datum) string {
	switch d.Kind() {
	case types.KindChar, types.KindVarchar, types.KindText:
		return d.Str()
	}
	return types.FormatText(d, ctx.Location())
}

// concatArgs joins the non-NULL arguments with sep.
func concatArgs(ctx *Context, args []types.Datum, sep string) string {
	var b strings.Builder
	first := true
	for _, a := range args {
		if a.IsNull() {
			continue
		}
		if !first {
			b.WriteString(sep)
		}
		first = false
		b.WriteString(outputText(ctx, a))
	}
	return b.String()
}

func registerString(r *Registry) {
	s1 := func(name string, res types.Kind, f func(s string) (types.Datum, error)) {
		r.Add(strict(name, kinds(kText), res, func(_ *Context, a []types.Datum) (types.Datum, error) { return f(a[0].Str()) }))
	}
	s2 := func(name string, p2 types.Kind, res types.Kind, f func(a, b types.Datum) (types.Datum, error)) {
		r.Add(strict(name, kinds(kText, p2), res, func(_ *Context, a []types.Datum) (types.Datum, error) { return f(a[0], a[1]) }))
	}
	s3 := func(name string, p2, p3 types.Kind, f func(a, b, c types.Datum) (types.Datum, error)) {
		r.Add(strict(name, kinds(kText, p2, p3), kText, func(_ *Context, a []types.Datum) (types.Datum, error) { return f(a[0], a[1], a[2]) }))
	}
	// text || anynonarray and anynonarray || text: the other operand is
	// cast to text ($1 || $2::text, as Postgres defines textanycat), so
	// 'a' || true is 'atrue' where concat('a', true) is 'at'.
	asText := func(ctx *Context, d types.Datum) (string, error) {
		v, err := types.Cast(d, types.Text, types.CastContext{Loc: ctx.Location(), Explicit: true})
		if err != nil {
			return "", err
		}
		return v.Str(), nil
	}
	r.Add(&Func{Name: "||", Params: kinds(kText, AnyKind), Infix: true, Strict: true, ResultKind: kText,
		Eval: func(ctx *Context, a []types.Datum) (types.Datum, error) {
			s, err := asText(ctx, a[1])
			if err != nil {
				return types.Null, err
			}
			return text(a[0].Str() + s)
		}})
	r.Add(&Func{Name: "||", Params: kinds(AnyKind, kText), Infix: true, Strict: true, ResultKind: kText,
		Eval: func(ctx *Context, a []types.Datum) (types.Datum, error) {
			s, err := asText(ctx, a[0])
			if err != nil {
				return types.Null, err
			}
			return text(s + a[1].Str())
		}})
	r.Add(&Func{Name: "||", Params: kinds(kText, kText), Infix: true, Strict: true, ResultKind: kText,
		Eval: func(_ *Context, a []types.Datum) (types.Datum, error) {
			if len(a[0].Str())+len(a[1].Str()) > maxStringBytes {
				return types.Null, errLengthTooLarge
			}
			return text(a[0].Str() + a[1].Str())
		}})
	for _, name := range []string{"length", "char_length", "character_length"} {
		s1(name, kInt, func(s string) (types.Datum, error) {
			return types.NewInt32(int32(utf8.RuneCountInString(s))), nil
		})
	}
	s1("octet_length", kInt, func(s string) (types.Datum, error) { return types.NewInt32(int32(len(s))), nil })
	s1("bit_length", kInt, func(s string) (types.Datum, error) { return types.NewInt32(int32(8 * len(s))), nil })
	s1("lower", kText, func(s string) (types.Datum, error) { return text(strings.ToLower(s)) })
	s1("upper", kText, func(s string) (types.Datum, error) { return text(strings.ToUpper(s)) })
	s1("initcap", kText, func(s string) (types.Datum, error) { return text(initcap(s)) })
	s1("reverse", kText, func(s string) (types.Datum, error) { return text(reverse(s)) })
	s1("md5", kText, func(s string) (types.Datum, error) {
		sum := md5.Sum([]byte(s))
		return text(hex.EncodeToString(sum[:]))
	})
	s1("ascii", kInt, func(s string) (types.Datum, error) {
		if s == "" {
			return types.NewInt32(0), nil
		}
		c, _ := utf8.DecodeRuneInString(s)
		return types.NewInt32(c), nil
	})
	r.Add(strict("chr", kinds(kInt), kText, func(_ *Context, a []types.Datum) (types.Datum, error) { return chr(a[0].Int64()) }))
	for _, name := range []string{"substr", "substring"} {
		s2(name, kInt, kText, func(a, b types.Datum) (types.Datum, error) { return substring(a.Str(), b.Int64(), 0, false) })
		s3(name, kInt, kInt, func(a, b, c types.Datum) (types.Datum, error) {
			return substring(a.Str(), b.Int64(), c.Int64(), true)
		})
	}
	// position(sub IN s) reaches here as position(s, sub), as in Postgres.
	for _, name := range []string{"strpos", "position"} {
		s2(name, kText, kInt, func(a, b types.Datum) (types.Datum, error) {
			return types.NewInt32(strpos(a.Str(), b.Str())), nil
		})
	}
	s2("left", kInt, kText, func(a, b types.Datum) (types.Datum, error) {
		s, n := a.Str(), b.Int64()
		if n < 0 {
			n += int64(utf8.RuneCountInString(s))
		}
		return text(runeSlice(s, 0, n))
	})
	s2("right", kInt, kText, func(a, b types.Datum) (types.Datum, error) {
		s, n := a.Str(), b.Int64()
		l := int64(utf8.RuneCountInString(s))
		if n < 0 {
			n += l
		}
		n = min(max(n, 0), l)
		return text(runeSlice(s, l-n, n))
	})
	for _, left := range []bool{true, false} {
		left := left
		name := "rpad"
		if left {
			name = "lpad"
		}
		s2(name, kInt, kText, func(a, b types.Datum) (types.Datum, error) { return pad(a.Str(), b.Int64(), " ", left) })
		s3(name, kInt, kText, func(a, b, c types.Datum) (types.Datum, error) { return pad(a.Str(), b.Int64(), c.Str(), left) })
	}
	for _, t := range []struct {
		name              string
		leading, trailing bool
	}{{"ltrim", true, false}, {"rtrim", false, true}, {"btrim", true, true}} {
		t := t
		s1(t.name, kText, func(s string) (types.Datum, error) { return text(trimSet(s, " ", t.leading, t.trailing)) })
		s2(t.name, kText, kText, func(a, b types.Datum) (types.Datum, error) {
			return text(trimSet(a.Str(), b.Str(), t.leading, t.trailing))
		})
	}
	s3("replace", kText, kText, func(a, b, c types.Datum) (types.Datum, error) {
		if b.Str() == "" {
			return a, nil
		}
		return text(strings.ReplaceAll(a.Str(), b.Str(), c.Str()))
	})
	s3("split_part", kText, kInt, func(a, b, c types.Datum) (types.Datum, error) { return splitPart(a.Str(), b.Str(), c.Int64()) })
	for _, k := range []types.Kind{kInt, types.KindInt64} {
		bits := 32
		if k == types.KindInt64 {
			bits = 64
		}
		r.Add(strict("to_hex", kinds(k), kText, func(_ *Context, a []types.Datum) (types.Datum, error) {
			// Two's complement: to_hex(-1) is ffffffff.
			v := uint64(a[0].Int64())
			if bits == 32 {
				v = uint64(uint32(v))
			}
			return text(strconv.FormatUint(v, 16))
		}))
	}
	s2("repeat", kInt, kText, func(a, b types.Datum) (types.Datum, error) { return repeat(a.Str(), b.Int64()) })
	s3("translate", kText, kText, func(a, b, c types.Datum) (types.Datum, error) { return text(translate(a.Str(), b.Str(), c.Str())) })
	s2("starts_with", kText, kBool, func(a, b types.Datum) (types.Datum, error) {
		return types.NewBool(strings.HasPrefix(a.Str(), b.Str())), nil
	})
	r.Add(&Func{Name: "^@", Params: kinds(kText, kText), Infix: true, Strict: true, ResultKind: kBool,
		Eval: func(_ *Context, a []types.Datum) (types.Datum, error) {
			return types.NewBool(strings.HasPrefix(a[0].Str(), a[1].Str())), nil
		}})
	// concat and concat_ws take "any", as in Postgres: each value is
	// printed with its output function.
	r.Add(&Func{Name: "concat", Params: kinds(AnyKind), Variadic: true, ResultKind: kText,
		Eval: func(ctx *Context, a []types.Datum) (types.Datum, error) { return text(concatArgs(ctx, a, "")) }})
	r.Add(&Func{Name: "concat_ws", Params: kinds(kText, AnyKind), Variadic: true, ResultKind: kText,
		Eval: func(ctx *Context, a []types.Datum) (types.Datum, error) {
			if a[0].IsNull() {
				return types.Null, nil
			}
			return text(concatArgs(ctx, a[1:], a[0].Str()))
		}})
}
