//go:build !amd64 || purego

package state

// hashVector is false where there is no vector kernel.
var hashVector = false

// hashInt64sVector does nothing where there is no vector kernel.
func hashInt64sVector([]uint64, []int64) int { return 0 }
