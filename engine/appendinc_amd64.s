//go:build !purego

#include "textflag.h"

// Four entries from lane AX on, the keys loaded into Y1 and the values
// into Y6 by the caller: the keys' int32s into X5, Y4 set where a key is
// above the one before it (the keys rotated, the first replaced by the
// last of the four before: a blend, no load before keys), Y7 where a
// value is zero (either sign).
#define FOUR \
	VPERMQ   $0x93, Y1, Y2 \
	VPBLENDD $0x03, Y0, Y2, Y3 \
	VMOVDQA  Y2, Y0 \
	VPCMPGTQ Y3, Y1, Y4 \
	VPSHUFD  $0x08, Y1, Y5 \
	VPERMQ   $0x08, Y5, Y5 \
	VCMPPD   $0, Y12, Y6, Y7

// func copyIncreasing(ak *int32, av *float64, keys *int64, vals *float64, n int64, last int64) (flags int64)
//
// appendIncreasing's pass over n reals in AVX2, four entries at a time
// and the last 1-3 one by one: ak[l] = int32(keys[l]), av[l] =
// vals[l], and flags bit 0 set when some key is not above the one
// before it (last before keys[0]), bit 1 when some value is zero.
TEXT ·copyIncreasing(SB), NOSPLIT, $0-56
	MOVQ         ak+0(FP), DI
	MOVQ         av+8(FP), SI
	MOVQ         keys+16(FP), BX
	MOVQ         vals+24(FP), DX
	MOVQ         n+32(FP), CX
	VPBROADCASTQ last+40(FP), Y0 // its element 0: the key before the four
	VPXOR        Y10, Y10, Y10   // lanes whose key does not increase
	VXORPD       Y11, Y11, Y11   // lanes whose value is zero
	VXORPD       Y12, Y12, Y12   // zero
	VPCMPEQQ     Y13, Y13, Y13   // all ones
	XORQ         AX, AX
	LEAQ         -4(CX), R8      // the last lane a whole four may start at

four:
	CMPQ    AX, R8
	JGT     tail
	VMOVDQU (BX)(AX*8), Y1
	VMOVUPD (DX)(AX*8), Y6
	FOUR
	VMOVDQU X5, (DI)(AX*4)
	VMOVUPD Y6, (SI)(AX*8)
	VPANDN  Y13, Y4, Y4 // lanes whose key does not increase
	VPOR    Y4, Y10, Y10
	VORPD   Y7, Y11, Y11
	ADDQ    $4, AX
	JMP     four

tail:
	// The last 0-3 entries one by one, the key before in R11, the flags
	// gathered in R12 (masked vector stores cost more on some machines
	// than these few scalar ones).
	XORQ  R12, R12
	MOVQ  last+40(FP), R11
	TESTQ AX, AX
	JEQ   one
	MOVQ  -8(BX)(AX*8), R11

one:
	CMPQ    AX, CX
	JGE     flags
	MOVQ    (BX)(AX*8), R9
	CMPQ    R9, R11
	SETLE   R10
	ORB     R10, R12
	MOVQ    R9, R11
	MOVL    R9, (DI)(AX*4)
	MOVSD   (DX)(AX*8), X1
	MOVSD   X1, (SI)(AX*8)
	UCOMISD X12, X1
	SETEQ   R10 // equal, or unordered
	SETPC   R13 // ordered
	ANDB    R13, R10
	SHLB    $1, R10
	ORB     R10, R12
	INCQ    AX
	JMP     one

flags:
	MOVQ      R12, R8
	VMOVMSKPD Y10, R9
	TESTQ     R9, R9
	SETNE     R9
	ORQ       R9, R8
	VMOVMSKPD Y11, R10
	TESTQ     R10, R10
	SETNE     R10
	SHLQ      $1, R10
	ORQ       R10, R8
	VZEROUPPER
	MOVQ      R8, flags+48(FP)
	RET
