// scan.cuh: building blocks of the scan family (scan.cu, compact.cu,
// sort.cu): the sum operators, warp scans over any operator, and the
// single-pass tile scan with decoupled look-back that the production scan,
// the segmented scan and the fused compaction are made of.
#pragma once
#include <type_traits>

// kd_pdl_enter starts a kernel that the host may launch as a programmatic
// dependent launch (cuda.Context.LaunchDependent): it lets the kernel after
// it in the stream be scheduled now (its blocks then wait in their own
// kd_pdl_enter), and waits until the kernel before it has ended and its
// writes are visible. Every thread calls it before it reads or writes
// global memory. Before sm_90, and for an ordinary launch, it does
// nothing that waits.
__device__ __forceinline__ void kd_pdl_enter() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
	asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// kd_pdl_exit: a kernel launched as a programmatic dependent launch that
// does not read what the kernel before it writes (so that it runs beside
// it, without kd_pdl_enter's wait) calls this before it ends: it waits
// for that kernel to end, so that the work queued after this one still
// comes after both.
__device__ __forceinline__ void kd_pdl_exit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

namespace kd_scan {

constexpr unsigned kFull = 0xffffffffu;

// Tiling of the single-pass kernels: Threads threads, Items items each
// (a multiple of 4); inside a tile warp w owns the 32*Items consecutive
// items [w*32*Items, (w+1)*32*Items), which it reads in Items/4 rows of 128
// (lane l holds items r*128 + 4l .. r*128 + 4l + 3 of row r), so every row
// is one coalesced 512-byte access (one uint4 per lane). Backoff: a look-back
// lane that finds its predecessor not yet published sleeps kBackoffNs before
// polling again (as CUB's Hopper tuning does), so that spinning warps do not
// compete with the loads, stores and status writes for the memory system.
// Stream: full-tile uint4 loads and stores carry evict-first hints
// (__ldcs/__stcs): every item is touched once.
// Ticket: a block takes its tile number from an atomic counter (true), so
// that tiles start in number order whatever the hardware's block order; or
// it uses blockIdx.x (false), as CUB does, relying on the hardware starting
// blocks in index order (which look-back needs for progress: a block waits
// only for lower-numbered ones), and saving the atomic and a barrier at the
// start of every tile, before its loads can issue.
// Ahead (> 0, sm_80 and later): while a tile loads, one lane in eight also
// asks the L2 to fetch the same rows Ahead x (SM count) tiles further on
// (prefetch.global.L2, through Io::ahead), so that the memory keeps
// streaming while blocks scan, look back and store, and the loads of the
// later tile hit the L2.
template <int Threads, int Items, int MinBlocks, bool Backoff, bool Stream, bool Ticket = true, int Ahead = 0>
struct Tiling {
	static constexpr int kThreads = Threads;
	static constexpr int kItems = Items;
	static constexpr int kTile = Threads * Items;
	static constexpr int kWarps = Threads / 32;
	static constexpr int kWarpSpan = 32 * Items;
	static constexpr int kRows = Items / 4;
	static constexpr int kMinBlocks = MinBlocks; // the kernels' __launch_bounds__ blocks per SM (written out there)
	static constexpr bool kBackoff = Backoff;
	static constexpr bool kStream = Stream;
	static constexpr bool kTicket = Ticket;
	static constexpr int kAhead = Ahead;
	static_assert(Items % 4 == 0 && Items <= 32 && Threads % 32 == 0, "tiling");
};
// v1: the first production kernel (256 x 16, busy polling, default caching;
// 39-48 registers: 6 or 5 blocks, 24576 or 20480 items in flight per SM).
using TilingV1 = Tiling<256, 16, 1, false, false>;
// The v2 tilings, all polling with backoff and streaming hints. P32 (the
// default production scan and fused compaction): 256 x 32, bounded to 4
// blocks per SM (<= 64 registers): 32768 items in flight per SM and half
// v1's tiles (look-backs, tile atomics, barriers). P24: 256 x 24, 5 blocks
// (<= 48 registers), 30720 items. P16: v1's tile, 8 blocks (<= 32
// registers), 32768 items.
using TilingP32 = Tiling<256, 32, 4, true, true>;
using TilingP24 = Tiling<256, 24, 5, true, true>;
using TilingP16 = Tiling<256, 16, 8, true, true>;
// PB32: P32 with the tile number from blockIdx.x (no ticket); PB32x3: the
// same bounded to 3 blocks per SM (the production-bid scan).
using TilingPB32 = Tiling<256, 32, 4, true, true, false>;
using TilingPB32x3 = Tiling<256, 32, 3, true, true, false>;
// PBA2: PB32x3 prefetching 2 tiles per SM ahead into the L2 (Ahead).
using TilingPBA2 = Tiling<256, 32, 3, true, true, false, 2>;
// Tuning tilings (scan.cu, compact.cu: the "tuning" variants, measured
// against the defaults; scan/doc.go lists them). TB<Threads, Items,
// MinBlocks>: blockIdx.x tile numbers (no ticket); TT: with the ticket.
template <int Threads, int Items, int MinBlocks> using TB = Tiling<Threads, Items, MinBlocks, true, true, false>;
template <int Threads, int Items, int MinBlocks> using TT = Tiling<Threads, Items, MinBlocks, true, true, true>;
// TBA: TB prefetching Ahead tiles per SM into the L2.
template <int Threads, int Items, int MinBlocks, int Ahead>
using TBA = Tiling<Threads, Items, MinBlocks, true, true, false, Ahead>;
// CP16: the prefetching compaction (IoCompactPre): 256 x 16 items (the
// items' values are held in registers from the start: 16 + 16 words),
// bounded to 4 blocks per SM (<= 64 registers).
using TilingCP16 = Tiling<256, 16, 4, true, true>;
constexpr unsigned kBackoffNs = 128;

// The v1 constants (the Go side's prodTile and ScratchBytes use the 4096-item
// tile, the smallest: an upper bound on the look-back words of every tiling).
constexpr int kThreads = TilingV1::kThreads;
constexpr int kItems = TilingV1::kItems;
constexpr int kTile = TilingV1::kTile;

// Look-back state of one tile, one 64-bit word so that a single load sees
// status and value together: bits 63..62 status, bit 32 "the tile holds a
// segment head" (segmented operator only), bits 31..0 the value's bits.
// state[0] of the state array is the tile counter (low 32 bits); tile t's
// word is state[1 + t]. The whole array is zeroed before every scan.
constexpr unsigned long long kInvalid = 0ull;
constexpr unsigned long long kAggregate = 1ull << 62;
constexpr unsigned long long kPrefix = 2ull << 62;
constexpr unsigned long long kHeadBit = 1ull << 32;

// KD_SCAN_PUBLISH_PREFIX(tile) says whether a tile publishes its inclusive
// prefix after its look-back. Always on the GPU; a CPU emulation of the
// kernels (blocks one after another) withholds some prefixes so that the
// look-back must walk back over aggregates and across windows.
#ifndef KD_SCAN_PUBLISH_PREFIX
#define KD_SCAN_PUBLISH_PREFIX(tile) true
#endif

__device__ __forceinline__ unsigned bits_of(unsigned v) { return v; }
__device__ __forceinline__ unsigned bits_of(float v) { return __float_as_uint(v); }
template <typename V> __device__ __forceinline__ V from_bits(unsigned b);
template <> __device__ __forceinline__ unsigned from_bits<unsigned>(unsigned b) { return b; }
template <> __device__ __forceinline__ float from_bits<float>(unsigned b) { return __uint_as_float(b); }

// Add: plain sums. Integer sums wrap modulo 2^32 (unsigned arithmetic).
template <typename V> struct Add {
	struct P {
		V v;
	};
	static __device__ __forceinline__ P identity() { return P{V(0)}; }
	static __device__ __forceinline__ P make(V v, unsigned /*head*/) { return P{v}; }
	// combine(a, b): a covers the items before b's.
	static __device__ __forceinline__ P combine(P a, P b) { return P{a.v + b.v}; }
	static __device__ __forceinline__ P shfl(P x, int src) { return P{__shfl_sync(kFull, x.v, src)}; }
	static __device__ __forceinline__ P shfl_up(P x, int d) { return P{__shfl_up_sync(kFull, x.v, d)}; }
	static __device__ __forceinline__ P shfl_down(P x, int d) { return P{__shfl_down_sync(kFull, x.v, d)}; }
	static __device__ __forceinline__ unsigned long long pack(P x) { return bits_of(x.v); }
	static __device__ __forceinline__ P unpack(unsigned long long w) { return P{from_bits<V>((unsigned)w)}; }
	static __device__ __forceinline__ bool head(P) { return false; }
};

// SegAdd: sums restarted at heads. A pair (h, v) stands for a run of items:
// h says whether a head lies in the run, v is the sum since the last head
// (or the run's start). combine is associative and not commutative.
template <typename V> struct SegAdd {
	struct P {
		unsigned h;
		V v;
	};
	static __device__ __forceinline__ P identity() { return P{0u, V(0)}; }
	static __device__ __forceinline__ P make(V v, unsigned head) { return P{head != 0u ? 1u : 0u, v}; }
	static __device__ __forceinline__ P combine(P a, P b) { return P{a.h | b.h, b.h ? b.v : a.v + b.v}; }
	static __device__ __forceinline__ P shfl(P x, int src) {
		return P{__shfl_sync(kFull, x.h, src), __shfl_sync(kFull, x.v, src)};
	}
	static __device__ __forceinline__ P shfl_up(P x, int d) {
		return P{__shfl_up_sync(kFull, x.h, d), __shfl_up_sync(kFull, x.v, d)};
	}
	static __device__ __forceinline__ P shfl_down(P x, int d) {
		return P{__shfl_down_sync(kFull, x.h, d), __shfl_down_sync(kFull, x.v, d)};
	}
	static __device__ __forceinline__ unsigned long long pack(P x) {
		return (unsigned long long)bits_of(x.v) | (x.h ? kHeadBit : 0ull);
	}
	static __device__ __forceinline__ P unpack(unsigned long long w) {
		return P{(w & kHeadBit) ? 1u : 0u, from_bits<V>((unsigned)w)};
	}
	static __device__ __forceinline__ bool head(P x) { return x.h != 0u; }
};

// warp_inclusive: inclusive scan of x over the 32 lanes (all lanes active).
template <class Op>
__device__ __forceinline__ typename Op::P warp_inclusive(typename Op::P x, int lane) {
#pragma unroll
	for (int d = 1; d < 32; d <<= 1) {
		typename Op::P o = Op::shfl_up(x, d);
		if (lane >= d) x = Op::combine(o, x);
	}
	return x;
}

// Ordered 64-bit accesses to the look-back state: volatile, so that spins
// re-read memory and stores are not held back; one aligned 64-bit access is
// single-copy atomic, so status and value are always seen together.
__device__ __forceinline__ unsigned long long load_state(const unsigned long long *p) {
	return *(const volatile unsigned long long *)p;
}
__device__ __forceinline__ void store_state(unsigned long long *p, unsigned long long w) {
	*(volatile unsigned long long *)p = w;
}

// lookback (warp 0 of the block owning tile > 0, all lanes): the combination
// of every tile before it. Lane l inspects tile end-l of a 32-tile window,
// waiting until that tile has published something; the window is reduced
// up to the nearest tile that has published its inclusive prefix (or, for
// the segmented operator, holds a head: nothing before it matters); if there
// is none the next window further back is examined. Tiles before this one
// took their numbers from the counter earlier, so their blocks are resident
// and publish their aggregates without waiting on anyone: no deadlock.
template <class Op, bool kBackoff>
__device__ __forceinline__ typename Op::P lookback(const unsigned long long *tiles, long long tile, int lane) {
	using P = typename Op::P;
	P acc = Op::identity();
	for (long long end = tile - 1;; end -= 32) {
		long long idx = end - lane;
		unsigned long long w = kPrefix; // before tile 0: identity prefix
		if (idx >= 0) {
			w = load_state(tiles + idx);
			while ((w >> 62) == 0ull) {
				if (kBackoff) __nanosleep(kBackoffNs);
				w = load_state(tiles + idx);
			}
		}
		P v = Op::unpack(w);
		bool stop = (w >> 62) == 2ull || Op::head(v);
		unsigned m = __ballot_sync(kFull, stop);
		int stop_lane = m ? __ffs(m) - 1 : 31;
		if (lane > stop_lane) v = Op::identity();
		// Ordered reduction: a higher lane holds an earlier tile.
#pragma unroll
		for (int d = 1; d < 32; d <<= 1) {
			P o = Op::shfl_down(v, d);
			if (lane + d < 32) v = Op::combine(o, v);
		}
		v = Op::shfl(v, 0);
		acc = Op::combine(v, acc);
		if (m) break;
	}
	return acc;
}

// row_prefixes: the inclusive (in) and exclusive (ex) prefixes of a row's
// four items x, each chunk-inclusive already, given the prefix pre of the
// items before the row.
template <class Op>
__device__ __forceinline__ void row_prefixes(typename Op::P pre, const typename Op::P x[4], typename Op::P in[4],
                                             typename Op::P ex[4]) {
#pragma unroll
	for (int k = 0; k < 4; k++) in[k] = Op::combine(pre, x[k]);
	ex[0] = pre;
#pragma unroll
	for (int k = 1; k < 4; k++) ex[k] = in[k - 1];
}

// EarlyRanks<Io>::value: Io has kEarly = true, so tile_scan hands it the
// items' prefixes inside the tile (without the carry) through store_row
// before the look-back, and no final prefixes after it; then it calls
// io.settle(), after which the Io's shared-memory data must be complete
// (the barrier after the look-back publishes it, and finish follows
// without another barrier).
template <class Io, class = void> struct EarlyRanks {
	static constexpr bool value = false;
};
template <class Io> struct EarlyRanks<Io, std::void_t<decltype(Io::kEarly)>> {
	static constexpr bool value = Io::kEarly;
};

// tile_scan: one block scans tile number atomicAdd(counter) of the n items
// that io loads and stores, with the carry from the tiles before it found by
// decoupled look-back. The grid must have exactly ceil(n / kTile) blocks of
// kThreads threads and state must be zeroed before the launch. io provides
//   load(i, full, n, P x[4]): items i..i+3 (identity beyond n);
//   store(i, full, n, excl[4], incl[4], heads): the exclusive and inclusive
//   prefixes of items i..i+3 and a bit mask of which of them are heads.
// When total is not null the block of the last tile writes the value bits of
// the combination of all n items to *total. Without the ticket, block
// tileBase + t scans tile t (tileBase > 0: the first blocks of the launch do
// other work, as in a kernel that runs two scans side by side).
template <class Op, class Cfg, class Io>
__device__ __forceinline__ void tile_scan(Io &io, unsigned long long n, unsigned long long *state, unsigned *total,
                                          unsigned tileBase = 0) {
	using P = typename Op::P;
	constexpr int kTile = Cfg::kTile, kWarps = Cfg::kWarps, kWarpSpan = Cfg::kWarpSpan, kItems = Cfg::kItems,
	              kRows = Cfg::kRows;
	__shared__ unsigned s_tile;
	__shared__ P s_warp[kWarps];
	__shared__ P s_carry;
	__shared__ P s_agg; // Io::kStaged only
	const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

	// Take the next tile number: tiles start in this order, so look-back only
	// ever waits for blocks that are already running (Cfg::kTicket; else
	// blockIdx.x, see Tiling).
	unsigned long long tile = blockIdx.x - tileBase;
	if constexpr (Cfg::kTicket) {
		if (tid == 0) s_tile = atomicAdd((unsigned *)state, 1u);
		__syncthreads();
		tile = s_tile;
	}
	const unsigned long long tile_base = tile * (unsigned long long)kTile;
	const bool full = tile_base + kTile <= n;
	const unsigned long long first = tile_base + (unsigned long long)(warp * kWarpSpan + lane * 4);

	// Load the thread's 4 rows of 4 items.
	P x[kItems];
#pragma unroll
	for (int r = 0; r < kRows; r++) {
		if constexpr (Io::kPrefetch) io.prefetch(r, first + r * 128, full, n);
		io.load(first + r * 128, full, n, &x[r * 4]);
	}
	if constexpr (Cfg::kAhead > 0) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
		unsigned nsm;
		asm("mov.u32 %0, %%nsmid;" : "=r"(nsm));
		const unsigned long long later = first + (unsigned long long)nsm * Cfg::kAhead * kTile;
		if ((lane & 7) == 0)
#pragma unroll
			for (int r = 0; r < kRows; r++)
				if (later + r * 128 < n) io.ahead(later + r * 128);
#endif
	}
	// An Io that learns the heads apart from the values (IoSegOffsets)
	// marks them now, while the value loads are still in flight.
	if constexpr (Io::kMarks) {
		io.prepare_marks(tile, n, tid);
		__syncthreads();
#pragma unroll
		for (int r = 0; r < kRows; r++) io.mark(first + r * 128, &x[r * 4]);
	}
	unsigned heads = 0;
#pragma unroll
	for (int i = 0; i < kItems; i++)
		if (Op::head(x[i])) heads |= 1u << i;

