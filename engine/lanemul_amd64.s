//go:build !purego

#include "textflag.h"

// The lifted lanes' product loop of a walk over positions, in AVX2, four
// lanes to a register, each lane the operations of the Go loop in its
// order (a multiply, a multiply, an add; no fused multiply-add; each
// operation's first operand the Go expression's): the same bits.
//
// mulBatch's loop, for a walk over many positions (one position for
// lprod.addTo): acc[q] += (x[p]*b[kb[2p]+q])*c[kc[2p]+q] (c nil: x[p]*b[...])
// for every position p < m in order, q < n, n a multiple of 4. Sixteen
// lanes at a time (then four) stay in registers across all positions,
// and the rows at kb[2p+1] and kc[2p+1] (a later position's) are fetched
// while p is added: a walk over a large factor's rows (one random row a
// position) has its misses in flight together. Each lane sees the
// operations of the Go loop in its order.

// Both loops' steps, for the lanes from AX on of a position whose x is
// broadcast in Y0; k: the address of the position's first lane's index
// into a row array, t: a register they may overwrite.
//
// FETCH16 and FETCH4 fetch the lanes of row array r at index k.
#define FETCH16(r, k, t) \
	MOVQ       k, t \
	ADDQ       AX, t \
	PREFETCHT0 (r)(t*8) \
	PREFETCHT0 64(r)(t*8) \
	PREFETCHT0 120(r)(t*8)

#define FETCH4(r, k, t) \
	MOVQ       k, t \
	ADDQ       AX, t \
	PREFETCHT0 (r)(t*8) \
	PREFETCHT0 24(r)(t*8)

// MUL16 sets Y1, Y2, Y3, Y8 to x times b's sixteen lanes at kb; TIMES16
// multiplies them by c's at kc; ADD16 adds them into Y4..Y7.
#define MUL16(b, kb, t) \
	MOVQ   kb, t \
	ADDQ   AX, t \
	LEAQ   (b)(t*8), t \
	VMULPD (t), Y0, Y1 \
	VMULPD 32(t), Y0, Y2 \
	VMULPD 64(t), Y0, Y3 \
	VMULPD 96(t), Y0, Y8

#define TIMES16(c, kc, t) \
	MOVQ   kc, t \
	ADDQ   AX, t \
	LEAQ   (c)(t*8), t \
	VMULPD (t), Y1, Y1 \
	VMULPD 32(t), Y2, Y2 \
	VMULPD 64(t), Y3, Y3 \
	VMULPD 96(t), Y8, Y8

#define ADD16 \
	VADDPD Y1, Y4, Y4 \
	VADDPD Y2, Y5, Y5 \
	VADDPD Y3, Y6, Y6 \
	VADDPD Y8, Y7, Y7

// MUL4 sets Y1 to x times b's four lanes at kb; TIMES4 multiplies it by
// c's at kc; the caller adds it into Y4.
#define MUL4(b, kb, t) \
	MOVQ   kb, t \
	ADDQ   AX, t \
	VMULPD (b)(t*8), Y0, Y1

#define TIMES4(c, kc, t) \
	MOVQ   kc, t \
	ADDQ   AX, t \
	VMULPD (c)(t*8), Y1, Y1

// One position BX of mulAddRows's lanes: the rows of the position named
// at kb[2p+1] and kc[2p+1] are fetched (FETCH) and the position's
// products made (MUL, TIMES) for the caller to add. A: a label.
#define ADD_POS(FETCH, MUL, TIMES, A) MOVQ BX, R13; SHLQ $4, R13; \
	FETCH(R8, 8(R9)(R13*1), R14); VBROADCASTSD (SI)(BX*8), Y0; MUL(R8, (R9)(R13*1), R14); \
	TESTQ R10, R10; JZ A; FETCH(R10, 8(R11)(R13*1), R14); TIMES(R10, (R11)(R13*1), R14); A:

// func mulAddRows(acc *float64, n int64, x *float64, b *float64, kb *int64, c *float64, kc *int64, m int64)
TEXT ·mulAddRows(SB), NOSPLIT, $0-64
	MOVQ acc+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ x+16(FP), SI
	MOVQ b+24(FP), R8
	MOVQ kb+32(FP), R9
	MOVQ c+40(FP), R10
	MOVQ kc+48(FP), R11
	MOVQ m+56(FP), R12
	XORQ AX, AX         // the chunk's first lane

rows16:
	LEAQ    16(AX), DX
	CMPQ    DX, CX
	JGT     rows4
	VMOVUPD (DI)(AX*8), Y4
	VMOVUPD 32(DI)(AX*8), Y5
	VMOVUPD 64(DI)(AX*8), Y6
	VMOVUPD 96(DI)(AX*8), Y7
	XORQ    BX, BX      // the position

rows16p:
	CMPQ   BX, R12
	JGE    rows16e
	ADD_POS(FETCH16, MUL16, TIMES16, rows16a)
	ADD16
	INCQ   BX
	JMP    rows16p

rows16e:
	VMOVUPD Y4, (DI)(AX*8)
	VMOVUPD Y5, 32(DI)(AX*8)
	VMOVUPD Y6, 64(DI)(AX*8)
	VMOVUPD Y7, 96(DI)(AX*8)
	ADDQ    $16, AX
	JMP     rows16

rows4:
	LEAQ    4(AX), DX
	CMPQ    DX, CX
	JGT     rowsdone
	VMOVUPD (DI)(AX*8), Y4
	XORQ    BX, BX

