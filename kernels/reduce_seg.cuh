// reduce_seg.cuh: the segmented min/max and box reductions of reduce.cu
// (seg_warp, seg_big), built on reduce.cuh's operators. reduce.cuh
// includes it.
#pragma once
#include "reduce.cuh"

namespace kd_reduce {

// ---------------------------------------------------------------------------
// Segmented reductions: segment s is src[offsets[s] : offsets[s+1]], clamped
// to [0, n] (a decreasing pair reads as empty). Two launches handle any mix of
// lengths with bounded imbalance:
//   seg_warp  one warp per segment reduces every segment of at most `limit`
//             elements and stores its result; a longer segment is appended to
//             a list (bigList, counted by big[0]) with its key words set to
//             the identity.
//   seg_big   a grid sized to the GPU goes through the list: segment k is
//             shared by as many blocks as give each thread at least 16
//             elements (all blocks for a huge one), each block adds its share
//             with atomicMin/atomicMax on the key words; the last block to
//             finish (big[1] counts blocks) writes the results and sets
//             big[0] and big[1] back to 0 for the next launch.
// The list order depends on timing, the results do not (min/max on keys).

// Per-segment scratch of the big list: kKeyWords key words per entry.
constexpr int kKeyWords = 2;

__device__ __forceinline__ void segment(const unsigned* __restrict__ offsets, unsigned s, unsigned n,
                                        unsigned& lo, unsigned& len) {
  unsigned hi = min(offsets[s + 1], n);
  lo = min(offsets[s], hi);
  len = hi - lo;
}

// list_long appends segment w to the list of long segments and returns its
// entry, or cap when the list is full (only possible when invalid offsets
// make segments overlap; the warp then reduces the segment itself). All 32
// lanes must call it.
__device__ __forceinline__ unsigned list_long(unsigned w, unsigned lane, unsigned* bigList,
                                              unsigned* big, unsigned cap) {
  unsigned k = 0;
  if (lane == 0) {
    k = atomicAdd(big, 1u);
    if (k < cap) bigList[k] = w;
  }
  k = __shfl_sync(kFull, k, 0);
  return k < cap ? k : cap;
}

// Launch: any block of whole warps, at least 32·nseg threads in all.
template <class R>
__device__ void seg_warp(const float* __restrict__ src, const unsigned* __restrict__ offsets,
                         float* outLo, float* outHi, unsigned* bigList, unsigned* bigKeys,
                         unsigned* big, unsigned nseg, unsigned n, unsigned limit, unsigned cap) {
  const unsigned lane = threadIdx.x & 31;
  const unsigned w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  if (w >= nseg) return;  // uniform over the warp
  unsigned lo, len;
  segment(offsets, w, n, lo, len);
  if (len > limit) {  // uniform over the warp
    const unsigned k = list_long(w, lane, bigList, big, cap);
    if (k < cap) {
      if (lane == 0) R::init_keys(bigKeys + kKeyWords * (size_t)k);
      return;
    }
  }
  typename R::S v = thread_range<R>(src + lo, nullptr, len, lane, 32);
  v = warp_reduce<R>(v);
  if (lane == 0) R::store(outLo, outHi, w, v);
}

// Which blocks share big segment k: bf of them, starting at a block that
// moves with k so that short list entries spread over the grid.
__device__ __forceinline__ bool big_share(unsigned k, unsigned len, unsigned& vb, unsigned& bf) {
  const unsigned G = gridDim.x;
  bf = min(G, max(1u, (len + kBlock * 16 - 1) / (kBlock * 16)));
  vb = (blockIdx.x + (unsigned)(((unsigned long long)k * 97ull) % G)) % G;
  return vb < bf;
}

// Launch: kBlock threads, any grid.
template <class R>
__device__ void seg_big(const float* __restrict__ src, const unsigned* __restrict__ offsets,
                        float* outLo, float* outHi, const unsigned* bigList, unsigned* bigKeys,
                        unsigned* big, unsigned n, unsigned cap) {
  __shared__ bool amLast;
  const unsigned count = min(__ldcg(big), cap);
  if (count == 0) return;  // nothing was long: no block touches the counters
  for (unsigned k = 0; k < count; k++) {
    unsigned lo, len, vb, bf;
    segment(offsets, __ldcg(bigList + k), n, lo, len);
    if (big_share(k, len, vb, bf)) {  // uniform over the block
      typename R::S v = thread_range<R>(src + lo, nullptr, len, vb * kBlock + threadIdx.x, bf * kBlock);
      v = block_reduce<R>(v);
      if (threadIdx.x == 0) R::atomic_keys(bigKeys + kKeyWords * (size_t)k, v);
      __syncthreads();  // block_reduce's shared memory is used again
    }
  }
  if (threadIdx.x == 0) {
    __threadfence();
    amLast = atomicAdd(big + 1, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!amLast) return;  // uniform over the block
  __threadfence();
  for (unsigned k = threadIdx.x; k < count; k += kBlock)
    R::store(outLo, outHi, __ldcg(bigList + k), R::load_keys(bigKeys + kKeyWords * (size_t)k));
  __syncthreads();  // every thread has read the count and the list
  if (threadIdx.x == 0) {
    big[0] = 0u;
    big[1] = 0u;
  }
}

// ---------------------------------------------------------------------------
// Boxes: six keys, components 0–2 minima (of the lo arrays), 3–5 maxima (of
// the hi arrays).
struct Box {
  unsigned k[6];
};

__device__ __forceinline__ Box box_identity() {
  Box b;
#pragma unroll
  for (int j = 0; j < 3; j++) {
    b.k[j] = kMinId;
    b.k[3 + j] = kMaxId;
  }
  return b;
}

__device__ __forceinline__ Box box_combine(Box a, const Box& b) {
#pragma unroll
  for (int j = 0; j < 3; j++) {
    a.k[j] = min(a.k[j], b.k[j]);
    a.k[3 + j] = max(a.k[3 + j], b.k[3 + j]);
  }
  return a;
}

struct BoxArrays {
  const float* p[6];  // lo x, lo y, lo z, hi x, hi y, hi z
};

__device__ __forceinline__ Box box_load(const BoxArrays& a, size_t i) {
  Box b;
#pragma unroll
  for (int j = 0; j < 3; j++) {
    b.k[j] = min_key(a.p[j][i]);
    b.k[3 + j] = max_key(a.p[3 + j][i]);
  }
  return b;
}

__device__ __forceinline__ Box box_warp_reduce(Box v) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) {
    Box o;
#pragma unroll
    for (int j = 0; j < 6; j++) o.k[j] = __shfl_down_sync(kFull, v.k[j], d);
    v = box_combine(v, o);
  }
  return v;
}

