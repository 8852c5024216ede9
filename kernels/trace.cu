// trace.cu: closest-hit and any-hit ray traversal of a kd-tree on the
// device (kdtree/internal/gputrace launches these): one thread per ray, or
// persistent warps taking rays from a counter; trace_dynamic.cu has the
// dynamic-fetch kernels, trace_walk.cuh one ray's walk and trace_test.cuh
// the watertight test. The arithmetic repeats kdtree/intersect.go and
// kdtree/traverse.go operation for operation: the image is compiled with
// --fmad=false, every division is IEEE (no fast math), Go's max (NaN in,
// NaN out) is spelled out where a NaN could change the answer, so a hit
// here has the bits of Tree.Intersect's and an any-hit answer equals
// Tree.Occluded's.
//
// Layouts (device memory, or mapped page-locked host memory for rays and
// results):
//   nodes: kdtree.Node, 8 bytes (w0, w1), read as uint2.
//   tris:  three float4 per reference, in the order of Tree.Refs (so a
//          leaf's triangles are contiguous): (a.xyz, prim as bits),
//          (b.xyz, 0), (c.xyz, 0); kd_trace_gather_f32 makes them on the
//          device from a build's vertices.
//   rays:  kdtree.Ray, 8 floats: org.xyz, dir.xyz, tmin, tmax (two float4).
//   hits:  hit_words words per ray: 8 (T, U, V, Prim, N.xyz, 0, 16-byte
//          aligned) or 7 (kdtree.Hit's memory: T, U, V, Prim, N.xyz). A
//          miss is T = +Inf, Prim = 0xFFFFFFFF, U = V = N = 0.
//   occluded: one byte per ray, 1 or 0.
//   box:   9 floats: the tree's root box lo.xyz hi.xyz, then per axis the
//          largest |coordinate| of the box and of every split plane on
//          that axis (kdtree traceData.mag).
// The host checks the tree before it traces (child and reference indices
// in range, depth at most kTraceMaxDepth), so the kernels trust it.

#include "trace_walk.cuh"

namespace kd_trace {

// kRing is the entries of a RingStack variant's ring (the _sh kernels;
// kRing·12 bytes of shared memory per thread, given at launch).
constexpr int kRing = 8;

// kWarpsMax is the most warps of a trace block (kTraceBlockMax / 32): the
// warps' staging of 7-word hit records (store_hits_warp).
constexpr int kWarpsMax = 4;

// trace_warp traces ray i (none when i >= n) and writes its answer; every
// lane of the warp calls it (the lanes' rays are consecutive), so that
// 7-word hit records go out through the warp's stage.
template <bool ANY, bool PAIRS, class Stack>
__device__ __forceinline__ void trace_warp(const uint2 *__restrict__ nodes, unsigned nnodes,
                                           const float4 *__restrict__ tris, const float *__restrict__ box,
                                           const float4 *__restrict__ rays, void *__restrict__ out, unsigned words,
                                           unsigned i, unsigned n, Stack &stack) {
	__shared__ float stage[kWarpsMax][7 * 32];
	Best b = no_hit();
	if (i < n && nnodes != 0) b = trace_ray<ANY, PAIRS>(nodes, tris, box, rays[2 * i], rays[2 * i + 1], stack);
	if (!ANY && words == 7) {
		store_hits_warp(tris, (float *)out, stage[threadIdx.x >> 5], i, n, b);
	} else if (i < n) {
		store_result<ANY>(tris, out, words, i, b);
	}
}

// One thread per ray (blocks of whole warps).
template <bool ANY, bool PAIRS = false, class Stack>
__device__ __forceinline__ void trace_grid(const uint2 *__restrict__ nodes, unsigned nnodes,
                                           const float4 *__restrict__ tris, const float *__restrict__ box,
                                           const float4 *__restrict__ rays, void *__restrict__ out, unsigned words,
                                           unsigned n, Stack &stack) {
	trace_warp<ANY, PAIRS>(nodes, nnodes, tris, box, rays, out, words, blockIdx.x * blockDim.x + threadIdx.x, n, stack);
}

// Persistent warps (Aila and Laine 2009): each warp takes the next 32 rays
// from *counter (zero before the launch) until none are left.
template <bool ANY>
__device__ __forceinline__ void trace_persistent(const uint2 *__restrict__ nodes, unsigned nnodes,
                                                 const float4 *__restrict__ tris, const float *__restrict__ box,
                                                 const float4 *__restrict__ rays, void *__restrict__ out,
                                                 unsigned words, unsigned n, unsigned *counter) {
	unsigned lane = threadIdx.x & 31u;
	Entry buf[kTraceMaxDepth + 1];
	LocalStack stack{buf, 0};
	for (;;) {
		unsigned base = 0;
		if (lane == 0) base = atomicAdd(counter, 32u);
		base = __shfl_sync(0xFFFFFFFFu, base, 0);
		if (base >= n) return;
		trace_warp<ANY, false>(nodes, nnodes, tris, box, rays, out, words, base + lane, n, stack);
		__syncwarp();
	}
}

} // namespace kd_trace

