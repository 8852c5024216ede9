//go:build amd64 && !purego

#include "textflag.h"

// func sumAVX2(src *uint32, n int) uint32
// n a multiple of 32; the sum modulo 2^32.
TEXT ·sumAVX2(SB), NOSPLIT, $0-20
	MOVQ src+0(FP), SI
	MOVQ n+8(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3

sumloop:
	CMPQ CX, $0
	JLE  sumdone
	VPADDD (SI), Y0, Y0
	VPADDD 32(SI), Y1, Y1
	VPADDD 64(SI), Y2, Y2
	VPADDD 96(SI), Y3, Y3
	ADDQ $128, SI
	SUBQ $32, CX
	JMP  sumloop

sumdone:
	VPADDD Y1, Y0, Y0
	VPADDD Y3, Y2, Y2
	VPADDD Y2, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0x4E, X0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0xB1, X0, X1
	VPADDD X1, X0, X0
	VMOVD X0, AX
	VZEROUPPER
	MOVL AX, ret+16(FP)
	RET

// func scanNT8(dst, src *uint32, n int, carry uint32, inclusive bool) uint32
// dst 32-byte aligned, n a multiple of 8; non-temporal stores, SFENCE at the end.
TEXT ·scanNT8(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVL carry+24(FP), AX
	MOVBLZX inclusive+28(FP), DX
	VMOVD AX, X1
	VPBROADCASTD X1, Y1 // carry in every lane
	MOVL $7, AX
	VMOVD AX, X5
	VPBROADCASTD X5, Y5 // permutation index: element 7 everywhere
	TESTQ DX, DX
	JNE  inclloop

exclloop:
	CMPQ CX, $0
	JLE  scandone
	VMOVDQU (SI), Y4           // x
	VPSLLDQ $4, Y4, Y2
	VPADDD Y2, Y4, Y0
	VPSLLDQ $8, Y0, Y2
	VPADDD Y2, Y0, Y0          // inclusive within each 128-bit half
	VPSHUFD $0xFF, Y0, Y2
	VPERM2I128 $0x08, Y2, Y2, Y2 // low half 0, high half = the low half's total
	VPADDD Y2, Y0, Y0          // inclusive over 8
	VPERMD Y0, Y5, Y3          // the 8 items' total in every lane
	VPSUBD Y4, Y0, Y0          // exclusive
	VPADDD Y1, Y0, Y0
	VMOVNTDQ Y0, (DI)
	VPADDD Y3, Y1, Y1
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  exclloop

inclloop:
	CMPQ CX, $0
	JLE  scandone
	VMOVDQU (SI), Y4
	VPSLLDQ $4, Y4, Y2
	VPADDD Y2, Y4, Y0
	VPSLLDQ $8, Y0, Y2
	VPADDD Y2, Y0, Y0
	VPSHUFD $0xFF, Y0, Y2
	VPERM2I128 $0x08, Y2, Y2, Y2
	VPADDD Y2, Y0, Y0
	VPERMD Y0, Y5, Y3
	VPADDD Y1, Y0, Y0
	VMOVNTDQ Y0, (DI)
	VPADDD Y3, Y1, Y1
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  inclloop

scandone:
	SFENCE
	VMOVD X1, AX
	VZEROUPPER
	MOVL AX, ret+32(FP)
	RET

// func cpuHasAVX2() bool
TEXT ·cpuHasAVX2(SB), NOSPLIT, $0-1
	MOVB $0, ret+0(FP)
	MOVL $1, AX
	XORL CX, CX
	CPUID
	// OSXSAVE (bit 27) and AVX (bit 28) of ECX.
	MOVL CX, BX
	ANDL $0x18000000, BX
	CMPL BX, $0x18000000
	JNE  no
	XORL CX, CX
	XGETBV
	ANDL $6, AX // XMM and YMM state enabled by the OS
	CMPL AX, $6
	JNE  no
	MOVL $7, AX
	XORL CX, CX
	CPUID
	ANDL $0x20, BX // AVX2
	JEQ  no
	MOVB $1, ret+0(FP)
no:
	RET
