//go:build amd64 && !purego

#include "textflag.h"

// func scanNT(dst, src *uint32, n int, carry uint32, inclusive bool) uint32
TEXT ·scanNT(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVL carry+24(FP), AX
	MOVBLZX inclusive+28(FP), DX
	MOVL AX, X1
	PSHUFL $0, X1, X1 // X1 = carry in every lane

loop:
	CMPQ CX, $0
	JLE  done
	MOVOU (SI), X0    // a b c d
	MOVO  X0, X2
	PSLLO $4, X2      // 0 a b c
	PADDL X2, X0      // a a+b b+c c+d
	MOVO  X0, X2
	PSLLO $8, X2      // 0 0 a a+b
	PADDL X2, X0      // inclusive: a a+b a+b+c a+b+c+d
	MOVO  X0, X2
	TESTQ DX, DX
	JNE   store
	PSLLO $4, X2      // exclusive: 0 a a+b a+b+c

store:
	PADDL X1, X2      // + carry
	MOVNTO X2, (DI)
	PSHUFL $0xFF, X0, X3 // the four items' sum in every lane
	PADDL X3, X1
	ADDQ  $16, SI
	ADDQ  $16, DI
	SUBQ  $4, CX
	JMP   loop

done:
	SFENCE
	MOVL X1, AX
	MOVL AX, ret+32(FP)
	RET