// kd_trace_gather_f32 lays out the trace's triangles from a build's: tris
// gets three float4 per reference r (refs[r]'s corners from tv, 9 floats
// per scene triangle, and the triangle index in the first one's fourth
// word; see the layouts above).
extern "C" __global__ void kd_trace_gather_f32(const float *__restrict__ tv, const unsigned *__restrict__ refs,
                                               unsigned nrefs, float4 *__restrict__ tris) {
	unsigned r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= nrefs) return;
	unsigned p = refs[r];
	const float *v = tv + 9 * (size_t)p;
	tris[3 * (size_t)r] = make_float4(v[0], v[1], v[2], __uint_as_float(p));
	tris[3 * (size_t)r + 1] = make_float4(v[3], v[4], v[5], 0.0f);
	tris[3 * (size_t)r + 2] = make_float4(v[6], v[7], v[8], 0.0f);
}

// The trace kernels run blocks of at most 128 threads and keep 64
// registers (8 blocks of 128 per SM): the closest-hit walk would otherwise
// take 65, which costs a quarter of the resident warps.
constexpr int kTraceBlockMax = 128, kTraceBlocksMin = 8;

// One thread per ray, the stack in local memory (the default).
extern "C" __global__ void __launch_bounds__(kTraceBlockMax, kTraceBlocksMin)
    kd_trace_closest(const uint2 *__restrict__ nodes, unsigned nnodes, const float4 *__restrict__ tris,
                     const float *__restrict__ box, const float4 *__restrict__ rays, float *__restrict__ hits,
                     unsigned hit_words, unsigned n) {
	kd_trace::Entry buf[kd_trace::kTraceMaxDepth + 1];
	kd_trace::LocalStack stack{buf, 0};
	kd_trace::trace_grid<false>(nodes, nnodes, tris, box, rays, hits, hit_words, n, stack);
}

extern "C" __global__ void __launch_bounds__(kTraceBlockMax, kTraceBlocksMin)
    kd_trace_any(const uint2 *__restrict__ nodes, unsigned nnodes, const float4 *__restrict__ tris,
                 const float *__restrict__ box, const float4 *__restrict__ rays, unsigned char *__restrict__ occluded,
                 unsigned n) {
	kd_trace::Entry buf[kd_trace::kTraceMaxDepth + 1];
	kd_trace::LocalStack stack{buf, 0};
	kd_trace::trace_grid<true>(nodes, nnodes, tris, box, rays, occluded, 0, n, stack);
}

