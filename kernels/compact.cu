// compact.cu: stream compaction. compact_fused_u32 is one single-pass kernel
// (the production scan's tile loop over 0/1 flags, scattering the kept items
// as their offsets become known); the three-kernel form (flags, production
// scan, scatter) is compact_flags_u32 + scan_excl_production_u32 +
// compact_scatter_u32.
#include "consts_gen.cuh"
#include "scan.cuh"

// compact_fused_u32 (v2, the default), compact_fused_staged_u32 and
// compact_fused_v1_u32: for i < n with flags[i] != 0, in order, dst[k++] =
// src[i] while k < cap; *count = the number kept (all of them, even beyond
// cap). grid = ceil(n/8192) (v2 and staged, kd_scan::TilingP32) or
// ceil(n/4096) (v1, TilingV1) blocks of 256 threads, state zeroed
// (8*(grid+1) bytes). dst must not overlap src or flags. n < 2^32. The
// staged kernel gathers a tile's kept items in shared memory and writes
// them as one coalesced run (kd_scan::IoCompactT).
#define KD_COMPACT_FUSED(NAME, CFG, BOUNDS)                                                                    \
	extern "C" __global__ void BOUNDS NAME(const unsigned *src, const unsigned *flags, unsigned *dst,      \
	                                       unsigned long long n, unsigned long long cap,                   \
	                                       unsigned long long *state, unsigned *count) {                   \
		kd_scan::IoCompact<CFG::kStream> io(src, flags, dst, cap);                                     \
		kd_scan::tile_scan<kd_scan::Add<unsigned>, CFG>(io, n, state, count);                          \
	}
KD_COMPACT_FUSED(compact_fused_u32, kd_scan::TilingP32, __launch_bounds__(256, 4))
KD_COMPACT_FUSED(compact_fused_v1_u32, kd_scan::TilingV1, __launch_bounds__(256))
#undef KD_COMPACT_FUSED

extern "C" __global__ void __launch_bounds__(256, 4)
    compact_fused_staged_u32(const unsigned *src, const unsigned *flags, unsigned *dst, unsigned long long n,
                             unsigned long long cap, unsigned long long *state, unsigned *count) {
	using Cfg = kd_scan::TilingP32;
	__shared__ unsigned s_stage[Cfg::kTile];
	kd_scan::IoCompactStaged<Cfg::kStream> io(src, flags, dst, cap, s_stage);
	kd_scan::tile_scan<kd_scan::Add<unsigned>, Cfg>(io, n, state, count);
}

// compact_fused_prefetch_u32: the staged kernel with each item's value
// loaded together with its flag at the start of the tile (kd_scan::
// IoCompactPre), 256 x 16 items (kd_scan::TilingCP16): grid = ceil(n/4096)
// blocks of 256 threads, state zeroed (8*(grid+1) bytes); otherwise as
// compact_fused_staged_u32.
extern "C" __global__ void __launch_bounds__(256, 4)
    compact_fused_prefetch_u32(const unsigned *src, const unsigned *flags, unsigned *dst, unsigned long long n,
                               unsigned long long cap, unsigned long long *state, unsigned *count) {
	using Cfg = kd_scan::TilingCP16;
	__shared__ unsigned s_stage[Cfg::kTile];
	kd_scan::IoCompactPre<Cfg> io(src, flags, dst, cap, s_stage);
	kd_scan::tile_scan<kd_scan::Add<unsigned>, Cfg>(io, n, state, count);
}

