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

// The rows of packetClip that the step reads, from the packet.
#define ORG (packet_packetClip+packetClip_org)
#define INV (packet_packetClip+packetClip_inv)
#define WIDE (packet_packetClip+packetClip_wide)

// HALF is packetStepGo for eight lanes at byte OFF of the rows at R11,
// split in Y0, the lanes' tmin and tmax in TMIN and TMAX: fmax goes to
// FMAX, smin to SMIN, the masks of tmin <= fmax and smin <= tmax to the
// sign bits of Y10 and Y11. VMINPS and VMAXPS return their second source
// on equal zeros, as Go's min(hi, tmax) and max(lo, tmin) do for the
// values the walk passes.
#define HALF(OFF, TMIN, TMAX, FMAX, SMIN) \
	VSUBPS ORG+OFF(R11), Y0, Y1; \
	VMULPS INV+OFF(R11), Y1, Y1; \
	VMOVUPS WIDE+OFF(R11), Y2; \
	VADDPS Y2, Y1, FMAX; \
	VSUBPS Y2, Y1, SMIN; \
	VMINPS TMAX, FMAX, FMAX; \
	VMAXPS TMIN, SMIN, SMIN; \
	VCMPPS $2, FMAX, TMIN, Y10; \
	VCMPPS $2, TMAX, SMIN, Y11

// func packetWalkAVX2(nodes *Node, p *packet, node uint32, sp *int, tmin, tmax *[16]float32, live, finished uint32, pop bool) (leaf, leafLive uint32)
//
// With pop, popPacketGo's contract first, with the rays' best T in
// p.spre.bestT: entries are popped until one keeps a ray; a ray of an
// entry's live mask is dropped when it is finished, or when the entry was
// pushed for it (not direct) and its tmin is not at or below its best T
// (VCMPPS NLE_UQ: true on NaN, as !(tmin <= best)); a dropped ray's tmin
// becomes +Inf. It returns leafLive 0 (nothing written but *sp) when the
// stack runs out. Then descendGo's contract, from the popped entry or,
// without pop, from node with tmin, tmax and live. Registers: DI nodes, SI p, R8 node, BX
// live, CX the depth; Y6, Y7 tmin and Y8, Y9 tmax of lanes 0-7 and 8-15;
// a step leaves fmax in Y3, Y12 and smin in Y4, Y13.
TEXT ·packetWalkAVX2(SB), NOSPLIT, $0-72
	MOVQ nodes+0(FP), DI
	MOVQ p+8(FP), SI
	MOVL node+16(FP), R8
	MOVQ sp+24(FP), DX
	MOVQ (DX), CX
	MOVL live+48(FP), BX
	MOVBLZX pop+56(FP), AX
	TESTL AX, AX
	JNE  popinit
	MOVQ tmin+32(FP), DX
	VMOVUPS (DX), Y6
	VMOVUPS 32(DX), Y7
	MOVQ tmax+40(FP), DX
	VMOVUPS (DX), Y8
	VMOVUPS 32(DX), Y9
	JMP  step

popinit:
	VMOVUPS (packet_spre+packetPre_bestT)(SI), Y14
	VMOVUPS (packet_spre+packetPre_bestT+32)(SI), Y15
	MOVL finished+52(FP), R9
	MOVL $0x7f800000, AX
	VMOVD AX, X5
	VPBROADCASTD X5, Y5 // +Inf
	VMOVDQU laneBits<>+0(SB), Y10
	VMOVDQU laneBits<>+32(SB), Y11

