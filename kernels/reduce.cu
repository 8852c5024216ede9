// Min/max reductions over float32 (package reduce). Building blocks and the
// designs are in reduce.cuh; this file only declares the extern "C" entry
// points, every one launched with kd_reduce::kBlock (256) threads except
// r4 and r5 (kd_reduce::kThreads45 = 256) and reduce_bounds_f32
// (kd_reduce::kBoundsBlock = 384).
//
// Designs r0 … r6, for op = min, max, minmax:
//   reduce_<op>_r<k>_f32(const float* inLo, const float* inHi,
//                        float* outLo, float* outHi, unsigned* work, unsigned n)
//   Block b reduces its share of the n inputs and writes result b to
//   outLo[b] (and outHi[b] for minmax). inHi = NULL: inputs are inLo (first
//   pass); otherwise a later minmax pass reads minima from inLo and maxima
//   from inHi. min and max kernels use only inLo and outLo. work (128 states
//   per block: 128 words, 256 for minmax) is used by r0 and r1 only. Per
//   block: 256 inputs (r0–r3, 256 threads), 512 (r4, r5, 256 threads), a
//   grid-stride share (r6); a grid of one block (r0–r5) reduces all n inputs
//   (the final level). r4 and r5 run their final level as
//   reduce_<op>_r4final_f32 / r5final (same design, 1024 threads).
// Tuning variants (package reduce, TuningVariants): the same entry points
// for designs r0, r4 and r5 at other block sizes, named
//   reduce_<op>_r<k>_t<T>_f32, launched with T threads, T inputs per block
//   (r0: work holds T/2 states per block) or 2·T (r4, r5).
// Their final level runs reduce_<op>_r4final_f32 / r5final (r4, r5) or
// the tuning kernel itself in one block (r0).
// Design r7 (one pass):
//   reduce_<op>_r7_f32(const float* in, float* partLo, float* partHi,
//                      unsigned* counter, float* outLo, float* outHi, unsigned n)
//   partLo/partHi: gridDim.x floats each; *counter must be 0 at launch and is
//   0 again when the kernel ends.
// Segmented (segment s = src[offsets[s] : offsets[s+1]], clamped to [0, n]),
// two launches (see reduce.cuh, seg_warp and seg_big):
//   reduce_segwarp_<op>_f32(src, offsets, outLo, outHi, bigList, bigKeys, big, nseg, n, limit, cap)
//       one warp per segment (grid of ≥ 32·nseg threads); segments longer than
//       limit go to bigList (cap entries, 2 key words each in bigKeys)
//   reduce_segbig_<op>_f32(src, offsets, outLo, outHi, bigList, bigKeys, big, n, cap)
//       any grid; big[0], big[1] must be 0 before reduce_segwarp and are 0 again
//       after reduce_segbig
//   and the _box_ forms over six arrays (lo x,y,z, hi x,y,z) writing 6 floats
//   per segment (min x,y,z, max x,y,z), 6 key words per big entry.
// Bounds of interleaved xyz (one pass, last block done):
//   reduce_bounds_f32(const float* xyz, float* part /*6·gridDim.x*/,
//                     unsigned* counter, float* out /*6*/, unsigned n /*floats*/)
#include "reduce.cuh"

