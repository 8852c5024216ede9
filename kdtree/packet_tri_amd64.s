//go:build amd64 && !purego

#include "textflag.h"

// Offsets in packetPre (TestPacketPreLayout).
#define POX 0
#define POY 64
#define POZ 128
#define PSX 192
#define PSY 256
#define PSZ 320
#define PTMIN 384
#define PTMAX 448
#define BESTT 512
#define Z0 576
#define Z1 640
#define Z2 704
#define E0 768
#define E1 832
#define E2 896
#define MX 960
#define MY 1024
#define OT 1088
#define OU 1152
#define OW 1216

// SIGNS runs testLeaf's steps up to the sign test for the eight lanes at
// DI, each operation rounded on its own: p·z = v·[kz] − oz,
// p·x = (v·[kx] − ox) + sx·p·z, p·y = (v·[ky] − oy) + sy·p·z,
// e0 = p1x·p2y − p1y·p2x, e1 = p2x·p0y − p2y·p0x, e2 = p0x·p1y − p0y·p1x.
// It keeps p·z, the edge functions and the largest |p·x| and |p·y| (on the
// bits, as maxAbs3) in the scratch rows, and leaves in R8 the lanes with a
// zero edge function and in R12 those whose signs are mixed. Y15 = abs mask.
#define SIGNS \
	VBROADCASTSS (AX)(R11*4), Y0; \
	VSUBPS POZ(DI), Y0, Y0; \
	VBROADCASTSS 12(AX)(R11*4), Y1; \
	VSUBPS POZ(DI), Y1, Y1; \
	VBROADCASTSS 24(AX)(R11*4), Y2; \
	VSUBPS POZ(DI), Y2, Y2; \
	VMOVUPS Y0, Z0(DI); \
	VMOVUPS Y1, Z1(DI); \
	VMOVUPS Y2, Z2(DI); \
	VMOVUPS PSX(DI), Y3; \
	VMOVUPS PSY(DI), Y4; \
	VMOVUPS POX(DI), Y5; \
	VMOVUPS POY(DI), Y6; \
	VBROADCASTSS (AX)(R9*4), Y7; \
	VSUBPS Y5, Y7, Y7; \
	VMULPS Y3, Y0, Y8; \
	VADDPS Y8, Y7, Y7; \
	VBROADCASTSS (AX)(R10*4), Y8; \
	VSUBPS Y6, Y8, Y8; \
	VMULPS Y4, Y0, Y9; \
	VADDPS Y9, Y8, Y8; \
	VBROADCASTSS 12(AX)(R9*4), Y9; \
	VSUBPS Y5, Y9, Y9; \
	VMULPS Y3, Y1, Y10; \
	VADDPS Y10, Y9, Y9; \
	VBROADCASTSS 12(AX)(R10*4), Y10; \
	VSUBPS Y6, Y10, Y10; \
	VMULPS Y4, Y1, Y11; \
	VADDPS Y11, Y10, Y10; \
	VBROADCASTSS 24(AX)(R9*4), Y11; \
	VSUBPS Y5, Y11, Y11; \
	VMULPS Y3, Y2, Y12; \
	VADDPS Y12, Y11, Y11; \
	VBROADCASTSS 24(AX)(R10*4), Y12; \
	VSUBPS Y6, Y12, Y12; \
	VMULPS Y4, Y2, Y13; \
	VADDPS Y13, Y12, Y12; \
	VMULPS Y12, Y9, Y0; \
	VMULPS Y11, Y10, Y1; \
	VSUBPS Y1, Y0, Y0; \
	VMULPS Y8, Y11, Y1; \
	VMULPS Y7, Y12, Y2; \
	VSUBPS Y2, Y1, Y1; \
	VMULPS Y10, Y7, Y2; \
	VMULPS Y9, Y8, Y3; \
	VSUBPS Y3, Y2, Y2; \
	VMOVUPS Y0, E0(DI); \
	VMOVUPS Y1, E1(DI); \
	VMOVUPS Y2, E2(DI); \
	VANDPS Y15, Y7, Y3; \
	VANDPS Y15, Y9, Y4; \
	VPMAXUD Y4, Y3, Y3; \
	VANDPS Y15, Y11, Y4; \
	VPMAXUD Y4, Y3, Y3; \
	VMOVUPS Y3, MX(DI); \
	VANDPS Y15, Y8, Y3; \
	VANDPS Y15, Y10, Y4; \
	VPMAXUD Y4, Y3, Y3; \
	VANDPS Y15, Y12, Y4; \
	VPMAXUD Y4, Y3, Y3; \
	VMOVUPS Y3, MY(DI); \
	VXORPS Y5, Y5, Y5; \
	VCMPPS $0, Y5, Y0, Y6; \
	VCMPPS $0, Y5, Y1, Y7; \
	VORPS Y7, Y6, Y6; \
	VCMPPS $0, Y5, Y2, Y7; \
	VORPS Y7, Y6, Y6; \
	VMOVMSKPS Y6, R8; \
	VCMPPS $0x11, Y5, Y0, Y6; \
	VCMPPS $0x11, Y5, Y1, Y7; \
	VORPS Y7, Y6, Y6; \
	VCMPPS $0x11, Y5, Y2, Y7; \
	VORPS Y7, Y6, Y6; \
	VCMPPS $0x1e, Y5, Y0, Y3; \
	VCMPPS $0x1e, Y5, Y1, Y7; \
	VORPS Y7, Y3, Y3; \
	VCMPPS $0x1e, Y5, Y2, Y7; \
	VORPS Y7, Y3, Y3; \
	VANDPS Y3, Y6, Y6; \
	VMOVMSKPS Y6, R12

