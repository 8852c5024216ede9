//go:build amd64 && !purego

#include "textflag.h"

// Offsets in packetClip (packet_clip.go checks them in TestPacketClipLayout).
#define ORG 0
#define INV 192
#define WIDE 384
#define TMIN 576
#define TMAX 640
#define SIGNS 704
#define IN 716
#define FIN 720
#define ODD 724
#define POX 728
#define POY 792
#define POZ 856
#define PSX 920
#define PSY 984
#define PSZ 1048
#define KZ 1112

// CLIP_AXIS clips the lanes' interval (Y6, Y7) to the box on one axis and
// writes inv and wide, as rayAxes.start does for one ray: inv = 1/dir
// (dir waits in the inv row), t0 = (lo−o)·inv and t1 = (hi−o)·inv ordered
// by t0 > t1 (a blend, so that NaN and equal zeros keep start's order),
// each widened by 2^-18·|t|, tmin = t0 > tmin ? t0 : tmin and
// tmax = t1 < tmax ? t1 : tmax (VMAXPS and VMINPS return their second
// source otherwise), slack = (2^-18·(mag+|o|))·|inv|, wide = slack·(2+2^-16),
// and fin &= |inv| ≤ 2^100 && slack ≤ 2^100. The sign bits of dir go to
// SGN. Constants: Y11 = 2+2^-16, Y12 = 2^100, Y13 = 2^-18, Y14 = abs mask,
// Y15 = 1.
#define CLIP_AXIS(AOFF, BOFF, SGN) \
	VMOVUPS ORG+AOFF(DI), Y0; \
	VMOVUPS PSX+AOFF(DI), Y1; \
	VMOVMSKPS Y1, SGN; \
	VDIVPS Y1, Y15, Y2; \
	VBROADCASTSS BOFF(SI), Y3; \
	VSUBPS Y0, Y3, Y3; \
	VMULPS Y2, Y3, Y3; \
	VBROADCASTSS 16+BOFF(SI), Y4; \
	VSUBPS Y0, Y4, Y4; \
	VMULPS Y2, Y4, Y4; \
	VCMPPS $0x1e, Y4, Y3, Y5; \
	VBLENDVPS Y5, Y4, Y3, Y8; \
	VBLENDVPS Y5, Y3, Y4, Y9; \
	VANDPS Y14, Y8, Y5; \
	VMULPS Y13, Y5, Y5; \
	VSUBPS Y5, Y8, Y8; \
	VANDPS Y14, Y9, Y5; \
	VMULPS Y13, Y5, Y5; \
	VADDPS Y5, Y9, Y9; \
	VMAXPS Y6, Y8, Y6; \
	VMINPS Y7, Y9, Y7; \
	VANDPS Y14, Y0, Y5; \
	VBROADCASTSS 32+BOFF(SI), Y3; \
	VADDPS Y5, Y3, Y5; \
	VMULPS Y13, Y5, Y5; \
	VANDPS Y14, Y2, Y3; \
	VMULPS Y3, Y5, Y5; \
	VCMPPS $0x12, Y12, Y3, Y3; \
	VCMPPS $0x12, Y12, Y5, Y4; \
	VANDPS Y4, Y3, Y3; \
	VANDPS Y3, Y10, Y10; \
	VMULPS Y11, Y5, Y5; \
	VMOVUPS Y2, INV+AOFF(DI); \
	VMOVUPS Y5, WIDE+AOFF(DI)

