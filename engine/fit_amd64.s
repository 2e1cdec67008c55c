//go:build !purego

#include "textflag.h"

// Loads of one entry of a row dot, p = AX, idx at SI, x at DI: idx[p]
// into DX, x[p] into X0.
#define WIDE_I MOVQ (SI)(AX*8), DX
#define NARROW_I MOVLQSX (SI)(AX*4), DX
#define REAL_X MOVSD (DI)(AX*8), X0
#define INT_X XORPS X0, X0; CVTSQ2SD (DI)(AX*8), X0

// One entry of a row dot: ACC += x[p]*y[idx[p]] with y at R13, then p++.
#define DOT_TERM(LOADI, LOADX, ACC) LOADI; LOADX; MULSD (R13)(DX*8), X0; ADDSD X0, ACC; INCQ AX

// Four entries of a row dot into the partial sums X1, X2, X6, X7 (dotFit's
// s0..s3), or to TAIL when fewer than four are left before BX.
#define DOT_QUAD(LOADI, LOADX, TAIL) LEAQ 4(AX), DX; CMPQ DX, BX; JGT TAIL; \
	DOT_TERM(LOADI, LOADX, X1); DOT_TERM(LOADI, LOADX, X2); \
	DOT_TERM(LOADI, LOADX, X6); DOT_TERM(LOADI, LOADX, X7)

// The last 0-3 entries of a row dot into X1, X2, X6 in turn, then to OUT.
#define DOT_TAIL(LOADI, LOADX, OUT) CMPQ AX, BX; JGE OUT; DOT_TERM(LOADI, LOADX, X1); \
	CMPQ AX, BX; JGE OUT; DOT_TERM(LOADI, LOADX, X2); \
	CMPQ AX, BX; JGE OUT; DOT_TERM(LOADI, LOADX, X6); JMP OUT

// A row dot's loop from a 64-byte line (see dotScatterRows2): LOOP runs
// DOT_QUAD until TAIL, which runs DOT_TAIL on to OUT. The padding
// follows an unconditional jump.
#define DOT_LOOP(LOOP, TAIL, LOADI, LOADX, OUT) PCALIGN $64; \
	LOOP: DOT_QUAD(LOADI, LOADX, TAIL); JMP LOOP; TAIL: DOT_TAIL(LOADI, LOADX, OUT)

// X1 = (X1+X2)+(X6+X7): the partial sums added as dotFit adds them.
#define DOT_PARTIALS ADDSD X2, X1; ADDSD X7, X6; ADDSD X6, X1

// Zero partial sums.
#define DOT_ZERO XORPS X1, X1; XORPS X2, X2; XORPS X6, X6; XORPS X7, X7

// One entry of a row gather: ACC += y[idx[p]], then p++.
#define GATHER_TERM(LOADI, ACC) LOADI; ADDSD (R13)(DX*8), ACC; INCQ AX

// Four entries of a row gather into the partial sums as DOT_QUAD, or to
// TAIL when fewer than four are left before BX.
#define GATHER_QUAD(LOADI, TAIL) LEAQ 4(AX), DX; CMPQ DX, BX; JGT TAIL; \
	GATHER_TERM(LOADI, X1); GATHER_TERM(LOADI, X2); \
	GATHER_TERM(LOADI, X6); GATHER_TERM(LOADI, X7)

// The last 0-3 entries of a row gather into X1, X2, X6 in turn, then to OUT.
#define GATHER_TAIL(LOADI, OUT) CMPQ AX, BX; JGE OUT; GATHER_TERM(LOADI, X1); \
	CMPQ AX, BX; JGE OUT; GATHER_TERM(LOADI, X2); \
	CMPQ AX, BX; JGE OUT; GATHER_TERM(LOADI, X6); JMP OUT

// A row gather's loop, as DOT_LOOP.
#define GATHER_LOOP(LOOP, TAIL, LOADI, OUT) PCALIGN $64; \
	LOOP: GATHER_QUAD(LOADI, TAIL); JMP LOOP; TAIL: GATHER_TAIL(LOADI, OUT)