// FINISH is rayPre.finish for the eight lanes at DI, from SIGNS's rows:
// det = (e0+e1)+e2, p·z scaled by sz, tScaled = (e0·p0z + e1·p1z) + e2·p2z,
// the rejections by det's sign against tScaled and tmax·det, t =
// tScaled·(1/det), t > bestT, and deltaT's bound, operation by operation.
// It writes t, u = e1/det·, w = e2/det· to the out rows and leaves in R13
// the lanes whose test accepts t. Y14 = 1, Y15 = abs mask, SI = triGammas.
#define FINISH \
	VMOVUPS E0(DI), Y0; \
	VMOVUPS E1(DI), Y1; \
	VMOVUPS E2(DI), Y2; \
	VADDPS Y1, Y0, Y3; \
	VADDPS Y2, Y3, Y3; \
	VMOVUPS PSZ(DI), Y4; \
	VMULPS Z0(DI), Y4, Y5; \
	VMULPS Z1(DI), Y4, Y6; \
	VMULPS Z2(DI), Y4, Y7; \
	VANDPS Y15, Y5, Y8; \
	VANDPS Y15, Y6, Y9; \
	VPMAXUD Y9, Y8, Y8; \
	VANDPS Y15, Y7, Y9; \
	VPMAXUD Y9, Y8, Y8; \
	VMULPS Y5, Y0, Y5; \
	VMULPS Y6, Y1, Y6; \
	VADDPS Y6, Y5, Y5; \
	VMULPS Y7, Y2, Y6; \
	VADDPS Y6, Y5, Y5; \
	VMULPS PTMAX(DI), Y3, Y6; \
	VXORPS Y7, Y7, Y7; \
	VCMPPS $0x11, Y7, Y3, Y9; \
	VCMPPS $0x1d, Y7, Y5, Y10; \
	VCMPPS $0x11, Y6, Y5, Y11; \
	VORPS Y11, Y10, Y10; \
	VANDPS Y10, Y9, Y9; \
	VCMPPS $0x1e, Y7, Y3, Y10; \
	VCMPPS $0x12, Y7, Y5, Y11; \
	VCMPPS $0x1e, Y6, Y5, Y12; \
	VORPS Y12, Y11, Y11; \
	VANDPS Y11, Y10, Y10; \
	VORPS Y10, Y9, Y9; \
	VCMPPS $0, Y7, Y3, Y10; \
	VORPS Y10, Y9, Y9; \
	VDIVPS Y3, Y14, Y3; \
	VMULPS Y3, Y5, Y5; \
	VCMPPS $0x1e, BESTT(DI), Y5, Y10; \
	VORPS Y10, Y9, Y9; \
	VANDPS Y15, Y0, Y10; \
	VANDPS Y15, Y1, Y11; \
	VPMAXUD Y11, Y10, Y10; \
	VANDPS Y15, Y2, Y11; \
	VPMAXUD Y11, Y10, Y10; \
	VMULPS Y3, Y1, Y1; \
	VMULPS Y3, Y2, Y2; \
	VBROADCASTSS 4(SI), Y11; \
	VMULPS Y8, Y11, Y4; \
	VMOVUPS MX(DI), Y12; \
	VMOVUPS MY(DI), Y13; \
	VBROADCASTSS 8(SI), Y6; \
	VADDPS Y8, Y12, Y7; \
	VMULPS Y6, Y7, Y7; \
	VADDPS Y8, Y13, Y0; \
	VMULPS Y6, Y0, Y0; \
	VBROADCASTSS 0(SI), Y6; \
	VMULPS Y12, Y6, Y6; \
	VMULPS Y13, Y6, Y6; \
	VMULPS Y12, Y0, Y0; \
	VADDPS Y0, Y6, Y6; \
	VMULPS Y13, Y7, Y7; \
	VADDPS Y7, Y6, Y6; \
	VADDPS Y6, Y6, Y6; \
	VMULPS Y10, Y11, Y11; \
	VMULPS Y8, Y11, Y11; \
	VMULPS Y8, Y6, Y6; \
	VADDPS Y6, Y11, Y11; \
	VMULPS Y10, Y4, Y4; \
	VADDPS Y4, Y11, Y11; \
	VBROADCASTSS 12(SI), Y0; \
	VMULPS Y0, Y11, Y11; \
	VANDPS Y15, Y3, Y0; \
	VMULPS Y0, Y11, Y11; \
	VCMPPS $0x1e, Y11, Y5, Y0; \
	VCMPPS $0x11, PTMIN(DI), Y5, Y4; \
	VANDNPS Y0, Y4, Y0; \
	VANDNPS Y0, Y9, Y0; \
	VMOVMSKPS Y0, R13; \
	VMOVUPS Y5, OT(DI); \
	VMOVUPS Y1, OU(DI); \
	VMOVUPS Y2, OW(DI)

