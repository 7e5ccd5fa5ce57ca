package datagen

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// durationUnits maps Flink's duration unit labels (TimeUtils.TimeUnit) to
// their length. Flink accepts each label also with a trailing "s" except
// d, h, min, s, ms, µs and ns; "m" for minutes is a later Flink label.
var durationUnits = map[string]time.Duration{
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
	"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"m": time.Minute, "min": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"ms": time.Millisecond, "milli": time.Millisecond, "millis": time.Millisecond,
	"millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"µs": time.Microsecond, "micro": time.Microsecond, "micros": time.Microsecond,
	"microsecond": time.Microsecond, "microseconds": time.Microsecond,
	"ns": time.Nanosecond, "nano": time.Nanosecond, "nanos": time.Nanosecond,
	"nanosecond": time.Nanosecond, "nanoseconds": time.Nanosecond,
}

// parseDuration reads a Duration option as Flink's
// TimeUtils.parseDuration does: leading and trailing spaces are ignored,
// then a whole number (digits only: no sign, no fraction), optional
// spaces, and a unit label in any case (durationUnits); without a label
// the number counts milliseconds. Examples: "5 s", "1min", "500" (500
// ms), "2 hours". Errors say what is wrong: empty text, no leading
// number, an unknown unit, or a length past time.Duration's (about 292
// years).
func parseDuration(text string) (time.Duration, error) {
	s := strings.TrimSpace(text)
	if s == "" {
		return 0, fmt.Errorf("is empty")
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("does not start with a whole number")
	}
	n, err := strconv.ParseUint(s[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("is too long a number")
	}
	label := strings.ToLower(strings.TrimSpace(s[i:]))
	unit := time.Millisecond
	if label != "" {
		u, ok := durationUnits[label]
		if !ok {
			return 0, fmt.Errorf("has unit %q, not one of d, h, min, s, ms, µs, ns (or day, hour, minute, second, milli, micro, nano, with or without s)", label)
		}
		unit = u
	}
	if n > uint64(math.MaxInt64/int64(unit)) {
		return 0, fmt.Errorf("is longer than %v", time.Duration(math.MaxInt64))
	}
	return time.Duration(n) * unit, nil
}
