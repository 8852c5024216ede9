// kdtree_small.cuh: what the small-node phase's kernels share: the exact
// triangle-box overlap test (kdtree/internal/refbuild/overlap.go) and the block layout of
// kdtree_small_w_f32 (kd_small), whose record chunks the layout reads.

#pragma once

#include "kdtree.cuh"

namespace kd_tree {

// separates in kdtree/internal/refbuild/overlap.go: whether the axis with components c1 on
// k1 and c2 on k2 separates the triangle v from box b (k1, k2 constants
// once inlined in meets_box's unrolled loops: v and b stay in registers).
__device__ __forceinline__ bool separates(double c1, double c2, int k1, int k2, const double (*v)[3], const float *b) {
	double pmin = 0.0, pmax = 0.0;
#pragma unroll
	for (int i = 0; i < 3; i++) {
		double p = (c1 * v[i][k1]) + (c2 * v[i][k2]);
		if (i == 0) {
			pmin = pmax = p;
		} else {
			pmin = min64(pmin, p);
			pmax = max64(pmax, p);
		}
	}
	double x1 = c1 * (double)b[k1], y1 = c1 * (double)b[3 + k1];
	double x2 = c2 * (double)b[k2], y2 = c2 * (double)b[3 + k2];
	double bmin = min64(x1, y1) + min64(x2, y2);
	double bmax = max64(x1, y1) + max64(x2, y2);
	return pmax < bmin || pmin > bmax;
}

// meetsBox in kdtree/internal/refbuild/overlap.go, operation for operation: whether the
// triangle tv meets the closed box b (no separating axis).
__device__ __forceinline__ bool meets_box(const float *tv, const float *b) {
#pragma unroll
	for (int a = 0; a < 3; a++) {
		float lo = tv[a], hi = tv[a];
		for (int i = 1; i < 3; i++) {
			lo = min32(lo, tv[3 * i + a]);
			hi = max32(hi, tv[3 * i + a]);
		}
		if (lo > b[3 + a] || hi < b[a]) return false;
	}
	double v[3][3], e[3][3];
#pragma unroll
	for (int i = 0; i < 3; i++)
#pragma unroll
		for (int a = 0; a < 3; a++) v[i][a] = (double)tv[3 * i + a];
#pragma unroll
	for (int j = 0; j < 3; j++)
#pragma unroll
		for (int a = 0; a < 3; a++) e[j][a] = v[(j + 1) % 3][a] - v[j][a];
#pragma unroll
	for (int j = 0; j < 3; j++) {
#pragma unroll
		for (int k = 0; k < 3; k++) {
			int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
			if (separates(e[j][k2], -e[j][k1], k1, k2, v, b)) return false;
		}
	}
	double n[3];
#pragma unroll
	for (int a = 0; a < 3; a++) {
		int a1 = (a + 1) % 3, a2 = (a + 2) % 3;
		n[a] = (e[0][a1] * e[1][a2]) - (e[0][a2] * e[1][a1]);
	}
	double pmin = 0.0, pmax = 0.0;
#pragma unroll
	for (int i = 0; i < 3; i++) {
		double p = ((n[0] * v[i][0]) + (n[1] * v[i][1])) + (n[2] * v[i][2]);
		if (i == 0) {
			pmin = pmax = p;
		} else {
			pmin = min64(pmin, p);
			pmax = max64(pmax, p);
		}
	}
	double bmin = 0.0, bmax = 0.0;
#pragma unroll
	for (int a = 0; a < 3; a++) {
		double x = n[a] * (double)b[a], y = n[a] * (double)b[3 + a];
		bmin += min64(x, y);
		bmax += max64(x, y);
	}
	return !(pmax < bmin || pmin > bmax);
}

// reachesSides in kdtree/internal/refbuild/clip.go: a vertex inside box settles its side,
// else meets_box with the child box (one copy of meets_box's code, for the
// instruction caches: see clip_box).
__device__ void reaches_sides(const float *tv, const float *box, int a, float pos, bool &okL, bool &okR) {
	okL = okR = false;
	for (int i = 0; i < 3; i++) {
		const float *v = tv + 3 * i;
		if (v[0] >= box[0] && v[0] <= box[3] && v[1] >= box[1] && v[1] <= box[4] && v[2] >= box[2] && v[2] <= box[5]) {
			okL = okL || v[a] <= pos;
			okR = okR || v[a] >= pos;
		}
	}
	bool ok[2] = {okL, okR};
#pragma unroll 1
	for (int side = 0; side < 2; side++) {
		if (ok[side]) continue;
		// childBoxes: the left child's hi[a] and the right child's lo[a]
		// are pos.
		float cb[6];
#pragma unroll
		for (int i = 0; i < 6; i++) cb[i] = (side == 0 ? i == 3 + a : i == a) ? pos : box[i];
		ok[side] = meets_box(tv, cb);
	}
	okL = ok[0];
	okR = ok[1];
}

// nth_bit64: the position of the n-th (from 0) set bit of x (n < popc(x)).
__device__ __forceinline__ int nth_bit64(unsigned long long x, int n) {
	int p = 0;
#pragma unroll
	for (int w = 32; w > 0; w >>= 1) {
		int c = __popcll((x >> p) & ((1ull << w) - 1));
		if (c <= n) {
			n -= c;
			p += w;
		}
	}
	return p;
}

// drop_one_sided: of the references X that straddle the plane (axis a at
// pos) in box, a warp's lanes test those the triangle reaches on one side
// only (reaches_sides of tri[r]'s triangle) and clear them from the side
// they miss: from SL when they reach only the right, from SR when they
// reach only the left (smallBuilder.node in kdtree/internal/refbuild/small.go). Lane i tests
// the i-th reference of X, so up to 32 straddling references take one
// pass of the long clipping whatever their places among the root's 64
// (with lane r mod 32 testing reference r, references in both halves took
// two). Reference r's triangle is tv + 9·tri[r], or tv + 9·r when tri is
// null (the root's triangles copied into shared memory).
__device__ __forceinline__ void drop_one_sided(const float *tv, const unsigned int *tri, unsigned long long X,
                                               const float *box, int a, float pos, unsigned int lane,
                                               unsigned long long &SL, unsigned long long &SR) {
	unsigned long long dropL = 0, dropR = 0;
	const int cnt = __popcll(X);
	for (int base = 0; base < cnt; base += 32) {
		int i = base + (int)lane, r = 0;
		bool dl = false, dr = false;
		if (i < cnt) {
			r = nth_bit64(X, i);
			bool okL, okR;
			reaches_sides(tv + 9 * (size_t)(tri != nullptr ? tri[r] : (unsigned int)r), box, a, pos, okL, okR);
			if (okL != okR) {
				dl = !okL;
				dr = !okR;
			}
		}
		unsigned int bl = __ballot_sync(0xFFFFFFFFu, dl), br = __ballot_sync(0xFFFFFFFFu, dr);
		for (; bl != 0; bl &= bl - 1) dropL |= 1ull << __shfl_sync(0xFFFFFFFFu, r, __ffs(bl) - 1);
		for (; br != 0; br &= br - 1) dropR |= 1ull << __shfl_sync(0xFFFFFFFFu, r, __ffs(br) - 1);
	}
	SL &= ~dropL;
	SR &= ~dropR;
}

} // namespace kd_tree