#define KD_REDUCE_DESIGNS(OP, R)                                                                   \
  extern "C" __global__ void __launch_bounds__(kd_reduce::kThreads03)                                      \
      reduce_##OP##_r0_f32(const float* inLo, const float* inHi, float* outLo, float* outHi,      \
                           unsigned* work, unsigned n) {                                           \
    kd_reduce::reduce0<kd_reduce::R>(inLo, inHi, outLo, outHi,                                     \
                                     reinterpret_cast<kd_reduce::R::S*>(work), n);                 \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(kd_reduce::kThreads03)                                      \
      reduce_##OP##_r1_f32(const float* inLo, const float* inHi, float* outLo, float* outHi,      \
                           unsigned* work, unsigned n) {                                           \
    kd_reduce::reduce1<kd_reduce::R>(inLo, inHi, outLo, outHi,                                     \
                                     reinterpret_cast<kd_reduce::R::S*>(work), n);                 \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(kd_reduce::kThreads03)                                      \
      reduce_##OP##_r2_f32(const float* inLo, const float* inHi, float* outLo, float* outHi,      \
                           unsigned*, unsigned n) {                                                \
    kd_reduce::reduce2<kd_reduce::R>(inLo, inHi, outLo, outHi, n);                                 \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(kd_reduce::kThreads03)                                      \
      reduce_##OP##_r3_f32(const float* inLo, const float* inHi, float* outLo, float* outHi,      \
                           unsigned*, unsigned n) {                                                \
    kd_reduce::reduce3<kd_reduce::R>(inLo, inHi, outLo, outHi, n);                                 \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(kd_reduce::kThreads45)                                      \
      reduce_##OP##_r4_f32(const float* inLo, const float* inHi, float* outLo, float* outHi,      \
                           unsigned*, unsigned n) {                                                \
    kd_reduce::reduce4<kd_reduce::R>(inLo, inHi, outLo, outHi, n);                                 \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(kd_reduce::kThreads45)                                      \
      reduce_##OP##_r5_f32(const float* inLo, const float* inHi, float* outLo, float* outHi,      \
                           unsigned*, unsigned n) {                                                \
    kd_reduce::reduce5<kd_reduce::R>(inLo, inHi, outLo, outHi, n);                                 \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(kd_reduce::kFinal45)                                \
      reduce_##OP##_r4final_f32(const float* inLo, const float* inHi, float* outLo, float* outHi, \
                                unsigned*, unsigned n) {                                           \
    kd_reduce::reduce4<kd_reduce::R, kd_reduce::kFinal45>(inLo, inHi, outLo, outHi, n);            \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(kd_reduce::kFinal45)                                \
      reduce_##OP##_r5final_f32(const float* inLo, const float* inHi, float* outLo, float* outHi, \
                                unsigned*, unsigned n) {                                           \
    kd_reduce::reduce5<kd_reduce::R, kd_reduce::kFinal45>(inLo, inHi, outLo, outHi, n);            \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(kd_reduce::kBlock)                                  \
      reduce_##OP##_r6_f32(const float* inLo, const float* inHi, float* outLo, float* outHi,      \
                           unsigned*, unsigned n) {                                                \
    kd_reduce::reduce6<kd_reduce::R>(inLo, inHi, outLo, outHi, n);                                 \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(kd_reduce::kBlock)                                  \
      reduce_##OP##_r7_f32(const float* in, float* partLo, float* partHi, unsigned* counter,      \
                           float* outLo, float* outHi, unsigned n) {                               \
    kd_reduce::reduce7<kd_reduce::R>(in, partLo, partHi, counter, outLo, outHi, n);                \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(kd_reduce::kBlock)                                  \
      reduce_segwarp_##OP##_f32(const float* src, const unsigned* offsets, float* outLo,           \
                                float* outHi, unsigned* bigList, unsigned* bigKeys, unsigned* big, \
                                unsigned nseg, unsigned n, unsigned limit, unsigned cap) {         \
    kd_reduce::seg_warp<kd_reduce::R>(src, offsets, outLo, outHi, bigList, bigKeys, big, nseg, n,  \
                                      limit, cap);                                                 \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(kd_reduce::kBlock)                                  \
      reduce_segbig_##OP##_f32(const float* src, const unsigned* offsets, float* outLo,            \
                               float* outHi, const unsigned* bigList, unsigned* bigKeys,           \
                               unsigned* big, unsigned n, unsigned cap) {                          \
    kd_reduce::seg_big<kd_reduce::R>(src, offsets, outLo, outHi, bigList, bigKeys, big, n, cap);   \
  }

KD_REDUCE_DESIGNS(min, RMin)
KD_REDUCE_DESIGNS(max, RMax)
KD_REDUCE_DESIGNS(minmax, RMinMax)

