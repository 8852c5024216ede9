//go:build amd64 && !purego

#include "textflag.h"
#include "go_asm.h"

// leafPrefetchTris is how many of a leaf's triangles a leaf's first turn
// prefetches.
#define leafPrefetchTris 16

// func lanesRunAsm(ls *lanes, ld *laneData, start int) int
//
// lanesRunGo's contract (traverse_lanes.go) in scalar SSE and AVX code
// (VEX forms where they save a copy, VBLENDVPS for the kept tmax), the
// operations of traceLanes' interior step in the same order: tp =
// (split − org)·inv, lo = tp − wide, hi = tp + wide, the far child at
// stack[sp&63] = {second, max(lo, tmin), tmax}, the signs of hi − tmin and
// tmax − lo choosing the child, sp and tmax. (V)MAXSS and MINSS return their
// source operand (tmin, tmax) on equal zeros, as Go's max(lo, tmin) and
// min(hi, tmax) do. The next node is prefetched when it is set and read at
// the lane's next turn; a leaf's first turn prefetches its first
// leafPrefetchTris triangles. A prefetch does not fault, so neither needs a
// bound: a node index at or past len(ld.nodes) is found at the turn that
// reads it, and returned, its words not read (the caller panics). A leaf's
// triangles are tested here, by testLeaf's and finish's operations in the
// same order, each rounded on its own. Returns −1 when every lane is idle.
TEXT ·lanesRunAsm(SB), NOSPLIT, $0-32
	MOVQ ls+0(FP), DI
	MOVQ ld+8(FP), R14
	MOVQ (laneData_nodes)(R14), SI
	MOVQ (laneData_nodes+8)(R14), R8
	MOVQ start+16(FP), CX
	IMUL3Q $lane__size, CX, R9
	ADDQ DI, R9 // lane start
	LEAQ (const_laneCount*lane__size)(DI), CX // past the last lane

	// R10 the lane's node, BX its W1.
lane:
	MOVL  lane_node(R9), R10
	CMPQ  R10, R8
	JAE   outside
	MOVL  Node_W1(SI)(R10*8), BX
	LEAL  1(BX), DX
	ANDL  $3, DX                                // the axis + 1; 0 at a leaf
	JEQ   leaf

	// Interior step on axis DX−1.
	MOVSS Node_W0(SI)(R10*8), X0
	SUBSS (lane_ax+rayAxes_org-4)(R9)(DX*4), X0
	MULSS (lane_ax+rayAxes_inv-4)(R9)(DX*4), X0 // tp
	MOVSS (lane_ax+rayAxes_wide-4)(R9)(DX*4), X1
	VSUBSS X1, X0, X2                           // lo
	ADDSS X1, X0                                // hi
	INCL  R10                                   // below
	MOVL  BX, R11
	SHRL  $2, R11                               // above
	MOVL  R10, R12
	CMPL  (lane_ax+rayAxes_flip-4)(R9)(DX*4), $0
	CMOVLNE R11, R10                            // first
	CMOVLNE R12, R11                            // second
	MOVSS lane_tmin(R9), X3
	MOVSS lane_tmax(R9), X4
	MOVQ  lane_sp(R9), R13
	MOVQ  R13, R14
	ANDQ  $(const_MaxTreeDepth-1), R14
	LEAQ  (R14)(R14*2), R14                     // entry index in words
	MOVL  R11, (lane_stack+stackEntry_node)(R9)(R14*4)
	VMAXSS X3, X2, X5                           // max(lo, tmin)
	MOVSS X5, (lane_stack+stackEntry_tmin)(R9)(R14*4)
	MOVSS X4, (lane_stack+stackEntry_tmax)(R9)(R14*4)
	VSUBSS X3, X0, X6                           // hi − tmin: onlySecond
	VSUBSS X2, X4, X7                           // tmax − lo: onlyFirst
	VORPS X6, X7, X8
	MOVMSKPS X8, AX                             // one child only (upper words +0: MOVSS loads)
	XORL  $1, AX
	ADDQ  AX, R13
	MOVQ  R13, lane_sp(R9)                      // kept when both children are
	MOVL  X6, R12
	TESTL R12, R12
	CMOVLMI R11, R10                            // the next node
	MINSS X4, X0                                // min(hi, tmax)
	VBLENDVPS X6, X4, X0, X0                    // tmax when onlySecond
	MOVSS X0, lane_tmax(R9)
	MOVL  R10, lane_node(R9)
	PREFETCHT0 (SI)(R10*8)                      // read on the lane's next turn

next:
	ADDQ $lane__size, R9
	CMPQ R9, CX
	JB   lane
	MOVQ DI, R9
	JMP  lane

leaf:
	SHRL  $2, BX
	JNE   fetch

empty:
	MOVQ  lane_sp(R9), R13
	MOVSS (lane_best+Hit_T)(R9), X1