rows4p:
	CMPQ   BX, R12
	JGE    rows4e
	ADD_POS(FETCH4, MUL4, TIMES4, rows4a)
	VADDPD Y1, Y4, Y4
	INCQ   BX
	JMP    rows4p

rows4e:
	VMOVUPD Y4, (DI)(AX*8)
	ADDQ    $4, AX
	JMP     rows4

rowsdone:
	VZEROUPPER
	RET

// A batch of rows of a one-value product, each the sum of its positions
// in order: row r at out + r*n holds, for q < n (a multiple of 4), the
// sum over positions ends[r-1]..ends[r]-1 (ends[-1] = 0) of
// (x[p]*b[kb[p]+q])*c[kc[p]+q] (c nil: x[p]*b[kb[p]+q]), added to zero
// one by one as mulAddRows adds them; the rows in order up to the first
// with a zero lane (or -0), which is written too. (Only a zero's sign
// may differ from the first position written, and no zero is kept.)
// Sixteen lanes at a time (then four) stay in registers across a row's
// positions, as in mulAddRows, and the rows of the position
// aheadPositions on (a later row's: a row of a CSF level holds a few)
// are fetched while p is added: a walk over a large factor's rows (one
// random row a position, MTTKRP's D) has its misses in flight together.

// One position R14 of mulSetRows's lanes, the flags of R14 against the
// first position not to fetch ahead for: unless past it, the rows
// aheadPositions on are fetched (FETCH), then the position's products
// are made (MUL, TIMES) for the caller to add. X and A: labels.
#define SET_POS(FETCH, MUL, TIMES, X, A) JGE X; FETCH(R8, 64(R9)(R14*8), R12); \
	TESTQ R10, R10; JZ X; FETCH(R10, 64(R11)(R14*8), R12); \
	X: VBROADCASTSD (SI)(R14*8), Y0; MUL(R8, (R9)(R14*8), R12); \
	TESTQ R10, R10; JZ A; TIMES(R10, (R11)(R14*8), R12); A:

// func mulSetRows(out *float64, n int64, x *float64, b *float64, kb *int64, c *float64, kc *int64, ends *int32, m int64) (first int64)
TEXT ·mulSetRows(SB), NOSPLIT, $8-80
	MOVQ    out+0(FP), DI
	MOVQ    n+8(FP), CX
	MOVQ    x+16(FP), SI
	MOVQ    b+24(FP), R8
	MOVQ    kb+32(FP), R9
	MOVQ    c+40(FP), R10
	MOVQ    kc+48(FP), R11
	MOVQ    ends+56(FP), R12
	MOVQ    m+64(FP), DX
	MOVLQSX -4(R12)(DX*4), DX
	SUBQ    $8, DX
	MOVQ    DX, ahead-8(SP) // a position below it fetches the rows 8 on (aheadPositions)
	VXORPD  Y9, Y9, Y9      // zero, to compare with
	XORQ    BX, BX          // the row
	XORQ    R13, R13        // its first position

srow:
	CMPQ    BX, m+64(FP)
	JGE     sdone
	MOVQ    ends+56(FP), R12
	MOVLQSX (R12)(BX*4), DX // past its last position
	VXORPD  Y10, Y10, Y10   // its lanes found zero
	XORQ    AX, AX          // the lane

s16:
	LEAQ   16(AX), R12
	CMPQ   R12, CX
	JGT    s4
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	MOVQ   R13, R14     // the position

s16p:
	CMPQ R14, DX
	JGE  s16e
	CMPQ R14, ahead-8(SP)
	SET_POS(FETCH16, MUL16, TIMES16, s16x, s16a)
	ADD16
	INCQ R14
	JMP  s16p

s16e:
	VMOVUPD Y4, (DI)(AX*8)
	VMOVUPD Y5, 32(DI)(AX*8)
	VMOVUPD Y6, 64(DI)(AX*8)
	VMOVUPD Y7, 96(DI)(AX*8)
	VCMPPD  $0, Y9, Y4, Y1
	VORPD   Y1, Y10, Y10
	VCMPPD  $0, Y9, Y5, Y1
	VORPD   Y1, Y10, Y10
	VCMPPD  $0, Y9, Y6, Y1
	VORPD   Y1, Y10, Y10
	VCMPPD  $0, Y9, Y7, Y1
	VORPD   Y1, Y10, Y10
	ADDQ    $16, AX
	JMP     s16

s4:
	CMPQ   AX, CX
	JGE    srowe
	VXORPD Y4, Y4, Y4
	MOVQ   R13, R14

s4p:
	CMPQ R14, DX
	JGE  s4e
	CMPQ R14, ahead-8(SP)
	SET_POS(FETCH4, MUL4, TIMES4, s4x, s4a)
	VADDPD Y1, Y4, Y4
	INCQ   R14
	JMP    s4p

s4e:
	VMOVUPD Y4, (DI)(AX*8)
	VCMPPD  $0, Y9, Y4, Y1
	VORPD   Y1, Y10, Y10
	ADDQ    $4, AX
	JMP     s4

srowe:
	VMOVMSKPD Y10, R12
	TESTQ     R12, R12
	JNZ       sdone
	LEAQ      (DI)(CX*8), DI
	MOVQ      DX, R13
	INCQ      BX
	JMP       srow

sdone:
	MOVQ BX, first+72(FP)
	VZEROUPPER
	RET
