// compact.cu: stream compaction. compact_fused_u32 is one single-pass kernel
// (the production scan's tile loop over 0/1 flags, scattering the kept items
// as their offsets become known); the three-kernel form (flags, production
// scan, scatter) is compact_flags_u32 + scan_excl_production_u32 +
// compact_scatter_u32.
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

// Tuning variants of compact_fused_staged_u32 (scan/doc.go, "tuning"): the
// same contract, grid = ceil(n/tile) blocks of the tiling's threads, state
// zeroed (8*(grid+1) bytes):
//   compact_fused_staged_bid_wide_u32  TilingPB32 (256 x 32, tile numbers from blockIdx.x), the run
//                                      written as uint4 stores (IoCompactStagedWide)
//   compact_fused_staged_24_u32        256 x 24 (tile 6144), 5 blocks per SM
#define KD_COMPACT_STAGED(NAME, CFG, THREADS, MINB, IO, EXTRA)                                                 \
	extern "C" __global__ void __launch_bounds__(THREADS, KD_MIN_BLOCKS_C(MINB))                           \
	    NAME(const unsigned *src, const unsigned *flags, unsigned *dst, unsigned long long n,              \
	         unsigned long long cap, unsigned long long *state, unsigned *count) {                         \
		using Cfg = CFG;                                                                               \
		__shared__ uint4 s_stage4[(Cfg::kTile + EXTRA) / 4];                                           \
		kd_scan::IO<Cfg::kStream> io(src, flags, dst, cap, reinterpret_cast<unsigned *>(s_stage4));    \
		kd_scan::tile_scan<kd_scan::Add<unsigned>, Cfg>(io, n, state, count);                          \
	}
namespace kd_scan {
using TilingCS24 = TT<256, 24, 5>;
} // namespace kd_scan
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
#define KD_MIN_BLOCKS_C(n) ((n) > 4 ? 4 : (n))
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 890)
#define KD_MIN_BLOCKS_C(n) ((n) > 6 ? 6 : (n))
#else
#define KD_MIN_BLOCKS_C(n) (n)
#endif
KD_COMPACT_STAGED(compact_fused_staged_bid_wide_u32, kd_scan::TilingPB32, 256, 4, IoCompactStagedWide, 4)
KD_COMPACT_STAGED(compact_fused_staged_24_u32, kd_scan::TilingCS24, 256, 5, IoCompactStaged, 0)
#undef KD_COMPACT_STAGED
#undef KD_MIN_BLOCKS_C

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

// compact_fused_async_u32 (the default compaction, "fused-async") and its
// tuning variants compact_fused_async_<shape>_u32 (scan/tuning.go):
// compact_fused_staged_u32's contract with kd_scan::IoCompactAsync; grid =
// ceil(n/tile) blocks of 256 threads, state zeroed (8*(grid+1) bytes). The
// default: 256 x 16 items (tile 4096, 24 KiB of shared memory, 8 blocks per
// SM), tile numbers from blockIdx.x, early ranks (IoCompactAsync's Early).
// Tuning: 16: 256 x 16 with the ticket and late ranks; 24bid: 256 x 24 (tile
// 6144, 36 KiB, 5 blocks per SM), blockIdx.x, late ranks; nobackoff: the
// default polling the look-back state without __nanosleep; 8x512: the
// default with 512 threads x 8 items (4 blocks per SM).
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
using TilingCA16 = TT<256, 16, 8>;
using TilingCA24B = TB<256, 24, 5>;
using TilingCA16B = TB<256, 16, 8>;
using TilingCA16BN = Tiling<256, 16, 8, false, true, false>;
using TilingCA8x512 = TB<512, 8, 4>;
} // namespace kd_scan
// Blocks per SM the shared memory allows: 2 before sm_80 (96 or 64 KiB) and
// on sm_86/sm_89 (100 KiB), else the tiling's own.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 800 || __CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 890)
#define KD_ASYNC_MINB(n) 2
#else
#define KD_ASYNC_MINB(n) (n)
#endif
KD_COMPACT_ASYNC(compact_fused_async_16_u32, kd_scan::TilingCA16, KD_ASYNC_MINB(8), false)
KD_COMPACT_ASYNC(compact_fused_async_u32, kd_scan::TilingCA16B, KD_ASYNC_MINB(8), true)
KD_COMPACT_ASYNC(compact_fused_async_24bid_u32, kd_scan::TilingCA24B, KD_ASYNC_MINB(5), false)
KD_COMPACT_ASYNC(compact_fused_async_nobackoff_u32, kd_scan::TilingCA16BN, KD_ASYNC_MINB(8), true)
KD_COMPACT_ASYNC(compact_fused_async_8x512_u32, kd_scan::TilingCA8x512, KD_ASYNC_MINB(4), true)
#undef KD_ASYNC_MINB
#undef KD_COMPACT_ASYNC

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
