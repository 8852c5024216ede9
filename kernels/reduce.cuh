// Building blocks of the min/max reductions (reduce.cu): the order-preserving
// key transform, the reduction operators, warp and block reductions and the
// per-thread float4 grid-stride loop. Everything lives in namespace
// kd_reduce; the extern "C" entry points are in reduce.cu.
//
// Order and NaN policy (shared bit for bit with package reduce's Go code):
// values are compared by key(f) = bits(f) ^ (sign ? 0xFFFFFFFF : 0x80000000),
// the usual float order with -0 < +0; a NaN contributes the identity of the
// operation (it is skipped); an empty or all-NaN range gives +Inf for min and
// -Inf for max. Reductions run on keys (integer min/max: exact, associative,
// commutative), so every design and every combining order gives the same bits.
#pragma once

namespace kd_reduce {

constexpr int kBlock = 256;     // threads of every reduction block (package reduce: blockSize)
constexpr int kWarps = kBlock / 32;
constexpr int kBoundsBlock = 384;  // Bounds kernel: a multiple of 3 (and of 6)
constexpr unsigned kFull = 0xFFFFFFFFu;

constexpr unsigned kMinId = 0xFFFFFFFFu;  // above every non-NaN key
constexpr unsigned kMaxId = 0u;           // below every non-NaN key

__device__ __forceinline__ unsigned order_key(float f) {
  unsigned u = __float_as_uint(f);
  return u ^ ((unsigned)((int)u >> 31) | 0x80000000u);
}

__device__ __forceinline__ float from_key(unsigned k) {
  return __uint_as_float((k & 0x80000000u) ? (k ^ 0x80000000u) : ~k);
}

// Integer NaN test: independent of any fast-math flag.
__device__ __forceinline__ bool is_nan(float f) {
  return (__float_as_uint(f) & 0x7FFFFFFFu) > 0x7F800000u;
}

__device__ __forceinline__ unsigned min_key(float f) { return is_nan(f) ? kMinId : order_key(f); }
__device__ __forceinline__ unsigned max_key(float f) { return is_nan(f) ? kMaxId : order_key(f); }

__device__ __forceinline__ float min_result(unsigned k) {
  return k == kMinId ? __uint_as_float(0x7F800000u) : from_key(k);
}
__device__ __forceinline__ float max_result(unsigned k) {
  return k == kMaxId ? __uint_as_float(0xFF800000u) : from_key(k);
}

// An operator R describes one reduction over float inputs:
//   S                 the state (keys)
//   identity()        neutral state
//   from(lo, hi)      state of one element: lo is the value a min sees, hi the
//                     value a max sees (the same float except in later passes
//                     of min+max, which read separate lo and hi arrays)
//   combine(a, b)     exact, associative, commutative
//   shfl_down(s, d)   __shfl_down_sync of the state over the full warp
//   store(outLo, outHi, i, s)  write the float result(s) of state s at index i
//   init_keys, atomic_keys, load_keys: the state kept as key words in global
//                     memory (2 words per result, the second unused by RMin
//                     and RMax), combined across blocks with atomicMin/atomicMax
//
// Single-output operators (RMin, RMax) read only lo arrays and write only
// outLo.
struct RMin {
  typedef unsigned S;
  static constexpr bool kPair = false;
  static constexpr bool kBox = false;
  __device__ static S identity() { return kMinId; }
  __device__ static S from(float lo, float) { return min_key(lo); }
  __device__ static S combine(S a, S b) { return min(a, b); }
  __device__ static S shfl_down(S s, int d) { return __shfl_down_sync(kFull, s, d); }
  __device__ static void store(float* outLo, float*, size_t i, S s) { outLo[i] = min_result(s); }
  // Key words of a combined-by-atomics result (kKeyWords words per result).
  __device__ static void init_keys(unsigned* p) { p[0] = kMinId; }
  __device__ static void atomic_keys(unsigned* p, S s) { atomicMin(p, s); }
  __device__ static S load_keys(const unsigned* p) { return __ldcg(p); }
};

struct RMax {
  typedef unsigned S;
  static constexpr bool kPair = false;
  static constexpr bool kBox = false;
  __device__ static S identity() { return kMaxId; }
  __device__ static S from(float lo, float) { return max_key(lo); }
  __device__ static S combine(S a, S b) { return max(a, b); }
  __device__ static S shfl_down(S s, int d) { return __shfl_down_sync(kFull, s, d); }
  __device__ static void store(float* outLo, float*, size_t i, S s) { outLo[i] = max_result(s); }
  __device__ static void init_keys(unsigned* p) { p[0] = kMaxId; }
  __device__ static void atomic_keys(unsigned* p, S s) { atomicMax(p, s); }
  __device__ static S load_keys(const unsigned* p) { return __ldcg(p); }
};

struct RMinMax {
  typedef uint2 S;  // x: min key, y: max key
  static constexpr bool kPair = true;
  static constexpr bool kBox = false;
  __device__ static S identity() { return make_uint2(kMinId, kMaxId); }
  __device__ static S from(float lo, float hi) { return make_uint2(min_key(lo), max_key(hi)); }
  __device__ static S combine(S a, S b) { return make_uint2(min(a.x, b.x), max(a.y, b.y)); }
  __device__ static S shfl_down(S s, int d) {
    return make_uint2(__shfl_down_sync(kFull, s.x, d), __shfl_down_sync(kFull, s.y, d));
  }
  __device__ static void store(float* outLo, float* outHi, size_t i, S s) {
    outLo[i] = min_result(s.x);
    outHi[i] = max_result(s.y);
  }
  __device__ static void init_keys(unsigned* p) {
    p[0] = kMinId;
    p[1] = kMaxId;
  }
  __device__ static void atomic_keys(unsigned* p, S s) {
    atomicMin(p, s.x);
    atomicMax(p + 1, s.y);
  }
  __device__ static S load_keys(const unsigned* p) { return make_uint2(__ldcg(p), __ldcg(p + 1)); }
};

// load returns the state of element i. inHi == nullptr means "the same
// array as inLo" (first pass); single-output operators never read inHi.
template <class R>
__device__ __forceinline__ typename R::S load(const float* __restrict__ inLo,
                                              const float* __restrict__ inHi, size_t i) {
  if constexpr (R::kBox) {
    return R::load_box(inLo, i);  // element i: 6 floats at inLo[6i]
  } else {
    float lo = inLo[i];
    float hi = lo;
    if (R::kPair && inHi != nullptr) hi = inHi[i];
    return R::from(lo, hi);
  }
}

template <class R>
__device__ __forceinline__ typename R::S load4(float4 v, typename R::S acc) {
  acc = R::combine(acc, R::from(v.x, v.x));
  acc = R::combine(acc, R::from(v.y, v.y));
  acc = R::combine(acc, R::from(v.z, v.z));
  acc = R::combine(acc, R::from(v.w, v.w));
  return acc;
}

// warp_reduce combines the states of the 32 lanes; lane 0 holds the result.
// All 32 lanes must call it.
template <class R>
__device__ __forceinline__ typename R::S warp_reduce(typename R::S v) {
#pragma unroll
  for (int d = 16; d > 0; d >>= 1) v = R::combine(v, R::shfl_down(v, d));
  return v;
}

// block_reduce combines the states of the T (default kBlock) threads; thread 0 holds the
// result. Every thread of the block must call it. It ends without a barrier
// after its last use of shared memory by warp 0, so a second call in the same
// kernel must be separated from the first by __syncthreads.
template <class R, int T = kBlock>
__device__ __forceinline__ typename R::S block_reduce(typename R::S v) {
  constexpr int kW = T / 32;
  __shared__ typename R::S warpState[kW];
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warp_reduce<R>(v);
  if (lane == 0) warpState[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kW ? warpState[lane] : R::identity();
    v = warp_reduce<R>(v);
  }
  return v;
}

// thread_range returns this thread's share of the reduction of the n
// elements at inLo (and inHi, for later min+max passes) when `stride`
// threads numbered t = 0 … stride-1 cooperate (stride >= 4). A single input
// array is read with float4 loads (a scalar head up to the first 16-byte
// boundary and a scalar tail), four loads in flight per thread; two arrays
// (a small later pass) are read with scalar loads.
template <class R>
__device__ __forceinline__ typename R::S thread_range(const float* __restrict__ inLo,
                                                      const float* __restrict__ inHi,
                                                      unsigned n, unsigned t, unsigned stride) {
  typedef typename R::S S;
  S acc = R::identity();
  if (R::kPair && inHi != nullptr) {
    for (unsigned i = t; i < n; i += stride) acc = R::combine(acc, load<R>(inLo, inHi, i));
    return acc;
  }
  unsigned head = (unsigned)((16u - ((unsigned)(size_t)inLo & 15u)) & 15u) >> 2;
  if (head > n) head = n;
  if (t < head) acc = R::combine(acc, load<R>(inLo, nullptr, t));
  const float4* __restrict__ v = reinterpret_cast<const float4*>(inLo + head);
  const unsigned nv = (n - head) >> 2;
  unsigned i = t;
  for (; i + 3u * stride < nv; i += 4u * stride) {
    float4 a = v[i], b = v[i + stride], c = v[i + 2u * stride], d = v[i + 3u * stride];
    acc = load4<R>(a, acc);
    acc = load4<R>(b, acc);
    acc = load4<R>(c, acc);
    acc = load4<R>(d, acc);
  }
  for (; i < nv; i += stride) acc = load4<R>(v[i], acc);
  const unsigned tail = head + 4u * nv;  // at most 3 elements from here
  if (t < n - tail) acc = R::combine(acc, load<R>(inLo, nullptr, tail + t));
  return acc;
}

// ---------------------------------------------------------------------------
// The designs r0 … r5 (multi-pass). One level is one launch: block b reduces
// its span of the n inputs and writes result b to outLo/outHi[b]; the host
// runs the next level over the block results until one is left. A block of
// T threads (T = kThreads03 for r0–r3, kThreads45 for r4 and r5; other
// powers of two for the tuning variants of r0, r4, r5, see reduce.cu) spans
// kSpan = T inputs (r0–r3) or 2·T (r4, r5), except in a grid of one block
// (the final level), which spans all n inputs: the host launches a single
// block as soon as each thread would get at most 32 inputs (package reduce,
// finalPerThread), so no level runs only to shrink a few thousand partial
// results. Thread t starts from its column of the
// span: elements t, t + T, t + 2T, … (one element for r0–r3, two for r4 and
// r5: the "first reduction during the load"; more only in a final level),
// the identity past the end. The design's tree then reduces the T columns.
// inHi: see load.

constexpr int kThreads03 = 256;  // r0–r3 (package reduce: Variant.Threads)
constexpr int kThreads45 = 256;  // r4, r5 (512 measured slower on an H200: 0.0466 vs 0.0410 ms at 2^24)
// Final (one-block) level of r4 and r5: the same design unrolled for 1024
// threads, so that 32·1024 partial results take one launch (2^24 inputs: 2
// launches instead of 3).
constexpr int kFinal45 = 1024;

// span_of gives the first input of this block's span and how many inputs it has.
// With a block list (the segmented forms, see reduce.cu's reduce_box_*),
// block b's span is given by its entry: blocks[4b] (first input) and
// blocks[4b+1] (count, at most the design's span).
__device__ __forceinline__ void span_of(unsigned n, unsigned span, size_t& base, unsigned& count,
                                        const unsigned* blocks = nullptr) {
  if (blocks != nullptr) {
    base = __ldg(blocks + 4 * (size_t)blockIdx.x);
    count = __ldg(blocks + 4 * (size_t)blockIdx.x + 1);
    return;
  }
  if (gridDim.x == 1) {  // final level: everything
    base = 0;
    count = n;
    return;
  }
  base = (size_t)blockIdx.x * span;
  count = n > base ? min((unsigned)(n - base), span) : 0u;
}

// column folds the inputs base + p, base + p + T, … below base + count. A
// full span of K·T inputs (K = 1 or 2) takes K unconditional loads. Any
// other column (a partial last block, or a final level's column of up to
// 32 inputs) is read in rounds of eight loads, all issued before any of
// them is combined (a load past the end reads the column's last input
// instead, which leaves a min or a max unchanged): a column of c inputs costs
// ⌈c/8⌉ dependent memory round trips (4 for a full final-level column).
// min and max are order-independent, so the grouping does not change the
// result.
template <class R, int T, int K>
__device__ __forceinline__ typename R::S column(const float* inLo, const float* inHi, size_t base,
                                                unsigned count, unsigned p) {
  typedef typename R::S S;
  if (count == (unsigned)(K * T)) {
    if constexpr (K == 2 && !R::kBox) {  // the element pair 2p, 2p+1 as one 8-byte load when aligned (uniform test)
      const float* a = inLo + base;
      const float* h = (R::kPair && inHi != nullptr) ? inHi + base : nullptr;
      if ((((size_t)a | (size_t)h) & 7) == 0) {
        const float2 l = __ldg(reinterpret_cast<const float2*>(a) + p);
        const float2 u = h != nullptr ? __ldg(reinterpret_cast<const float2*>(h) + p) : l;
        return R::combine(R::from(l.x, u.x), R::from(l.y, u.y));
      }
    }
    S v = load<R>(inLo, inHi, base + p);
    if (K == 2) v = R::combine(v, load<R>(inLo, inHi, base + p + T));
    return v;
  }
  constexpr int kInFlight = 8;
  S acc = R::identity();
  for (unsigned i = p; i < count; i += kInFlight * (unsigned)T) {
    S v[kInFlight];
#pragma unroll
    for (int j = 0; j < kInFlight; j++) {
      // Past the end, read the last input again: min and max are
      // idempotent, and unconditional loads are all issued up front.
      const unsigned k = min(i + j * (unsigned)T, count - 1u);  // count < 2^31: no wrap-around
      v[j] = load<R>(inLo, inHi, base + k);
    }
#pragma unroll
    for (int w = 1; w < kInFlight; w *= 2) {  // pairwise: a tree of depth 3
#pragma unroll
      for (int j = 0; j < kInFlight; j += 2 * w) v[j] = R::combine(v[j], v[j + w]);
    }
    acc = R::combine(acc, v[0]);
  }
  return acc;
}

// Reduce0: interleaved addressing with the modulo test, in place in global
// memory. The thesis reduces the input array itself; ours must stay intact,
// so the first step (offset 1) reads the input and writes its results to a
// global work array, where every later step works in place: even thread t's
// value lives at work[t / 2] of the block's T/2 words, so there is no copy
// pass, and the memory traffic is the thesis's. T (a power of two, at most
// 1024) is the block size: kThreads03, or another for the tuning variants
// (reduce.cu).
template <class R, int T = kThreads03>
__device__ void reduce0(const float* inLo, const float* inHi, float* outLo, float* outHi,
                        typename R::S* work, unsigned n, const unsigned* blocks = nullptr) {
  typedef typename R::S S;
  const unsigned tid = threadIdx.x;
  size_t base;
  unsigned count;
  span_of(n, T, base, count, blocks);
  const unsigned m = min(count, (unsigned)T);  // columns that hold inputs
  S* w = work + (size_t)blockIdx.x * (T / 2);
  if (tid % 2 == 0 && tid < m) {
    S v = column<R, T, 1>(inLo, inHi, base, count, tid);
    if (tid + 1 < m) v = R::combine(v, column<R, T, 1>(inLo, inHi, base, count, tid + 1));
    w[tid / 2] = v;
  }
  __syncthreads();
  for (unsigned offset = 2; offset < m; offset *= 2) {
    if (tid % (offset * 2) == 0 && tid + offset < m) w[tid / 2] = R::combine(w[tid / 2], w[(tid + offset) / 2]);
    __syncthreads();
  }
  if (tid == 0) R::store(outLo, outHi, blockIdx.x, m > 0 ? w[0] : R::identity());
}

// Reduce1: sequential addressing (the first `offset` threads stay active and
// their accesses coalesce), in place in global memory. As in Reduce0 the
// first step (offset T/2) reads the input and writes the T/2 work words.
template <class R>
__device__ void reduce1(const float* inLo, const float* inHi, float* outLo, float* outHi,
                        typename R::S* work, unsigned n, const unsigned* blocks = nullptr) {
  typedef typename R::S S;
  constexpr int T = kThreads03;
  const unsigned tid = threadIdx.x;
  size_t base;
  unsigned count;
  span_of(n, T, base, count, blocks);
  S* w = work + (size_t)blockIdx.x * (T / 2);
  if (tid < blockDim.x / 2)
    w[tid] = R::combine(column<R, T, 1>(inLo, inHi, base, count, tid),
                        column<R, T, 1>(inLo, inHi, base, count, tid + blockDim.x / 2));
  __syncthreads();
  for (unsigned offset = blockDim.x / 4; offset > 0; offset /= 2) {
    if (tid < offset) w[tid] = R::combine(w[tid], w[tid + offset]);
    __syncthreads();
  }
  if (tid == 0) R::store(outLo, outHi, blockIdx.x, w[0]);
}

// Reduce2: the block's values are copied to shared memory (padded with the
// identity) before the sequential-addressing tree.
template <class R>
__device__ void reduce2(const float* inLo, const float* inHi, float* outLo, float* outHi, unsigned n,
                        const unsigned* blocks = nullptr) {
  constexpr int T = kThreads03;
  __shared__ typename R::S sValues[T];
  const unsigned tid = threadIdx.x;
  size_t base;
  unsigned count;
  span_of(n, T, base, count, blocks);
  sValues[tid] = column<R, T, 1>(inLo, inHi, base, count, tid);
  __syncthreads();
  for (unsigned offset = blockDim.x / 2; offset > 0; offset /= 2) {
    if (tid < offset) sValues[tid] = R::combine(sValues[tid], sValues[tid + offset]);
    __syncthreads();
  }
  if (tid == 0) R::store(outLo, outHi, blockIdx.x, sValues[0]);
}

// Reduce3: each thread keeps its running value in a register; shared memory
// only publishes it for the partner of the next step.
template <class R>
__device__ void reduce3(const float* inLo, const float* inHi, float* outLo, float* outHi, unsigned n,
                        const unsigned* blocks = nullptr) {
  constexpr int T = kThreads03;
  __shared__ typename R::S sValues[T];
  const unsigned tid = threadIdx.x;
  size_t base;
  unsigned count;
  span_of(n, T, base, count, blocks);
  typename R::S rValue = column<R, T, 1>(inLo, inHi, base, count, tid);
  sValues[tid] = rValue;
  __syncthreads();
  for (unsigned offset = blockDim.x / 2; offset > 0; offset /= 2) {
    if (tid < offset) {
      rValue = R::combine(rValue, sValues[tid + offset]);
      sValues[tid] = rValue;
    }
    __syncthreads();
  }
  if (tid == 0) R::store(outLo, outHi, blockIdx.x, rValue);
}

// Reduce4: the block size is a compile-time constant (T = 256; 1024 for the
// final level; 64 … 512 for the tuning variants) and the tree is unrolled; each block reduces 2·T elements,
// the first step while loading (thread t combines its element pair, 2t and
// 2t + 1, read as one 8-byte load when aligned, else t and t + T: half the
// shared memory per element); below 64 active threads the last warp goes on without block
// barriers (shuffles); thread 0's last step is folded into the output
// statement.
template <class R, int T = kThreads45>
__device__ void reduce4(const float* inLo, const float* inHi, float* outLo, float* outHi, unsigned n,
                        const unsigned* blocks = nullptr) {
  typedef typename R::S S;
  __shared__ S sValues[T];
  const unsigned tid = threadIdx.x;
  size_t base;
  unsigned count;
  span_of(n, 2 * T, base, count, blocks);
  S rValue = column<R, T, 2>(inLo, inHi, base, count, tid);
  sValues[tid] = rValue;
  __syncthreads();
#pragma unroll
  for (unsigned offset = T / 2; offset > 32; offset /= 2) {
    if (tid < offset) {
      rValue = R::combine(rValue, sValues[tid + offset]);
      sValues[tid] = rValue;
    }
    __syncthreads();
  }
  if (tid < 32) {  // warp 0, all lanes: no block barrier from here on
    rValue = R::combine(rValue, sValues[tid + 32]);
#pragma unroll
    for (int d = 16; d > 1; d >>= 1) rValue = R::combine(rValue, R::shfl_down(rValue, d));
    const S last = R::shfl_down(rValue, 1);
    if (tid == 0) R::store(outLo, outHi, blockIdx.x, R::combine(rValue, last));
  }
}

// Reduce5: Reduce4's load (2·T elements per block, T = 256), then the whole
// tree with warp shuffles: each warp reduces itself, warp 0 reduces the warps.
template <class R, int T = kThreads45>
__device__ void reduce5(const float* inLo, const float* inHi, float* outLo, float* outHi, unsigned n,
                        const unsigned* blocks = nullptr) {
  size_t base;
  unsigned count;
  span_of(n, 2 * T, base, count, blocks);
  typename R::S v = column<R, T, 2>(inLo, inHi, base, count, threadIdx.x);
  v = block_reduce<R, T>(v);
  if (threadIdx.x == 0) R::store(outLo, outHi, blockIdx.x, v);
}

// Reduce6: a grid-stride loop with float4 loads (any grid; the host sizes it
// to the GPU), one result per block; the host then runs one block over the
// block results.
template <class R>
__device__ void reduce6(const float* inLo, const float* inHi, float* outLo, float* outHi, unsigned n) {
  typename R::S v = thread_range<R>(inLo, inHi, n, blockIdx.x * kBlock + threadIdx.x, gridDim.x * kBlock);
  v = block_reduce<R>(v);
  if (threadIdx.x == 0) R::store(outLo, outHi, blockIdx.x, v);
}

// Reduce7: Reduce6's loop in one launch. Each block writes its result to
// partLo/partHi[blockIdx.x], makes it visible device-wide (threadfence) and
// counts itself on *counter; the block that counts last reduces the block
// results, writes out[0] and sets *counter back to 0 for the next launch.
template <class R>
__device__ void reduce7(const float* __restrict__ in, float* partLo, float* partHi,
                        unsigned* counter, float* outLo, float* outHi, unsigned n) {
  typedef typename R::S S;
  __shared__ bool amLast;
  S v = thread_range<R>(in, nullptr, n, blockIdx.x * kBlock + threadIdx.x, gridDim.x * kBlock);
  v = block_reduce<R>(v);
  if (threadIdx.x == 0) {
    R::store(partLo, partHi, blockIdx.x, v);
    __threadfence();
    const unsigned ticket = atomicAdd(counter, 1u);
    amLast = ticket == gridDim.x - 1;
  }
  __syncthreads();
  if (!amLast) return;  // uniform over the block
  __threadfence();
  S w = R::identity();
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kBlock) {
    // __ldcg: read at L2, where the other blocks' results are, not from L1.
    const float lo = __ldcg(partLo + b);
    const float hi = R::kPair ? __ldcg(partHi + b) : lo;
    w = R::combine(w, R::from(lo, hi));
  }
  w = block_reduce<R>(w);
  if (threadIdx.x == 0) {
    R::store(outLo, outHi, 0, w);
    *counter = 0u;
  }
}

}  // namespace kd_reduce

// The segmented reductions.
#include "reduce_seg.cuh"
