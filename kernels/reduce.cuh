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
