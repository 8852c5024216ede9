// trace_walk.cuh: one ray's walk through the kd-tree, kdtree/traverse.go's
// trace and descend operation for operation (trace.cu says how the kernels
// use it): the root box clip, the interior step, the leaf test, the hit
// record.
#pragma once

#include "trace_test.cuh"

namespace kd_trace {

// A node left for later with its ray interval.
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
};

// RingStack keeps the top K entries (K a power of two) of the walk's stack
// in shared memory, in a ring of K slots per thread (slot j of thread t at
// ring[j·blockDim.x + t]: a warp's 12-byte entries hit distinct banks), and
// the older ones in local memory (spill, kTraceMaxDepth + 1 entries, the
// kernel's array): the entry at depth d is in slot d mod K while it is
// among the top K, else in spill[d]. The order of pops is the
// LocalStack's, so the walk and its hits are the same.
template <int K>
struct RingStack {
	Entry *ring, *spill;
	int sp, ns;  // depth, and the entries below depth ns that are in spill
	__device__ __forceinline__ void init() { sp = ns = 0; }
	__device__ __forceinline__ bool empty() const { return sp == 0; }
	__device__ __forceinline__ void push(Entry x) {
		if (sp - ns == K) {
			spill[ns] = ring[(ns & (K - 1)) * blockDim.x];
			ns++;
		}
		ring[(sp & (K - 1)) * blockDim.x] = x;
		sp++;
	}
	__device__ __forceinline__ Entry pop() {
		sp--;
		if (sp >= ns) return ring[(sp & (K - 1)) * blockDim.x];
		ns = sp;
		return spill[sp];
	}
};

// Result of one traced ray: the best hit's t, u, v, prim and the index of
// its reference (for the normal).
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

// Per-ray constants of the traversal: origin, direction, 1/direction, and
// per axis the part of a plane crossing's slack that does not depend on
// the crossing, kSlack·(mag+|o|)·|inv| (traverse.go rayAxes.slack).
struct RayAxes {
	float o[3], d[3], inv[3], slack[3];
};

