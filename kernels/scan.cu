// scan.cu: prefix sums. The production scan and the segmented scan are one
// single-pass kernel each (decoupled look-back, scan.cuh); the other
// variants are the teaching versions of the seed write-ups, kept selectable
// by name: Hillis–Steele and Blelloch in global memory, and per-block scans
// in shared memory with recursively scanned block sums.
//
// Contract of every scan: integers add modulo 2^32 (int32 uses the u32
// kernels: same bits), float32 adds in the variant's order. Lengths are
// unsigned long long; all index arithmetic is 64-bit.
#include "scan.cuh"

namespace kd_scan {

__device__ __forceinline__ unsigned long long gidx() {
	return (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ unsigned long long gstride() { return (unsigned long long)gridDim.x * blockDim.x; }

template <class Cfg, typename V, bool kInclusive>
__device__ __forceinline__ void production(const V *src, V *dst, unsigned long long n, unsigned long long *state,
                                           unsigned *total) {
	IoScan<Add<V>, V, kInclusive, Cfg::kStream> io(src, nullptr, dst);
	tile_scan<Add<V>, Cfg>(io, n, state, total);
}

template <class Cfg, typename V, bool kInclusive>
__device__ __forceinline__ void segmented(const V *src, const unsigned *heads, V *dst, unsigned long long n,
                                          unsigned long long *state) {
	IoScan<SegAdd<V>, V, kInclusive, Cfg::kStream> io(src, heads, dst);
	tile_scan<SegAdd<V>, Cfg>(io, n, state, nullptr);
}

// tile_starts: tile_seg[t] = the first s with offsets[s] >= t*tile (s =
// nentries if none), for t < tiles: one binary search per tile, so that the
// time stays bounded whatever the segments look like (one huge segment
// spanning every tile included). offsets must be non-decreasing; if not, the
// results are still in [0, nentries].
__device__ __forceinline__ void tile_starts(const unsigned *offsets, unsigned long long nentries, unsigned *tile_seg,
                                            unsigned long long tiles, unsigned long long tile,
                                            unsigned long long *state) {
	if (state != nullptr && gidx() == 0) state[0] = 0ull;
	for (unsigned long long t = gidx(); t < tiles; t += gstride()) {
		if (state != nullptr) state[1 + t] = 0ull;
		const unsigned long long key = t * tile;
		unsigned long long lo = 0, hi = nentries;
		while (lo < hi) {
			const unsigned long long mid = (lo + hi) / 2;
			if ((unsigned long long)offsets[mid] < key)
				lo = mid + 1;
			else
				hi = mid;
		}
		tile_seg[t] = (unsigned)lo;
	}
}

// The segmented v2 tiling: 16 items (the (head, value) pairs take twice the
// registers), polling with backoff, streaming hints; its kernels are bounded
// to 4 blocks per SM (at most 64 registers); every tile prefetches into the
// L2 the rows 4 tiles per SM ahead (Tiling's Ahead: 64 KiB per SM, as the
// production-bid scan's 2 tiles of 8192).
using TilingSegV2 = Tiling<256, 16, 4, true, true, true, 4>;
// TilingSegBid (SegV2 with the tile numbers from blockIdx.x, the offsets
// form) is in scan.cuh: split.cu prepares that scan's tiles.

// Hillis–Steele, global memory. init: out = src (inclusive) or src shifted
// right by one with 0 in front (exclusive); step: out[i] = in[i] + in[i-d].
template <typename V>
__device__ __forceinline__ void naive_init(const V *src, V *out, unsigned long long n, int inclusive) {
	for (unsigned long long i = gidx(); i < n; i += gstride())
		out[i] = inclusive ? src[i] : (i > 0 ? src[i - 1] : V(0));
}
template <typename V>
__device__ __forceinline__ void naive_step(const V *in, V *out, unsigned long long n, unsigned long long d) {
	for (unsigned long long i = gidx(); i < n; i += gstride()) out[i] = i >= d ? in[i - d] + in[i] : in[i];
}

// Blelloch, global memory, over a[0, m) with m a power of two.
// load: a = src padded with zeros to m.
template <typename V>
__device__ __forceinline__ void we_load(const V *src, V *a, unsigned long long n, unsigned long long m) {
	for (unsigned long long i = gidx(); i < m; i += gstride()) a[i] = i < n ? src[i] : V(0);
}
// Up-sweep level with stride s (= 2^(d+1)): a[k+s-1] += a[k+s/2-1] for
// k a multiple of s. The "all" forms run m threads and test k % s; the
// "threads" forms run m/s threads, thread j taking k = j*s.
template <typename V> __device__ __forceinline__ void we_up_at(V *a, unsigned long long k, unsigned long long s) {
	a[k + s - 1] += a[k + s / 2 - 1];
}
template <typename V> __device__ __forceinline__ void we_down_at(V *a, unsigned long long k, unsigned long long s) {
	V t = a[k + s / 2 - 1];
	a[k + s / 2 - 1] = a[k + s - 1];
	a[k + s - 1] += t;
}
// finish: dst = a (exclusive) or a + src (inclusive); dst may be src.
template <typename V>
__device__ __forceinline__ void we_finish(const V *a, const V *src, V *dst, unsigned long long n, int inclusive) {
	for (unsigned long long i = gidx(); i < n; i += gstride()) dst[i] = inclusive ? a[i] + src[i] : a[i];
}

// Shared-memory block scans over blocks of kBlockItems items: each writes
// its block's scan to out (exclusive or inclusive) and the block total to
// sums[block]; scan_add then adds the scanned block sums back.
constexpr int kBlockItems = 512;

// Hillis–Steele in shared memory: 512 threads, one item each, two buffers.
template <typename V>
__device__ __forceinline__ void block_naive(const V *in, V *out, V *sums, unsigned long long n, int inclusive) {
	__shared__ V buf[2][kBlockItems];
	const int t = threadIdx.x;
	const unsigned long long i = (unsigned long long)blockIdx.x * kBlockItems + t;
	const V x = i < n ? in[i] : V(0);
	buf[0][t] = x;
	__syncthreads();
	int cur = 0;
	for (int d = 1; d < kBlockItems; d <<= 1) {
		V v = buf[cur][t];
		if (t >= d) v += buf[cur][t - d];
		buf[cur ^ 1][t] = v;
		__syncthreads();
		cur ^= 1;
	}
	const V incl = buf[cur][t];
	if (i < n) out[i] = inclusive ? incl : incl - x;
	if (t == kBlockItems - 1) sums[blockIdx.x] = incl;
}

// The exclusive form above subtracts (exact for integers; for float32 the
// Hillis–Steele shared variant uses the shifted input instead).
template <>
__device__ __forceinline__ void block_naive<float>(const float *in, float *out, float *sums, unsigned long long n,
                                                   int inclusive) {
	__shared__ float buf[2][kBlockItems];
	__shared__ float last;
	const int t = threadIdx.x;
	const unsigned long long i = (unsigned long long)blockIdx.x * kBlockItems + t;
	const float x = i < n ? in[i] : 0.0f;
	if (t == kBlockItems - 1) last = x;
	// Exclusive: scan the input shifted right by one.
	float v0 = x;
	if (!inclusive) {
		unsigned long long j = i - 1;
		v0 = (t > 0 && j < n) ? in[j] : 0.0f;
	}
	buf[0][t] = v0;
	__syncthreads();
	int cur = 0;
	for (int d = 1; d < kBlockItems; d <<= 1) {
		float v = buf[cur][t];
		if (t >= d) v += buf[cur][t - d];
		buf[cur ^ 1][t] = v;
		__syncthreads();
		cur ^= 1;
	}
	const float r = buf[cur][t];
	if (i < n) out[i] = r;
	if (t == kBlockItems - 1) sums[blockIdx.x] = inclusive ? r : r + last;
}

// Blelloch in shared memory: 256 threads, two items each, with one pad word
// every 32 so that the tree's strided accesses fall in distinct banks.
__device__ __forceinline__ int pad(int i) { return i + (i >> 5); }

template <typename V>
__device__ __forceinline__ void block_we(const V *in, V *out, V *sums, unsigned long long n, int inclusive) {
	__shared__ V s[kBlockItems + kBlockItems / 32];
	const int t = threadIdx.x;
	const unsigned long long base = (unsigned long long)blockIdx.x * kBlockItems;
	const int a = t, b = t + kBlockItems / 2;
	const V xa = base + a < n ? in[base + a] : V(0);
	const V xb = base + b < n ? in[base + b] : V(0);
	s[pad(a)] = xa;
	s[pad(b)] = xb;
	// Up-sweep.
	int off = 1;
	for (int d = kBlockItems >> 1; d > 0; d >>= 1) {
		__syncthreads();
		if (t < d) {
			int ai = off * (2 * t + 1) - 1, bi = off * (2 * t + 2) - 1;
			s[pad(bi)] += s[pad(ai)];
		}
		off <<= 1;
	}
	__syncthreads();
	if (t == 0) {
		sums[blockIdx.x] = s[pad(kBlockItems - 1)];
		s[pad(kBlockItems - 1)] = V(0);
	}
	// Down-sweep.
	for (int d = 1; d < kBlockItems; d <<= 1) {
		off >>= 1;
		__syncthreads();
		if (t < d) {
			int ai = off * (2 * t + 1) - 1, bi = off * (2 * t + 2) - 1;
			V tmp = s[pad(ai)];
			s[pad(ai)] = s[pad(bi)];
			s[pad(bi)] += tmp;
		}
	}
	__syncthreads();
	if (base + a < n) out[base + a] = inclusive ? s[pad(a)] + xa : s[pad(a)];
	if (base + b < n) out[base + b] = inclusive ? s[pad(b)] + xb : s[pad(b)];
}

// scan_add: out[i] += sums[i / kBlockItems].
template <typename V> __device__ __forceinline__ void add_sums(V *out, const V *sums, unsigned long long n) {
	for (unsigned long long i = gidx(); i < n; i += gstride()) out[i] += sums[i / kBlockItems];
}

// Segment heads from offsets: heads[offsets[s]] = 1 for offsets below n
// (heads zeroed before).
__device__ __forceinline__ void heads_from_offsets(const unsigned *offsets, unsigned long long nseg, unsigned *heads,
                                                   unsigned long long n) {
	for (unsigned long long s = gidx(); s < nseg; s += gstride()) {
		unsigned o = offsets[s];
		if (o < n) heads[o] = 1u;
	}
}

} // namespace kd_scan

// ---- production: single pass, decoupled look-back -------------------------
// scan_{excl,incl}_<family>_{u32,f32}, all 256 threads per block, grid =
// ceil(n/tile) blocks:
//   production     kd_scan::TilingP32, tile 8192
//   productionbid  TilingPBA2, tile 8192: production with the tile number
//                  from blockIdx.x instead of an atomic ticket, bounded to
//                  3 blocks per SM (<= 80 registers), prefetching into the
//                  L2 the rows 2 tiles per SM ahead (Tiling's Ahead: on an
//                  H200 0.60 ms at 2^28 against 0.70 without)
//   production24   TilingP24, tile 6144
//   production16   TilingP16, tile 4096
//   production_v1  TilingV1, tile 4096 (the first production kernel)
// state: 8*(grid+1) zeroed bytes; total: null, or where the last block
// writes the sum of all n items (bits).

#define KD_PRODUCTION(NAME, CFG, BOUNDS, V, INCL)                                                              \
	extern "C" __global__ void BOUNDS NAME(const V *src, V *dst, unsigned long long n,                     \
	                                       unsigned long long *state, unsigned *total) {                   \
		kd_scan::production<CFG, V, INCL>(src, dst, n, state, total);                                  \
	}
#define KD_PRODUCTION4(FAMILY, CFG, BOUNDS)                                                                    \
	KD_PRODUCTION(scan_excl_##FAMILY##_u32, CFG, BOUNDS, unsigned, false)                                  \
	KD_PRODUCTION(scan_incl_##FAMILY##_u32, CFG, BOUNDS, unsigned, true)                                   \
	KD_PRODUCTION(scan_excl_##FAMILY##_f32, CFG, BOUNDS, float, false)                                     \
	KD_PRODUCTION(scan_incl_##FAMILY##_f32, CFG, BOUNDS, float, true)
// KD_MIN_BLOCKS caps a __launch_bounds__ blocks-per-SM hint at what the
// target can hold (1024 resident threads on sm_75, 1536 on sm_86/sm_89), so
// that ptxas does not warn and ignore it there; sm_70, sm_80 and sm_90 take
// the hint as written.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
#define KD_MIN_BLOCKS(n) ((n) > 4 ? 4 : (n))
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 890)
#define KD_MIN_BLOCKS(n) ((n) > 6 ? 6 : (n))
#else
#define KD_MIN_BLOCKS(n) (n)
#endif
KD_PRODUCTION4(production, kd_scan::TilingP32, __launch_bounds__(256, 4))
KD_PRODUCTION4(productionbid, kd_scan::TilingPBA2, __launch_bounds__(256, 3))
KD_PRODUCTION4(production24, kd_scan::TilingP24, __launch_bounds__(256, KD_MIN_BLOCKS(5)))
KD_PRODUCTION4(production16, kd_scan::TilingP16, __launch_bounds__(256, KD_MIN_BLOCKS(8)))
KD_PRODUCTION4(production_v1, kd_scan::TilingV1, __launch_bounds__(256))
// Tuning variants of productionbid (scan/doc.go, "tuning"; tile numbers
// from blockIdx.x, backoff, streaming uint4 loads and stores), grid =
// ceil(n/tile) blocks of the tiling's threads:
//   productionbid_32x4    256 x 32, tile 8192, 4 blocks per SM (<= 64 registers)
//   productionbid_24      256 x 24, tile 6144, 5 blocks per SM (<= 48 registers)
//   productionbid_noahead productionbid without the L2 prefetch (TilingPB32x3)
//   productionbid_ahead1, _ahead3, _ahead6: productionbid prefetching the
//                         rows 1, 3 or 6 tiles per SM ahead into the L2
//                         (3 is one wave of resident blocks)
namespace kd_scan {
using TilingPB24 = TB<256, 24, 5>;
using TilingPBA1 = TBA<256, 32, 3, 1>;
using TilingPBA3 = TBA<256, 32, 3, 3>;
using TilingPBA6 = TBA<256, 32, 3, 6>;
} // namespace kd_scan
KD_PRODUCTION4(productionbid_32x4, kd_scan::TilingPB32, __launch_bounds__(256, 4))
KD_PRODUCTION4(productionbid_24, kd_scan::TilingPB24, __launch_bounds__(256, KD_MIN_BLOCKS(5)))
KD_PRODUCTION4(productionbid_noahead, kd_scan::TilingPB32x3, __launch_bounds__(256, 3))
KD_PRODUCTION4(productionbid_ahead1, kd_scan::TilingPBA1, __launch_bounds__(256, 3))
KD_PRODUCTION4(productionbid_ahead3, kd_scan::TilingPBA3, __launch_bounds__(256, 3))
KD_PRODUCTION4(productionbid_ahead6, kd_scan::TilingPBA6, __launch_bounds__(256, 3))
#undef KD_PRODUCTION4
#undef KD_PRODUCTION

// ---- segmented: the same kernel with the (head, value) operator -----------
// segscan_{excl,incl}_{u32,f32} (v2, the default): TilingSegV2, 4096-item
// tiles, at most 64 registers; segscan_{excl,incl}_v1_{u32,f32}: TilingV1.
// Both: grid = ceil(n/4096) blocks of 256 threads, state as above.

#define KD_SEGSCAN(NAME, CFG, BOUNDS, V, INCL)                                                                   \
	extern "C" __global__ void BOUNDS NAME(                                \
	    const V *src, const unsigned *heads, V *dst, unsigned long long n, unsigned long long *state) {    \
		kd_scan::segmented<CFG, V, INCL>(src, heads, dst, n, state);                                   \
	}
KD_SEGSCAN(segscan_excl_u32, kd_scan::TilingSegV2, __launch_bounds__(256, 4), unsigned, false)
KD_SEGSCAN(segscan_incl_u32, kd_scan::TilingSegV2, __launch_bounds__(256, 4), unsigned, true)
KD_SEGSCAN(segscan_excl_f32, kd_scan::TilingSegV2, __launch_bounds__(256, 4), float, false)
KD_SEGSCAN(segscan_incl_f32, kd_scan::TilingSegV2, __launch_bounds__(256, 4), float, true)
KD_SEGSCAN(segscan_excl_v1_u32, kd_scan::TilingV1, __launch_bounds__(256), unsigned, false)
KD_SEGSCAN(segscan_incl_v1_u32, kd_scan::TilingV1, __launch_bounds__(256), unsigned, true)
KD_SEGSCAN(segscan_excl_v1_f32, kd_scan::TilingV1, __launch_bounds__(256), float, false)
KD_SEGSCAN(segscan_incl_v1_f32, kd_scan::TilingV1, __launch_bounds__(256), float, true)
#undef KD_SEGSCAN

// ---- segmented, offsets form ----------------------------------------------
// segscan_off_{excl,incl}_{u32,f32}: the segmented scan with the segments
// given by their starts (offsets: nentries non-decreasing words; an offset
// >= n starts nothing), reading the values and the offsets only.
// TilingSegBid: TilingSegV2 with the tile numbers from blockIdx.x (on an
// H200 at 2^28 0.75 ms against 0.79 with the ticket); 4096-item tiles; grid = ceil(n/4096) blocks of 256 threads, state as
// above; tile_seg: ceil(n/4096) words from segscan_tile_starts with tile =
// 4096 over the same offsets.
#define KD_SEGSCAN_OFF(NAME, V, INCL)                                                                         \
	extern "C" __global__ void __launch_bounds__(256, 4)                                                   \
	    NAME(const V *src, const unsigned *offsets, const unsigned *tile_seg, unsigned long long nentries, \
	         V *dst, unsigned long long n, unsigned long long *state) {                                    \
		kd_pdl_enter(); /* kd-tree levels launch it between dependent launches */                           \
		kd_scan::segmented_offsets<kd_scan::TilingSegBid, V, INCL>(src, offsets, tile_seg, nentries, dst, \
		                                                           n, state);                          \
	}
KD_SEGSCAN_OFF(segscan_off_excl_u32, unsigned, false)
KD_SEGSCAN_OFF(segscan_off_incl_u32, unsigned, true)
KD_SEGSCAN_OFF(segscan_off_excl_f32, float, false)
KD_SEGSCAN_OFF(segscan_off_incl_f32, float, true)
#undef KD_SEGSCAN_OFF
// Tuning variants of segscan_off_excl_u32 (scan/tuning.go, the segscan
// bench): the same contract and launch, other tilings of 256 x 16 items:
//   segscan_off_ticket_excl_u32 tile numbers from the ticket (TilingSegV2)
//   segscan_off_bida2_excl_u32  blockIdx.x, Ahead 2
//   segscan_off_a8_excl_u32     the ticket, Ahead 8
namespace kd_scan {
using TilingSegBidA2 = Tiling<256, 16, 4, true, true, false, 2>;
using TilingSegA8 = Tiling<256, 16, 4, true, true, true, 8>;
} // namespace kd_scan
#define KD_SEGSCAN_OFF_T(NAME, CFG)                                                                            \
	extern "C" __global__ void __launch_bounds__(256, 4)                                                   \
	    NAME(const unsigned *src, const unsigned *offsets, const unsigned *tile_seg,                       \
	         unsigned long long nentries, unsigned *dst, unsigned long long n, unsigned long long *state) {  \
		kd_scan::segmented_offsets<CFG, unsigned, false>(src, offsets, tile_seg, nentries, dst, n, state);   \
	}
KD_SEGSCAN_OFF_T(segscan_off_ticket_excl_u32, kd_scan::TilingSegV2)
KD_SEGSCAN_OFF_T(segscan_off_bida2_excl_u32, kd_scan::TilingSegBidA2)
KD_SEGSCAN_OFF_T(segscan_off_a8_excl_u32, kd_scan::TilingSegA8)
#undef KD_SEGSCAN_OFF_T

// segscan_tile_starts: tile_seg[t] = min{s : offsets[s] >= t*tile} (or
// nentries) for t < tiles; grid-stride over the tiles. state: null, or the
// look-back state of the segscan_off launch that follows (tiles + 1
// words), which it zeroes, so that no memset is needed before that launch.
extern "C" __global__ void segscan_tile_starts(const unsigned *offsets, unsigned long long nentries,
                                               unsigned *tile_seg, unsigned long long tiles,
                                               unsigned long long tile, unsigned long long *state) {
	kd_scan::tile_starts(offsets, nentries, tile_seg, tiles, tile, state);
}

// segscan_heads_from_offsets: heads[offsets[s]] = 1 (s < nseg, offsets[s] < n).
extern "C" __global__ void segscan_heads_from_offsets(const unsigned *offsets, unsigned long long nseg,
                                                      unsigned *heads, unsigned long long n) {
	kd_scan::heads_from_offsets(offsets, nseg, heads, n);
}

// ---- naive (Hillis–Steele in global memory), grid-stride ------------------

extern "C" __global__ void scan_naive_init_u32(const unsigned *src, unsigned *out, unsigned long long n, int inclusive) {
	kd_scan::naive_init(src, out, n, inclusive);
}
extern "C" __global__ void scan_naive_init_f32(const float *src, float *out, unsigned long long n, int inclusive) {
	kd_scan::naive_init(src, out, n, inclusive);
}
extern "C" __global__ void scan_naive_step_u32(const unsigned *in, unsigned *out, unsigned long long n,
                                               unsigned long long d) {
	kd_scan::naive_step(in, out, n, d);
}
extern "C" __global__ void scan_naive_step_f32(const float *in, float *out, unsigned long long n, unsigned long long d) {
	kd_scan::naive_step(in, out, n, d);
}

// ---- work-efficient (Blelloch in global memory) ---------------------------

extern "C" __global__ void scan_we_load_u32(const unsigned *src, unsigned *a, unsigned long long n,
                                            unsigned long long m) {
	kd_scan::we_load(src, a, n, m);
}
extern "C" __global__ void scan_we_load_f32(const float *src, float *a, unsigned long long n, unsigned long long m) {
	kd_scan::we_load(src, a, n, m);
}
extern "C" __global__ void scan_we_finish_u32(const unsigned *a, const unsigned *src, unsigned *dst,
                                              unsigned long long n, int inclusive) {
	kd_scan::we_finish(a, src, dst, n, inclusive);
}
extern "C" __global__ void scan_we_finish_f32(const float *a, const float *src, float *dst, unsigned long long n,
                                              int inclusive) {
	kd_scan::we_finish(a, src, dst, n, inclusive);
}

// "work-efficient": m threads per level (k = thread index, acting when k % s == 0).
#define KD_WE_ALL(T, V)                                                                                        \
	extern "C" __global__ void scan_we_up_##T(V *a, unsigned long long m, unsigned long long s) {          \
		for (unsigned long long k = kd_scan::gidx(); k < m; k += kd_scan::gstride())                   \
			if (k % s == 0) kd_scan::we_up_at(a, k, s);                                            \
	}                                                                                                      \
	extern "C" __global__ void scan_we_down_##T(V *a, unsigned long long m, unsigned long long s) {        \
		for (unsigned long long k = kd_scan::gidx(); k < m; k += kd_scan::gstride())                   \
			if (k % s == 0) kd_scan::we_down_at(a, k, s);                                          \
	}                                                                                                      \
	extern "C" __global__ void scan_we_up_threads_##T(V *a, unsigned long long m, unsigned long long s) {  \
		for (unsigned long long j = kd_scan::gidx(); j < m / s; j += kd_scan::gstride())               \
			kd_scan::we_up_at(a, j * s, s);                                                        \
	}                                                                                                      \
	extern "C" __global__ void scan_we_down_threads_##T(V *a, unsigned long long m, unsigned long long s) { \
		for (unsigned long long j = kd_scan::gidx(); j < m / s; j += kd_scan::gstride())               \
			kd_scan::we_down_at(a, j * s, s);                                                      \
	}
KD_WE_ALL(u32, unsigned)
KD_WE_ALL(f32, float)
#undef KD_WE_ALL

// ---- shared-memory block scans (512 items per block) ----------------------

extern "C" __global__ void __launch_bounds__(512) scan_block_naive_u32(const unsigned *in, unsigned *out,
                                                                        unsigned *sums, unsigned long long n,
                                                                        int inclusive) {
	kd_scan::block_naive(in, out, sums, n, inclusive);
}
extern "C" __global__ void __launch_bounds__(512) scan_block_naive_f32(const float *in, float *out, float *sums,
                                                                        unsigned long long n, int inclusive) {
	kd_scan::block_naive(in, out, sums, n, inclusive);
}
extern "C" __global__ void __launch_bounds__(256) scan_block_we_u32(const unsigned *in, unsigned *out,
                                                                     unsigned *sums, unsigned long long n,
                                                                     int inclusive) {
	kd_scan::block_we(in, out, sums, n, inclusive);
}
extern "C" __global__ void __launch_bounds__(256) scan_block_we_f32(const float *in, float *out, float *sums,
                                                                     unsigned long long n, int inclusive) {
	kd_scan::block_we(in, out, sums, n, inclusive);
}
extern "C" __global__ void scan_add_sums_u32(unsigned *out, const unsigned *sums, unsigned long long n) {
	kd_scan::add_sums(out, sums, n);
}
extern "C" __global__ void scan_add_sums_f32(float *out, const float *sums, unsigned long long n) {
	kd_scan::add_sums(out, sums, n);
}

// scan_copy_u32: dst[i] = src[i] for 32-bit words (any 4-byte type).
extern "C" __global__ void scan_copy_u32(unsigned *dst, const unsigned *src, unsigned long long n) {
	for (unsigned long long i = kd_scan::gidx(); i < n; i += kd_scan::gstride()) dst[i] = src[i];
}