pop:
	TESTQ CX, CX
	JEQ  empty
	DECQ CX
	MOVQ CX, R10
	ANDQ $(const_MaxTreeDepth-1), R10
	IMUL3Q $packetEntry__size, R10, R10
	LEAQ packet_stack(SI)(R10*1), R10
	VMOVUPS packetEntry_tmin(R10), Y0
	VMOVUPS (packetEntry_tmin+32)(R10), Y1
	VCMPPS $0x16, Y14, Y0, Y2 // !(tmin <= best)
	VCMPPS $0x16, Y15, Y1, Y3
	VMOVMSKPS Y2, AX
	VMOVMSKPS Y3, DX
	SHLL $8, DX
	ORL  DX, AX
	MOVL packetEntry_direct(R10), DX
	NOTL DX
	ANDL DX, AX // past the best hit, and pushed
	ORL  R9, AX // or finished: dropped
	MOVL packetEntry_live(R10), R11
	ANDL R11, AX // the live rays dropped
	XORL AX, R11 // the live rays kept
	JEQ  pop // no ray keeps this entry
	VMOVD AX, X4
	VPBROADCASTD X4, Y4
	VPAND Y10, Y4, Y12
	VPCMPEQD Y10, Y12, Y12 // dropped, lanes 0-7
	VPAND Y11, Y4, Y13
	VPCMPEQD Y11, Y13, Y13 // dropped, lanes 8-15
	VBLENDVPS Y12, Y5, Y0, Y6
	VBLENDVPS Y13, Y5, Y1, Y7
	VMOVUPS packetEntry_tmax(R10), Y8
	VMOVUPS (packetEntry_tmax+32)(R10), Y9
	MOVL packetEntry_node(R10), R8
	MOVL R11, BX

step:
	MOVL 4(DI)(R8*8), AX // W1
	MOVL AX, DX
	ANDL $3, DX
	CMPL DX, $3
	JEQ  leaf
	SHRL $2, AX // the above child
	LEAL 1(R8), R9 // the below child
	MOVL R9, R10
	XORL AX, R10
	ANDL packet_flip(SI)(DX*4), R10 // swap
	XORL R10, R9 // first
	XORL R10, AX // second
	VBROADCASTSS (DI)(R8*8), Y0 // split
	MOVQ DX, R11
	SHLQ $6, R11 // the axis' row: 16 floats
	ADDQ SI, R11
	HALF(0, Y6, Y8, Y3, Y4)
	VMOVMSKPS Y10, R12
	VMOVMSKPS Y11, R13
	HALF(32, Y7, Y9, Y12, Y13)
	VMOVMSKPS Y10, DX
	SHLL $8, DX
	ORL  DX, R12 // in1
	VMOVMSKPS Y11, DX
	SHLL $8, DX
	ORL  DX, R13 // in2
	TESTL R12, R12
	JEQ  second
	TESTL R13, R13
	JEQ  first
	// Both: push the second child with smin and tmax.
	MOVQ CX, R11
	ANDQ $(const_MaxTreeDepth-1), R11
	IMUL3Q $packetEntry__size, R11, R11
	LEAQ packet_stack(SI)(R11*1), R11
	MOVL AX, packetEntry_node(R11)
	MOVL R13, packetEntry_live(R11)
	MOVL R12, DX
	NOTL DX
	ANDL R13, DX
	MOVL DX, packetEntry_direct(R11)
	VMOVUPS Y4, packetEntry_tmin(R11)
	VMOVUPS Y13, (packetEntry_tmin+32)(R11)
	VMOVUPS Y8, packetEntry_tmax(R11)
	VMOVUPS Y9, (packetEntry_tmax+32)(R11)
	INCQ CX

first:
	MOVL R9, R8
	MOVL R12, BX
	VMOVAPS Y3, Y8
	VMOVAPS Y12, Y9
	JMP  step

second:
	MOVL AX, R8
	MOVL R13, BX
	VMOVAPS Y4, Y6
	VMOVAPS Y13, Y7
	JMP  step

leaf:
	MOVQ sp+24(FP), DX
	MOVQ CX, (DX)
	MOVQ tmin+32(FP), DX
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	MOVQ tmax+40(FP), DX
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, 32(DX)
	VZEROUPPER
	MOVL R8, leaf+64(FP)
	MOVL BX, leafLive+68(FP)
	RET

empty:
	MOVQ sp+24(FP), DX
	MOVQ $0, (DX)
	VZEROUPPER
	MOVL R8, leaf+64(FP)
	MOVL $0, leafLive+68(FP)
	RET