// One windowed entry (ints + 8): DX = idx[p] - lo (R14), and unless DX
// < w (R15) unsigned on to SKIP, else TERM into X0 (x[p]*y[DX], or y[DX]
// for a gather; y, R13, is read from lo) added to ACC; SKIP: p++. A
// branch, not a mask: three instructions a term fewer, and a guard on
// padding or a band is predicted but once a row.
#define WIN_TERM(TERM, ACC, SKIP) NARROW_I; SUBQ R14, DX; CMPQ DX, R15; JAE SKIP; TERM; ADDSD X0, ACC; SKIP: INCQ AX
#define WIN_DOT REAL_X; MULSD (R13)(DX*8), X0
#define WIN_GATHER MOVSD (R13)(DX*8), X0

// Four windowed entries into the partial sums as DOT_QUAD, or to TAIL
// (S0..S3: labels of the entries' own).
#define WIN_QUAD(TERM, TAIL, S0, S1, S2, S3) LEAQ 4(AX), DX; CMPQ DX, BX; JGT TAIL; \
	WIN_TERM(TERM, X1, S0); WIN_TERM(TERM, X2, S1); WIN_TERM(TERM, X6, S2); WIN_TERM(TERM, X7, S3)

// The last 0-3 windowed entries into X1, X2, X6 in turn, then to OUT.
#define WIN_TAIL(TERM, OUT, S0, S1, S2) CMPQ AX, BX; JGE OUT; WIN_TERM(TERM, X1, S0); \
	CMPQ AX, BX; JGE OUT; WIN_TERM(TERM, X2, S1); \
	CMPQ AX, BX; JGE OUT; WIN_TERM(TERM, X6, S2); JMP OUT

// A windowed row's loop, as DOT_LOOP (Q0..Q3, T0..T2: WIN_QUAD's and
// WIN_TAIL's labels).
#define WIN_LOOP(LOOP, TAIL, TERM, OUT, Q0, Q1, Q2, Q3, T0, T1, T2) PCALIGN $64; \
	LOOP: WIN_QUAD(TERM, TAIL, Q0, Q1, Q2, Q3); JMP LOOP; TAIL: WIN_TAIL(TERM, OUT, T0, T1, T2)

// The vector row loops (ints + 16 with + 4: int32 indices, real values;
// AVX2): four entries a step, lane j of Y8 the partial sum s_j of dotFit
// (the entries p with p-l = j mod 4, in order), so the sums are the
// scalar loops' bits. A step loads x in one load and the four indices in
// one or two: 7 loads for four entries instead of 12, the scalar loops'
// bound. A windowed step (+ 8, the window's lo + w at most 2^31, checked
// by the caller) tests its lanes at once, d = idx - lo against w-1 in
// 32 bits unsigned (min(d, w-1) == d): a lane outside reads y at
// lo+w-1 and its term is masked to +0.0, which leaves a sum started at +0.0 as
// it was (it is never -0.0), as the scalar loop's skip does; a step
// with no lane inside (an ELL row's padding) is skipped: one branch a
// step, not one a lane. The last 0-3 entries run in the scalar loops'
// tails, from the lanes spread into X1, X2, X6, X7.

// y at the two indices, int32 (SX: MOVLQSX) or in [0, 2^31) (MOVL), of
// the 8 bytes in DX into XR's lanes (R12 scratch).
#define VEC_PAIR(SX, XR) SX DX, R12; SARQ $32, DX; \
	VMOVSD (R13)(R12*8), XR; VMOVHPD (R13)(DX*8), XR, XR
// y at the four indices at p = AX into Y10 (two 8-byte loads of them).
#define VEC_Y MOVQ (SI)(AX*4), DX; VEC_PAIR(MOVLQSX, X10); \
	MOVQ 8(SI)(AX*4), DX; VEC_PAIR(MOVLQSX, X11); VINSERTF128 $1, X11, Y10, Y10
// The windowed step's: the lanes' offsets d from lo (X12) into X9, min(d,
// w-1) (w-1 in X13) into X14, the mask of the lanes where that is d into
// X15 and, 64-bit, Y15 (to SKIP where it is none); y at X14's offsets
// (d inside, w-1 outside: an element of y either way) into Y10.
#define VEC_WIN_Y(SKIP) VMOVDQU (SI)(AX*4), X9; VPSUBD X12, X9, X9; \
	VPMINUD X13, X9, X14; VPCMPEQD X9, X14, X15; VPTEST X15, X15; JEQ SKIP; \
	VMOVQ X14, DX; VEC_PAIR(MOVL, X10); VPEXTRQ $1, X14, DX; VEC_PAIR(MOVL, X11); \
	VINSERTF128 $1, X11, Y10, Y10; VPMOVSXDQ X15, Y15