pop:
	TESTQ R13, R13
	JEQ   over
	DECQ  R13
	MOVQ  R13, R14
	ANDQ  $(const_MaxTreeDepth-1), R14
	LEAQ  (R14)(R14*2), R14
	MOVSS (lane_stack+stackEntry_tmin)(R9)(R14*4), X0
	UCOMISS X0, X1
	JCS   pop                                   // tmin > best T, or NaN: skipped
	MOVQ  R13, lane_sp(R9)
	MOVL  (lane_stack+stackEntry_node)(R9)(R14*4), R10
	MOVL  R10, lane_node(R9)
	MOVSS X0, lane_tmin(R9)
	MOVL  (lane_stack+stackEntry_tmax)(R9)(R14*4), AX
	MOVL  AX, lane_tmax(R9)
	PREFETCHT0 (SI)(R10*8)
	JMP   next

over:
	MOVQ $0, lane_sp(R9) // the walk is over
	MOVL $const_laneOver, lane_node(R9)
	// A closest hit's normal (geometricNormal: e1 = v1 − v0, e2 = v2 − v0,
	// each product rounded on its own).
	MOVQ ld+8(FP), R14
	CMPB (laneData_anyHit)(R14), $0
	JNE  ret
	MOVL (lane_best+Hit_Prim)(R9), R12
	CMPQ R12, (laneData_tris+8)(R14)
	JAE  ret // no hit (NoHit)
	IMUL3Q $36, R12, R13
	ADDQ (laneData_tris)(R14), R13
	MOVSS 12(R13), X0
	SUBSS 0(R13), X0
	MOVSS 16(R13), X1
	SUBSS 4(R13), X1
	MOVSS 20(R13), X2
	SUBSS 8(R13), X2
	MOVSS 24(R13), X3
	SUBSS 0(R13), X3
	MOVSS 28(R13), X4
	SUBSS 4(R13), X4
	MOVSS 32(R13), X5
	SUBSS 8(R13), X5
	VMULSS X5, X1, X6
	VMULSS X4, X2, X7
	SUBSS X7, X6
	MOVSS X6, (lane_best+Hit_N)(R9)
	VMULSS X3, X2, X6
	VMULSS X5, X0, X7
	SUBSS X7, X6
	MOVSS X6, (lane_best+Hit_N+4)(R9)
	VMULSS X4, X0, X6
	VMULSS X3, X1, X7
	SUBSS X7, X6
	MOVSS X6, (lane_best+Hit_N+8)(R9)
	JMP  ret

	// A leaf with triangles (BX of them), first turn: mark it, prefetch
	// the triangles of its first leafPrefetchTris references (references
	// past the slice's end are left to the test, which returns the lane).
fetch:
	MOVL  R10, R11
	ORL   $const_laneFetched, R11
	MOVL  R11, lane_node(R9)
	MOVQ  ld+8(FP), R14
	MOVL  Node_W0(SI)(R10*8), R10
	LEAQ  (R10)(BX*1), R11
	CMPQ  R11, (laneData_refs+8)(R14)
	JHI   next
	CMPL  BX, $leafPrefetchTris
	JLS   fetchSome
	LEAQ  leafPrefetchTris(R10), R11

fetchSome:
	MOVQ  (laneData_refs)(R14), R15
	MOVQ  (laneData_tris)(R14), R13

fetchTri:
	MOVL  (R15)(R10*4), R12
	IMUL3Q $36, R12, R12
	PREFETCHT0 (R13)(R12*1)
	PREFETCHT0 35(R13)(R12*1)
	INCQ  R10
	CMPQ  R10, R11
	JLT   fetchTri
	JMP   next

	// Not a node index: a lane over or idle (laneOver), a marked leaf
	// (laneFetched), or past the end (returned).
outside:
	CMPL  R10, $const_laneOver
	JEQ   overIdle
	BTRL  $31, R10
	JCC   ret
	CMPQ  R10, R8
	JAE   ret
	MOVL  R10, lane_node(R9)
	MOVL  Node_W1(SI)(R10*8), BX
	SHRL  $2, BX
	JMP   tris

overIdle:
	MOVQ lane_ray(R9), AX
	TESTQ AX, AX
	JNS  ret

	// An idle lane: go on while another lane has a ray.
	MOVQ DI, R10
	MOVQ $const_laneCount, R11

idles:
	MOVQ lane_ray(R10), AX
	TESTQ AX, AX
	JNS  next
	ADDQ $lane__size, R10
	DECQ R11
	JNE  idles
	MOVQ $-1, ret+24(FP)
	RET

	// The leaf's triangles (its second turn), R10 the leaf, references W0
	// to W0+BX−1: R14 ld, R15 the
	// references, R10 the next reference, R11 the end, R12 the triangle,
	// R13 its vertices (then a scratch register), AX, BX, DX the ray's
	// kx, ky, kz; VEX forms where they save a copy. A reference or
	// triangle past its slice's end returns the lane with its leaf (the
	// caller panics), as does a triangle with an edge function of exactly
	// 0 (the caller's testLeaf computes those in float64).
