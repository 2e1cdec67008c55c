//go:build !purego

#include "textflag.h"

// func transpose4(dst *float64, rows int64, src *float64, stride int64, groups int64, quads int64)
//
// The lane-major copy's blocks of four rows by four columns (AVX2): for
// g < groups and c < quads, src's rows 4g..4g+3 at columns 4c..4c+3 (src
// at row r, column b: src[r*stride+b]) go to dst's rows 4c..4c+3 at
// columns 4g..4g+3 (dst[b*rows+r]): four loads, two unpacks and two
// lane swaps per pair of outputs, four stores. Columns outer: a column's
// rows are written in order, one line after another.
TEXT ·transpose4(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ rows+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ stride+24(FP), R9
	MOVQ groups+32(FP), R10
	MOVQ quads+40(FP), R11
	SHLQ $3, R8 // bytes
	SHLQ $3, R9
	LEAQ (R9)(R9*2), R12 // 3 rows of src
	LEAQ (R8)(R8*2), R13 // 3 rows of dst
	XORQ CX, CX          // the quad of columns

tcols:
	CMPQ CX, R11
	JGE  tdone
	MOVQ CX, AX
	SHLQ $5, AX          // its first column's byte offset in a src row
	LEAQ (SI)(AX*1), BX  // src at row 0 of the quad
	MOVQ CX, AX
	SHLQ $2, AX
	IMULQ R8, AX
	LEAQ (DI)(AX*1), DX  // dst at the quad's first row
	XORQ R14, R14        // the group

tgroups:
	CMPQ R14, R10
	JGE  tnext
	VMOVUPD (BX), Y0
	VMOVUPD (BX)(R9*1), Y1
	VMOVUPD (BX)(R9*2), Y2
	VMOVUPD (BX)(R12*1), Y3
	VUNPCKLPD Y1, Y0, Y4 // a0[0] a1[0] a0[2] a1[2]
	VUNPCKHPD Y1, Y0, Y5 // a0[1] a1[1] a0[3] a1[3]
	VUNPCKLPD Y3, Y2, Y6
	VUNPCKHPD Y3, Y2, Y7
	VPERM2F128 $0x20, Y6, Y4, Y0 // column 0 of the four rows
	VPERM2F128 $0x20, Y7, Y5, Y1 // column 1
	VPERM2F128 $0x31, Y6, Y4, Y2 // column 2
	VPERM2F128 $0x31, Y7, Y5, Y3 // column 3
	VMOVUPD Y0, (DX)
	VMOVUPD Y1, (DX)(R8*1)
	VMOVUPD Y2, (DX)(R8*2)
	VMOVUPD Y3, (DX)(R13*1)
	LEAQ (BX)(R9*4), BX
	ADDQ $32, DX
	INCQ R14
	JMP  tgroups

tnext:
	INCQ CX
	JMP  tcols

tdone:
	VZEROUPPER
	RET
