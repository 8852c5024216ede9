// trace_dynamic.cuh: the dynamic-fetch walk (Aila and Laine 2009,
// "replacing terminated rays"): persistent warps whose idle lanes take new
// rays while the others are still tracing. trace.cu defines its kernels;
// the walk, the layouts and the bit-for-bit contract are trace.cu's.
#pragma once

#include "trace_walk.cuh"

namespace kd_trace {

// trace_dynamic: every iteration each live lane takes one traversal step
// (a descent through interior nodes to a leaf, a leaf, or a pop); when fewer than refill lanes of
// the warp are live, the idle ones take new rays from *counter (zero
// before the launch) together, so that a warp is not held by its longest
// ray. A lane stops for good once the rays are used up.
template <bool ANY>
__device__ __forceinline__ void trace_dynamic(const uint2 *__restrict__ nodes, unsigned nnodes,
                                              const float4 *__restrict__ tris, const float *__restrict__ box,
                                              const float4 *__restrict__ rays, void *__restrict__ out,
                                              unsigned words, unsigned n, unsigned *counter, unsigned refill) {
	Entry buf[kTraceMaxDepth + 1];
	LocalStack stack{buf, 0};
	const unsigned lane = threadIdx.x & 31u;
	Pre pre;
	RayAxes r;
	shared_axes(r);
	Best best = no_hit();
	float tmin = 0.0f, tmax = 0.0f;
	unsigned node = 0, i = 0;
	bool live = false, spent = false;
	for (;;) {
		unsigned liveMask = __ballot_sync(0xFFFFFFFFu, live);
		if ((unsigned)__popc(liveMask) < refill) {
			unsigned need = __ballot_sync(0xFFFFFFFFu, !live && !spent);
			if (need != 0) {
				unsigned base = 0;
				if (lane == 0) base = atomicAdd(counter, (unsigned)__popc(need));
				base = __shfl_sync(0xFFFFFFFFu, base, 0);
				if (!live && !spent) {
					i = base + __popc(need & ((1u << lane) - 1u));
					if (i >= n) {
						spent = true;
					} else {
						float4 r0 = rays[2 * i], r1 = rays[2 * i + 1];
						best = no_hit();
						if (nnodes != 0 && start_ray(box, r0, r1, pre, r, tmin, tmax)) {
							live = true;
							stack.init();
							node = 0;
						} else {
							store_result<ANY>(tris, out, words, i, best);
						}
					}
				}
			}
			if (__ballot_sync(0xFFFFFFFFu, live) == 0 && __all_sync(0xFFFFFFFFu, spent || live)) return;
		}
		if (!live) continue;
		bool end = false;
		if (ANY || tmin <= best.t) {  // as trace_ray's test
			uint2 nd = nodes[node];
			if (!descend<ANY>(nodes, nd, r, pre, node, tmin, tmax, best.t, stack)) continue;
			end = leaf_test<ANY>(nd, pre, tris, best);
		}
		// A closest-hit ray drops the entries that start after its best
		// hit here (one load each), instead of an iteration each.
		if (!ANY && !end && best.prim != kNoHit) stack.drop_after(best.t);
		if (!end && !stack.empty()) {
			Entry e = stack.pop();
			node = e.node;
			tmin = e.tmin;
			tmax = e.tmax;
			continue;
		}
		store_result<ANY>(tris, out, words, i, best);
		live = false;
	}
}

} // namespace kd_trace