// IoCompactAsync: the staged compaction with the tile's values copied to
// shared memory at the start of the tile, next to the flag loads, by
// asynchronous copies (cp.async, sm_80 and later: no registers held, the
// copies overlap the flag loads, the scan and the look-back; plain loads
// before sm_80, and in a partial or unaligned tile). Instead of the kept
// values the store phase records, for the tile's k-th kept item, its place
// in the tile (idx[k], 16 bits), and finish writes dst[carry + k] =
// vals[idx[k]] with consecutive threads on consecutive words. Shared memory:
// 6 bytes per tile item.
// Early (kEarly): tile_scan gives store_row the prefixes inside the tile
// before the look-back (EarlyRanks), so the places are recorded while warp
// 0 looks back, and finish writes with streaming stores (__stcs).
namespace kd_scan {
template <class Cfg, bool Early = false> struct IoCompactAsync {
	using Op = Add<unsigned>;
	using P = Op::P;
	static constexpr bool kStaged = true;
	static constexpr bool kMarks = false;
	static constexpr bool kPrefetch = true;
	static constexpr bool kEarly = Early;
	static_assert(Cfg::kTile <= 65536, "16-bit tile places");
	IoCompactT<Cfg::kStream, false> c; // flag loads
	unsigned *vals;                    // kTile words, 16-byte aligned
	unsigned short *idx;               // kTile places
	unsigned long long base;           // items kept before the tile

	__device__ __forceinline__ IoCompactAsync(const unsigned *s, const unsigned *f, unsigned *d,
	                                          unsigned long long cap, unsigned *v, unsigned short *ix)
	    : c(s, f, d, cap), vals(v), idx(ix), base(0) {}

	__device__ __forceinline__ void prefetch(int, unsigned long long i, bool full, unsigned long long n) {
		const unsigned at = (unsigned)(i % (unsigned long long)Cfg::kTile);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
		if (full && c.vec) {
			const unsigned s = (unsigned)__cvta_generic_to_shared(vals + at);
			asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(c.src + i) : "memory");
			return;
		}
#endif
#pragma unroll
		for (int k = 0; k < 4; k++) vals[at + k] = i + k < n ? c.src[i + k] : 0u;
	}
	__device__ __forceinline__ void load(unsigned long long i, bool full, unsigned long long n, P x[4]) const {
		c.load(i, full, n, x);
	}
	// settle: every thread waits for its own copies (Early: called before
	// the barrier after the look-back, which publishes them and the places).
	__device__ __forceinline__ void settle() const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
		asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
	}
	// begin runs after the look-back, before the store phase; without
	// Early it waits for the copies (the barrier before finish publishes
	// them).
	__device__ __forceinline__ void begin(unsigned carry) {
		if constexpr (!Early) settle();
		base = carry;
	}
	__device__ __forceinline__ void store_row(int, unsigned long long i, bool, unsigned long long, const P ex[4],
	                                          const P in[4]) const {
		if (in[3].v == ex[0].v) return; // none of the four is kept (items beyond n never are)
		const unsigned at = (unsigned)(i % (unsigned long long)Cfg::kTile);
#pragma unroll
		for (int k = 0; k < 4; k++)
			if (in[k].v != ex[k].v) idx[ex[k].v - (Early ? 0u : (unsigned)base)] = (unsigned short)(at + k);
	}
	__device__ __forceinline__ void finish(unsigned count, int tid, int threads) const {
		for (unsigned j = tid; j < count; j += threads) {
			const unsigned long long k = base + j;
			if (k < c.cap) {
				if constexpr (Early)
					__stcs(c.dst + k, vals[idx[j]]);
				else
					c.dst[k] = vals[idx[j]];
			}
		}
	}
};
} // namespace kd_scan

// compact_fused_async_u32 ("fused-async") and its tuning variants
// compact_fused_async_<shape>_u32 (scan/tuning.go): compact_fused_staged_u32's
// contract with kd_scan::IoCompactAsync; grid = ceil(n/tile) blocks of 256
// threads, state zeroed (8*(grid+1) bytes). fused-async: 256 x 16 items
// (tile 4096, 24 KiB of shared memory, 8 blocks per SM), tile numbers from
// blockIdx.x, early ranks (IoCompactAsync's Early). Tuning: 24bid: 256 x 24
// (tile 6144, 36 KiB, 5 blocks per SM), late ranks; nobackoff: fused-async
// polling the look-back state without __nanosleep.
#define KD_COMPACT_ASYNC(NAME, CFG, MINB, EARLY)                                                                \
	extern "C" __global__ void __launch_bounds__(CFG::kThreads, MINB)                                        \
	    NAME(const unsigned *src, const unsigned *flags, unsigned *dst, unsigned long long n,               \
	         unsigned long long cap, unsigned long long *state, unsigned *count) {                          \
		using Cfg = CFG;                                                                                \
		__shared__ uint4 s_vals4[Cfg::kTile / 4];                                                       \
		__shared__ unsigned short s_idx[Cfg::kTile];                                                    \
		kd_scan::IoCompactAsync<Cfg, EARLY> io(src, flags, dst, cap, reinterpret_cast<unsigned *>(s_vals4), s_idx); \
		kd_scan::tile_scan<kd_scan::Add<unsigned>, Cfg>(io, n, state, count);                           \
	}
