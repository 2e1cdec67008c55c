//go:build !purego

#include "textflag.h"

// AX = max(0, the 8 lane lengths at R9).
#define LONGEST XORQ AX, AX; \
	MOVQ 0(R9), DX; CMPQ DX, AX; CMOVQGT DX, AX; \
	MOVQ 8(R9), DX; CMPQ DX, AX; CMOVQGT DX, AX; \
	MOVQ 16(R9), DX; CMPQ DX, AX; CMOVQGT DX, AX; \
	MOVQ 24(R9), DX; CMPQ DX, AX; CMOVQGT DX, AX; \
	MOVQ 32(R9), DX; CMPQ DX, AX; CMOVQGT DX, AX; \
	MOVQ 40(R9), DX; CMPQ DX, AX; CMOVQGT DX, AX; \
	MOVQ 48(R9), DX; CMPQ DX, AX; CMOVQGT DX, AX; \
	MOVQ 56(R9), DX; CMPQ DX, AX; CMOVQGT DX, AX

// To BAD unless the key of lane OFF/8 at R8 (KEYS_OK: of every lane) is
// in [0, nout = R14).
#define KEY_OK(OFF, BAD) CMPQ OFF(R8), R14; JCC BAD
#define KEYS_OK(BAD) KEY_OK(0, BAD); KEY_OK(8, BAD); KEY_OK(16, BAD); KEY_OK(24, BAD); \
	KEY_OK(32, BAD); KEY_OK(40, BAD); KEY_OK(48, BAD); KEY_OK(56, BAD)

// out[perm[lane]] += XR's low double, as Go's out[k] += s.
#define ADD_LANE(OFF, XR) MOVQ OFF(R8), DX; VMOVSD (R13)(DX*8), X3; VADDSD XR, X3, X3; VMOVSD X3, (R13)(DX*8)

// The eight sums, Y0 (lanes 0-3) and Y1 (lanes 4-7), added into out in
// lane order.
#define STORE_LANES ADD_LANE(0, X0); \
	VUNPCKHPD X0, X0, X4; ADD_LANE(8, X4); \
	VEXTRACTF128 $1, Y0, X5; ADD_LANE(16, X5); \
	VUNPCKHPD X5, X5, X4; ADD_LANE(24, X4); \
	ADD_LANE(32, X1); \
	VUNPCKHPD X1, X1, X4; ADD_LANE(40, X4); \
	VEXTRACTF128 $1, Y1, X5; ADD_LANE(48, X5); \
	VUNPCKHPD X5, X5, X4; ADD_LANE(56, X4)

// Masks of the lanes still in their rows, step k (Y7) < length (Y6 for
// lanes 0-3, Y11 for 4-7), into Y4 and Y5; the 8 columns at BX into Y2
// (lanes 0-3 in X2, 4-7 then in X9).
#define STEP_MASKS VMOVDQU (BX), Y2; \
	VPCMPGTQ Y7, Y6, Y4; \
	VPCMPGTQ Y7, Y11, Y5; \
	VEXTRACTI128 $1, Y2, X9

// x at the columns of the lanes in Y4/Y5 into Y8 (lanes 0-3) and Y10
// (4-7), 0.0 in the other lanes. A gather clears its mask.
#define GATHER_X VXORPD Y8, Y8, Y8; \
	VGATHERDPD Y4, (DI)(X2*8), Y8; \
	VXORPD Y10, Y10, Y10; \
	VGATHERDPD Y5, (DI)(X9*8), Y10

// The values (Y12 lanes 0-3, Y13 4-7) times x (Y8, Y10) added to the
// sums; then the next step: k, the words at BX, the values at DX, and
// the steps left in AX (flags set for the loop's JNE).
#define ADD_PRODUCTS VMULPD Y8, Y12, Y12; \
	VMULPD Y10, Y13, Y13; \
	VADDPD Y12, Y0, Y0; \
	VADDPD Y13, Y1, Y1; \
	VPADDQ Y15, Y7, Y7; \
	ADDQ $32, BX; \
	ADDQ $64, DX; \
	DECQ AX

