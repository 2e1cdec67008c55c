//go:build !purego

#include "textflag.h"

// func prefetchWrite(p unsafe.Pointer, n int64)
//
// PREFETCHW (encoded by hand: the assembler lacks the mnemonic) of every
// other cache line of the n 8-byte words at p, and of the last: the lines in
// between come with their pairs (the adjacent-line prefetch), and half
// the requests hold up the miss queue half as long.
TEXT ·prefetchWrite(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	TESTQ CX, CX
	JLE  done
	LEAQ -8(SI)(CX*8), DI

loop:
	BYTE $0x0F; BYTE $0x0D; BYTE $0x0E // PREFETCHW (SI)
	ADDQ $128, SI
	CMPQ SI, DI
	JLE  loop
	BYTE $0x0F; BYTE $0x0D; BYTE $0x0F // PREFETCHW (DI)

done:
	RET
