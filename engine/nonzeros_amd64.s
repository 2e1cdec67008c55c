//go:build !purego

#include "textflag.h"

// func nonZeroChunks(s *float64, chunks int64) int64
//
// The number of non-zero values (NaN included, -0 not: Go's v != 0)
// among the first 8*chunks doubles of s: per chunk of eight, a compare
// with zero into a mask (not-equal-or-unordered) and its popcount.
TEXT ·nonZeroChunks(SB), NOSPLIT, $0-24
	MOVQ s+0(FP), SI
	MOVQ chunks+8(FP), CX
	XORQ BX, BX
	TESTQ CX, CX
	JLE  done
	VPXORQ Z4, Z4, Z4

loop:
	VMOVUPD (SI), Z0
	VCMPPD $4, Z4, Z0, K1
	KMOVW K1, AX
	POPCNTL AX, AX
	ADDQ AX, BX
	ADDQ $64, SI
	DECQ CX
	JNZ  loop
	VZEROUPPER

done:
	MOVQ BX, ret+16(FP)
	RET

// func nonZeroIntChunks(s *int64, chunks int64) int64
//
// nonZeroChunks for int64s: a test of each value against itself.
TEXT ·nonZeroIntChunks(SB), NOSPLIT, $0-24
	MOVQ s+0(FP), SI
	MOVQ chunks+8(FP), CX
	XORQ BX, BX
	TESTQ CX, CX
	JLE  idone

iloop:
	VMOVDQU64 (SI), Z0
	VPTESTMQ Z0, Z0, K1
	KMOVW K1, AX
	POPCNTL AX, AX
	ADDQ AX, BX
	ADDQ $64, SI
	DECQ CX
	JNZ  iloop
	VZEROUPPER

idone:
	MOVQ BX, ret+16(FP)
	RET