// interior_step is one step of traverse.go descend at interior node n: the
// next node and interval, the far (or near) child pushed when both may hold
// the hit, with traverse.go's branches and compares. A select-only form
// that lets no lane wait for another's case ran 8-10% slower (more
// instructions per step; see docs/performance.md, "GPU tracing").
// With PAIRS the nodes are in the treelet layout (gputrace treelets.go):
// an interior node's word 1 holds its below child's index, the above child
// is next to it; else kdtree's depth-first layout, the below child next to
// the node and word 1 the above child's index.
template <bool PAIRS, class Stack>
__device__ __forceinline__ void interior_step(uint2 n, const RayAxes &r, unsigned &node, float &tmin, float &tmax,
                                              Stack &stack) {
	unsigned axis = n.y & 3u;
	float s = __uint_as_float(n.x);
	float oa = pick(r.o[0], r.o[1], r.o[2], axis), da = pick(r.d[0], r.d[1], r.d[2], axis);
	unsigned nearc = PAIRS ? n.y >> 2 : node + 1, farc = PAIRS ? (n.y >> 2) + 1 : n.y >> 2;
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
	float tp = (s - oa) * pick(r.inv[0], r.inv[1], r.inv[2], axis);
	float slack = kSlack * fabsf(tp) + pick(r.slack[0], r.slack[1], r.slack[2], axis);
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

// leaf_test tests leaf n's triangles in reference order, keeping the best
// hit (smaller t, or equal t and smaller prim); true when ANY found one.
template <bool ANY>
__device__ __forceinline__ bool leaf_test(uint2 n, const Pre &pre, const float4 *__restrict__ tris, Best &best) {
	unsigned end = n.x + (n.y >> 2);
	for (unsigned r = n.x; r < end; r++) {
		float4 A = tris[3 * r], B = tris[3 * r + 1], C = tris[3 * r + 2];
		unsigned prim = __float_as_uint(A.w);
		float th, u, v;
		if (triangle(pre, A, B, C, best.t, th, u, v) &&
		    (!best.found || th < best.t || (th == best.t && prim < best.prim))) {
			best.t = th;
			best.u = u;
			best.v = v;
			best.prim = prim;
			best.ref = r;
			best.found = true;
			if (ANY) return true;
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

// start_ray prepares ray (r0, r1) and clips it to the root box; false when
// it misses the box (traverse.go trace up to the walk).
__device__ __forceinline__ bool start_ray(const float *__restrict__ box, float4 r0, float4 r1, Pre &pre, RayAxes &r,
                                          float &tmin, float &tmax) {
	pre = prepare(r0, r1);
	r.o[0] = r0.x; r.o[1] = r0.y; r.o[2] = r0.z;
	r.d[0] = r0.w; r.d[1] = r1.x; r.d[2] = r1.y;
#pragma unroll
	for (int a = 0; a < 3; a++) {
		r.inv[a] = 1.0f / r.d[a];
		r.slack[a] = kSlack * (box[6 + a] + fabsf(r.o[a])) * fabsf(r.inv[a]);
	}
	return clip_box(box, r.o, r.d, r.inv, r1.z, r1.w, tmin, tmax);
}

// trace_ray is traverse.go trace for one ray: front to back with a stack,
// the far child pushed with the part of the interval beyond the plane,
// nodes starting after the best hit skipped. ANY stops at the first hit.
// Each iteration takes one interior step or one leaf ("if-if"; the
// speculative while-while loop of Aila and Laine ran slower here, see
// docs/performance.md).
template <bool ANY, bool PAIRS, class Stack>
__device__ __forceinline__ Best trace_ray(const uint2 *__restrict__ nodes, const float4 *__restrict__ tris,
                                          const float *__restrict__ box, float4 r0, float4 r1, Stack &stack) {
	Best best = no_hit();
	Pre pre;
	RayAxes r;
	float tmin, tmax;
	if (!start_ray(box, r0, r1, pre, r, tmin, tmax)) return best;
	stack.init();
	unsigned node = 0;
	for (;;) {
		if (!best.found || tmin <= best.t) {
			uint2 n = nodes[node];
			if ((n.y & 3u) != 3u) {
				interior_step<PAIRS>(n, r, node, tmin, tmax, stack);
				continue;
			}
			if (leaf_test<ANY>(n, pre, tris, best)) return best;
		}
		if (stack.empty()) return best;
		Entry e = stack.pop();
		node = e.node;
		tmin = e.tmin;
		tmax = e.tmax;
	}
}

// store_hit writes ray i's hit record of words (8: kdtree.DeviceHitWords,
// T U V Prim N 0 as two float4; 7: kdtree.Hit's memory, T U V Prim N) at
// out, with the normal (B−A)×(C−A) of the hit triangle (kdtree
// geometricNormal: each product rounded on its own).
__device__ __forceinline__ void store_hit(const float4 *__restrict__ tris, float *__restrict__ out, unsigned words,
                                          unsigned i, const Best &b) {
	float nx = 0.0f, ny = 0.0f, nz = 0.0f;
	if (b.found) {
		float4 A = tris[3 * b.ref], B = tris[3 * b.ref + 1], C = tris[3 * b.ref + 2];
		float e1x = B.x - A.x, e1y = B.y - A.y, e1z = B.z - A.z;
		float e2x = C.x - A.x, e2y = C.y - A.y, e2z = C.z - A.z;
		nx = e1y * e2z - e1z * e2y;
		ny = e1z * e2x - e1x * e2z;
		nz = e1x * e2y - e1y * e2x;
	}
	if (words == 8) {
		float4 *h = (float4 *)out + 2 * (size_t)i;
		h[0] = make_float4(b.t, b.u, b.v, __uint_as_float(b.prim));
		h[1] = make_float4(nx, ny, nz, 0.0f);
		return;
	}
	float *h = out + 7 * (size_t)i;
	h[0] = b.t;
	h[1] = b.u;
	h[2] = b.v;
	h[3] = __uint_as_float(b.prim);
	h[4] = nx;
	h[5] = ny;
	h[6] = nz;
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
	float nx = 0.0f, ny = 0.0f, nz = 0.0f;
	if (b.found) {
		float4 A = tris[3 * b.ref], B = tris[3 * b.ref + 1], C = tris[3 * b.ref + 2];
		float e1x = B.x - A.x, e1y = B.y - A.y, e1z = B.z - A.z;
		float e2x = C.x - A.x, e2y = C.y - A.y, e2z = C.z - A.z;
		nx = e1y * e2z - e1z * e2y;
		ny = e1z * e2x - e1x * e2z;
		nz = e1x * e2y - e1y * e2x;
	}
	float *s = stage + 7 * lane;  // stride 7: no two lanes share a bank
	s[0] = b.t;
	s[1] = b.u;
	s[2] = b.v;
	s[3] = __uint_as_float(b.prim);
	s[4] = nx;
	s[5] = ny;
	s[6] = nz;
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
