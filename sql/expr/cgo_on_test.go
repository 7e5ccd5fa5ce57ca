//go:build cgo

package expr

const cgoEnabled = true