// func sellRows(out *float64, nout int64, perm *int64, rlen *int64, cpos *int64, chunks int64, cols *int64, ncols int64, vals unsafe.Pointer, nvals int64, x *float64, ints int64) int64
//
// sellChunksGo's loop for AVX2 CPUs, with the same bits: each lane adds
// its row's terms in order from 0.0, a lane past its row's end adds
// +0.0 (x is not read there; with vals, the value is masked to 0 before
// the product), and out[perm[q]] += the lane's sum in lane order. vals
// are reals, or ints (ints = 1) in [-2^51, 2^51), converted exactly:
// the int plus the bits of 2^52+2^51 are the bits of that double plus
// the int, from which subtracting it leaves the int. perm,
// rlen and cpos point at the first chunk's lanes and offset. It stops
// before a chunk with a key outside out, words outside cols or values
// outside vals, and returns the chunks done. The caller has checked that
// both halves of every word of cols index x and are below 2^31.
TEXT ·sellRows(SB), NOSPLIT, $0-104
	MOVQ out+0(FP), R13
	MOVQ nout+8(FP), R14
	MOVQ perm+16(FP), R8
	MOVQ rlen+24(FP), R9
	MOVQ cpos+32(FP), R10
	MOVQ chunks+40(FP), R11
	MOVQ cols+48(FP), SI
	MOVQ ncols+56(FP), R12
	MOVQ vals+64(FP), R15
	MOVQ x+80(FP), DI
	XORQ CX, CX
	MOVQ $1, AX
	MOVQ AX, X15
	VPBROADCASTQ X15, Y15
	MOVQ $0x4338000000000000, AX
	MOVQ AX, X14
	VPBROADCASTQ X14, Y14

chunk:
	CMPQ CX, R11
	JGE  done
	LONGEST
	KEYS_OK(done)

	// Words w..w+4L-1 inside cols (w = BX, L = AX): sellFits.
	MOVQ (R10), BX
	TESTQ BX, BX
	JLT  done
	CMPQ BX, R12
	JGT  done
	CMPQ AX, R12
	JGT  done
	LEAQ (BX)(AX*4), DX
	CMPQ DX, R12
	JGT  done

	VMOVDQU (R9), Y6
	VMOVDQU 32(R9), Y11
	VPXOR   Y7, Y7, Y7
	VXORPD  Y0, Y0, Y0
	VXORPD  Y1, Y1, Y1
	TESTQ   R15, R15
	JNE     valued
	LEAQ    (SI)(BX*8), BX
	TESTQ   AX, AX
	JEQ     store

pattern:
	STEP_MASKS
	GATHER_X
	VADDPD  Y8, Y0, Y0
	VADDPD  Y10, Y1, Y1
	VPADDQ  Y15, Y7, Y7
	ADDQ    $32, BX
	DECQ    AX
	JNE     pattern
	JMP     store

valued:
	// Values 2w..2w+8L-1 inside vals.
	LEAQ    (BX)(AX*4), DX
	SHLQ    $1, DX
	CMPQ    DX, nvals+72(FP)
	JGT     done
	MOVQ    BX, DX
	SHLQ    $4, DX
	ADDQ    R15, DX
	LEAQ    (SI)(BX*8), BX
	TESTQ   AX, AX
	JEQ     store
	CMPQ    ints+88(FP), $1
	JEQ     intStep

valuedStep:
	STEP_MASKS
	VANDPD  (DX), Y4, Y12
	VANDPD  32(DX), Y5, Y13
	GATHER_X
	ADD_PRODUCTS
	JNE     valuedStep
	JMP     store

intStep:
	// No mask for int values: a finite value times the gather's 0.0
	// is a zero, which adds nothing to a sum started at +0.0.
	STEP_MASKS
	VPADDQ  (DX), Y14, Y12
	VSUBPD  Y14, Y12, Y12
	VPADDQ  32(DX), Y14, Y13
	VSUBPD  Y14, Y13, Y13
	GATHER_X
	ADD_PRODUCTS
	JNE     intStep

