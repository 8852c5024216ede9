// trace_pair.cuh: one ray's walk through the kd-tree with the nodes in
// the pair layout (kdtree/internal/gputrace PairLayout): an interior
// node's w1 holds slot<<2 | axis, its below child's words at slot's first
// 8 bytes and its above child's at the next 8, so that one 16-byte load
// brings both. The walk is trace_walk.cuh's (traverse.go's decisions with
// intervals at least as wide, the same leaf test and tie rule), but a
// node is carried by its words rather than its index: a stack entry holds
// the words with the interval (16 bytes, one local store and load), and a
// pop needs no node load.
#pragma once

#include "trace_walk.cuh"

namespace kd_trace {

// A node left for later: its words and its ray interval.
struct __align__(16) PairEntry {
	uint2 w;
	float tmin, tmax;
};

// PairStack is the pair walk's stack in local memory (e: kTraceMaxDepth + 1
// entries that the kernel declares; the depth in a register, as
// LocalStack's).
struct PairStack {
	PairEntry *e;
	int sp;
	__device__ __forceinline__ void init() { sp = 0; }
	__device__ __forceinline__ bool empty() const { return sp == 0; }
	__device__ __forceinline__ void push(PairEntry x) { e[sp++] = x; }
	__device__ __forceinline__ PairEntry pop() { return e[--sp]; }
};

// flip returns b when m is zero and a when m is all ones.
__device__ __forceinline__ uint2 flip(uint2 b, uint2 a, unsigned m) {
	return make_uint2(b.x ^ ((b.x ^ a.x) & m), b.y ^ ((b.y ^ a.y) & m));
}

// safe_pair_step is safe_step (trace_walk.cuh) for the pair layout: the
// plane s, the ray's origin, direction, 1/direction and wide bound on the
// node's axis, the children's words nb (below) and na (above); n becomes
// the next node's words.
__device__ __forceinline__ void safe_pair_step(float s, float oa, float da, float inva, float sla, uint2 nb, uint2 na,
                                               uint2 &n, float &tmin, float &tmax, PairStack &stack) {
	uint2 nearc = nb, farc = na;
	if (oa > s || (oa == s && da > 0.0f)) {
		nearc = na;
		farc = nb;
	}
	if (da == 0.0f) {
		if (fabsf(oa - s) <= kSlack * (fabsf(oa) + fabsf(s))) stack.push(PairEntry{farc, tmin, tmax});
		n = nearc;
		return;
	}
	float tp = (s - oa) * inva;
	float slack = kSlack * fabsf(tp) + sla;
	if ((oa < s) != (da > 0.0f) || oa == s) {
		float reach = tp + slack;
		if (!(reach < tmin)) {
			stack.push(PairEntry{nearc, tmin, tmax});
			n = farc;
			if (reach < tmax) tmax = reach;
		} else {
			n = nearc;
		}
		return;
	}
	float lo = tp - slack, hi = tp + slack;
	if (lo != lo || hi != hi) {
		stack.push(PairEntry{farc, tmin, tmax});
		n = nearc;
	} else if (lo > tmax) {
		n = nearc;
	} else if (hi < tmin) {
		n = farc;
	} else {
		stack.push(PairEntry{farc, lo > tmin ? lo : tmin, tmax});
		n = nearc;
		if (hi < tmax) tmax = hi;
	}
}

// finite_pair_step is finite_step (trace_walk.cuh) for the pair layout,
// with the children's words nb (below) and na (above): n becomes the next
// node's words.
__device__ __forceinline__ void finite_pair_step(float tp, float slack, unsigned m, uint2 nb, uint2 na, uint2 &n,
                                                 float &tmin, float &tmax, PairStack &stack) {
	float lo = tp - slack, hi = tp + slack;
	uint2 first = flip(nb, na, m), second = flip(na, nb, m);
	if (!(hi < tmin)) {
		if (!(lo > tmax)) stack.push(PairEntry{second, fmaxf(lo, tmin), tmax});
		n = first;
		tmax = fminf(hi, tmax);
	} else {
		n = second;
		tmin = fmaxf(lo, tmin);
	}
}

// descend_pair is descend (trace_walk.cuh) for the pair layout: from
// node words n down to a leaf (true, n its words) or to an interval
// starting after bestT (false). Each step loads both children in one
// 16-byte load before it works out which one it takes.
__device__ __forceinline__ bool descend_pair(const uint4 *__restrict__ pairs, uint2 &n, const RayAxes &r,
                                             const Pre &pre, float &tmin, float &tmax, float bestT, PairStack &stack) {
	if (r.finite) {
		while ((n.y & 3u) != 3u) {
			uint4 c = pairs[n.y >> 2];
			float4 k = r.ax[(n.y & 3u) * kTraceBlock];
			float tp = __fmaf_rn(__uint_as_float(n.x), k.y, k.x);
			finite_pair_step(tp, k.z, (unsigned)(__float_as_int(k.w) >> 31), make_uint2(c.x, c.y),
			                 make_uint2(c.z, c.w), n, tmin, tmax, stack);
			if (!(tmin <= bestT)) return false;
		}
		return true;
	}
	while ((n.y & 3u) != 3u) {
		uint4 c = pairs[n.y >> 2];
		unsigned axis = n.y & 3u;
		float4 k = r.ax[axis * kTraceBlock];
		safe_pair_step(__uint_as_float(n.x), pick(pre.ox, pre.oy, pre.oz, axis), k.w, k.y, k.z, make_uint2(c.x, c.y),
		               make_uint2(c.z, c.w), n, tmin, tmax, stack);
		if (!(tmin <= bestT)) return false;
	}
	return true;
}

// trace_ray_pair is trace_ray (trace_walk.cuh) for the pair layout; nodes
// are the pair layout's words (the root's at place 0).
template <bool ANY>
__device__ __forceinline__ Best trace_ray_pair(const uint2 *__restrict__ nodes, const float4 *__restrict__ tris,
                                               const float *__restrict__ box, float4 r0, float4 r1, RayAxes &r,
                                               PairStack &stack) {
	Best best = no_hit();
	Pre pre;
	float tmin, tmax;
	if (!start_ray(box, r0, r1, pre, r, tmin, tmax)) return best;
	stack.init();
	uint2 n = nodes[0];
	for (;;) {
		if (tmin <= best.t) {
			if (!descend_pair((const uint4 *)nodes, n, r, pre, tmin, tmax, best.t, stack)) continue;
			if (leaf_test<ANY>(n, pre, tris, best)) return best;
		}
		if (stack.empty()) return best;
		PairEntry e = stack.pop();
		n = e.w;
		tmin = e.tmin;
		tmax = e.tmax;
	}
}

} // namespace kd_trace
