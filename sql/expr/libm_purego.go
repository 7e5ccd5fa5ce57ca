//go:build !cgo

package expr

import "math"

// Without cgo the float functions use package math, which may differ
// from Postgres (glibc) in the last bit for some inputs; range errors are
// then found from the result alone.

func libmRange(err error) bool { return false }

func cSin(x float64) (float64, error)    { return math.Sin(x), nil }
func cCos(x float64) (float64, error)    { return math.Cos(x), nil }
func cTan(x float64) (float64, error)    { return math.Tan(x), nil }
func cAsin(x float64) float64            { return math.Asin(x) }
func cAcos(x float64) float64            { return math.Acos(x) }
func cAtan(x float64) float64            { return math.Atan(x) }
func cAtan2(y, x float64) float64        { return math.Atan2(y, x) }
func cCbrt(x float64) float64            { return math.Cbrt(x) }
func cLog(x float64) float64             { return math.Log(x) }
func cLog10(x float64) float64           { return math.Log10(x) }
func cExp(x float64) (float64, error)    { return math.Exp(x), nil }
func cPow(x, y float64) (float64, error) { return math.Pow(x, y), nil }
