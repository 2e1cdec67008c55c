//go:build !purego

#include "textflag.h"

// The CSR row dot of fit.go (csrDot) for y of reals, in SSE2 scalar
// arithmetic in the order Go's loop computes it, with x of reals
// (dotRowsReal) or ints (dotRowsInt). Row k runs p = l..h[k]-1 with
// l the bound before (the argument l for row 0); it stops at the first
// row with l < 0, l > h[k] or h[k] > n, and returns the rows done.

// func dotRowsReal(h *int64, out *float64, rows int64, l int64, idx *int64, x *float64, n int64, y *float64, a float64, b float64, c float64) int64
TEXT ·dotRowsReal(SB), NOSPLIT, $0-96
	MOVQ  h+0(FP), R8
	MOVQ  out+8(FP), R10
	MOVQ  rows+16(FP), R11
	MOVQ  l+24(FP), AX
	MOVQ  idx+32(FP), SI
	MOVQ  x+40(FP), DI
	MOVQ  n+48(FP), R12
	MOVQ  y+56(FP), R13
	MOVSD a+64(FP), X3
	MOVSD b+72(FP), X4
	MOVSD c+80(FP), X5
	XORQ  CX, CX

realRow:
	CMPQ  CX, R11
	JGE   realDone
	MOVQ  (R8)(CX*8), BX
	TESTQ AX, AX
	JLT   realDone
	CMPQ  AX, BX
	JGT   realDone
	CMPQ  BX, R12
	JGT   realDone
	XORPS X1, X1
	CMPQ  AX, BX
	JGE   realStore
	PCALIGN $16

realEntry:
	MOVQ  (SI)(AX*8), DX
	MOVSD (DI)(AX*8), X0
	MULSD (R13)(DX*8), X0
	ADDSD X0, X1
	INCQ  AX
	CMPQ  AX, BX
	JNE   realEntry

realStore:
	MULSD X3, X1
	MULSD X4, X1
	MULSD X5, X1
	ADDSD (R10)(CX*8), X1
	MOVSD X1, (R10)(CX*8)
	INCQ  CX
	JMP   realRow

realDone:
	MOVQ CX, ret+88(FP)
	RET

// func dotRowsInt(h *int64, out *float64, rows int64, l int64, idx *int64, x *int64, n int64, y *float64, a float64, b float64, c float64) int64
TEXT ·dotRowsInt(SB), NOSPLIT, $0-96
	MOVQ  h+0(FP), R8
	MOVQ  out+8(FP), R10
	MOVQ  rows+16(FP), R11
	MOVQ  l+24(FP), AX
	MOVQ  idx+32(FP), SI
	MOVQ  x+40(FP), DI
	MOVQ  n+48(FP), R12
	MOVQ  y+56(FP), R13
	MOVSD a+64(FP), X3
	MOVSD b+72(FP), X4
	MOVSD c+80(FP), X5
	XORQ  CX, CX

intRow:
	CMPQ  CX, R11
	JGE   intDone
	MOVQ  (R8)(CX*8), BX
	TESTQ AX, AX
	JLT   intDone
	CMPQ  AX, BX
	JGT   intDone
	CMPQ  BX, R12
	JGT   intDone
	XORPS X1, X1
	CMPQ  AX, BX
	JGE   intStore
	PCALIGN $16

intEntry:
	MOVQ     (SI)(AX*8), DX
	XORPS    X0, X0
	CVTSQ2SD (DI)(AX*8), X0
	MULSD    (R13)(DX*8), X0
	ADDSD    X0, X1
	INCQ     AX
	CMPQ     AX, BX
	JNE      intEntry

intStore:
	MULSD X3, X1
	MULSD X4, X1
	MULSD X5, X1
	ADDSD (R10)(CX*8), X1
	MOVSD X1, (R10)(CX*8)
	INCQ  CX
	JMP   intRow

intDone:
	MOVQ CX, ret+88(FP)
	RET