__device__ __forceinline__ void box_store(float* out, size_t i, const Box& b) {
#pragma unroll
  for (int j = 0; j < 3; j++) {
    out[6 * i + j] = min_result(b.k[j]);
    out[6 * i + 3 + j] = max_result(b.k[3 + j]);
  }
}

// Box from six floats of a row of results (out layout).
__device__ __forceinline__ Box box_from_row(const float* row) {
  Box b;
#pragma unroll
  for (int j = 0; j < 3; j++) {
    b.k[j] = min_key(row[j]);
    b.k[3 + j] = max_key(row[3 + j]);
  }
  return b;
}

__device__ __forceinline__ Box box_block_reduce(Box v) {
  __shared__ Box warpState[kWarps];
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = box_warp_reduce(v);
  if (lane == 0) warpState[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kWarps ? warpState[lane] : box_identity();
    v = box_warp_reduce(v);
  }
  return v;
}


// ---------------------------------------------------------------------------
// Interleaved (AoS) boxes: element i is the six floats boxes[6i … 6i+5] =
// lo x, lo y, lo z, hi x, hi y, hi z. They are read as float2 "pairs": pair q
// of a segment holds (lo x, lo y) when q % 3 == 0, (lo z, hi x) when 1 and
// (hi y, hi z) when 2 (a segment starts at pair 3·offsets[s], a multiple of
// 3). A group of T threads (T % 3 != 0) reads 3T consecutive pairs (T
// elements) with three loads per thread, at t, t + T, t + 2T: load j has
// pair type (t + j·D) % 3 with D = T % 3, so every thread gets one pair of
// each type per group and routes them with selects (no local arrays).
// Missing pairs read as NaN, which min and max skip.

// aos_pair loads pair q of p when q < nq, else (NaN, NaN). aligned: p is
// 8-byte aligned (float2 loads); otherwise two scalar loads.
__device__ __forceinline__ float2 aos_pair(const float* __restrict__ p, unsigned q, unsigned nq, bool aligned) {
  if (q >= nq) return make_float2(__uint_as_float(0x7FFFFFFFu), __uint_as_float(0x7FFFFFFFu));
  if (aligned) return __ldg(reinterpret_cast<const float2*>(p) + q);
  return make_float2(__ldg(p + 2 * (size_t)q), __ldg(p + 2 * (size_t)q + 1));
}