namespace kd_small {

// Roots (warps) per block of kdtree_small_w_f32, records and leaf
// references a warp reserves at a time, depth of a warp's node stack (at
// most one pending sibling per level below the root, MaxTreeDepth 64).
constexpr int kWarps = kd_const::kSmallWarps;
constexpr unsigned int kRecChunk = kd_const::kSmallRecChunk;
constexpr unsigned int kRefChunk = kd_const::kSmallRefChunk;
constexpr int kSmallStack = 66;

// A warp's shared memory: the root's references and candidates; the boxes
// of the references are needed only to make the candidates, so the node
// stack reuses their space.
struct Warp {
	unsigned long long lt[3][128], gt[3][128];
	float pos[3][128];
	unsigned int tri[64];
	// The root's triangles (9 floats each): the straddling test reads
	// them at every split, from shared memory instead of global memory
	// (Nsight Compute: 5.6% of the kernel's warp samples waited on those
	// loads). The 2.3 KB cost no occupancy: the registers allow 4 blocks an
	// SM, which have shared memory to spare.
	float tv[64][9];
	// box[i][r]: coordinate i (lo x, y, z, hi x, y, z) of reference r's
	// box, by coordinate so that the candidates' masks read four
	// references in one load (rows past the root's references: empty
	// boxes, see kdtree_small_w_f32).
	union {
		float box[6][64];
		struct {
			unsigned long long S[kSmallStack];
			float B[kSmallStack][6];
			int D[kSmallStack];
			unsigned int R[kSmallStack];
		} st;
	} u;
	unsigned char act[64];
};

// The dynamic shared memory of a kdtree_small_w_f32 block is kWarps of them
// (kdtree/internal/gpubuild/small_cuda.go: smallWarpBytes).
static_assert(sizeof(Warp) == kd_const::kSmallWarpBytes, "SmallWarpBytes (package consts) is sizeof(kd_small::Warp)");
static_assert(offsetof(Warp, u) % 16 == 0, "the box rows are read as float4");

__device__ __forceinline__ float sel3f(int a, float x, float y, float z) { return a == 0 ? x : (a == 1 ? y : z); }

// half_masks adds to lt the references q < 32 of a row pair with lo[q] <
// pos and to gt those with hi[q] > pos (bit q each): 32 references, four a
// load, every bit a constant (the loop over a root's references per
// candidate was 7% of the kernel's instructions for the bunny, 13% for
// conference).
__device__ __forceinline__ void half_masks(const float *lo, const float *hi, float pos, unsigned int &lt,
                                           unsigned int &gt) {
#pragma unroll
	for (int q = 0; q < 32; q += 4) {
		float4 l = *reinterpret_cast<const float4 *>(lo + q);
		float4 h = *reinterpret_cast<const float4 *>(hi + q);
		if (l.x < pos) lt |= 1u << q;
		if (l.y < pos) lt |= 2u << q;
		if (l.z < pos) lt |= 4u << q;
		if (l.w < pos) lt |= 8u << q;
		if (h.x > pos) gt |= 1u << q;
		if (h.y > pos) gt |= 2u << q;
		if (h.z > pos) gt |= 4u << q;
		if (h.w > pos) gt |= 8u << q;
	}
}

// rank_lanes calls f(rank, r) for every bit r of S (r < 64) set, in the lane
// r mod 32, where rank is the number of bits of S below r.
template <typename F>
__device__ __forceinline__ void rank_lanes(unsigned long long S, unsigned int lane, F f) {
	unsigned int s0 = (unsigned int)S, s1 = (unsigned int)(S >> 32), below = (1u << lane) - 1u;
	if ((s0 >> lane) & 1u) f(__popc(s0 & below), lane);
	if ((s1 >> lane) & 1u) f(__popc(s0) + __popc(s1 & below), lane + 32u);
}

__device__ __forceinline__ double sel3d(int a, double x, double y, double z) { return a == 0 ? x : (a == 1 ? y : z); }

// reserve gives the warp a chunk of want words of an output counted by
// *ctr: lane 0 takes them with one atomicAdd and sets *overflow when they
// pass cap; every lane learns the chunk [next, end). It returns false when
// the chunk does not fit (the warp must stop; the host retries with more
// room).
__device__ __forceinline__ bool reserve(unsigned int *ctr, unsigned int *overflow, unsigned int want, unsigned int cap,
                                        unsigned int lane, unsigned int &next, unsigned int &end) {
	unsigned int first = 0;
	if (lane == 0) {
		first = atomicAdd(ctr, want);
		if (first + want > cap) *overflow = 1;
	}
	first = __shfl_sync(0xFFFFFFFFu, first, 0);
	if (first + want > cap) return false;
	next = first;
	end = first + want;
	return true;
}

} // namespace kd_small