namespace kd_scan {
using TilingCA24B = TB<256, 24, 5>;
using TilingCA16B = TB<256, 16, 8>;
using TilingCA16BN = Tiling<256, 16, 8, false, true, false>;
} // namespace kd_scan
// Blocks per SM the shared memory allows: 2 before sm_80 (96 or 64 KiB) and
// on sm_86/sm_89 (100 KiB), else the tiling's own.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 800 || __CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 890)
#define KD_ASYNC_MINB(n) 2
#else
#define KD_ASYNC_MINB(n) (n)
#endif
KD_COMPACT_ASYNC(compact_fused_async_u32, kd_scan::TilingCA16B, KD_ASYNC_MINB(8), true)
KD_COMPACT_ASYNC(compact_fused_async_24bid_u32, kd_scan::TilingCA24B, KD_ASYNC_MINB(5), false)
KD_COMPACT_ASYNC(compact_fused_async_nobackoff_u32, kd_scan::TilingCA16BN, KD_ASYNC_MINB(8), true)
#undef KD_ASYNC_MINB
#undef KD_COMPACT_ASYNC

// ---- mask: flags as bits, a scan of chunk counts, a gather ----------------
// The compaction in three launches with no look-back in the passes over the
// data: compact_mask_u32 reads the flags once and writes one bit per item
// and the number kept per chunk; the production scan turns the counts into
// each chunk's first output place (and the total); compact_gather_u32 reads
// the bits and the values and writes each chunk's kept items there. The
// bits cost n/8 bytes written and read again (1/32 of the flags), against
// the single-pass kernels' look-back waits and block barriers.
//
// A chunk is one warp's kMaskChunk = 1024 consecutive items, 8 rows of 128:
// in row r lane l holds items r*128 + 4l .. r*128 + 4l + 3 (one uint4), and
// mask word 4r + k of the chunk has bit l set when item r*128 + 4l + k is
// kept (the row's four ballots). Items at or beyond n are never kept.
namespace kd_scan {
constexpr int kMaskRows = 8;
constexpr int kMaskChunk = 128 * kMaskRows;
constexpr int kMaskWarps = kd_const::kMaskWarps; // chunks (warps) per block of 256 threads
__device__ __forceinline__ unsigned lane_of(uint4 q, int k) { return k == 0 ? q.x : k == 1 ? q.y : k == 2 ? q.z : q.w; }
// load_row: the four items of lane at i (i = a row's base + 4*lane), zero
// beyond n; vec: the chunk is whole and p 16-byte aligned.
__device__ __forceinline__ uint4 load_row(const unsigned *p, unsigned long long i, unsigned long long n, bool vec) {
	if (vec) return __ldcs(reinterpret_cast<const uint4 *>(p + i));
	return make_uint4(i < n ? p[i] : 0u, i + 1 < n ? p[i + 1] : 0u, i + 2 < n ? p[i + 2] : 0u,
	                  i + 3 < n ? p[i + 3] : 0u);
}
} // namespace kd_scan

