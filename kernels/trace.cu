// trace.cu: closest-hit and any-hit ray traversal of a kd-tree on the
// device (kdtree/internal/gputrace launches these): one thread per ray, or
// dynamic fetch (trace_dynamic.cuh); trace_walk.cuh has one ray's walk,
// trace_test.cuh the watertight test. The arithmetic repeats kdtree/intersect.go and
// kdtree/traverse.go operation for operation: the image is compiled with
// --fmad=false, every division is IEEE (no fast math), Go's max (NaN in,
// NaN out) is spelled out where a NaN could change the answer, so a hit
// here has the bits of Tree.Intersect's and an any-hit answer equals
// Tree.Occluded's.
//
// Layouts (device memory, or mapped page-locked host memory for rays and
// results):
//   nodes: the pair layout (kdtree/internal/gputrace PairLayout) of
//          kdtree.Node's 8-byte words (w0, w1), read as uint2: the root at
//          place 0; an interior node's w1 is slot<<2 | axis, its below
//          child at place 2·slot and its above child at 2·slot + 1 (read
//          together as one uint4); a leaf's words are kdtree.Node's (first
//          reference, count<<2 | 3). Places index uint2 words; slots fill
//          128-byte lines three levels deep (treelets).
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
//   per ray, in shared memory: its per-axis constants (trace_walk.cuh
//          RayAxes), 48 bytes a thread.
// The host checks the tree before it traces (child and reference indices
// in range, depth at most kTraceMaxDepth), so the kernels trust it.

#include "trace_dynamic.cuh"

namespace kd_trace {

// kWarpsMax is the warps of a trace block (kTraceBlock / 32): the
// warps' staging of 7-word hit records (store_hits_warp).
constexpr int kWarpsMax = kTraceBlock / 32;

// trace_warp traces ray i (none when i >= n) and writes its answer; every
// lane of the warp calls it (the lanes' rays are consecutive), so that
// 7-word hit records go out through the warp's stage.
template <bool ANY, class Stack>
__device__ __forceinline__ void trace_warp(const uint2 *__restrict__ nodes, unsigned nnodes,
                                           const float4 *__restrict__ tris, const float *__restrict__ box,
                                           const float4 *__restrict__ rays, void *__restrict__ out, unsigned words,
                                           unsigned i, unsigned n, Stack &stack) {
	__shared__ float stage[kWarpsMax][7 * 32];
	Best b = no_hit();
	RayAxes r;
	shared_axes(r);
	if (i < n && nnodes != 0) b = trace_ray<ANY>(nodes, tris, box, rays[2 * i], rays[2 * i + 1], r, stack);
	if (!ANY && words == 7) {
		store_hits_warp(tris, (float *)out, stage[threadIdx.x >> 5], i, n, b);
	} else if (i < n) {
		store_result<ANY>(tris, out, words, i, b);
	}
}

// trace_grid: one thread per ray (blocks of whole warps), the stack in
// local memory.
template <bool ANY>
__device__ __forceinline__ void trace_grid(const uint2 *__restrict__ nodes, unsigned nnodes,
                                           const float4 *__restrict__ tris, const float *__restrict__ box,
                                           const float4 *__restrict__ rays, void *__restrict__ out, unsigned words,
                                           unsigned n) {
	Entry buf[kTraceMaxDepth + 1];
	LocalStack stack{buf, 0};
	trace_warp<ANY>(nodes, nnodes, tris, box, rays, out, words, blockIdx.x * blockDim.x + threadIdx.x, n, stack);
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

// The trace kernels, all with the same parameters: nodes, nnodes, tris,
// box, rays (the layouts above); out, the hit records (hit_words words a
// ray) or occlusion bytes; n rays; counter and refill, read by the
// dynamic-fetch kernels only (trace_dynamic.cuh). Blocks of
// kTraceBlock threads. A thread a ray (trace_grid):
extern "C" __global__ void __launch_bounds__(kd_trace::kTraceBlock, kd_trace::kTraceBlocksMin)
    kd_trace_closest(const uint2 *__restrict__ nodes, unsigned nnodes, const float4 *__restrict__ tris,
                     const float *__restrict__ box, const float4 *__restrict__ rays, void *__restrict__ out,
                     unsigned hit_words, unsigned n, unsigned *counter, unsigned refill) {
	kd_trace::trace_grid<false>(nodes, nnodes, tris, box, rays, out, hit_words, n);
}

extern "C" __global__ void __launch_bounds__(kd_trace::kTraceBlock, kd_trace::kTraceBlocksMin)
    kd_trace_any(const uint2 *__restrict__ nodes, unsigned nnodes, const float4 *__restrict__ tris,
                 const float *__restrict__ box, const float4 *__restrict__ rays, void *__restrict__ out,
                 unsigned hit_words, unsigned n, unsigned *counter, unsigned refill) {
	kd_trace::trace_grid<true>(nodes, nnodes, tris, box, rays, out, 0, n);
}

// Dynamic fetch, at most 56 registers for closest hit (kTraceBlocksDyn), 48
// for any hit (kTraceBlocksAnyDyn):
extern "C" __global__ void __launch_bounds__(kd_trace::kTraceBlock, kd_trace::kTraceBlocksDyn)
    kd_trace_closest_dyn(const uint2 *__restrict__ nodes, unsigned nnodes, const float4 *__restrict__ tris,
                         const float *__restrict__ box, const float4 *__restrict__ rays, void *__restrict__ out,
                         unsigned hit_words, unsigned n, unsigned *counter, unsigned refill) {
	kd_trace::trace_dynamic<false>(nodes, nnodes, tris, box, rays, out, hit_words, n, counter, refill);
}

extern "C" __global__ void __launch_bounds__(kd_trace::kTraceBlock, kd_trace::kTraceBlocksAnyDyn)
    kd_trace_any_dyn(const uint2 *__restrict__ nodes, unsigned nnodes, const float4 *__restrict__ tris,
                     const float *__restrict__ box, const float4 *__restrict__ rays, void *__restrict__ out,
                     unsigned hit_words, unsigned n, unsigned *counter, unsigned refill) {
	kd_trace::trace_dynamic<true>(nodes, nnodes, tris, box, rays, out, 0, n, counter, refill);
}

