// trace_walk.cuh: one ray's walk through the kd-tree, kdtree/traverse.go's
// trace and descend operation for operation (trace.cu says how the kernels
// use it): the root box clip, the interior step, the leaf test, the hit
// record.
#pragma once

#include "trace_test.cuh"

namespace kd_trace {

// A node left for later (its place in the pair layout) with its ray
// interval: 12 bytes (entries of the node's words instead, 16 bytes that
// spare the node load after a pop, ran 9-11% slower on random rays).
struct Entry {
	unsigned node;
	float tmin, tmax;
};

// LocalStack is the walk's stack in local memory (e: an array of
// kTraceMaxDepth + 1 entries that the kernel declares, deep enough for any
// tree the host lets through). The array stays apart from the struct so
// that the depth lives in a register: an array member would take the
// whole struct, depth included, into local memory (a load and a store of
// the depth at every push and pop).
struct LocalStack {
	Entry *e;
	int sp;
	__device__ __forceinline__ void init() { sp = 0; }
	__device__ __forceinline__ bool empty() const { return sp == 0; }
	__device__ __forceinline__ void push(Entry x) { e[sp++] = x; }
	__device__ __forceinline__ Entry pop() { return e[--sp]; }
	// drop_after pops the top entries whose interval starts after t.
	__device__ __forceinline__ void drop_after(float t) {
		while (sp > 0 && !(e[sp - 1].tmin <= t)) sp--;
	}
};

// Result of one traced ray: the best hit's t, u, v, prim and the index of
// its reference (for the normal); prim is kNoHit until a closest-hit walk
// finds a hit (no triangle has that index). An any-hit walk sets only
// found (a flag costs it fewer registers than prim).
struct Best {
	float t, u, v;
	unsigned prim, ref;
	bool found;
};

// clip_box clips the ray to the root box widened by the slack (the start
// of traverse.go trace): false when it misses.
__device__ __forceinline__ bool clip_box(const float *box, const float o[3], const float d[3], const float inv[3],
                                         float rtmin, float rtmax, float &tmin, float &tmax) {
	tmin = go_max(rtmin, 0.0f);
	tmax = rtmax;
#pragma unroll
	for (int a = 0; a < 3; a++) {
		float bl = box[a], bh = box[a + 3];
		float tol = kSlack * (fabsf(bl) + fabsf(bh));
		float lo = bl - tol, hi = bh + tol;
		if (d[a] == 0.0f) {
			if (o[a] < lo || o[a] > hi) return false;
			continue;
		}
		float t0 = (lo - o[a]) * inv[a], t1 = (hi - o[a]) * inv[a];
		if (t0 > t1) {
			float x = t0;
			t0 = t1;
			t1 = x;
		}
		t0 -= kSlack * fabsf(t0);
		t1 += kSlack * fabsf(t1);
		if (t0 > tmin) tmin = t0;
		if (t1 < tmax) tmax = t1;
	}
	return tmin <= tmax;
}

// Per-ray constants of the traversal, one float4 per axis in shared
// memory (shared_axes): q = RN(−o·inv), inv = 1/d, the ray's bound on a
// plane crossing's rounding slack (wide, below) and d; and whether the ray
// is finite (traverse.go rayAxes.finite: every crossing and its slack
// finite and not NaN). Shared memory rather than registers: the interior
// step finds the node's axis's four constants with one 16-byte load
// instead of eight selects, and the walk keeps 5-12 registers fewer.
struct RayAxes {
	// This thread's constants, axis a at ax[a * kTraceBlock] (a constant
	// stride, so one shift-add finds the node's axis; 3 KB a block).
	float4 *ax;
	bool finite;
};

// kWideFma is the factor of the wide bound. The crossing is one fused
// multiply-add, tp' = fma(s, inv, q) with q = RN(−o·inv), where
// traverse.go rounds tp = RN(RN(s − o)·inv). Against the exact
// T = (s − o)·inv: |tp − T| <= 2.000001ε|T| and |tp' − T| <= ε|o·inv| +
// 1.000001ε|T| (ε = 2^-24), so |tp' − tp| <= 4.00001ε(mag + |o|)·|inv|
// (|s| <= mag, |T| <= (mag + |o|)·|inv|): c/16 and a hair, with c =
// kSlack·(mag + |o|)·|inv| and kSlack = 2^-18. traverse.go widens tp by
// c·(2 + 2^-16) (rayAxes.wide); tp' widened by c·2.125 (c's own roundings,
// a few ε, are far inside the margin) holds that interval, and rounding
// lo and hi is monotonic, so every interval of this walk holds
// traverse.go's: it visits those nodes and maybe more, and the hits are
// the same.
constexpr float kWideFma = 2.125f;

// shared_axes points r at this thread's constants in the block's array,
// axis a of thread x at [a][x] (no two lanes of a quarter warp on the same
// banks).
__device__ __forceinline__ void shared_axes(RayAxes &r) {
	__shared__ float4 axes[3][kTraceBlock];
	r.ax = &axes[0][threadIdx.x];
}

// The children of interior node n in the pair layout (trace.cu): below
// at place 2·(w1>>2), above at the next place.
__device__ __forceinline__ unsigned below_child(uint2 n) { return (n.y >> 2) * 2u; }

// safe_step is one step of traverse.go descendSafe at interior node n
// (children at below_child(n) and the next place) for any ray, given the
// ray's origin, direction, 1/direction and wide bound on the node's axis:
// the children ordered by the origin's side of the plane, a zero
// direction and NaN crossings handled. It sets the next node and interval
// and pushes the other child when both may hold the hit. Its slack,
// kSlack·|tp| + sla, is wider than traverse.go's (sla is the wide bound):
// the walk may visit more nodes, never fewer, so the hits are the same.
template <class Stack>
__device__ __forceinline__ void safe_step(uint2 n, float oa, float da, float inva, float sla, unsigned &node,
                                          float &tmin, float &tmax, Stack &stack) {
	float s = __uint_as_float(n.x);
	unsigned nearc = below_child(n), farc = nearc + 1u;
	if (oa > s || (oa == s && da > 0.0f)) {
		unsigned x = nearc;
		nearc = farc;
		farc = x;
	}
	if (da == 0.0f) {
		// Parallel: the origin's side, and the other one too when the ray
		// runs (nearly) inside the plane.
		if (fabsf(oa - s) <= kSlack * (fabsf(oa) + fabsf(s))) stack.push(Entry{farc, tmin, tmax});
		node = nearc;
		return;
	}
	float tp = (s - oa) * inva;
	float slack = kSlack * fabsf(tp) + sla;
	if ((oa < s) != (da > 0.0f) || oa == s) {
		// Moving away: near holds the interval, far what rounding may put
		// there when the origin is (nearly) on the plane.
		float reach = tp + slack;
		if (!(reach < tmin)) {
			stack.push(Entry{nearc, tmin, tmax});
			node = farc;
			if (reach < tmax) tmax = reach;
		} else {
			node = nearc;
		}
		return;
	}
	// Crossing the plane at tp.
	float lo = tp - slack, hi = tp + slack;
	if (lo != lo || hi != hi) {
		stack.push(Entry{farc, tmin, tmax});
		node = nearc;
	} else if (lo > tmax) {
		node = nearc;
	} else if (hi < tmin) {
		node = farc;
	} else {
		stack.push(Entry{farc, lo > tmin ? lo : tmin, tmax});
		node = nearc;
		if (hi < tmax) tmax = hi;
	}
}

// finite_step is traverse.go descendFinite's step at interior node n for a
// finite ray, given its children's words nb (below) and na (above): the
// plane crossed at tp, widened by the ray's bound on the slack to
// [lo, hi]; m is all ones when the direction is negative on the node's
// axis (traverse.go rayAxes.flip); first (below for a positive direction,
// above otherwise) holds [tmin, min(tmax, hi)], second [max(tmin, lo),
// tmax]; a child whose part is empty is not visited; when both are, second
// is pushed. These are safe_step's nodes and order for such a ray, with
// intervals as wide or wider, less the children that are empty leaves:
// those are neither visited nor pushed (they hold no hit, so the hits stay
// the same; on random rays most leaves a ray reaches are empty). It needs
// tmin <= tmax and keeps it. n becomes the next node's words, or an empty
// leaf when no child is left, which ends the descent. The walk does not
// keep the next node's place: only a pushed child needs one.
template <class Stack>
__device__ __forceinline__ void finite_step(uint2 &n, float tp, float slack, unsigned m, uint2 nb, uint2 na,
                                            float &tmin, float &tmax, Stack &stack) {
	float lo = tp - slack, hi = tp + slack;
	unsigned below = below_child(n);
	unsigned side = m & 1u;  // first at below + side, second at the other place
	// An empty leaf's w1 is 0<<2 | 3. No NaN reaches these comparisons,
	// minima and maxima, and lo <= hi: when first's part is empty (hi <
	// tmin), lo < tmax, so second's test alone says whether it is visited.
	bool f = !(hi < tmin) && (side ? na.y : nb.y) != 3u;
	bool s = !(lo > tmax) && (side ? nb.y : na.y) != 3u;
	if (f && s) stack.push(Entry{below + (side ^ 1u), fmaxf(lo, tmin), tmax});
	uint2 first = side ? na : nb, second = side ? nb : na;
	n = f ? first : (s ? second : make_uint2(0u, 3u));
	float nmin = fmaxf(lo, tmin), nmax = fminf(hi, tmax);
	tmin = f ? tmin : nmin;
	tmax = f ? nmax : tmax;
}

// safe_walk_step is safe_step at interior node n with the ray's constants
// on the node's axis from shared memory (the origin from pre).
template <class Stack>
__device__ __forceinline__ void safe_walk_step(uint2 n, const RayAxes &r, const Pre &pre, unsigned &node, float &tmin,
                                               float &tmax, Stack &stack) {
	unsigned axis = n.y & 3u;
	float4 k = r.ax[axis * kTraceBlock];
	safe_step(n, pick(pre.ox, pre.oy, pre.oz, axis), k.w, k.y, k.z, node, tmin, tmax, stack);
}

// descend goes down from node (its place node, its words n) through
// interior nodes, one step each, in a loop of its own: true when it
// reaches a leaf, whose words n then holds, false when a step leaves an
// interval starting after best t: the walk goes on with a pop. The walk's
// loop thus alternates whole descents with leaves and pops (with one
// interior step per iteration of the walk's loop, lanes of a warp at
// different kinds of iteration wait on each other more: 5-29% slower,
// docs/performance.md "GPU tracing"). A finite ray's step loads both
// children's words in one 16-byte load before it works out which one it
// takes, so that the next node's load overlaps the step; its interval is
// cut at best t first (tmin <= best t on entry), so that no step needs a
// test of its own: a child starting after best t is neither visited nor
// pushed (it holds no hit at t <= best t; a hit at best t itself, which
// the tie rule may still take, is inside), and the descent ends at a
// leaf, or at an empty one when no child is left; node is then stale.
// ANY: an any-hit walk, whose best t is +Inf until it stops: no cut.
template <bool ANY, class Stack>
__device__ __forceinline__ bool descend(const uint2 *__restrict__ nodes, uint2 &n, const RayAxes &r, const Pre &pre,
                                        unsigned &node, float &tmin, float &tmax, float bestT, Stack &stack) {
	if (r.finite) {
		if (!ANY) tmax = fminf(tmax, bestT);
		while ((n.y & 3u) != 3u) {
			uint4 c = ((const uint4 *)nodes)[n.y >> 2];
			// Axis a's constants at r.ax + a·kTraceBlock, in bytes: one
			// multiply-add.
			const float4 &k =
			    *(const float4 *)((const char *)r.ax + (n.y & 3u) * (unsigned)(kTraceBlock * sizeof(float4)));
			float tp = __fmaf_rn(__uint_as_float(n.x), k.y, k.x);
			finite_step(n, tp, k.z, (unsigned)(__float_as_int(k.w) >> 31), make_uint2(c.x, c.y), make_uint2(c.z, c.w),
			            tmin, tmax, stack);
		}
		return true;
	}
	while ((n.y & 3u) != 3u) {
		safe_walk_step(n, r, pre, node, tmin, tmax, stack);
		if (!ANY && !(tmin <= bestT)) return false;
		n = nodes[node];
	}
	return true;
}

// leaf_test tests leaf n's triangles in reference order, keeping the best
// hit (smaller t, or equal t and smaller prim); true when ANY found one.
// An any-hit walk stops at its first hit, so until then best.t is +Inf:
// ANY passes that as a constant. (A mailbox of the last four triangles
// tested, which a fifth of the tests on random rays repeat, ran 5-14%
// slower, one of the last triangle 6-9%: docs/performance.md.)
template <bool ANY>
__device__ __forceinline__ bool leaf_test(uint2 n, const Pre &pre, const float4 *__restrict__ tris, Best &best) {
	unsigned end = n.x + (n.y >> 2);
	const float inf = __int_as_float(0x7f800000);
	if (ANY) {
		// A pointer stepped a reference at a time: fewer instructions a
		// triangle (the closest-hit kernel spills with it).
		const float4 *t = tris + 3 * (size_t)n.x;
		for (unsigned r = n.x; r < end; r++, t += 3) {
			float th, u, v;
			if (triangle<true>(pre, t[0], t[1], t[2], inf, th, u, v)) {
				best.found = true;
				return true;
			}
		}
		return false;
	}
	for (unsigned r = n.x; r < end; r++) {
		const float4 *t = tris + 3 * (size_t)r;  // one address, three loads at offsets
		float4 A = t[0], B = t[1], C = t[2];
		unsigned prim = __float_as_uint(A.w);
		float th, u, v;
		if (triangle<false>(pre, A, B, C, best.t, th, u, v) &&
		    (th < best.t || (th == best.t && prim < best.prim))) {
			best.t = th;
			best.u = u;
			best.v = v;
			best.prim = prim;
			best.ref = r;
		}
	}
	return false;
}

// no_hit is the result of a ray that hits nothing.
__device__ __forceinline__ Best no_hit() {
	Best b;
	b.t = __int_as_float(0x7f800000);
	b.u = b.v = 0.0f;
	b.prim = kNoHit;
	b.ref = 0;
	b.found = false;
	return b;
}

// kFiniteLimit bounds |1/direction| and the per-axis slack of a finite
// ray (traverse.go finite).
constexpr float kFiniteLimit = 0x1p100f;

// start_ray prepares ray (r0, r1) and clips it to the root box; false when
// it misses the box (traverse.go trace up to the walk). r.ax must be set
// (shared_axes): it writes the ray's constants there.
__device__ __forceinline__ bool start_ray(const float *__restrict__ box, float4 r0, float4 r1, Pre &pre, RayAxes &r,
                                          float &tmin, float &tmax) {
	float o[3] = {r0.x, r0.y, r0.z}, d[3] = {r0.w, r1.x, r1.y}, inv[3];
#pragma unroll
	for (int a = 0; a < 3; a++) inv[a] = 1.0f / d[a];
	pre = prepare(r0, r1, inv);
	r.finite = true;
#pragma unroll
	for (int a = 0; a < 3; a++) {
		float c = kSlack * (box[6 + a] + fabsf(o[a])) * fabsf(inv[a]);
		r.ax[a * kTraceBlock] = make_float4(-(o[a] * inv[a]), inv[a], c * kWideFma, d[a]);
		if (d[a] == 0.0f || !(fabsf(inv[a]) <= kFiniteLimit) || !(c <= kFiniteLimit)) r.finite = false;
	}
	return clip_box(box, o, d, inv, r1.z, r1.w, tmin, tmax);
}

// trace_ray is traverse.go trace for one ray: front to back with a stack,
// the far child pushed with the part of the interval beyond the plane,
// nodes starting after the best hit skipped. ANY stops at the first hit.
// Each iteration takes a descent to a leaf, then the leaf, or a pop (the
// speculative while-while loop of Aila and Laine, which postpones leaves,
// ran slower here, see docs/performance.md).
template <bool ANY, class Stack>
__device__ __forceinline__ Best trace_ray(const uint2 *__restrict__ nodes, const float4 *__restrict__ tris,
                                          const float *__restrict__ box, float4 r0, float4 r1, RayAxes &r,
                                          Stack &stack) {
	Best best = no_hit();
	Pre pre;
	float tmin, tmax;
	if (!start_ray(box, r0, r1, pre, r, tmin, tmax)) return best;
	stack.init();
	unsigned node = 0;
	for (;;) {
		// best.t is +Inf until a hit (always, for ANY) and tmin is never
		// NaN: tmin <= best.t is traverse.go's test.
		if (ANY || tmin <= best.t) {
			uint2 n = nodes[node];
			if (!descend<ANY>(nodes, n, r, pre, node, tmin, tmax, best.t, stack)) continue;
			if (leaf_test<ANY>(n, pre, tris, best)) return best;
		}
		if (stack.empty()) return best;
		Entry e = stack.pop();
		node = e.node;
		tmin = e.tmin;
		tmax = e.tmax;
	}
}

// hit_normal is the normal (B−A)×(C−A) of b's triangle (kdtree
// geometricNormal: each product rounded on its own), 0 for a miss.
__device__ __forceinline__ float3 hit_normal(const float4 *__restrict__ tris, const Best &b) {
	if (b.prim == kNoHit) return make_float3(0.0f, 0.0f, 0.0f);
	float4 A = tris[3 * b.ref], B = tris[3 * b.ref + 1], C = tris[3 * b.ref + 2];
	float e1x = B.x - A.x, e1y = B.y - A.y, e1z = B.z - A.z;
	float e2x = C.x - A.x, e2y = C.y - A.y, e2z = C.z - A.z;
	return make_float3(e1y * e2z - e1z * e2y, e1z * e2x - e1x * e2z, e1x * e2y - e1y * e2x);
}

// put_hit7 writes b's record in kdtree.Hit's 7 words at h: T U V Prim N.
__device__ __forceinline__ void put_hit7(float *h, const Best &b, float3 n) {
	h[0] = b.t;
	h[1] = b.u;
	h[2] = b.v;
	h[3] = __uint_as_float(b.prim);
	h[4] = n.x;
	h[5] = n.y;
	h[6] = n.z;
}

// store_hit writes ray i's hit record of words (8: kdtree.DeviceHitWords,
// T U V Prim N 0 as two float4; 7: kdtree.Hit's memory, T U V Prim N) at
// out, with hit_normal.
__device__ __forceinline__ void store_hit(const float4 *__restrict__ tris, float *__restrict__ out, unsigned words,
                                          unsigned i, const Best &b) {
	float3 n = hit_normal(tris, b);
	if (words == 8) {
		float4 *h = (float4 *)out + 2 * (size_t)i;
		h[0] = make_float4(b.t, b.u, b.v, __uint_as_float(b.prim));
		h[1] = make_float4(n.x, n.y, n.z, 0.0f);
		return;
	}
	put_hit7(out + 7 * (size_t)i, b, n);
}

// store_hits_warp writes the closest-hit records of a warp's 32
// consecutive rays (lane k holds ray i = first + k; rays from n on are
// not written) in kdtree.Hit's 7-word layout, through stage (this warp's
// 7·32 words of shared memory) so that the warp's stores cover whole
// words in order: one coalesced store per 32 words, also into mapped host
// memory. Every lane of the warp must call it.
__device__ __forceinline__ void store_hits_warp(const float4 *__restrict__ tris, float *__restrict__ out,
                                                float *stage, unsigned i, unsigned n, const Best &b) {
	unsigned lane = threadIdx.x & 31u;
	put_hit7(stage + 7 * lane, b, hit_normal(tris, b));  // stride 7: no two lanes share a bank
	__syncwarp();
	unsigned first = i - lane;
	unsigned cnt = first < n ? min(32u, n - first) : 0u;
	float *o = out + 7 * (size_t)first;
	for (unsigned k = lane; k < 7 * cnt; k += 32) o[k] = stage[k];
	__syncwarp();
}

// store_result writes ray i's answer: the hit record, or the any-hit byte.
template <bool ANY>
__device__ __forceinline__ void store_result(const float4 *__restrict__ tris, void *__restrict__ out, unsigned words,
                                             unsigned i, const Best &b) {
	if (ANY) {
		((unsigned char *)out)[i] = b.found ? 1 : 0;
	} else {
		store_hit(tris, (float *)out, words, i, b);
	}
}

} // namespace kd_trace