// PREPARE is prepare for eight lanes (Dir waits in the psx, psy and psz
// rows): kz is
// x where |Dx| beats |Dy| and |Dz| (m0), else y where |Dy| is not beaten by
// |Dx| and beats |Dz| (m1), else z; kz − 2 goes to KZ (−2, −1 or 0), the
// origin's and the direction's components on kx = kz+1 and ky = kz+2
// (mod 3) and on kz are picked by two blends each, and sx = (−D[kx])/D[kz],
// sy = (−D[ky])/D[kz], sz = 1/D[kz]. Y6, Y7 and Y11-Y15 are kept.
#define PREPARE \
	VMOVUPS PSX(DI), Y0; \
	VMOVUPS PSY(DI), Y1; \
	VMOVUPS PSZ(DI), Y2; \
	VANDPS Y14, Y0, Y3; \
	VANDPS Y14, Y1, Y4; \
	VANDPS Y14, Y2, Y5; \
	VCMPPS $0x1e, Y4, Y3, Y8; \
	VCMPPS $0x1e, Y5, Y3, Y9; \
	VANDPS Y9, Y8, Y9; \
	VCMPPS $0x1e, Y5, Y4, Y10; \
	VANDNPS Y10, Y8, Y8; \
	VPADDD Y9, Y9, Y3; \
	VPADDD Y8, Y3, Y3; \
	VMOVDQU Y3, KZ(DI); \
	VBLENDVPS Y8, Y1, Y2, Y3; \
	VBLENDVPS Y9, Y0, Y3, Y3; \
	VBLENDVPS Y8, Y2, Y0, Y4; \
	VBLENDVPS Y9, Y1, Y4, Y4; \
	VBLENDVPS Y8, Y0, Y1, Y5; \
	VBLENDVPS Y9, Y2, Y5, Y5; \
	VDIVPS Y3, Y15, Y0; \
	VPCMPEQD Y1, Y1, Y1; \
	VXORPS Y14, Y1, Y1; \
	VXORPS Y1, Y4, Y4; \
	VDIVPS Y3, Y4, Y4; \
	VXORPS Y1, Y5, Y5; \
	VDIVPS Y3, Y5, Y5; \
	VMOVUPS Y4, PSX(DI); \
	VMOVUPS Y5, PSY(DI); \
	VMOVUPS Y0, PSZ(DI); \
	VMOVUPS ORG(DI), Y0; \
	VMOVUPS ORG+64(DI), Y1; \
	VMOVUPS ORG+128(DI), Y2; \
	VBLENDVPS Y8, Y1, Y2, Y3; \
	VBLENDVPS Y9, Y0, Y3, Y3; \
	VBLENDVPS Y8, Y2, Y0, Y4; \
	VBLENDVPS Y9, Y1, Y4, Y4; \
	VBLENDVPS Y8, Y0, Y1, Y5; \
	VBLENDVPS Y9, Y2, Y5, Y5; \
	VMOVUPS Y4, POX(DI); \
	VMOVUPS Y5, POY(DI); \
	VMOVUPS Y3, POZ(DI)

// TRANSPOSE4 loads four floats of each of eight 32-byte rays at byte OFF
// (rays 0-3 in the low 128 bits, 4-7 in the high) and leaves float j of
// every ray in Yj (j = 0..3). Y4-Y7 are scratch.
#define TRANSPOSE4(OFF) \
	VMOVUPS OFF(AX), X0; \
	VINSERTF128 $1, 128+OFF(AX), Y0, Y0; \
	VMOVUPS 32+OFF(AX), X1; \
	VINSERTF128 $1, 160+OFF(AX), Y1, Y1; \
	VMOVUPS 64+OFF(AX), X2; \
	VINSERTF128 $1, 192+OFF(AX), Y2, Y2; \
	VMOVUPS 96+OFF(AX), X3; \
	VINSERTF128 $1, 224+OFF(AX), Y3, Y3; \
	VUNPCKLPS Y1, Y0, Y4; \
	VUNPCKHPS Y1, Y0, Y5; \
	VUNPCKLPS Y3, Y2, Y6; \
	VUNPCKHPS Y3, Y2, Y7; \
	VSHUFPS $0x44, Y6, Y4, Y0; \
	VSHUFPS $0xee, Y6, Y4, Y1; \
	VSHUFPS $0x44, Y7, Y5, Y2; \
	VSHUFPS $0xee, Y7, Y5, Y3