	// Inclusive scan inside each 4-item chunk.
#pragma unroll
	for (int r = 0; r < kRows; r++)
#pragma unroll
		for (int k = 1; k < 4; k++) x[r * 4 + k] = Op::combine(x[r * 4 + k - 1], x[r * 4 + k]);

	// Scan the chunk totals across the warp, row after row.
	P row_pre[kRows];
	P run = Op::identity();
#pragma unroll
	for (int r = 0; r < kRows; r++) {
		P incl = warp_inclusive<Op>(x[r * 4 + 3], lane);
		P excl = Op::shfl_up(incl, 1);
		if (lane == 0) excl = Op::identity();
		row_pre[r] = Op::combine(run, excl);
		run = Op::combine(run, Op::shfl(incl, 31));
	}
	if (lane == 0) s_warp[warp] = run;
	__syncthreads();

	// Prefix of this warp inside the tile.
	P warp_pre = Op::identity();
#pragma unroll
	for (int w = 0; w < kWarps; w++)
		if (w < warp) warp_pre = Op::combine(warp_pre, s_warp[w]);

	// An Io with early ranks (EarlyRanks) takes every item's prefix inside
	// the tile now, while warp 0 looks back, instead of the final ones after.
	if constexpr (EarlyRanks<Io>::value) {
#pragma unroll
		for (int r = 0; r < kRows; r++) {
			P in[4], ex[4];
			row_prefixes<Op>(Op::combine(warp_pre, row_pre[r]), &x[r * 4], in, ex);
			io.store_row(r, first + r * 128, full, n, ex, in);
		}
		// Its staged data is complete before the barrier after the
		// look-back, which then also publishes it: no barrier before finish.
		io.settle();
	}

