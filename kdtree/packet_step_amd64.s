//go:build amd64 && !purego

#include "textflag.h"

// func packetStepAVX2(split float32, o, inv, w, tmin, tmax, fmax, smin, stmax *[16]float32) (first, second uint32)
// packetStepGo's contract, sixteen rays in two halves of eight:
//   tp = (split - o) * inv; fmax = min(tp + w, tmax); smin = max(tp - w, tmin)
//   first = mask of tmin <= fmax, second = mask of smin <= tmax;
//   stmax = tmax, and tmin = smin when first is 0.
// VMINPS and VMAXPS return their second source on equal zeros, as Go's
// min(hi, tmax) and max(lo, tmin) do for the values the walk passes.
TEXT ·packetStepAVX2(SB), NOSPLIT, $0-80
	VBROADCASTSS split+0(FP), Y0
	MOVQ o+8(FP), AX
	MOVQ inv+16(FP), BX
	MOVQ w+24(FP), CX
	MOVQ tmin+32(FP), DX
	MOVQ tmax+40(FP), SI
	MOVQ fmax+48(FP), DI
	MOVQ smin+56(FP), R8
	MOVQ stmax+64(FP), R11
	VSUBPS (AX), Y0, Y1 // split - o
	VMULPS (BX), Y1, Y1 // tp
	VMOVUPS (CX), Y2
	VADDPS Y2, Y1, Y3 // hi = tp + w
	VSUBPS Y2, Y1, Y4 // lo = tp - w
	VMOVUPS (DX), Y5 // tmin
	VMOVUPS (SI), Y6 // tmax
	VMINPS Y6, Y3, Y3 // fmax = min(hi, tmax)
	VMAXPS Y5, Y4, Y4 // smin = max(lo, tmin)
	VMOVUPS Y3, (DI)
	VMOVUPS Y4, (R8)
	VMOVUPS Y6, (R11)
	VCMPPS $2, Y3, Y5, Y7 // tmin <= fmax
	VCMPPS $2, Y6, Y4, Y8 // smin <= tmax
	VMOVMSKPS Y7, R9
	VMOVMSKPS Y8, R10
	// Lanes 8 to 15 (smin kept in Y12 beside the first half's Y4).
	VSUBPS 32(AX), Y0, Y1
	VMULPS 32(BX), Y1, Y1
	VMOVUPS 32(CX), Y2
	VADDPS Y2, Y1, Y3
	VSUBPS Y2, Y1, Y12
	VMOVUPS 32(DX), Y5
	VMOVUPS 32(SI), Y6
	VMINPS Y6, Y3, Y3
	VMAXPS Y5, Y12, Y12
	VMOVUPS Y3, 32(DI)
	VMOVUPS Y12, 32(R8)
	VMOVUPS Y6, 32(R11)
	VCMPPS $2, Y3, Y5, Y7
	VCMPPS $2, Y6, Y12, Y8
	VMOVMSKPS Y7, AX
	VMOVMSKPS Y8, BX
	SHLL $8, AX
	SHLL $8, BX
	ORL R9, AX
	ORL R10, BX
	TESTL AX, AX
	JNE  ret
	VMOVUPS Y4, (DX) // no first part: the walk goes on to the second with tmin = smin
	VMOVUPS Y12, 32(DX)
ret:
	VZEROUPPER
	MOVL AX, first+72(FP)
	MOVL BX, second+76(FP)
	RET
