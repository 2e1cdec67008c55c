//go:build !purego

#include "textflag.h"

// dotOne's lanes in AVX2, four lanes to a register: lane l is the sum
// over q < m of x[q]*y_l[q], added to 0.0 in q's order, y_l the m values
// at bs + (bb[l]*scale+lo)*8, times by[l] where by is not nil: the
// operations of dotOneAdjacent's Go loop in its order (a multiply then
// an add, no fused multiply-add), the same bits. The four lanes' rows
// are turned into columns four values at a time: two 16-byte loads, one
// of them into the upper half, and an unpack give a column of four
// lanes, so each q costs a broadcast, a multiply and an add for four
// lanes where the Go loop spends three instructions a lane.

// Two 16-byte halves of rows: D = [a[o], a[o+1], b[o], b[o+1]].
#define PAIR(a, b, o, D, XD) VMOVUPD o(a), XD; VINSERTF128 $1, o(b), D, D

// ACC += x[q]*C, x[q] at (SI) broadcast into Y9.
#define TERM(C, o) VBROADCASTSD o(SI), Y9; VMULPD Y9, C, C; VADDPD C, Y0, Y0

// ACC += R*C for a column C of four lanes and x[q] broadcast in R.
#define TERMR(C, R) VMULPD R, C, C; VADDPD C, Y0, Y0

// Four columns, q = o/8 .. o/8+3, times x's values held broadcast in
// R0..R3: the columns turned as quad does, into Y5, Y1, Y2, Y3.
#define QUADR(o, o2, R0, R1, R2, R3) \
	PAIR(R8, R10, o, Y1, X1) \
	PAIR(R9, R11, o, Y2, X2) \
	PAIR(R8, R10, o2, Y3, X3) \
	PAIR(R9, R11, o2, Y4, X4) \
	VUNPCKLPD Y2, Y1, Y5 \
	VUNPCKHPD Y2, Y1, Y1 \
	VUNPCKLPD Y4, Y3, Y2 \
	VUNPCKHPD Y4, Y3, Y3 \
	TERMR(Y5, R0) \
	TERMR(Y1, R1) \
	TERMR(Y2, R2) \
	TERMR(Y3, R3)

// The next four lanes' rows in R8-R11, to done unless four lanes are
// left, all four rows in bs.
#define ROWS LEAQ 4(AX), R12; CMPQ R12, n+8(FP); JGT done; ROW(0, R8, done); ROW(8, R9, done); ROW(16, R10, done); ROW(24, R11, done)

// To HELD where m is 4 or 8 (R12 overwritten).
#define IFHELD(HELD) MOVQ m+24(FP), R12; CMPQ R12, $8; JEQ HELD; CMPQ R12, $4; JEQ HELD

// Base of one lane's row: R = bs + (bb[l+o/8]*scale+lo)*8, to BAD unless
// 0 <= base <= nbs-m (unsigned: base+m within bs).
#define ROW(o, R, BAD) MOVQ o(BX)(AX*8), R; IMULQ CX, R; ADDQ DX, R; CMPQ R, R15; JA BAD; LEAQ (DI)(R*8), R

// func dotColumns(out *float64, n int64, x *float64, m int64, bs *float64, nbs int64, bb *int64, scale int64, lo int64, by *float64) int64
//
// The lanes in fours from 0 while four are left, up to the first group
// with a row out of bs; it returns the lanes done. Rows of 4 or 8
// values (SDDMM's and MTTKRP's ranks) hold x's values broadcast in
// Y8-Y15 for all the lanes (held), not loaded again for every four
// lanes: they were 8 of a group's 28 loads at 8 values.
TEXT ·dotColumns(SB), NOSPLIT, $0-88
	MOVQ out+0(FP), R13
	MOVQ bs+32(FP), DI
	MOVQ bb+48(FP), BX
	MOVQ scale+56(FP), CX
	MOVQ lo+64(FP), DX
	MOVQ by+72(FP), R14
	MOVQ nbs+40(FP), R15
	SUBQ m+24(FP), R15  // the last base a row may start at
	XORQ AX, AX         // the group's first lane
	TESTQ R15, R15
	JLT  done
	IFHELD(hold)
	JMP  group

hold:
	MOVQ x+16(FP), SI
	VBROADCASTSD 0(SI), Y8
	VBROADCASTSD 8(SI), Y9
	VBROADCASTSD 16(SI), Y10
	VBROADCASTSD 24(SI), Y11
	CMPQ R12, $8
	JNE  held
	VBROADCASTSD 32(SI), Y12
	VBROADCASTSD 40(SI), Y13
	VBROADCASTSD 48(SI), Y14
	VBROADCASTSD 56(SI), Y15

held:
	ROWS
	VXORPD Y0, Y0, Y0
	QUADR(0, 16, Y8, Y9, Y10, Y11)
	CMPQ m+24(FP), $8
	JNE  scale
	QUADR(32, 48, Y12, Y13, Y14, Y15)
	JMP  scale

group:
	ROWS
	MOVQ x+16(FP), SI
	MOVQ m+24(FP), R12
	VXORPD Y0, Y0, Y0

quad:
	CMPQ R12, $4
	JLT  single
	PAIR(R8, R10, 0, Y1, X1)
	PAIR(R9, R11, 0, Y2, X2)
	PAIR(R8, R10, 16, Y3, X3)
	PAIR(R9, R11, 16, Y4, X4)
	VUNPCKLPD Y2, Y1, Y5
	VUNPCKHPD Y2, Y1, Y6
	VUNPCKLPD Y4, Y3, Y7
	VUNPCKHPD Y4, Y3, Y8
	TERM(Y5, 0)
	TERM(Y6, 8)
	TERM(Y7, 16)
	TERM(Y8, 24)
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $32, R10
	ADDQ $32, R11
	ADDQ $32, SI
	SUBQ $4, R12
	JMP  quad

single:
	// The last 0-3 values: a column from four 8-byte loads.
	TESTQ R12, R12
	JEQ   scale
	VMOVSD  (R8), X1
	VMOVHPD (R9), X1, X1
	VMOVSD  (R10), X2
	VMOVHPD (R11), X2, X2
	VINSERTF128 $1, X2, Y1, Y1
	TERM(Y1, 0)
	ADDQ $8, R8
	ADDQ $8, R9
	ADDQ $8, R10
	ADDQ $8, R11
	ADDQ $8, SI
	DECQ R12
	JMP  single

scale:
	TESTQ R14, R14
	JEQ   store
	VMULPD (R14)(AX*8), Y0, Y0

store:
	VMOVUPD Y0, (R13)(AX*8)
	ADDQ    $4, AX
	IFHELD(held)
	JMP     group

done:
	VZEROUPPER
	MOVQ AX, ret+80(FP)
	RET