// func packetTriAVX2(v *triVerts, k *[4]uint32, pre *packetPre, lanes uint32, gam *[4]float32) (hit, slow uint32)
// packetTriGo's contract, eight lanes at a time; a half with no lane of
// lanes is skipped, and FINISH runs only for a half with a lane that
// passes the sign test.
TEXT ·packetTriAVX2(SB), NOSPLIT, $0-48
	MOVQ v+0(FP), AX
	MOVQ k+8(FP), SI
	MOVQ pre+16(FP), DI
	MOVL 0(SI), R9
	MOVL 4(SI), R10
	MOVL 8(SI), R11
	MOVQ gam+32(FP), SI // deltaT's constants: gamma2, gamma3, gamma5, 3
	MOVL $0x7fffffff, BX
	VMOVD BX, X15
	VBROADCASTSS X15, Y15
	MOVL $0x3f800000, BX
	VMOVD BX, X14
	VBROADCASTSS X14, Y14
	MOVL $0, hit+40(FP)
	MOVL $0, slow+44(FP)
	XORL CX, CX // this half's first lane

loop:
	MOVL lanes+24(FP), DX
	SHRL CX, DX
	ANDL $0xff, DX
	JZ next
	SIGNS
	ANDL DX, R8 // zero edge: testLeaf decides
	ORL R8, R12
	NOTL R12
	ANDL DX, R12 // signs not mixed, no zero edge
	XORL R13, R13
	TESTL R12, R12
	JZ store
	FINISH
	ANDL R12, R13
store:
	SHLL CX, R13
	ORL R13, hit+40(FP)
	SHLL CX, R8
	ORL R8, slow+44(FP)
next:
	ADDQ $32, DI
	ADDL $8, CX
	CMPL CX, $16
	JLT loop

	VZEROUPPER
	RET
