//go:build amd64 && !purego

#include "textflag.h"
#include "go_asm.h"

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

// func packetDescendAVX2(nodes *Node, p *packet, node uint32, sp *int, tmin, tmax *[16]float32, live uint32) (leaf, leafLive uint32)
//
// descendGo's contract. Registers: DI nodes, SI p, R8 node, BX live, CX
// the depth; Y6, Y7 tmin and Y8, Y9 tmax of lanes 0-7 and 8-15; a step
// leaves fmax in Y3, Y12 and smin in Y4, Y13.
TEXT ·packetDescendAVX2(SB), NOSPLIT, $0-64
	MOVQ nodes+0(FP), DI
	MOVQ p+8(FP), SI
	MOVL node+16(FP), R8
	MOVQ sp+24(FP), DX
	MOVQ (DX), CX
	MOVQ tmin+32(FP), DX
	VMOVUPS (DX), Y6
	VMOVUPS 32(DX), Y7
	MOVQ tmax+40(FP), DX
	VMOVUPS (DX), Y8
	VMOVUPS 32(DX), Y9
	MOVL live+48(FP), BX

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
	MOVL R8, leaf+56(FP)
	MOVL BX, leafLive+60(FP)
	RET
