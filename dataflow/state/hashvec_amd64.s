//go:build amd64 && !purego

#include "textflag.h"

// HashInt64Key (keyhash.go) of eight keys at a time, one key per 64-bit
// lane of a ZMM register, the same steps in the same order:
//
//	v  = ReverseBytes64(x ^ 1<<63)          VPXORQ, VPSHUFB
//	h  = rotl((9 ^ (1 | v<<8)) * P, 32)     mixWord of the first word
//	h  = rotl((h ^ v>>56) * P, 32)          mixWord of the second word
//	h ^= h>>33; h *= C1; h ^= h>>33; h *= C2; h ^= h>>33    fmix64
//
// with P = wordPrime and C1, C2 murmur3's finalizer constants.

// Each 64-bit lane's bytes reversed, within each 128-bit lane as VPSHUFB
// indexes them.
DATA bswap64<>+0(SB)/8, $0x0001020304050607
DATA bswap64<>+8(SB)/8, $0x08090a0b0c0d0e0f
DATA bswap64<>+16(SB)/8, $0x0001020304050607
DATA bswap64<>+24(SB)/8, $0x08090a0b0c0d0e0f
DATA bswap64<>+32(SB)/8, $0x0001020304050607
DATA bswap64<>+40(SB)/8, $0x08090a0b0c0d0e0f
DATA bswap64<>+48(SB)/8, $0x0001020304050607
DATA bswap64<>+56(SB)/8, $0x08090a0b0c0d0e0f
GLOBL bswap64<>(SB), RODATA|NOPTR, $64

DATA signBit<>+0(SB)/8, $0x8000000000000000
GLOBL signBit<>(SB), RODATA|NOPTR, $8

// The first word before its multiplication is 9 ^ (1 | v<<8), and v<<8
// has a zero low byte: (v<<8) ^ 8, so one constant, 9 ^ 1.
DATA firstXor<>+0(SB)/8, $8
GLOBL firstXor<>(SB), RODATA|NOPTR, $8

DATA wordPrime<>+0(SB)/8, $0x9e3779b97f4a7c15
GLOBL wordPrime<>(SB), RODATA|NOPTR, $8

DATA fmixC1<>+0(SB)/8, $0xff51afd7ed558ccd
GLOBL fmixC1<>(SB), RODATA|NOPTR, $8

DATA fmixC2<>+0(SB)/8, $0xc4ceb9fe1a85ec53
GLOBL fmixC2<>(SB), RODATA|NOPTR, $8

// func hashInt64sAVX512(dst *uint64, src *int64, n int)
TEXT ·hashInt64sAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VMOVDQU64    bswap64<>(SB), Z16
	VPBROADCASTQ signBit<>(SB), Z17
	VPBROADCASTQ firstXor<>(SB), Z18
	VPBROADCASTQ wordPrime<>(SB), Z19
	VPBROADCASTQ fmixC1<>(SB), Z20
	VPBROADCASTQ fmixC2<>(SB), Z21

loop:
	VMOVDQU64 (SI), Z0
	VPXORQ    Z17, Z0, Z0
	VPSHUFB   Z16, Z0, Z0
	VPSLLQ    $8, Z0, Z1
	VPXORQ    Z18, Z1, Z1
	VPMULLQ   Z19, Z1, Z1
	VPROLQ    $32, Z1, Z1
	VPSRLQ    $56, Z0, Z2
	VPXORQ    Z2, Z1, Z1
	VPMULLQ   Z19, Z1, Z1
	VPROLQ    $32, Z1, Z1
	VPSRLQ    $33, Z1, Z2
	VPXORQ    Z2, Z1, Z1
	VPMULLQ   Z20, Z1, Z1
	VPSRLQ    $33, Z1, Z2
	VPXORQ    Z2, Z1, Z1
	VPMULLQ   Z21, Z1, Z1
	VPSRLQ    $33, Z1, Z2
	VPXORQ    Z2, Z1, Z1
	VMOVDQU64 Z1, (DI)
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $8, CX
	JNZ       loop
	VZEROUPPER
	RET
