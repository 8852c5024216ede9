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
//   compact_fused_staged_bid_u32       TilingPB32 (256 x 32, tile numbers from blockIdx.x)
//   compact_fused_staged_wide_u32      TilingP32, the run written as uint4 stores (IoCompactStagedWide)
//   compact_fused_staged_bid_wide_u32  TilingPB32, uint4 stores
//   compact_fused_staged_16_u32        256 x 16 (tile 4096), 6 blocks per SM
//   compact_fused_staged_24_u32        256 x 24 (tile 6144), 5 blocks per SM
//   compact_fused_staged_16x512_u32    512 x 16 (tile 8192), 2 blocks per SM
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
using TilingCS16 = TT<256, 16, 6>;
using TilingCS24 = TT<256, 24, 5>;
using TilingCS16x512 = TT<512, 16, 2>;
} // namespace kd_scan
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
#define KD_MIN_BLOCKS_C(n) ((n) > 4 ? 4 : (n))
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 890)
#define KD_MIN_BLOCKS_C(n) ((n) > 6 ? 6 : (n))
#else
#define KD_MIN_BLOCKS_C(n) (n)
#endif
KD_COMPACT_STAGED(compact_fused_staged_bid_u32, kd_scan::TilingPB32, 256, 4, IoCompactStaged, 0)
KD_COMPACT_STAGED(compact_fused_staged_wide_u32, kd_scan::TilingP32, 256, 4, IoCompactStagedWide, 4)
KD_COMPACT_STAGED(compact_fused_staged_bid_wide_u32, kd_scan::TilingPB32, 256, 4, IoCompactStagedWide, 4)
KD_COMPACT_STAGED(compact_fused_staged_16_u32, kd_scan::TilingCS16, 256, 6, IoCompactStaged, 0)
KD_COMPACT_STAGED(compact_fused_staged_24_u32, kd_scan::TilingCS24, 256, 5, IoCompactStaged, 0)
KD_COMPACT_STAGED(compact_fused_staged_16x512_u32, kd_scan::TilingCS16x512, 512, 2, IoCompactStaged, 0)
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