#define VEC_X VMULPD (DI)(AX*8), Y10, Y10
#define VEC_MASK VANDPD Y15, Y10, Y10
#define VEC_X_MASK VMULPD (DI)(AX*8), Y10, Y10; VANDPD Y15, Y10, Y10
#define VEC_NONE

// A vector row loop: y at the indices, TERM (times x, or none), added
// into Y8, two steps an iteration and one more, until fewer than four
// entries are left; then the lanes to X1, X2, X6, X7 and on to the
// scalar TAIL.
#define VEC_LOOP(LOOP, LOOP4, SPREAD, TERM, TAIL) PCALIGN $64; \
	LOOP: LEAQ 8(AX), DX; CMPQ DX, BX; JGT LOOP4; \
	VEC_Y; TERM; VADDPD Y10, Y8, Y8; ADDQ $4, AX; \
	VEC_Y; TERM; VADDPD Y10, Y8, Y8; ADDQ $4, AX; JMP LOOP; \
	LOOP4: LEAQ 4(AX), DX; CMPQ DX, BX; JGT SPREAD; \
	VEC_Y; TERM; VADDPD Y10, Y8, Y8; ADDQ $4, AX; \
	SPREAD: VEXTRACTF128 $1, Y8, X6; VPERMILPD $1, X6, X7; VPERMILPD $1, X8, X2; VMOVAPD X8, X1; \
	VZEROUPPER; JMP TAIL

// A windowed vector row loop, as VEC_LOOP with VEC_WIN_Y: a step whose
// lanes are all outside the window adds nothing and is skipped (S1-S3).
#define VEC_WIN_LOOP(LOOP, LOOP4, SPREAD, TERM, TAIL, S1, S2, S3) PCALIGN $64; \
	LOOP: LEAQ 8(AX), DX; CMPQ DX, BX; JGT LOOP4; \
	VEC_WIN_Y(S1); TERM; VADDPD Y10, Y8, Y8; S1: ADDQ $4, AX; \
	VEC_WIN_Y(S2); TERM; VADDPD Y10, Y8, Y8; S2: ADDQ $4, AX; JMP LOOP; \
	LOOP4: LEAQ 4(AX), DX; CMPQ DX, BX; JGT SPREAD; \
	VEC_WIN_Y(S3); TERM; VADDPD Y10, Y8, Y8; S3: ADDQ $4, AX; \
	SPREAD: VEXTRACTF128 $1, Y8, X6; VPERMILPD $1, X6, X7; VPERMILPD $1, X8, X2; VMOVAPD X8, X1; \
	VZEROUPPER; JMP TAIL

// One entry of a row scatter: out[idx2[q]] += v[q]*X1 with q = R11, idx2
// at R14 read into DX by LOADI, v at R15 read into X0 by LOADV, out at
// R10; then q++ and the flags of q against the row's end R12.
#define SCATTER_STEP(LOADI, LOADV) LOADI; LOADV; MULSD X1, X0; ADDSD (R10)(DX*8), X0; MOVSD X0, (R10)(DX*8); INCQ R11; CMPQ R11, R12
#define WIDE_Q MOVQ (R14)(R11*8), DX
#define NARROW_Q MOVLQSX (R14)(R11*4), DX
#define REAL_V MOVSD (R15)(R11*8), X0
#define INT_V XORPS X0, X0; CVTSQ2SD (R15)(R11*8), X0

// A row's scatter by the values' and indices' kind in DX (ints: 0 reals,
// 1 ints, + 4 int32 indices): to one of the loops SCATTER_LOOPS lays out
// under the labels R (reals), I (ints), RN and IN (int32 indices).
#define SCATTER_KIND(R, I, RN, IN) CMPQ DX, $4; JEQ RN; CMPQ DX, $1; JLT R; JEQ I; JMP IN