#undef KD_REDUCE_DESIGNS

// One tuning kernel: design K (0, 4 or 5) of operator R at T threads.
#define KD_REDUCE_TUNING(OP, R, K, T)                                                             \
  extern "C" __global__ void __launch_bounds__(T)                                                 \
      reduce_##OP##_r##K##_t##T##_f32(const float* inLo, const float* inHi, float* outLo,         \
                                      float* outHi, unsigned* work, unsigned n) {                 \
    KD_TUNING_BODY_##K(R, T)                                                                      \
  }
#define KD_TUNING_BODY_0(R, T)                                                                     \
  kd_reduce::reduce0<kd_reduce::R, T>(inLo, inHi, outLo, outHi,                                    \
                                      reinterpret_cast<kd_reduce::R::S*>(work), n);
#define KD_TUNING_BODY_4(R, T) (void)work; kd_reduce::reduce4<kd_reduce::R, T>(inLo, inHi, outLo, outHi, n);
#define KD_TUNING_BODY_5(R, T) (void)work; kd_reduce::reduce5<kd_reduce::R, T>(inLo, inHi, outLo, outHi, n);
// The list package reduce's TuningVariants names (keep the two in step).
#define KD_REDUCE_TUNINGS(OP, R)     \
  KD_REDUCE_TUNING(OP, R, 0, 128)    \
  KD_REDUCE_TUNING(OP, R, 0, 512)    \
  KD_REDUCE_TUNING(OP, R, 4, 64)     \
  KD_REDUCE_TUNING(OP, R, 4, 128)    \
  KD_REDUCE_TUNING(OP, R, 4, 512)    \
  KD_REDUCE_TUNING(OP, R, 5, 128)

KD_REDUCE_TUNINGS(min, RMin)
KD_REDUCE_TUNINGS(max, RMax)
KD_REDUCE_TUNINGS(minmax, RMinMax)

#undef KD_REDUCE_TUNINGS
#undef KD_TUNING_BODY_5
#undef KD_TUNING_BODY_4
#undef KD_TUNING_BODY_0
#undef KD_REDUCE_TUNING

// Boxes, segmented like reduce_segwarp/segbig (6 key words per big entry).
extern "C" __global__ void __launch_bounds__(kd_reduce::kBlock)
    reduce_segwarp_box_f32(const float* lx, const float* ly, const float* lz, const float* hx,
                           const float* hy, const float* hz, const unsigned* offsets, float* out,
                           unsigned* bigList, unsigned* bigKeys, unsigned* big, unsigned nseg,
                           unsigned n, unsigned limit, unsigned cap) {
  using namespace kd_reduce;
  const BoxArrays a = {{lx, ly, lz, hx, hy, hz}};
  const unsigned lane = threadIdx.x & 31;
  const unsigned w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  if (w >= nseg) return;  // uniform over the warp
  unsigned lo, len;
  segment(offsets, w, n, lo, len);
  if (len > limit) {  // uniform over the warp
    const unsigned k = list_long(w, lane, bigList, big, cap);
    if (k < cap) {
      if (lane == 0) {
        const Box id = box_identity();
        for (int j = 0; j < 6; j++) bigKeys[6 * (size_t)k + j] = id.k[j];
      }
      return;
    }
  }
  Box v = box_identity();
  for (unsigned i = lane; i < len; i += 32) v = box_combine(v, box_load(a, lo + i));
  v = box_warp_reduce(v);
  if (lane == 0) box_store(out, w, v);
}

