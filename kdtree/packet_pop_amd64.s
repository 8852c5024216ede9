//go:build amd64 && !purego

#include "textflag.h"
#include "go_asm.h"

// laneBits is 1<<k in lane k of sixteen float32 lanes.
DATA laneBits<>+0(SB)/4, $0x1
DATA laneBits<>+4(SB)/4, $0x2
DATA laneBits<>+8(SB)/4, $0x4
DATA laneBits<>+12(SB)/4, $0x8
DATA laneBits<>+16(SB)/4, $0x10
DATA laneBits<>+20(SB)/4, $0x20
DATA laneBits<>+24(SB)/4, $0x40
DATA laneBits<>+28(SB)/4, $0x80
DATA laneBits<>+32(SB)/4, $0x100
DATA laneBits<>+36(SB)/4, $0x200
DATA laneBits<>+40(SB)/4, $0x400
DATA laneBits<>+44(SB)/4, $0x800
DATA laneBits<>+48(SB)/4, $0x1000
DATA laneBits<>+52(SB)/4, $0x2000
DATA laneBits<>+56(SB)/4, $0x4000
DATA laneBits<>+60(SB)/4, $0x8000
GLOBL laneBits<>(SB), RODATA|NOPTR, $64

// func popPacketAVX2(stack *packetEntry, sp *int, node *uint32, tmin, tmax, bestT *[16]float32, finished uint32) uint32
//
// popPacketGo's contract with the rays' best T in bestT: entries are
// popped until one keeps a ray; a ray of an entry's live mask is dropped
// when it is finished, or when the entry was pushed for it (not direct)
// and its tmin is not at or below its best T (VCMPPS NLE_UQ: true on
// NaN, as !(tmin <= best)); a dropped ray's tmin becomes +Inf. tmin and
// tmax are written for the entry returned only (none when it returns 0).
TEXT ·popPacketAVX2(SB), NOSPLIT, $0-60
	MOVQ stack+0(FP), DI
	MOVQ sp+8(FP), SI
	MOVQ (SI), CX
	MOVQ bestT+40(FP), R8
	VMOVUPS (R8), Y6
	VMOVUPS 32(R8), Y7
	MOVL finished+48(FP), R9
	MOVL $0x7f800000, AX
	VMOVD AX, X5
	VPBROADCASTD X5, Y5 // +Inf
	VMOVDQU laneBits<>+0(SB), Y10
	VMOVDQU laneBits<>+32(SB), Y11

loop:
	TESTQ CX, CX
	JEQ   empty
	DECQ  CX
	IMUL3Q $packetEntry__size, CX, R10
	ADDQ  DI, R10
	VMOVUPS packetEntry_tmin(R10), Y0
	VMOVUPS (packetEntry_tmin+32)(R10), Y1
	VCMPPS $0x16, Y6, Y0, Y2 // !(tmin <= best)
	VCMPPS $0x16, Y7, Y1, Y3
	VMOVMSKPS Y2, AX
	VMOVMSKPS Y3, BX
	SHLL  $8, BX
	ORL   BX, AX
	MOVL  packetEntry_direct(R10), BX
	NOTL  BX
	ANDL  BX, AX                 // past the best hit, and pushed
	ORL   R9, AX                 // or finished: dropped
	MOVL  packetEntry_live(R10), R11
	ANDL  R11, AX                // the live rays dropped
	XORL  AX, R11                // the live rays kept
	TESTL R11, R11
	JEQ   loop                   // no ray keeps this entry: nothing to write
	VMOVD AX, X4
	VPBROADCASTD X4, Y4
	VPAND Y10, Y4, Y8
	VPCMPEQD Y10, Y8, Y8         // dropped, lanes 0-7
	VPAND Y11, Y4, Y9
	VPCMPEQD Y11, Y9, Y9         // dropped, lanes 8-15
	VBLENDVPS Y8, Y5, Y0, Y0
	VBLENDVPS Y9, Y5, Y1, Y1
	MOVQ  tmin+24(FP), R12
	VMOVUPS Y0, (R12)
	VMOVUPS Y1, 32(R12)
	MOVQ  tmax+32(FP), R12
	VMOVUPS packetEntry_tmax(R10), Y0
	VMOVUPS (packetEntry_tmax+32)(R10), Y1
	VMOVUPS Y0, (R12)
	VMOVUPS Y1, 32(R12)
	MOVQ  CX, (SI)
	MOVL  packetEntry_node(R10), AX
	MOVQ  node+16(FP), R12
	MOVL  AX, (R12)
	MOVL  R11, ret+56(FP)
	VZEROUPPER
	RET

empty:
	MOVQ  $0, (SI)
	MOVL  $0, ret+56(FP)
	VZEROUPPER
	RET