// The four row scatter loops, each from a 64-byte line (see dotScatterRows2),
// each on to NEXT at the row's end. Every padded label follows an
// unconditional jump.
#define SCATTER_LOOPS(R, I, RN, IN, NEXT) PCALIGN $64; \
	R: SCATTER_STEP(WIDE_Q, REAL_V); JNE R; JMP NEXT; PCALIGN $64; \
	I: SCATTER_STEP(WIDE_Q, INT_V); JNE I; JMP NEXT; PCALIGN $64; \
	RN: SCATTER_STEP(NARROW_Q, REAL_V); JNE RN; JMP NEXT; PCALIGN $64; \
	IN: SCATTER_STEP(NARROW_Q, INT_V); JNE IN; JMP NEXT

// A row's bounds: to BAD unless 0 <= L <= H (H <= n is checked next to
// it: go vet cannot see frame references in a macro's arguments).
#define ROW_OK(L, H, BAD) TESTQ L, L; JLT BAD; CMPQ L, H; JGT BAD

// dotRows' next row k = CX of R11 rows, its end h[k] (h at R8) into BX:
// to DONE past the last row or where the bounds are bad.
#define NEXT_ROW(DONE) CMPQ CX, R11; JGE DONE; MOVQ (R8)(CX*8), BX; ROW_OK(AX, BX, DONE)

// R = ((R*a)*b)*c with a, b, c in X3, X4, X5 (products commute exactly:
// Go's ((a*s)*b)*c).
#define SCALE(R) MULSD X3, R; MULSD X4, R; MULSD X5, R

// The CSR row loops of fit.go in SSE2 scalar arithmetic, in the order
// Go's loops compute them, so that results are bit for bit the same: a
// row's dot or gather in dotFit's four partial sums (a windowed row too,
// as csrDotIn).
// Values are reals, or ints (ints = 1) converted as they are read, or
// none (ints = 2: dotRows sums y[idx[p]], a pattern matrix); y and out
// are reals. In dotRows, ints + 4 says idx holds int32s (Array.Narrow),
// read sign-extended: 4 bytes per entry instead of 8; ints + 8 (after
// + 4) sums only the entries whose index is in [lo, lo+w) (csrDotIn);
// ints + 16 (after + 4, real values) runs the vector loops, with the
// same bits. ints = 36 (int32 indices, real values, a = b = c = 1) sets
// out[k] to s + 0, which is what adding s into a zeroed out gives, bit for
// bit, so out need not be cleared first, and a row of one entry takes no
// partial sums. A row k runs p = l..h[k]-1 with l the bound before (the
// argument l for row 0). Both stop at the first row with l < 0, l > h[k]
// or h[k] > n and return the rows done. Every index has been checked
// against what it indexes (Array.IntRange) by the caller.

// func dotRows(h *int64, out *float64, rows int64, l int64, idx *int64, x unsafe.Pointer, n int64, y *float64, a float64, b float64, c float64, ints int64, lo int64, w int64) int64
//
// csrDot: out[k] += ((a*s)*b)*c, s the sum of x[p]*y[idx[p]] over row k
// (of y[idx[p]] with ints = 2: rowsGatherFit's rows).
TEXT ·dotRows(SB), NOSPLIT, $0-120
	MOVQ  h+0(FP), R8
	MOVQ  out+8(FP), R10
	MOVQ  rows+16(FP), R11
	MOVQ  l+24(FP), AX
	MOVQ  idx+32(FP), SI
	MOVQ  x+40(FP), DI
	MOVQ  y+56(FP), R13
	MOVSD a+64(FP), X3
	MOVSD b+72(FP), X4
	MOVSD c+80(FP), X5
	MOVQ  ints+88(FP), R9
	MOVQ  lo+96(FP), R14
	MOVQ  w+104(FP), R15
	LEAQ  (R13)(R14*8), R13 // y from lo (lo = 0 without a window)
	XORQ  CX, CX
	CMPQ  R9, $36
	JEQ   setRow
	CMPQ  R9, $28
	JLT   row
	MOVQ  R14, X12 // the vector window: lo and w-1 in every 32-bit lane
	VPBROADCASTD X12, X12
	LEAQ  -1(R15), DX
	MOVQ  DX, X13
	VPBROADCASTD X13, X13