	// Warp 0 publishes the tile and looks back for its carry.
	if (warp == 0) {
		P agg = Op::identity();
#pragma unroll
		for (int w = 0; w < kWarps; w++) agg = Op::combine(agg, s_warp[w]);
		unsigned long long *tiles = state + 1;
		P carry = Op::identity();
		if (tile == 0) {
			if (lane == 0) store_state(tiles, (KD_SCAN_PUBLISH_PREFIX(tile) ? kPrefix : kAggregate) | Op::pack(agg));
		} else {
			// A tile holding a head already knows its inclusive prefix.
			if (lane == 0) store_state(tiles + tile, (Op::head(agg) ? kPrefix : kAggregate) | Op::pack(agg));
			carry = lookback<Op, Cfg::kBackoff>(tiles, (long long)tile, lane);
			if (lane == 0 && !Op::head(agg) && KD_SCAN_PUBLISH_PREFIX(tile))
				store_state(tiles + tile, kPrefix | Op::pack(Op::combine(carry, agg)));
		}
		if (lane == 0) {
			s_carry = carry;
			if constexpr (Io::kStaged) s_agg = agg;
			if (total != nullptr && tile_base + kTile >= n) *total = bits_of(Op::combine(carry, agg).v);
		}
	}
	__syncthreads();

	// Final prefixes, row by row.
	if constexpr (Io::kStaged) io.begin(s_carry.v);
	const P pre_w = Op::combine(s_carry, warp_pre);
#pragma unroll
	for (int r = 0; r < (EarlyRanks<Io>::value ? 0 : kRows); r++) {
		P in[4], ex[4];
		row_prefixes<Op>(Op::combine(pre_w, row_pre[r]), &x[r * 4], in, ex);
		if constexpr (Io::kPrefetch)
			io.store_row(r, first + r * 128, full, n, ex, in);
		else
			io.store(first + r * 128, full, n, ex, in, (heads >> (r * 4)) & 15u);
	}
	// A staging Io writes the tile's output from shared memory in one pass.
	if constexpr (Io::kStaged) {
		if constexpr (!EarlyRanks<Io>::value) __syncthreads();
		io.finish(s_agg.v, tid, Cfg::kThreads);
	}
}

} // namespace kd_scan

// The tile scan's loads and stores for each use (IoScan, the compactions' Io).
#include "scan_io.cuh"