// func packetClipAVX2(rays *[16]Ray, box *[4]float32, c *packetClip)
// packetClipGo's contract for sixteen rays, eight at a time: the rays are
// transposed into one register per field, and each axis is clipped with
// the operations of rayAxes.start. box points at traceData.lo, followed by
// hi and mag (16 bytes apart).
TEXT ·packetClipAVX2(SB), NOSPLIT, $0-24
	MOVQ rays+0(FP), AX
	MOVQ box+8(FP), SI
	MOVQ c+16(FP), DX
	MOVQ DX, DI
	MOVL $0x40000040, R8
	VMOVD R8, X11
	VBROADCASTSS X11, Y11
	MOVL $0x71800000, R8
	VMOVD R8, X12
	VBROADCASTSS X12, Y12
	MOVL $0x36800000, R8
	VMOVD R8, X13
	VBROADCASTSS X13, Y13
	MOVL $0x7fffffff, R8
	VMOVD R8, X14
	VBROADCASTSS X14, Y14
	MOVL $0x3f800000, R8
	VMOVD R8, X15
	VBROADCASTSS X15, Y15
	XORL R9, R9 // signs x
	XORL R10, R10 // signs y
	XORL R11, R11 // signs z
	XORL R12, R12 // in
	XORL R13, R13 // fin
	XORL BX, BX // odd
	XORL CX, CX // this half's first lane

half:
	// Org and Dir.x: org rows to c.org, dir rows wait in c.psx, psy, psz.
	TRANSPOSE4(0)
	VMOVUPS Y0, ORG(DI)
	VMOVUPS Y1, ORG+64(DI)
	VMOVUPS Y2, ORG+128(DI)
	VMOVUPS Y3, PSX(DI)
	VCMPPS $3, Y1, Y0, Y8 // NaN in org
	VCMPPS $3, Y3, Y2, Y4
	VORPS Y4, Y8, Y8
	VXORPS Y4, Y4, Y4
	VCMPPS $0, Y4, Y3, Y4 // dir.x == 0
	VORPS Y4, Y8, Y8
	// Dir.y, Dir.z, TMin, TMax.
	TRANSPOSE4(16)
	VMOVUPS Y0, PSY(DI)
	VMOVUPS Y1, PSZ(DI)
	VCMPPS $3, Y1, Y0, Y4
	VORPS Y4, Y8, Y8
	VCMPPS $3, Y3, Y2, Y4 // NaN in TMin or TMax
	VORPS Y4, Y8, Y8
	VXORPS Y4, Y4, Y4
	VCMPPS $0, Y4, Y0, Y5
	VORPS Y5, Y8, Y8
	VCMPPS $0, Y4, Y1, Y5
	VORPS Y5, Y8, Y8
	VMOVMSKPS Y8, R8
	SHLL CX, R8
	ORL R8, BX
	VMAXPS Y4, Y2, Y6 // tmin = TMin > 0 ? TMin : 0
	VMOVAPS Y3, Y7
	VPCMPEQD Y10, Y10, Y10

	CLIP_AXIS(0, 0, R8)
	SHLL CX, R8
	ORL R8, R9
	CLIP_AXIS(64, 4, R8)
	SHLL CX, R8
	ORL R8, R10
	CLIP_AXIS(128, 8, R8)
	SHLL CX, R8
	ORL R8, R11

	VMOVUPS Y6, TMIN(DI)
	VMOVUPS Y7, TMAX(DI)
	VCMPPS $0x12, Y7, Y6, Y3 // tmin <= tmax
	VXORPS Y4, Y4, Y4
	VCMPPS $0x1e, Y4, Y7, Y4 // tmax > 0
	VANDPS Y4, Y3, Y3
	VMOVMSKPS Y10, R8
	SHLL CX, R8
	ORL R8, R13
	VMOVMSKPS Y3, R8
	TESTL R8, R8
	JZ noprep // no lane in the box: prepare's fields are not read
	PREPARE
noprep:
	SHLL CX, R8
	ORL R8, R12

	ADDQ $256, AX
	ADDQ $32, DI
	ADDL $8, CX
	CMPL CX, $16
	JLT half

	VZEROUPPER
	MOVL R9, SIGNS(DX)
	MOVL R10, SIGNS+4(DX)
	MOVL R11, SIGNS+8(DX)
	MOVL R12, IN(DX)
	MOVL R13, FIN(DX)
	MOVL BX, ODD(DX)
	RET
