//go:build !cgo

package expr

const cgoEnabled = false