extern "C" __global__ void __launch_bounds__(kd_reduce::kBlock)
    reduce_segbig_box_f32(const float* lx, const float* ly, const float* lz, const float* hx,
                          const float* hy, const float* hz, const unsigned* offsets, float* out,
                          const unsigned* bigList, unsigned* bigKeys, unsigned* big, unsigned n,
                          unsigned cap) {
  using namespace kd_reduce;
  __shared__ bool amLast;
  const BoxArrays a = {{lx, ly, lz, hx, hy, hz}};
  const unsigned count = min(__ldcg(big), cap);
  if (count == 0) return;
  for (unsigned k = 0; k < count; k++) {
    unsigned lo, len, vb, bf;
    segment(offsets, __ldcg(bigList + k), n, lo, len);
    if (big_share(k, len, vb, bf)) {  // uniform over the block
      Box v = box_identity();
      for (unsigned i = vb * kBlock + threadIdx.x; i < len; i += bf * kBlock) v = box_combine(v, box_load(a, lo + i));
      v = box_block_reduce(v);
      if (threadIdx.x == 0) {
        unsigned* p = bigKeys + 6 * (size_t)k;
        for (int j = 0; j < 3; j++) {
          atomicMin(p + j, v.k[j]);
          atomicMax(p + 3 + j, v.k[3 + j]);
        }
      }
      __syncthreads();
    }
  }
  if (threadIdx.x == 0) {
    __threadfence();
    amLast = atomicAdd(big + 1, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!amLast) return;
  __threadfence();
  for (unsigned k = threadIdx.x; k < count; k += kBlock) {
    Box b;
    for (int j = 0; j < 6; j++) b.k[j] = __ldcg(bigKeys + 6 * (size_t)k + j);
    box_store(out, __ldcg(bigList + k), b);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    big[0] = 0u;
    big[1] = 0u;
  }
}

// Per-axis min and max of n floats stored x0 y0 z0 x1 … in one pass. The
// block size (384) and the grid stride are multiples of 3, so thread t only
// ever reads axis t % 3; the shared-memory tree keeps strides multiples of 3
// (then 6 in the last block, over the 6 results of every block).
extern "C" __global__ void __launch_bounds__(kd_reduce::kBoundsBlock)
    reduce_bounds_f32(const float* __restrict__ xyz, float* part, unsigned* counter, float* out,
                      unsigned n) {
  using namespace kd_reduce;
  __shared__ unsigned sLo[kBoundsBlock], sHi[kBoundsBlock];
  __shared__ bool amLast;
  const unsigned tid = threadIdx.x;
  const unsigned stride = gridDim.x * kBoundsBlock;
  unsigned lo = kMinId, hi = kMaxId;
  unsigned i = blockIdx.x * kBoundsBlock + tid;
  for (; i + 3u * stride < n; i += 4u * stride) {
    const float a = xyz[i], b = xyz[i + stride], c = xyz[i + 2u * stride], d = xyz[i + 3u * stride];
    lo = min(min(lo, min_key(a)), min(min_key(b), min(min_key(c), min_key(d))));
    hi = max(max(hi, max_key(a)), max(max_key(b), max(max_key(c), max_key(d))));
  }
  for (; i < n; i += stride) {
    const float a = xyz[i];
    lo = min(lo, min_key(a));
    hi = max(hi, max_key(a));
  }
  sLo[tid] = lo;
  sHi[tid] = hi;
  __syncthreads();
#pragma unroll
  for (unsigned s = kBoundsBlock / 2; s >= 3; s /= 2) {  // 192, 96, …, 3: multiples of 3
    if (tid < s) {
      sLo[tid] = min(sLo[tid], sLo[tid + s]);
      sHi[tid] = max(sHi[tid], sHi[tid + s]);
    }
    __syncthreads();
  }
  if (tid == 0) {
    for (int j = 0; j < 3; j++) {
      part[6 * blockIdx.x + j] = min_result(sLo[j]);
      part[6 * blockIdx.x + 3 + j] = max_result(sHi[j]);
    }
    __threadfence();
    const unsigned ticket = atomicAdd(counter, 1u);
    amLast = ticket == gridDim.x - 1;
  }
  __syncthreads();
  if (!amLast) return;  // uniform over the block
  __threadfence();
  // Thread t folds component j = t % 6 of the block results t/6, t/6 + 64, …
  const unsigned j = tid % 6;
  unsigned k = j < 3 ? kMinId : kMaxId;
  for (unsigned b = tid / 6; b < gridDim.x; b += kBoundsBlock / 6) {
    const float v = __ldcg(part + 6 * b + j);
    k = j < 3 ? min(k, min_key(v)) : max(k, max_key(v));
  }
  sLo[tid] = k;
  __syncthreads();
#pragma unroll
  for (unsigned s = kBoundsBlock / 2; s >= 6; s /= 2) {  // 192, 96, …, 6: multiples of 6
    if (tid < s) sLo[tid] = j < 3 ? min(sLo[tid], sLo[tid + s]) : max(sLo[tid], sLo[tid + s]);
    __syncthreads();
  }
  if (tid < 6) out[tid] = tid < 3 ? min_result(sLo[tid]) : max_result(sLo[tid]);
  if (tid == 0) *counter = 0u;
}

// Interleaved (AoS) boxes, segmented: element i is boxes[6i … 6i+5] (lo x,
// y, z, hi x, y, z); out gets 6 floats per segment. Two launches, as the
// SoA box kernels, but the long segments are cut into tiles of kAosTile
// elements that the second launch spreads evenly over its grid:
//   reduce_segwarp_boxaos_f32: one warp per segment of at most `limit`
//       elements; a longer one is listed (bigList[k] = segment, 6 key words
//       at bigKeys[6k] set to the identity), reserves its tiles
//       [tileBase[k], tileBase[k] + tiles) of the tile counter big[2] and
//       writes tileOwner[tile] = k for each.
//   reduce_segbig_boxaos_f32: block b takes a contiguous run of the tiles,
//       folds the tiles of one owner in registers, adds them to the owner's
//       key words with atomics when the owner changes; the last block to
//       finish (big[1]) writes the listed segments' results and sets big[0],
//       big[1], big[2] back to 0.
// With invalid (overlapping) offsets the list or the tile array may be
// full: such a segment is reduced by its warp; stale tile owners are
// checked against the list and the segment's length (a tile read twice does
// not change a min or a max).
extern "C" __global__ void __launch_bounds__(kd_reduce::kBlock)
    reduce_segwarp_boxaos_f32(const float* __restrict__ boxes, const unsigned* __restrict__ offsets,
                              float* out, unsigned* bigList, unsigned* bigKeys, unsigned* tileBase,
                              unsigned* tileOwner, unsigned* big, unsigned nseg, unsigned n,
                              unsigned limit, unsigned cap, unsigned tileCap) {
  using namespace kd_reduce;
  const unsigned lane = threadIdx.x & 31;
  const unsigned w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  if (w >= nseg) return;  // uniform over the warp
  unsigned lo, len;
  segment(offsets, w, n, lo, len);
  if (len > limit) {  // uniform over the warp
    const unsigned tiles = (len + kAosTile - 1) / kAosTile;
    unsigned k = cap, tb = 0;
    if (lane == 0) {
      tb = atomicAdd(big + 2, tiles);
      if (tb <= tileCap && tiles <= tileCap - tb) {
        k = atomicAdd(big, 1u);
        if (k < cap) {
          bigList[k] = w;
          tileBase[k] = tb;
          const Box id = box_identity();
          for (int j = 0; j < 6; j++) bigKeys[6 * (size_t)k + j] = id.k[j];
        } else {
          k = cap;
        }
      }
    }
    k = __shfl_sync(kFull, k, 0);
    tb = __shfl_sync(kFull, tb, 0);
    if (k < cap) {
      for (unsigned i = lane; i < tiles; i += 32) tileOwner[tb + i] = k;
      return;
    }
  }
  const bool aligned = ((size_t)boxes & 7) == 0;
  const AosRoute rt = aos_route<32>(lane);
  Box v = box_identity();
  aos_range<32>(v, boxes + 6 * (size_t)lo, 0, 3 * len, aligned, lane, rt);
  v = box_warp_reduce(v);
  if (lane == 0) box_store(out, w, v);
}

extern "C" __global__ void __launch_bounds__(kd_reduce::kBlock)
    reduce_segbig_boxaos_f32(const float* __restrict__ boxes, const unsigned* __restrict__ offsets,
                             float* out, const unsigned* bigList, unsigned* bigKeys,
                             const unsigned* tileBase, const unsigned* tileOwner, unsigned* big,
                             unsigned n, unsigned cap, unsigned tileCap) {
  using namespace kd_reduce;
  __shared__ bool amLast;
  const unsigned count = min(__ldcg(big), cap);
  if (count == 0) {  // nothing listed: only a full tile array can have counted tiles
    if (blockIdx.x == 0 && threadIdx.x == 0) big[2] = 0u;
    return;
  }
  const unsigned tiles = min(__ldcg(big + 2), tileCap);
  const unsigned G = gridDim.x;
  const unsigned t0 = (unsigned)(((unsigned long long)blockIdx.x * tiles) / G);
  const unsigned t1 = (unsigned)(((unsigned long long)(blockIdx.x + 1) * tiles) / G);
  const bool aligned = ((size_t)boxes & 7) == 0;
  const AosRoute rt = aos_route<kBlock>(threadIdx.x);
  Box acc = box_identity();
  unsigned cur = cap;  // owner whose tiles acc holds
  for (unsigned t = t0; t < t1; t++) {
    // Every value below is the same in all threads: the branches are uniform.
    const unsigned k = __ldcg(tileOwner + t);
    if (k >= count) continue;
    unsigned lo, len;
    segment(offsets, __ldcg(bigList + k), n, lo, len);
    const unsigned ti = t - __ldcg(tileBase + k);
    if (ti >= (len + kAosTile - 1) / kAosTile) continue;
    if (k != cur) {
      if (cur < cap) {
        acc = box_block_reduce(acc);
        if (threadIdx.x == 0) {
          unsigned* p = bigKeys + 6 * (size_t)cur;
          for (int j = 0; j < 3; j++) {
            atomicMin(p + j, acc.k[j]);
            atomicMax(p + 3 + j, acc.k[3 + j]);
          }
        }
        __syncthreads();  // box_block_reduce's shared memory is used again
      }
      acc = box_identity();
      cur = k;
    }
    const unsigned q0 = 3 * ti * kAosTile;
    aos_range<kBlock>(acc, boxes + 6 * (size_t)lo, q0, min(3 * len, q0 + 3 * kAosTile), aligned,
                      threadIdx.x, rt);
  }
  if (cur < cap) {
    acc = box_block_reduce(acc);
    if (threadIdx.x == 0) {
      unsigned* p = bigKeys + 6 * (size_t)cur;
      for (int j = 0; j < 3; j++) {
        atomicMin(p + j, acc.k[j]);
        atomicMax(p + 3 + j, acc.k[3 + j]);
      }
    }
  }
  if (threadIdx.x == 0) {
    __threadfence();
    amLast = atomicAdd(big + 1, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!amLast) return;  // uniform over the block
  __threadfence();
  for (unsigned k = threadIdx.x; k < count; k += kBlock) {
    Box b;
    for (int j = 0; j < 6; j++) b.k[j] = __ldcg(bigKeys + 6 * (size_t)k + j);
    box_store(out, __ldcg(bigList + k), b);
  }
  __syncthreads();  // every thread has read the count and the list
  if (threadIdx.x == 0) {
    big[0] = 0u;
    big[1] = 0u;
    big[2] = 0u;
  }
}

// Segmented box forms of the designs (the thesis table on the kd-tree
// builder's node-bounds reductions; package reduce, thesis.go). Elements are
// interleaved boxes (6 floats); a block list gives every block its span:
// blocks[4b] = first element, blocks[4b+1] = count (at most the design's
// span: 256 elements for r0–r3, 512 for r4, r5, kBoxSpan67 for r6, r7),
// blocks[4b+2] = segment (r7 only). Block b writes box b of out (6 floats).
// The host runs the same design again over the per-block boxes, with a new
// list, until one box per segment remains.
//   reduce_box_r<k>_f32(const float* in, const unsigned* blocks, float* out, unsigned* work)
//     k = 0 … 6; work: 128 boxes (768 words) per block, r0 and r1 only.
//   reduce_box_r7_f32(in, blocks, part, segFirst, counters, out)
//     one launch per level: block b writes part box b and counts itself on
//     counters[segment]; the segment's last block (segFirst[s] …
//     segFirst[s+1] are its blocks) reduces their boxes, writes out box s
//     and sets its counter back to 0.
#define KD_BOX_DESIGN(K, T, WORK)                                                                  \
  extern "C" __global__ void __launch_bounds__(T)                                                 \
      reduce_box_r##K##_f32(const float* in, const unsigned* blocks, float* out, unsigned* work) { \
    kd_reduce::reduce##K<kd_reduce::RBox>(in, nullptr, out, nullptr WORK, 0u, blocks);             \
  }
#define KD_WORK , reinterpret_cast<kd_reduce::Box*>(work)
KD_BOX_DESIGN(0, kd_reduce::kThreads03, KD_WORK)
KD_BOX_DESIGN(1, kd_reduce::kThreads03, KD_WORK)
KD_BOX_DESIGN(2, kd_reduce::kThreads03, )
KD_BOX_DESIGN(3, kd_reduce::kThreads03, )
KD_BOX_DESIGN(4, kd_reduce::kThreads45, )
KD_BOX_DESIGN(5, kd_reduce::kThreads45, )
#undef KD_WORK
#undef KD_BOX_DESIGN

extern "C" __global__ void __launch_bounds__(kd_reduce::kBlock)
    reduce_box_r6_f32(const float* in, const unsigned* blocks, float* out, unsigned*) {
  using namespace kd_reduce;
  const unsigned start = __ldg(blocks + 4 * (size_t)blockIdx.x), count = __ldg(blocks + 4 * (size_t)blockIdx.x + 1);
  Box v = box_identity();
  aos_range<kBlock>(v, in + 6 * (size_t)start, 0, 3 * count, ((size_t)in & 7) == 0, threadIdx.x,
                    aos_route<kBlock>(threadIdx.x));
  v = box_block_reduce(v);
  if (threadIdx.x == 0) box_store(out, blockIdx.x, v);
}

extern "C" __global__ void __launch_bounds__(kd_reduce::kBlock)
    reduce_box_r7_f32(const float* in, const unsigned* blocks, float* part, const unsigned* segFirst,
                      unsigned* counters, float* out) {
  using namespace kd_reduce;
  __shared__ bool amLast;
  const unsigned* e = blocks + 4 * (size_t)blockIdx.x;
  const unsigned start = __ldg(e), count = __ldg(e + 1), seg = __ldg(e + 2);
  Box v = box_identity();
  aos_range<kBlock>(v, in + 6 * (size_t)start, 0, 3 * count, ((size_t)in & 7) == 0, threadIdx.x,
                    aos_route<kBlock>(threadIdx.x));
  v = box_block_reduce(v);
  const unsigned first = __ldg(segFirst + seg), nblk = __ldg(segFirst + seg + 1) - first;
  if (threadIdx.x == 0) {
    box_store(part, blockIdx.x, v);
    __threadfence();
    amLast = atomicAdd(counters + seg, 1u) == nblk - 1;
  }
  __syncthreads();
  if (!amLast) return;  // uniform over the block
  __threadfence();
  Box w = box_identity();
  for (unsigned b = threadIdx.x; b < nblk; b += kBlock) {
    const float* row = part + 6 * (size_t)(first + b);
    Box r;
#pragma unroll
    for (int j = 0; j < 3; j++) {
      r.k[j] = min_key(__ldcg(row + j));
      r.k[3 + j] = max_key(__ldcg(row + 3 + j));
    }
    w = box_combine(w, r);
  }
  w = box_block_reduce(w);
  if (threadIdx.x == 0) {
    box_store(out, seg, w);
    counters[seg] = 0u;
  }
}