// compact_mask_u32: for every chunk c < nchunks = ceil(n/1024), mask[32c ..
// 32c + 31] = its kept bits (layout above: kept = flags[i] != 0) and
// counts[c] = how many it keeps. grid = ceil(nchunks/8) blocks of 256.
extern "C" __global__ void __launch_bounds__(256) compact_mask_u32(const unsigned *flags, unsigned long long n,
                                                                   unsigned *mask, unsigned *counts) {
	using namespace kd_scan;
	const int lane = threadIdx.x & 31;
	const unsigned long long chunk = (unsigned long long)blockIdx.x * kMaskWarps + (threadIdx.x >> 5);
	const unsigned long long base = chunk * kMaskChunk;
	if (base >= n) return; // the whole warp
	const bool vec = base + kMaskChunk <= n && aligned16(flags);
	uint4 q[kMaskRows];
#pragma unroll
	for (int r = 0; r < kMaskRows; r++) q[r] = load_row(flags, base + r * 128 + 4 * lane, n, vec);
	unsigned word = 0, total = 0;
#pragma unroll
	for (int r = 0; r < kMaskRows; r++)
#pragma unroll
		for (int k = 0; k < 4; k++) {
			const unsigned b = __ballot_sync(kFull, lane_of(q[r], k) != 0u);
			total += __popc(b);
			if (lane == 4 * r + k) word = b;
		}
	mask[chunk * 32 + lane] = word;
	if (lane == 0) counts[chunk] = total;
}

// compact_gather_u32: for every chunk c (as compact_mask_u32), its kept
// items, in order, to dst[offs[c] + j] for those places below cap; offs:
// the exclusive scan of compact_mask_u32's counts. grid = ceil(nchunks/8)
// blocks of 256 threads. dst must not overlap src. Rows that keep nothing
// are not read; the kept items are gathered in shared memory (4 KiB per
// warp) and written as one run with streaming stores.
extern "C" __global__ void __launch_bounds__(256) compact_gather_u32(const unsigned *src, const unsigned *mask,
                                                                     const unsigned *offs, unsigned *dst,
                                                                     unsigned long long n, unsigned long long cap) {
	using namespace kd_scan;
	__shared__ unsigned s_out[kMaskWarps][kMaskChunk];
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const unsigned long long chunk = (unsigned long long)blockIdx.x * kMaskWarps + warp;
	const unsigned long long base = chunk * kMaskChunk;
	if (base >= n) return; // the whole warp
	const unsigned word = mask[chunk * 32 + lane];
	const unsigned long long off = offs[chunk];
	const bool vec = base + kMaskChunk <= n && aligned16(src);
	const unsigned busy = __ballot_sync(kFull, word != 0u); // bit 4r + k: word 4r + k keeps something
	uint4 q[kMaskRows];
#pragma unroll
	for (int r = 0; r < kMaskRows; r++)
		q[r] = ((busy >> (4 * r)) & 15u) ? load_row(src, base + r * 128 + 4 * lane, n, vec) : make_uint4(0u, 0u, 0u, 0u);
	const unsigned below = (1u << lane) - 1u; // lanes before this one
	unsigned run = 0;                         // kept items of the chunk's earlier rows
	unsigned *out = s_out[warp];
#pragma unroll
	for (int r = 0; r < kMaskRows; r++) {
		unsigned w[4], at = run;
#pragma unroll
		for (int k = 0; k < 4; k++) {
			w[k] = __shfl_sync(kFull, word, 4 * r + k);
			at += __popc(w[k] & below);
			run += __popc(w[k]);
		}
#pragma unroll
		for (int k = 0; k < 4; k++)
			if ((w[k] >> lane) & 1u) out[at++] = lane_of(q[r], k);
	}
	__syncwarp();
	for (unsigned j = lane; j < run; j += 32) {
		const unsigned long long d = off + j;
		if (d < cap) __stcs(dst + d, out[j]);
	}
}

// compact_flags_u32: out[i] = flags[i] != 0 (0 or 1).
extern "C" __global__ void compact_flags_u32(const unsigned *flags, unsigned *out, unsigned long long n) {
	for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (unsigned long long)gridDim.x * blockDim.x)
		out[i] = flags[i] != 0u ? 1u : 0u;
}

// compact_scatter_u32: dst[pos[i]] = src[i] where flags[i] != 0 and
// pos[i] < cap (pos: exclusive scan of the 0/1 flags).
extern "C" __global__ void compact_scatter_u32(const unsigned *src, const unsigned *flags, const unsigned *pos,
                                               unsigned *dst, unsigned long long n, unsigned long long cap) {
	for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += (unsigned long long)gridDim.x * blockDim.x)
		if (flags[i] != 0u && pos[i] < cap) dst[pos[i]] = src[i];
}
