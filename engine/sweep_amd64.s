//go:build !purego

#include "textflag.h"

DATA sweepIota<>+0(SB)/4, $0
DATA sweepIota<>+4(SB)/4, $1
DATA sweepIota<>+8(SB)/4, $2
DATA sweepIota<>+12(SB)/4, $3
DATA sweepIota<>+16(SB)/4, $4
DATA sweepIota<>+20(SB)/4, $5
DATA sweepIota<>+24(SB)/4, $6
DATA sweepIota<>+28(SB)/4, $7
GLOBL sweepIota<>(SB), RODATA, $32

// func compactChunks(src *float64, chunks int64, base int32, keys *int32, vals *float64, zero bool) int64
//
// compactReals for the first 8*chunks values of src.
// Per chunk of eight doubles: one load (and, if zero, a store of zeros), a compare with zero into a mask
// (not-equal-or-unordered, Go's v != 0), the chunk's values and their
// keys compressed to the front of a register by the mask, both stored
// whole at position n (the entries past the non-zero ones are
// overwritten by the next chunk), n += popcount(mask). n never exceeds
// the values read before the chunk, so stores end before 8*chunks, and
// vals may be src itself: a store overwrites only values already loaded.
TEXT ·compactChunks(SB), NOSPLIT, $0-56
	MOVQ src+0(FP), SI
	MOVQ chunks+8(FP), CX
	MOVL base+16(FP), AX
	MOVQ keys+24(FP), DI
	MOVQ vals+32(FP), DX
	MOVBLZX zero+40(FP), R8
	XORQ BX, BX
	TESTQ CX, CX
	JLE  done
	VPBROADCASTD AX, Y3
	VPADDD sweepIota<>(SB), Y3, Y2
	MOVL $8, AX
	VPBROADCASTD AX, Y3
	VPXORQ Z4, Z4, Z4

loop:
	VMOVUPD (SI), Z0
	TESTQ R8, R8
	JZ   kept
	VMOVUPD Z4, (SI)

kept:
	VCMPPD $4, Z4, Z0, K1
	VCOMPRESSPD Z0, K1, Z1
	VPCOMPRESSD Y2, K1, Y5
	VMOVUPD Z1, (DX)(BX*8)
	VMOVDQU Y5, (DI)(BX*4)
	KMOVW K1, AX
	POPCNTL AX, AX
	ADDQ AX, BX
	VPADDD Y3, Y2, Y2
	ADDQ $64, SI
	DECQ CX
	JNZ  loop
	VZEROUPPER

done:
	MOVQ BX, ret+48(FP)
	RET
