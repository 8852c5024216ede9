//go:build amd64 && !purego

#include "textflag.h"
#include "go_asm.h"

// func lanesRunAsm(ls *lanes, nodes *Node, nnodes int, start int) int
//
// lanesRunGo's contract (traverse_lanes.go) in SSE2 scalar code, the
// operations of traceLanes' interior step in the same order: tp =
// (split − org)·inv, lo = tp − wide, hi = tp + wide, the far child at
// stack[sp&63] = {second, max(lo, tmin), tmax}, the signs of hi − tmin and
// tmax − lo choosing the child, sp and tmax. MAXSS and MINSS return their
// source operand (tmin, tmax) on equal zeros, as Go's max(lo, tmin) and
// min(hi, tmax) do. A node index at or past nnodes is stored in the lane's
// node and returned at once, its words not read (the caller panics).
// Returns −1 when every lane is idle.
TEXT ·lanesRunAsm(SB), NOSPLIT, $0-40
	MOVQ ls+0(FP), DI
	MOVQ nodes+8(FP), SI
	MOVQ nnodes+16(FP), R8
	MOVQ start+24(FP), CX
	XORL R15, R15 // idle lanes in a row

lane:
	IMUL3Q $lane__size, CX, R9
	ADDQ  DI, R9
	MOVQ  lane_ray(R9), AX
	TESTQ AX, AX
	JS    idle
	XORL  R15, R15
	MOVL  (lane_n+Node_W1)(R9), BX
	MOVL  BX, DX
	ANDL  $3, DX
	CMPL  DX, $3
	JEQ   leaf

	// Interior step on axis DX.
	MOVSS (lane_n+Node_W0)(R9), X0
	SUBSS (lane_ax+rayAxes_org)(R9)(DX*4), X0
	MULSS (lane_ax+rayAxes_inv)(R9)(DX*4), X0   // tp
	MOVSS (lane_ax+rayAxes_wide)(R9)(DX*4), X1
	MOVAPS X0, X2
	SUBSS X1, X2                                // lo
	ADDSS X1, X0                                // hi
	MOVL  lane_node(R9), R10
	INCL  R10                                   // below
	MOVL  BX, R11
	SHRL  $2, R11                               // above
	MOVL  R10, R12
	XORL  R11, R12
	ANDL  (lane_ax+rayAxes_flip)(R9)(DX*4), R12 // swap
	XORL  R12, R10                              // first
	XORL  R12, R11                              // second
	MOVSS lane_tmin(R9), X3
	MOVSS lane_tmax(R9), X4
	MOVQ  lane_sp(R9), R13
	MOVQ  R13, R14
	ANDQ  $(const_MaxTreeDepth-1), R14
	LEAQ  (R14)(R14*2), R14                     // entry index in words
	MOVL  R11, (lane_stack+stackEntry_node)(R9)(R14*4)
	MOVAPS X2, X5
	MAXSS X3, X5                                // max(lo, tmin)
	MOVSS X5, (lane_stack+stackEntry_tmin)(R9)(R14*4)
	MOVSS X4, (lane_stack+stackEntry_tmax)(R9)(R14*4)
	MOVAPS X0, X6
	SUBSS X3, X6                                // hi − tmin
	MOVL  X6, R12
	SARL  $31, R12                              // onlySecond
	MOVAPS X4, X7
	SUBSS X2, X7                                // tmax − lo
	MOVL  X7, AX
	SARL  $31, AX                               // onlyFirst
	ORL   R12, AX
	NOTL  AX
	ANDL  $1, AX
	ADDQ  AX, R13
	MOVQ  R13, lane_sp(R9)                      // kept when both children are
	XORL  R10, R11
	ANDL  R12, R11
	XORL  R11, R10                              // the next node
	MINSS X4, X0                                // min(hi, tmax)
	MOVL  X0, AX
	MOVL  X4, BX
	XORL  AX, BX
	ANDL  R12, BX
	XORL  BX, AX                                // tmax, or the kept part
	MOVL  AX, lane_tmax(R9)
	MOVL  R10, lane_node(R9)
	CMPQ  R10, R8
	JAE   ret
	MOVQ  (SI)(R10*8), AX                       // read on the lane's next turn
	MOVQ  AX, lane_n(R9)

next:
	INCQ CX
	CMPQ CX, $const_laneCount
	JLT  lane
	XORL CX, CX
	JMP  lane

idle:
	INCL R15
	CMPL R15, $const_laneCount
	JLT  next
	MOVQ $-1, ret+32(FP)
	RET

leaf:
	SHRL  $2, BX
	JNE   ret // triangles: the caller tests them
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
	CMPQ  R10, R8
	JAE   ret
	MOVQ  (SI)(R10*8), AX
	MOVQ  AX, lane_n(R9)
	JMP   next

over:
	MOVQ $0, lane_sp(R9) // the walk is over: the caller's pop finds nothing

ret:
	MOVQ CX, ret+32(FP)
	RET