tris:
	MOVQ  ld+8(FP), R14
	MOVL  Node_W0(SI)(R10*8), R10
	LEAQ  (R10)(BX*1), R11
	CMPQ  R11, (laneData_refs+8)(R14)
	JHI   ret
	MOVQ  (laneData_refs)(R14), R15
	MOVQ  (lane_pre+rayPre_kx)(R9), AX
	MOVQ  (lane_pre+rayPre_ky)(R9), BX
	MOVQ  (lane_pre+rayPre_kz)(R9), DX

tri:
	MOVL  (R15)(R10*4), R12
	CMPQ  R12, (laneData_tris+8)(R14)
	JAE   ret
	IMUL3Q $36, R12, R13
	ADDQ  (laneData_tris)(R14), R13
	// testLeaf's steps up to the sign test, each rounded on its own:
	// p·z = v·[kz] − oz, p·x = (v·[kx] − ox) + sx·p·z, p·y = (v·[ky] − oy)
	// + sy·p·z (X0–X8: p0x p0y p0z p1x p1y p1z p2x p2y p2z).
	MOVSS (R13)(DX*4), X2
	SUBSS (lane_pre+rayPre_oz)(R9), X2
	MOVSS 12(R13)(DX*4), X5
	SUBSS (lane_pre+rayPre_oz)(R9), X5
	MOVSS 24(R13)(DX*4), X8
	SUBSS (lane_pre+rayPre_oz)(R9), X8
	MOVSS (lane_pre+rayPre_sx)(R9), X12
	MOVSS (lane_pre+rayPre_sy)(R9), X13
	MOVSS (R13)(AX*4), X0
	SUBSS (lane_pre+rayPre_ox)(R9), X0
	VMULSS X2, X12, X9
	ADDSS X9, X0
	MOVSS (R13)(BX*4), X1
	SUBSS (lane_pre+rayPre_oy)(R9), X1
	VMULSS X2, X13, X9
	ADDSS X9, X1
	MOVSS 12(R13)(AX*4), X3
	SUBSS (lane_pre+rayPre_ox)(R9), X3
	VMULSS X5, X12, X9
	ADDSS X9, X3
	MOVSS 12(R13)(BX*4), X4
	SUBSS (lane_pre+rayPre_oy)(R9), X4
	VMULSS X5, X13, X9
	ADDSS X9, X4
	MOVSS 24(R13)(AX*4), X6
	SUBSS (lane_pre+rayPre_ox)(R9), X6
	VMULSS X8, X12, X9
	ADDSS X9, X6
	MOVSS 24(R13)(BX*4), X7
	SUBSS (lane_pre+rayPre_oy)(R9), X7
	VMULSS X8, X13, X9
	ADDSS X9, X7
	// e0 = p1x·p2y − p1y·p2x, e1 = p2x·p0y − p2y·p0x, e2 = p0x·p1y −
	// p0y·p1x (X9, X10, X11).
	VMULSS X7, X3, X9
	VMULSS X6, X4, X10
	SUBSS X10, X9
	VMULSS X1, X6, X10
	VMULSS X0, X7, X11
	SUBSS X11, X10
	VMULSS X4, X0, X11
	VMULSS X3, X1, X12
	SUBSS X12, X11
	// An edge function equal to 0 (not NaN): the caller's testLeaf.
	XORPS X12, X12
	UCOMISS X12, X9
	JNE   nz0
	JPC   ret
nz0:
	UCOMISS X12, X10
	JNE   nz1
	JPC   ret
nz1:
	UCOMISS X12, X11
	JNE   nz2
	JPC   ret
nz2:
	// mixedSigns: no edge function is 0 here, so the signs are mixed
	// when the sign bits differ. (A NaN one, taken by its sign bit here
	// and by neither compare there, makes det NaN: rejected either way.)
	VXORPS X10, X9, X12
	VXORPS X11, X9, X13
	ORPS  X13, X12
	MOVMSKPS X12, R13
	TESTL $1, R13
	JNE   skip
	// finish: det = (e0 + e1) + e2 (X12), rejected if 0 or NaN.
	VADDSS X10, X9, X12
	ADDSS X11, X12
	XORPS X15, X15
	UCOMISS X15, X12
	JEQ   skip
	// p·z·sz, tScaled = (e0·p0z + e1·p1z) + e2·p2z (X13), tmax·det (X14).
	MOVSS (lane_pre+rayPre_sz)(R9), X13
	MULSS X13, X2
	MULSS X13, X5
	MULSS X13, X8
	VMULSS X2, X9, X13
	VMULSS X5, X10, X14
	ADDSS X14, X13
	VMULSS X8, X11, X14
	ADDSS X14, X13
	MOVSS (lane_pre+rayPre_tmax)(R9), X14
	MULSS X12, X14
	UCOMISS X15, X12
	JCS   detneg
	UCOMISS X15, X13
	JLS   skip // tScaled <= 0 (or NaN: t NaN, rejected either way)
	UCOMISS X14, X13
	JHI   skip // tScaled > tmax·det
	JMP   tcalc