// AosRoute says which of a thread's three loads holds each pair type.
struct AosRoute {
  unsigned j0, j1, j2;
};

// aos_route for thread t of a group of T threads (D = T % 3, its own
// inverse modulo 3): type k sits in load ((k - t%3)·D) mod 3.
template <int T>
__device__ __forceinline__ AosRoute aos_route(unsigned t) {
  constexpr unsigned D = T % 3;
  static_assert(D != 0, "AoS groups need T % 3 != 0");
  const unsigned r = t % 3;
  return AosRoute{((3 - r) * D) % 3, ((4 - r) * D) % 3, ((5 - r) * D) % 3};
}

__device__ __forceinline__ float2 aos_sel(unsigned j, float2 a, float2 b, float2 c) {
  return j == 0 ? a : (j == 1 ? b : c);
}

// aos_fold adds the three pairs of one group to acc.
__device__ __forceinline__ void aos_fold(Box& acc, const AosRoute& rt, float2 a, float2 b, float2 c) {
  const float2 p0 = aos_sel(rt.j0, a, b, c), p1 = aos_sel(rt.j1, a, b, c), p2 = aos_sel(rt.j2, a, b, c);
  acc.k[0] = min(acc.k[0], min_key(p0.x));
  acc.k[1] = min(acc.k[1], min_key(p0.y));
  acc.k[2] = min(acc.k[2], min_key(p1.x));
  acc.k[3] = max(acc.k[3], max_key(p1.y));
  acc.k[4] = max(acc.k[4], max_key(p2.x));
  acc.k[5] = max(acc.k[5], max_key(p2.y));
}

// aos_range folds pairs [q0, q1) of p (q0 a multiple of 3) with T threads,
// thread t: groups of 3T pairs, two groups (six loads) in flight; pairs at
// or past q1 read as NaN.
template <int T>
__device__ __forceinline__ void aos_range(Box& acc, const float* __restrict__ p, unsigned q0, unsigned q1,
                                          bool aligned, unsigned t, const AosRoute& rt) {
  unsigned b = q0;  // first pair of the group
  for (; b + 3u * T < q1; b += 6u * T) {
    const unsigned q = b + t;
    const float2 x0 = aos_pair(p, q, q1, aligned), x1 = aos_pair(p, q + T, q1, aligned);
    const float2 x2 = aos_pair(p, q + 2u * T, q1, aligned), x3 = aos_pair(p, q + 3u * T, q1, aligned);
    const float2 x4 = aos_pair(p, q + 4u * T, q1, aligned), x5 = aos_pair(p, q + 5u * T, q1, aligned);
    aos_fold(acc, rt, x0, x1, x2);
    aos_fold(acc, rt, x3, x4, x5);
  }
  if (b < q1) {  // one group left, maybe partial
    const unsigned q = b + t;
    aos_fold(acc, rt, aos_pair(p, q, q1, aligned), aos_pair(p, q + T, q1, aligned),
             aos_pair(p, q + 2u * T, q1, aligned));
  }
}

// Tile of the block-shared AoS path: kAosTile elements (a multiple of kBlock).
constexpr unsigned kAosTile = 512;


// RBox is the operator of the designs' segmented box forms (reduce.cu,
// reduce_box_*): the state is a Box, an element is an interleaved box of 6
// floats (lo x, y, z, hi x, y, z), results are stored as 6 floats per
// index (the same layout, so a later pass reads them back as elements).
struct RBox {
  typedef Box S;
  static constexpr bool kPair = false;
  static constexpr bool kBox = true;
  __device__ static S identity() { return box_identity(); }
  __device__ static S combine(S a, S b) { return box_combine(a, b); }
  __device__ static S shfl_down(S s, int d) {
    Box o;
#pragma unroll
    for (int j = 0; j < 6; j++) o.k[j] = __shfl_down_sync(kFull, s.k[j], d);
    return o;
  }
  __device__ static void store(float* outLo, float*, size_t i, S s) { box_store(outLo, i, s); }
  __device__ static S load_box(const float* p, size_t i) { return box_from_row(p + 6 * i); }
};

// Span of one block of the grid-stride designs' segmented box forms (r6, r7).
constexpr unsigned kBoxSpan67 = kBlock * 16;

}  // namespace kd_reduce
