//go:build cgo

package expr

/*
#cgo LDFLAGS: -lm
#include <math.h>
*/
import "C"

import "syscall"

// The C library's math functions, which Postgres's float8 functions call
// (and DuckDB's too). Go's math package differs from glibc in the last
// bit for some inputs (tan(1), acos(0.5), cbrt(27)); calling libm makes
// DOUBLE PRECISION results print exactly as Postgres prints them on the
// same platform, and gives the errno that Postgres inspects for range
// errors. Without cgo, libm_purego.go falls back to package math.

// libmRange reports whether a libm call set errno to ERANGE.
func libmRange(err error) bool { return err == syscall.ERANGE }

func cSin(x float64) (float64, error) { r, err := C.sin(C.double(x)); return float64(r), err }
func cCos(x float64) (float64, error) { r, err := C.cos(C.double(x)); return float64(r), err }
func cTan(x float64) (float64, error) { r, err := C.tan(C.double(x)); return float64(r), err }
func cAsin(x float64) float64         { return float64(C.asin(C.double(x))) }
func cAcos(x float64) float64         { return float64(C.acos(C.double(x))) }
func cAtan(x float64) float64         { return float64(C.atan(C.double(x))) }
func cAtan2(y, x float64) float64     { return float64(C.atan2(C.double(y), C.double(x))) }
func cCbrt(x float64) float64         { return float64(C.cbrt(C.double(x))) }
func cLog(x float64) float64          { return float64(C.log(C.double(x))) }
func cLog10(x float64) float64        { return float64(C.log10(C.double(x))) }
func cExp(x float64) (float64, error) { r, err := C.exp(C.double(x)); return float64(r), err }
func cPow(x, y float64) (float64, error) {
	r, err := C.pow(C.double(x), C.double(y))
	return float64(r), err
}