// One thread per ray, the top kRing entries of the stack in shared memory
// (RingStack; kRing·12·blockDim.x bytes of dynamic shared memory).
extern "C" __global__ void __launch_bounds__(kTraceBlockMax, kTraceBlocksMin)
    kd_trace_closest_sh(const uint2 *__restrict__ nodes, unsigned nnodes, const float4 *__restrict__ tris,
                        const float *__restrict__ box, const float4 *__restrict__ rays, float *__restrict__ hits,
                        unsigned hit_words, unsigned n) {
	extern __shared__ kd_trace::Entry kd_trace_ring[];
	kd_trace::Entry spill[kd_trace::kTraceMaxDepth + 1];
	kd_trace::RingStack<kd_trace::kRing> stack{kd_trace_ring + threadIdx.x, spill, 0, 0};
	kd_trace::trace_grid<false>(nodes, nnodes, tris, box, rays, hits, hit_words, n, stack);
}

extern "C" __global__ void __launch_bounds__(kTraceBlockMax, kTraceBlocksMin)
    kd_trace_any_sh(const uint2 *__restrict__ nodes, unsigned nnodes, const float4 *__restrict__ tris,
                    const float *__restrict__ box, const float4 *__restrict__ rays,
                    unsigned char *__restrict__ occluded, unsigned n) {
	extern __shared__ kd_trace::Entry kd_trace_ring[];
	kd_trace::Entry spill[kd_trace::kTraceMaxDepth + 1];
	kd_trace::RingStack<kd_trace::kRing> stack{kd_trace_ring + threadIdx.x, spill, 0, 0};
	kd_trace::trace_grid<true>(nodes, nnodes, tris, box, rays, occluded, 0, n, stack);
}

// Persistent warps (trace_persistent).
extern "C" __global__ void __launch_bounds__(kTraceBlockMax, kTraceBlocksMin)
    kd_trace_closest_pt(const uint2 *__restrict__ nodes, unsigned nnodes, const float4 *__restrict__ tris,
                        const float *__restrict__ box, const float4 *__restrict__ rays, float *__restrict__ hits,
                        unsigned hit_words, unsigned n, unsigned *counter) {
	kd_trace::trace_persistent<false>(nodes, nnodes, tris, box, rays, hits, hit_words, n, counter);
}

extern "C" __global__ void __launch_bounds__(kTraceBlockMax, kTraceBlocksMin)
    kd_trace_any_pt(const uint2 *__restrict__ nodes, unsigned nnodes, const float4 *__restrict__ tris,
                    const float *__restrict__ box, const float4 *__restrict__ rays,
                    unsigned char *__restrict__ occluded, unsigned n, unsigned *counter) {
	kd_trace::trace_persistent<true>(nodes, nnodes, tris, box, rays, occluded, 0, n, counter);
}

// One thread per ray on the treelet layout of the nodes (interior_step's
// PAIRS), the stack in local memory.
extern "C" __global__ void __launch_bounds__(kTraceBlockMax, kTraceBlocksMin)
    kd_trace_closest_tl(const uint2 *__restrict__ nodes, unsigned nnodes, const float4 *__restrict__ tris,
                        const float *__restrict__ box, const float4 *__restrict__ rays, float *__restrict__ hits,
                        unsigned hit_words, unsigned n) {
	kd_trace::Entry buf[kd_trace::kTraceMaxDepth + 1];
	kd_trace::LocalStack stack{buf, 0};
	kd_trace::trace_grid<false, true>(nodes, nnodes, tris, box, rays, hits, hit_words, n, stack);
}

extern "C" __global__ void __launch_bounds__(kTraceBlockMax, kTraceBlocksMin)
    kd_trace_any_tl(const uint2 *__restrict__ nodes, unsigned nnodes, const float4 *__restrict__ tris,
                    const float *__restrict__ box, const float4 *__restrict__ rays,
                    unsigned char *__restrict__ occluded, unsigned n) {
	kd_trace::Entry buf[kd_trace::kTraceMaxDepth + 1];
	kd_trace::LocalStack stack{buf, 0};
	kd_trace::trace_grid<true, true>(nodes, nnodes, tris, box, rays, occluded, 0, n, stack);
}