row:
	NEXT_ROW(done)
	CMPQ  BX, n+48(FP)
	JGT   done
	DOT_ZERO
	CMPQ  AX, BX
	JGE   store
	CMPQ  R9, $4
	JNE   otherEntry
	JMP   narrowEntry // over the padding
	DOT_LOOP(narrowEntry, narrowTail, NARROW_I, REAL_X, partials)

otherEntry:
	CMPQ  R9, $16
	JGE   vecEntry
	CMPQ  R9, $1
	JLT   realEntry
	JEQ   intEntry
	CMPQ  R9, $2
	JEQ   gatherEntry
	CMPQ  R9, $5
	JEQ   intNarrowEntry
	CMPQ  R9, $6
	JEQ   gatherNarrowEntry
	CMPQ  R9, $12
	JEQ   windowEntry
	CMPQ  R9, $14
	JMP   windowGather

vecEntry:
	VXORPD Y8, Y8, Y8
	CMPQ  R9, $20
	JEQ   vecDot
	CMPQ  R9, $22
	JEQ   vecGather
	CMPQ  R9, $28
	JEQ   vecWindow
	JMP   vecWindowGather

	WIN_LOOP(windowEntry, windowTail, WIN_DOT, partials, wd0, wd1, wd2, wd3, wt0, wt1, wt2)
	WIN_LOOP(windowGather, windowGatherTail, WIN_GATHER, partials, wg0, wg1, wg2, wg3, wgt0, wgt1, wgt2)
	DOT_LOOP(realEntry, realTail, WIDE_I, REAL_X, partials)
	DOT_LOOP(intEntry, intTail, WIDE_I, INT_X, partials)
	DOT_LOOP(intNarrowEntry, intNarrowTail, NARROW_I, INT_X, partials)
	GATHER_LOOP(gatherNarrowEntry, gatherNarrowTail, NARROW_I, partials)
	GATHER_LOOP(gatherEntry, gatherTail, WIDE_I, partials)
	VEC_LOOP(vecDot, vecDot4, vecDotSpread, VEC_X, narrowTail)
	VEC_LOOP(vecGather, vecGather4, vecGatherSpread, VEC_NONE, gatherNarrowTail)
	VEC_WIN_LOOP(vecWindow, vecWindow4, vecWindowSpread, VEC_X_MASK, windowTail, vw1, vw2, vw3)
	VEC_WIN_LOOP(vecWindowGather, vecWindowGather4, vecWindowGatherSpread, VEC_MASK, windowGatherTail, vg1, vg2, vg3)

partials:
	DOT_PARTIALS

store:
	SCALE(X1)
	ADDSD (R10)(CX*8), X1
	MOVSD X1, (R10)(CX*8)
	INCQ  CX
	JMP   row

done:
	MOVQ CX, ret+112(FP)
	RET

	// ints = 36: rows set, not added to, unscaled. A row of one entry is
	// its product (s0 = 0 + p; the partials add zeros to it); others sum
	// as above.
setRow:
	XORPS X8, X8
	PCALIGN $32

setNext:
	NEXT_ROW(done)
	CMPQ    BX, n+48(FP)
	JGT     done
	LEAQ    1(AX), DX
	CMPQ    DX, BX
	JNE     setLong
	MOVLQSX (SI)(AX*4), DX
	MOVSD   (DI)(AX*8), X1
	MULSD   (R13)(DX*8), X1
	MOVQ    BX, AX

setStore:
	ADDSD X8, X1
	MOVSD X1, (R10)(CX*8)
	INCQ  CX
	JMP   setNext

setLong:
	DOT_ZERO
	CMPQ AX, BX
	JGE  setStore
	JMP  setEntry
	DOT_LOOP(setEntry, setTail, NARROW_I, REAL_X, setPartials)

setPartials:
	DOT_PARTIALS
	JMP setStore

