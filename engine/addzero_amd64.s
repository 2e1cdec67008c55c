//go:build !purego

#include "textflag.h"

// func addZeroChunks(dst, src *float64, chunks int64)
//
// For the first 4*chunks doubles: dst[k] += src[k] where src[k] != 0
// (dst[k] is kept where src[k] is ±0, so a -0 in dst stays), and
// src[k] = 0; per chunk of four, the sum blended with dst by a compare
// of src with zero, with no branch per value.
TEXT ·addZeroChunks(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ chunks+16(FP), CX
	TESTQ CX, CX
	JLE  done
	VXORPD Y3, Y3, Y3

loop:
	VMOVUPD (SI), Y0
	VMOVUPD (DI), Y1
	VADDPD Y0, Y1, Y2
	VCMPPD $0, Y3, Y0, Y4
	VBLENDVPD Y4, Y1, Y2, Y2
	VMOVUPD Y2, (DI)
	VMOVUPD Y3, (SI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  loop
	VZEROUPPER

done:
	RET