store:
	STORE_LANES
	ADDQ $64, R8
	ADDQ $64, R9
	ADDQ $8, R10
	INCQ CX
	JMP  chunk

done:
	VZEROUPPER
	MOVQ CX, ret+96(FP)
	RET

// One entry of a row's scatter: the column at byte 4j of DX (a word's
// half) into BX; out (DI) at it += LOADV's X0 (the value at 8j of R13,
// times t in X1), then j (R14) += 8 against the row's end AX.
#define SCATTER_COL MOVL (DX)(R14*4), BX
#define SCATTER_NEXT ADDQ $8, R14; CMPQ R14, AX
#define REAL_ENTRY MOVSD (R13)(R14*8), X0; MULSD X1, X0
#define INT_ENTRY XORPS X0, X0; CVTSQ2SD (R13)(R14*8), X0; MULSD X1, X0

// func sellScatter(out *float64, sums *float64, rlen *int64, cpos *int64, rows int64, cols *int64, vals unsafe.Pointer, scale float64, fac float64, ints int64)
//
// sellScatterGo's loop in SSE2 scalar arithmetic, with the same bits:
// row q (lane q%8 of chunk q/8) adds each entry's value times t =
// (scale*sums[q])*fac, or t itself (ints = 2: no values), into out at
// its column, entries in order, rows in order. Values are reals, or ints
// (ints = 1) converted as Go converts them. Nothing is checked: the
// caller has.
TEXT ·sellScatter(SB), NOSPLIT, $0-80
	MOVQ  out+0(FP), DI
	MOVQ  sums+8(FP), R8
	MOVQ  rlen+16(FP), R9
	MOVQ  cpos+24(FP), R10
	MOVQ  cols+40(FP), SI
	MOVQ  vals+48(FP), R15
	MOVSD scale+56(FP), X3
	MOVSD fac+64(FP), X4
	MOVQ  ints+72(FP), R12
	XORQ  CX, CX

srow:
	CMPQ  CX, rows+32(FP)
	JGE   sdone
	MOVQ  (R9)(CX*8), AX
	TESTQ AX, AX
	JLE   snext
	// base = 2*cpos[q/8] + q%8; the row's columns from byte 4*base of
	// cols, values from 8*base of vals; j runs 0, 8, ... < 8n.
	MOVQ  CX, BX
	SHRQ  $3, BX
	MOVQ  (R10)(BX*8), BX
	SHLQ  $1, BX
	MOVQ  CX, DX
	ANDQ  $7, DX
	ADDQ  DX, BX
	LEAQ  (SI)(BX*4), DX
	LEAQ  (R15)(BX*8), R13
	SHLQ  $3, AX
	XORQ  R14, R14
	MOVSD (R8)(CX*8), X1
	MULSD X3, X1
	MULSD X4, X1
	CMPQ  R12, $1
	JLT   sreal
	JEQ   sint
	JMP   snone
	// Each loop starts a 64-byte line, as in fit_amd64.s: where the
	// linker places the function must not decide whether one straddles
	// two. Every padded label follows an unconditional jump.
	PCALIGN $64

sreal:
	SCATTER_COL; REAL_ENTRY; ADDSD (DI)(BX*8), X0; MOVSD X0, (DI)(BX*8); SCATTER_NEXT
	JLT sreal
	JMP snext
	PCALIGN $64

sint:
	SCATTER_COL; INT_ENTRY; ADDSD (DI)(BX*8), X0; MOVSD X0, (DI)(BX*8); SCATTER_NEXT
	JLT sint
	JMP snext
	PCALIGN $64

snone:
	SCATTER_COL; MOVSD (DI)(BX*8), X0; ADDSD X1, X0; MOVSD X0, (DI)(BX*8); SCATTER_NEXT
	JLT snone

snext:
	INCQ CX
	JMP  srow

sdone:
	RET