// func dotScatterRows2(h1 *int64, l1 int64, idx1 *int64, x unsafe.Pointer, n1 int64, y *float64, h2 *int64, l2 int64, idx2 *int64, v unsafe.Pointer, n2 int64, out *float64, rows int64, a float64, b float64, c float64, ints int64) int64
//
// csrDotScatter: t = ((a*s)*b)*c, s the sum of x[p]*y[idx1[p]] over row
// k of the first rows, then out[idx2[p]] += t*v[p] over row k of the
// second. With ints + 4, idx1 and idx2 both hold int32s.
TEXT ·dotScatterRows2(SB), NOSPLIT, $0-144
	MOVQ  h1+0(FP), R8
	MOVQ  l1+8(FP), AX
	MOVQ  idx1+16(FP), SI
	MOVQ  x+24(FP), DI
	MOVQ  y+40(FP), R13
	MOVQ  h2+48(FP), R9
	MOVQ  l2+56(FP), R11
	MOVQ  idx2+64(FP), R14
	MOVQ  v+72(FP), R15
	MOVQ  out+88(FP), R10
	MOVSD a+104(FP), X3
	MOVSD b+112(FP), X4
	MOVSD c+120(FP), X5
	XORQ  CX, CX

row2:
	CMPQ  CX, rows+96(FP)
	JGE   done2
	MOVQ  (R8)(CX*8), BX
	MOVQ  (R9)(CX*8), R12
	ROW_OK(AX, BX, done2)
	CMPQ  BX, n1+32(FP)
	JGT   done2
	ROW_OK(R11, R12, done2)
	CMPQ  R12, n2+80(FP)
	JGT   done2
	DOT_ZERO
	CMPQ  AX, BX
	JGE   scale
	MOVQ  ints+128(FP), DX
	CMPQ  DX, $4
	JEQ   dotRealN
	CMPQ  DX, $1
	JLT   dotReal
	JEQ   dotInt
	JMP   dotIntN
	// Each loop starts a 64-byte line (a PCALIGN over the function's
	// alignment raises it): otherwise where the linker places the
	// function decides whether a loop (the scatter's is 34 bytes)
	// straddles two lines, which moved BATAX by 15-20% between builds of
	// unrelated code. Every padded label follows an unconditional jump:
	// the padding is never run.
	DOT_LOOP(dotReal, dotRealTail, WIDE_I, REAL_X, partials2)
	DOT_LOOP(dotInt, dotIntTail, WIDE_I, INT_X, partials2)
	DOT_LOOP(dotRealN, dotRealNTail, NARROW_I, REAL_X, partials2)
	DOT_LOOP(dotIntN, dotIntNTail, NARROW_I, INT_X, partials2)

partials2:
	DOT_PARTIALS

scale:
	SCALE(X1)
	CMPQ  R11, R12
	JGE   next
	MOVQ  ints+128(FP), DX
	SCATTER_KIND(scatterReal, scatterInt, scatterRealN, scatterIntN)
	SCATTER_LOOPS(scatterReal, scatterInt, scatterRealN, scatterIntN, next)

next:
	INCQ CX
	JMP  row2

done2:
	MOVQ CX, ret+136(FP)
	RET

// func scaleScatterRows(h *int64, l int64, idx unsafe.Pointer, v unsafe.Pointer, n int64, ts *float64, out *float64, rows int64, ints int64) int64
//
// csrScaleScatter: out[idx[p]] += v[p]*ts[k] over row k (p = l..h[k]-1
// as in dotRows), each row scaled by its own factor. Values and indices
// as dotScatterRows2's second rows (ints + 4: idx holds int32s).
TEXT ·scaleScatterRows(SB), NOSPLIT, $0-80
	MOVQ h+0(FP), R8
	MOVQ l+8(FP), R11
	MOVQ idx+16(FP), R14
	MOVQ v+24(FP), R15
	MOVQ ts+40(FP), R9
	MOVQ out+48(FP), R10
	XORQ CX, CX

srow:
	CMPQ  CX, rows+56(FP)
	JGE   sdone
	MOVQ  (R8)(CX*8), R12
	ROW_OK(R11, R12, sdone)
	CMPQ  R12, n+32(FP)
	JGT   sdone
	MOVSD (R9)(CX*8), X1
	CMPQ  R11, R12
	JGE   snext
	MOVQ  ints+64(FP), DX
	SCATTER_KIND(sReal, sInt, sRealN, sIntN)
	SCATTER_LOOPS(sReal, sInt, sRealN, sIntN, snext)

snext:
	INCQ CX
	JMP  srow

sdone:
	MOVQ CX, ret+72(FP)
	RET
