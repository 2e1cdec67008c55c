//go:build !purego

#include "textflag.h"

// The lifted lanes' product loop of lprod.addTo, (x*b)*c, in AVX2, four lanes to
// a register, each lane the operations of the Go loop in its order (a
// multiply, a multiply, an add; no fused multiply-add; each operation's
// first operand the Go expression's): the same bits.

// func mulAddXBC(acc *float64, b *float64, c *float64, x float64, n int64)
//
// acc[q] += (x*b[q])*c[q] for q < n, n a multiple of 4.
TEXT ·mulAddXBC(SB), NOSPLIT, $0-40
	MOVQ         acc+0(FP), DI
	MOVQ         b+8(FP), SI
	MOVQ         c+16(FP), DX
	VBROADCASTSD x+24(FP), Y0
	MOVQ         n+32(FP), CX
	XORQ         AX, AX

xbc8:
	LEAQ    8(AX), R8
	CMPQ    R8, CX
	JGT     xbc4
	VMULPD  (SI)(AX*8), Y0, Y1
	VMULPD  32(SI)(AX*8), Y0, Y2
	VMULPD  (DX)(AX*8), Y1, Y1
	VMULPD  32(DX)(AX*8), Y2, Y2
	VMOVUPD (DI)(AX*8), Y3
	VMOVUPD 32(DI)(AX*8), Y4
	VADDPD  Y1, Y3, Y3
	VADDPD  Y2, Y4, Y4
	VMOVUPD Y3, (DI)(AX*8)
	VMOVUPD Y4, 32(DI)(AX*8)
	MOVQ    R8, AX
	JMP     xbc8

xbc4:
	CMPQ    AX, CX
	JGE     xbcdone
	VMULPD  (SI)(AX*8), Y0, Y1
	VMULPD  (DX)(AX*8), Y1, Y1
	VMOVUPD (DI)(AX*8), Y3
	VADDPD  Y1, Y3, Y3
	VMOVUPD Y3, (DI)(AX*8)
	ADDQ    $4, AX
	JMP     xbc4

xbcdone:
	VZEROUPPER
	RET

// func mulAddXB(acc *float64, b *float64, x float64, n int64)
//
// acc[q] += x*b[q] for q < n, n a multiple of 4: a scaled row added into
// the lanes (a product of two factors).
TEXT ·mulAddXB(SB), NOSPLIT, $0-32
	MOVQ         acc+0(FP), DI
	MOVQ         b+8(FP), SI
	VBROADCASTSD x+16(FP), Y0
	MOVQ         n+24(FP), CX
	XORQ         AX, AX

xb8:
	LEAQ    8(AX), R8
	CMPQ    R8, CX
	JGT     xb4
	VMULPD  (SI)(AX*8), Y0, Y1
	VMULPD  32(SI)(AX*8), Y0, Y2
	VMOVUPD (DI)(AX*8), Y3
	VMOVUPD 32(DI)(AX*8), Y4
	VADDPD  Y1, Y3, Y3
	VADDPD  Y2, Y4, Y4
	VMOVUPD Y3, (DI)(AX*8)
	VMOVUPD Y4, 32(DI)(AX*8)
	MOVQ    R8, AX
	JMP     xb8

xb4:
	CMPQ    AX, CX
	JGE     xbdone
	VMULPD  (SI)(AX*8), Y0, Y1
	VMOVUPD (DI)(AX*8), Y3
	VADDPD  Y1, Y3, Y3
	VMOVUPD Y3, (DI)(AX*8)
	ADDQ    $4, AX
	JMP     xb4

xbdone:
	VZEROUPPER
	RET
