//go:build amd64 && !purego

package state

import "golang.org/x/sys/cpu"

// hashVector says whether hashInt64s runs the AVX-512 kernel
// (hashvec_amd64.s): the processor has AVX-512 F (64-bit rotations), DQ
// (64-bit multiplications) and BW (byte shuffles), and the operating
// system saves the registers (golang.org/x/sys/cpu checks both). Tests
// turn it off to run the portable loop on the same input.
var hashVector = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512BW

// hashInt64sAVX512 sets dst[i] = HashInt64Key(src[i]) for i < n, eight
// keys per step; n must be a positive multiple of 8.
//
//go:noescape
func hashInt64sAVX512(dst *uint64, src *int64, n int)

// hashInt64sVector hashes the longest prefix of ints whose length is a
// multiple of eight into h with the AVX-512 kernel, when hashVector, and
// returns its length (0 when it did nothing).
func hashInt64sVector(h []uint64, ints []int64) int {
	n := len(h) &^ 7
	if !hashVector || n == 0 {
		return 0
	}
	hashInt64sAVX512(&h[0], &ints[0], n)
	return n
}