detneg:
	UCOMISS X15, X13
	JCC   skip // tScaled >= 0
	UCOMISS X14, X13
	JCS   skip // tScaled < tmax·det (or NaN)

tcalc:
	// invDet = 1/det (X14), t = tScaled·invDet (X13), the cut at best T.
	MOVL  $0x3f800000, R13
	MOVL  R13, X14
	DIVSS X12, X14
	MULSS X14, X13
	UCOMISS (lane_best+Hit_T)(R9), X13
	JHI   skip
	// deltaT (rayPre.deltaT): the maxima of absolute values on the bits,
	// as maxAbs3 (maxZt X2, maxXt X0, maxYt X1, maxE X3).
	MOVL  $0x7fffffff, R13
	MOVL  R13, X15
	ANDPS X15, X2
	ANDPS X15, X5
	ANDPS X15, X8
	PMAXUD X5, X2
	PMAXUD X8, X2
	ANDPS X15, X0
	ANDPS X15, X3
	ANDPS X15, X6
	PMAXUD X3, X0
	PMAXUD X6, X0
	ANDPS X15, X1
	ANDPS X15, X4
	ANDPS X15, X7
	PMAXUD X4, X1
	PMAXUD X7, X1
	VANDPS X15, X9, X3
	VANDPS X15, X10, X4
	VANDPS X15, X11, X5
	PMAXUD X4, X3
	PMAXUD X5, X3
	// deltaZ = γ3·maxZt (X4), deltaX = γ5·(maxXt + maxZt) (X5),
	// deltaY = γ5·(maxYt + maxZt) (X6).
	MOVSS ·triGammas+4(SB), X4
	MULSS X2, X4
	VADDSS X2, X0, X5
	MULSS ·triGammas+8(SB), X5
	VADDSS X2, X1, X6
	MULSS ·triGammas+8(SB), X6
	// deltaE = 2·((γ2·maxXt·maxYt + deltaY·maxXt) + deltaX·maxYt) (X7).
	MOVSS ·triGammas+0(SB), X7
	MULSS X0, X7
	MULSS X1, X7
	MULSS X0, X6
	ADDSS X6, X7
	MULSS X1, X5
	ADDSS X5, X7
	ADDSS X7, X7
	// deltaT = 3·((γ3·maxE·maxZt + deltaE·maxZt) + deltaZ·maxE)·|invDet|.
	MOVSS ·triGammas+4(SB), X8
	MULSS X3, X8
	MULSS X2, X8
	MULSS X2, X7
	ADDSS X7, X8
	MULSS X3, X4
	ADDSS X4, X8
	MULSS ·triGammas+12(SB), X8
	VANDPS X15, X14, X12
	MULSS X12, X8
	UCOMISS X8, X13
	JLS   skip // not t > deltaT
	UCOMISS (lane_pre+rayPre_tmin)(R9), X13
	JCS   skip // t < tmin
	// Accepted, and closer (Hit.closer): t < best T, or equal with a
	// smaller index.
	UCOMISS (lane_best+Hit_T)(R9), X13
	JCS   closer
	JNE   skip
	CMPL  R12, (lane_best+Hit_Prim)(R9)
	JCC   skip

closer:
	MOVSS X13, (lane_best+Hit_T)(R9)
	MULSS X14, X10
	MOVSS X10, (lane_best+Hit_U)(R9)
	MULSS X14, X11
	MOVSS X11, (lane_best+Hit_V)(R9)
	MOVL  R12, (lane_best+Hit_Prim)(R9)
	MOVL  $0, (lane_best+Hit_N)(R9)
	MOVL  $0, (lane_best+Hit_N+4)(R9)
	MOVL  $0, (lane_best+Hit_N+8)(R9)
	CMPB  (laneData_anyHit)(R14), $0
	JEQ   skip
	MOVQ  $0, lane_sp(R9) // any hit: the walk is over
	MOVL  $const_laneOver, lane_node(R9)
	JMP   ret

skip:
	INCQ  R10
	CMPQ  R10, R11
	JLT   tri
	JMP   empty

ret:
	MOVQ R9, AX // the lane's index
	SUBQ DI, AX
	XORL DX, DX
	MOVQ $lane__size, R10
	DIVQ R10
	MOVQ AX, ret+24(FP)
	RET
