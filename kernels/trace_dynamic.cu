// trace_dynamic.cu: the dynamic-fetch trace kernels (Aila and Laine 2009,
// "replacing terminated rays"): persistent warps whose idle lanes take new
// rays while the others are still tracing. The walk, the layouts and the
// bit-for-bit contract are trace.cu's.

#include "trace_walk.cuh"

namespace kd_trace {

// trace_dynamic: every iteration each live lane takes one traversal step
// (an interior node, a leaf, or a pop); when fewer than refill lanes of
// the warp are live, the idle ones take new rays from *counter (zero
// before the launch) together, so that a warp is not held by its longest
// ray. A lane stops for good once the rays are used up.
template <bool ANY, bool PAIRS, class Stack>
__device__ __forceinline__ void trace_dynamic(const uint2 *__restrict__ nodes, unsigned nnodes,
                                              const float4 *__restrict__ tris, const float *__restrict__ box,
                                              const float4 *__restrict__ rays, void *__restrict__ out,
                                              unsigned words, unsigned n, unsigned *counter, unsigned refill,
                                              Stack &stack) {
	const unsigned lane = threadIdx.x & 31u;
	Pre pre;
	RayAxes r;
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
		if (!best.found || tmin <= best.t) {
			uint2 nd = nodes[node];
			if ((nd.y & 3u) != 3u) {
				interior_step<PAIRS>(nd, r, node, tmin, tmax, stack);
				continue;
			}
			end = leaf_test<ANY>(nd, pre, tris, best);
		}
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

constexpr int kDynRing = 8;  // RingStack entries of the _dyn_sh kernels

} // namespace kd_trace

constexpr int kDynBlockMax = 128, kDynBlocksMin = 8;  // as trace.cu's kernels

// Dynamic fetch, the stack in local memory.
extern "C" __global__ void __launch_bounds__(kDynBlockMax, kDynBlocksMin)
    kd_trace_closest_dyn(const uint2 *__restrict__ nodes, unsigned nnodes, const float4 *__restrict__ tris,
                         const float *__restrict__ box, const float4 *__restrict__ rays, float *__restrict__ hits,
                         unsigned hit_words, unsigned n, unsigned *counter, unsigned refill) {
	kd_trace::Entry buf[kd_trace::kTraceMaxDepth + 1];
	kd_trace::LocalStack stack{buf, 0};
	kd_trace::trace_dynamic<false, false>(nodes, nnodes, tris, box, rays, hits, hit_words, n, counter, refill, stack);
}

extern "C" __global__ void __launch_bounds__(kDynBlockMax, kDynBlocksMin)
    kd_trace_any_dyn(const uint2 *__restrict__ nodes, unsigned nnodes, const float4 *__restrict__ tris,
                     const float *__restrict__ box, const float4 *__restrict__ rays,
                     unsigned char *__restrict__ occluded, unsigned n, unsigned *counter, unsigned refill) {
	kd_trace::Entry buf[kd_trace::kTraceMaxDepth + 1];
	kd_trace::LocalStack stack{buf, 0};
	kd_trace::trace_dynamic<true, false>(nodes, nnodes, tris, box, rays, occluded, 0, n, counter, refill, stack);
}

// Dynamic fetch, the top of the stack in shared memory (RingStack,
// kDynRing·12·blockDim.x bytes of dynamic shared memory).
extern "C" __global__ void __launch_bounds__(kDynBlockMax, kDynBlocksMin)
    kd_trace_closest_dyn_sh(const uint2 *__restrict__ nodes, unsigned nnodes, const float4 *__restrict__ tris,
                            const float *__restrict__ box, const float4 *__restrict__ rays, float *__restrict__ hits,
                            unsigned hit_words, unsigned n, unsigned *counter, unsigned refill) {
	extern __shared__ kd_trace::Entry kd_trace_ring[];
	kd_trace::Entry spill[kd_trace::kTraceMaxDepth + 1];
	kd_trace::RingStack<kd_trace::kDynRing> stack{kd_trace_ring + threadIdx.x, spill, 0, 0};
	kd_trace::trace_dynamic<false, false>(nodes, nnodes, tris, box, rays, hits, hit_words, n, counter, refill, stack);
}

extern "C" __global__ void __launch_bounds__(kDynBlockMax, kDynBlocksMin)
    kd_trace_any_dyn_sh(const uint2 *__restrict__ nodes, unsigned nnodes, const float4 *__restrict__ tris,
                        const float *__restrict__ box, const float4 *__restrict__ rays,
                        unsigned char *__restrict__ occluded, unsigned n, unsigned *counter, unsigned refill) {
	extern __shared__ kd_trace::Entry kd_trace_ring[];
	kd_trace::Entry spill[kd_trace::kTraceMaxDepth + 1];
	kd_trace::RingStack<kd_trace::kDynRing> stack{kd_trace_ring + threadIdx.x, spill, 0, 0};
	kd_trace::trace_dynamic<true, false>(nodes, nnodes, tris, box, rays, occluded, 0, n, counter, refill, stack);
}

// Dynamic fetch on the treelet layout of the nodes, the stack in local
// memory.
extern "C" __global__ void __launch_bounds__(kDynBlockMax, kDynBlocksMin)
    kd_trace_closest_dyn_tl(const uint2 *__restrict__ nodes, unsigned nnodes, const float4 *__restrict__ tris,
                            const float *__restrict__ box, const float4 *__restrict__ rays, float *__restrict__ hits,
                            unsigned hit_words, unsigned n, unsigned *counter, unsigned refill) {
	kd_trace::Entry buf[kd_trace::kTraceMaxDepth + 1];
	kd_trace::LocalStack stack{buf, 0};
	kd_trace::trace_dynamic<false, true>(nodes, nnodes, tris, box, rays, hits, hit_words, n, counter, refill, stack);
}

extern "C" __global__ void __launch_bounds__(kDynBlockMax, kDynBlocksMin)
    kd_trace_any_dyn_tl(const uint2 *__restrict__ nodes, unsigned nnodes, const float4 *__restrict__ tris,
                        const float *__restrict__ box, const float4 *__restrict__ rays,
                        unsigned char *__restrict__ occluded, unsigned n, unsigned *counter, unsigned refill) {
	kd_trace::Entry buf[kd_trace::kTraceMaxDepth + 1];
	kd_trace::LocalStack stack{buf, 0};
	kd_trace::trace_dynamic<true, true>(nodes, nnodes, tris, box, rays, occluded, 0, n, counter, refill, stack);
}
