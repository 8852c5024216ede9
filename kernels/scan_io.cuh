// scan_io.cuh: the loads and stores of scan.cuh's single-pass tile scan for
// each of its uses: the plain and segmented scans (IoScan) and the
// compactions (IoCompact, IoCompactStaged). scan.cuh includes it.
#pragma once
#include "scan.cuh"

namespace kd_scan {

// Four 32-bit words at p (16-byte aligned) as raw bits.
__device__ __forceinline__ uint4 load4(const void *p) { return *reinterpret_cast<const uint4 *>(p); }
__device__ __forceinline__ void store4(void *p, uint4 q) { *reinterpret_cast<uint4 *>(p) = q; }
// The same with evict-first hints (ld.global.cs / st.global.cs) when kStream.
template <bool kStream> __device__ __forceinline__ uint4 load4s(const void *p) {
	if (kStream) return __ldcs(reinterpret_cast<const uint4 *>(p));
	return load4(p);
}
template <bool kStream> __device__ __forceinline__ void store4s(void *p, uint4 q) {
	if (kStream)
		__stcs(reinterpret_cast<uint4 *>(p), q);
	else
		store4(p, q);
}

__device__ __forceinline__ bool aligned16(const void *p) { return ((unsigned long long)p & 15ull) == 0ull; }

// IoScan: values from src (and heads, for the segmented operator) to dst;
// the exclusive form writes 0 at heads. dst may be src. kStream: see Tiling.
template <class Op, typename V, bool kInclusive, bool kStream = false> struct IoScan {
	using P = typename Op::P;
	static constexpr bool kStaged = false;
	static constexpr bool kMarks = false;
	static constexpr bool kPrefetch = false;
	const V *src;
	const unsigned *heads; // null: no heads
	V *dst;
	bool vec; // every pointer 16-byte aligned: full tiles move as uint4

	__device__ __forceinline__ IoScan(const V *s, const unsigned *h, V *d)
	    : src(s), heads(h), dst(d), vec(aligned16(s) && aligned16(d) && (h == nullptr || aligned16(h))) {}

	__device__ __forceinline__ void load(unsigned long long i, bool full, unsigned long long n, P x[4]) const {
		if (full && vec) {
			uint4 q = load4s<kStream>(src + i);
			uint4 h = heads ? load4s<kStream>(heads + i) : make_uint4(0u, 0u, 0u, 0u);
			x[0] = Op::make(from_bits<V>(q.x), h.x);
			x[1] = Op::make(from_bits<V>(q.y), h.y);
			x[2] = Op::make(from_bits<V>(q.z), h.z);
			x[3] = Op::make(from_bits<V>(q.w), h.w);
		} else {
#pragma unroll
			for (int k = 0; k < 4; k++) {
				if (i + k < n)
					x[k] = Op::make(src[i + k], heads ? heads[i + k] : 0u);
				else
					x[k] = Op::identity();
			}
		}
	}

	// ahead: prefetch the 128 bytes of values (and heads) from item i into
	// the L2 (Tiling's Ahead).
	__device__ __forceinline__ void ahead(unsigned long long i) const {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
		asm volatile("prefetch.global.L2 [%0];" ::"l"(src + i));
		if (heads) asm volatile("prefetch.global.L2 [%0];" ::"l"(heads + i));
#endif
	}

	__device__ __forceinline__ void store(unsigned long long i, bool full, unsigned long long n, const P ex[4],
	                                      const P in[4], unsigned hbits) const {
		V o[4];
#pragma unroll
		for (int k = 0; k < 4; k++) o[k] = kInclusive ? in[k].v : (((hbits >> k) & 1u) ? V(0) : ex[k].v);
		if (full && vec) {
			store4s<kStream>(dst + i, make_uint4(bits_of(o[0]), bits_of(o[1]), bits_of(o[2]), bits_of(o[3])));
		} else {
#pragma unroll
			for (int k = 0; k < 4; k++)
				if (i + k < n) dst[i + k] = o[k];
		}
	}
};

// IoMade: the exclusive sum scan (Add<unsigned>) of n items that make
// computes from their index as they are loaded (make(j) for j < n, once
// each: it may also write outputs of its own), with the prefixes of items
// j < nOut stored to out[j]: a kernel that made the items and a scan that
// read them back in one launch. For the kd-tree builder's per-node words
// (split.cu, kdtree.cu), with TilingMade.
template <class Make> struct IoMade {
	using P = typename Add<unsigned>::P;
	static constexpr bool kStaged = false;
	static constexpr bool kMarks = false;
	static constexpr bool kPrefetch = false;
	Make make;
	unsigned *out;
	unsigned long long nOut;

	__device__ __forceinline__ void load(unsigned long long i, bool, unsigned long long n, P x[4]) const {
#pragma unroll
		for (int k = 0; k < 4; k++) x[k].v = i + k < n ? make(i + k) : 0u;
	}
	__device__ __forceinline__ void store(unsigned long long i, bool, unsigned long long, const P ex[4], const P *,
	                                      unsigned) const {
#pragma unroll
		for (int k = 0; k < 4; k++)
			if (i + k < nOut) out[i + k] = ex[k].v;
	}
};
// TilingMade: IoMade's tiling, 256 threads x 4 items (tiles of 1024, so
// that a level of a few thousand nodes gets several blocks), tile numbers
// from blockIdx.x, plain loads (the Go side: scan.MadeTile).
using TilingMade = Tiling<256, 4, 4, true, false, false>;
// TilingSegBid: the offsets-form segmented scan's tiling (segscan_off_*;
// scan.cu's TilingSegV2 with the tile numbers from blockIdx.x): 4096-item
// tiles (the Go side: scan.SegOffsetsTile), whose first segments
// split_unpack_u32 finds for the split's ranks.
using TilingSegBid = Tiling<256, 16, 4, true, true, false, 4>;

// IoSegOffsets: the segmented scan with the segments given by their starts
// (offsets, nentries words, non-decreasing) instead of one head flag per
// item, so that only the values and the offsets are read. tile_seg[t] is the
// first entry s with offsets[s] >= t*kTile (segscan_tile_starts finds it); tile t's heads are then offsets[tile_seg[t] .. tile_seg[t+1]), which
// the block sets as bits of a kTile-bit mask in shared memory
// (prepare_marks) and reads back per item (mark). Entries outside the
// tile (offsets >= n included) set nothing.
template <class Cfg, typename V, bool kInclusive> struct IoSegOffsets {
	using Op = SegAdd<V>;
	using P = typename Op::P;
	static constexpr bool kStaged = false;
	static constexpr bool kMarks = true;
	static constexpr bool kPrefetch = false;
	static constexpr int kWords = Cfg::kTile / 32;
	IoScan<Op, V, kInclusive, Cfg::kStream> scan; // values in and out (no heads array)
	const unsigned *offsets;
	const unsigned *tile_seg;
	unsigned long long nentries;
	unsigned *bits; // kWords words of shared memory
	unsigned long long base;

	__device__ __forceinline__ IoSegOffsets(const V *s, const unsigned *off, const unsigned *ts,
	                                        unsigned long long ne, V *d, unsigned *b)
	    : scan(s, nullptr, d), offsets(off), tile_seg(ts), nentries(ne), bits(b), base(0) {}

	__device__ __forceinline__ void load(unsigned long long i, bool full, unsigned long long n, P x[4]) const {
		scan.load(i, full, n, x);
	}
	__device__ __forceinline__ void store(unsigned long long i, bool full, unsigned long long n, const P ex[4],
	                                      const P in[4], unsigned hbits) const {
		scan.store(i, full, n, ex, in, hbits);
	}
	__device__ __forceinline__ void ahead(unsigned long long i) const { scan.ahead(i); }

	// prepare_marks (all threads of the block, which syncs after it).
	__device__ __forceinline__ void prepare_marks(unsigned long long tile, unsigned long long n, int tid) {
		base = tile * (unsigned long long)Cfg::kTile;
		const unsigned long long tiles = (n + Cfg::kTile - 1) / Cfg::kTile;
		// Clamped, so that offsets that break the contract cannot make a
		// block read outside offsets.
		unsigned long long s0 = min((unsigned long long)tile_seg[tile], nentries);
		unsigned long long s1 = tile + 1 < tiles ? min((unsigned long long)tile_seg[tile + 1], nentries) : nentries;
		for (int w = tid; w < kWords; w += Cfg::kThreads) bits[w] = 0u;
		__syncthreads();
		for (unsigned long long j = s0 + tid; j < s1; j += Cfg::kThreads) {
			const unsigned long long o = offsets[j];
			if (o < n && o >= base && o - base < (unsigned long long)Cfg::kTile) {
				const unsigned d = (unsigned)(o - base);
				atomicOr(&bits[d >> 5], 1u << (d & 31u));
			}
		}
	}

	// mark: heads of items i..i+3 (i - base a multiple of 4: one word).
	__device__ __forceinline__ void mark(unsigned long long i, P x[4]) const {
		const unsigned d = (unsigned)(i - base);
		const unsigned w = bits[d >> 5] >> (d & 31u);
#pragma unroll
		for (int k = 0; k < 4; k++) x[k].h = (w >> k) & 1u;
	}
};

// segmented_offsets: one block's tile of the offsets-form segmented scan
// (IoSegOffsets; segscan_off_* in scan.cu, and kdtree_addresses_u32 in
// kdtree.cu beside other scans).
template <class Cfg, typename V, bool kInclusive>
__device__ __forceinline__ void segmented_offsets(const V *src, const unsigned *offsets, const unsigned *tile_seg,
                                                  unsigned long long nentries, V *dst, unsigned long long n,
                                                  unsigned long long *state) {
	__shared__ unsigned s_bits[Cfg::kTile / 32];
	IoSegOffsets<Cfg, V, kInclusive> io(src, offsets, tile_seg, nentries, dst, s_bits);
	tile_scan<SegAdd<V>, Cfg>(io, n, state, nullptr);
}

// IoCompact: counts the nonzero flags; an item whose flag is set goes to
// dst[its exclusive count] when that is below cap. kStream: see Tiling
// (the scattered stores stay plain: they are not full lines). kStaged: the
// kept items of a tile are gathered in stage (kTile words of shared memory)
// at their offset inside the tile and the block then writes the tile's
// whole output run [carry, carry + count) with consecutive threads on
// consecutive words, instead of each thread storing its items where they go.
template <bool kStream, bool Staged> struct IoCompactT {
	using Op = Add<unsigned>;
	using P = Op::P;
	static constexpr bool kStaged = Staged;
	static constexpr bool kMarks = false;
	static constexpr bool kPrefetch = false;
	const unsigned *src;
	const unsigned *flags;
	unsigned *dst;
	unsigned long long cap;
	bool vec;
	unsigned *stage;         // kStaged: the tile's kept items
	unsigned long long base; // kStaged: items kept before the tile

	__device__ __forceinline__ IoCompactT(const unsigned *s, const unsigned *f, unsigned *d, unsigned long long c,
	                                      unsigned *st = nullptr)
	    : src(s), flags(f), dst(d), cap(c), vec(aligned16(f) && aligned16(s)), stage(st), base(0) {}

	__device__ __forceinline__ void begin(unsigned carry) { base = carry; }

	__device__ __forceinline__ void put(unsigned long long k, unsigned v) const {
		if (kStaged)
			stage[k - base] = v;
		else if (k < cap)
			dst[k] = v;
	}

	// finish: the count kept items lie at stage[0, count).
	__device__ __forceinline__ void finish(unsigned count, int tid, int threads) const {
		for (unsigned i = tid; i < count; i += threads) {
			const unsigned long long k = base + i;
			if (k < cap) dst[k] = stage[i];
		}
	}

	__device__ __forceinline__ void load(unsigned long long i, bool full, unsigned long long n, P x[4]) const {
		if (full && vec) {
			uint4 q = load4s<kStream>(flags + i);
			x[0] = P{q.x != 0u ? 1u : 0u};
			x[1] = P{q.y != 0u ? 1u : 0u};
			x[2] = P{q.z != 0u ? 1u : 0u};
			x[3] = P{q.w != 0u ? 1u : 0u};
		} else {
#pragma unroll
			for (int k = 0; k < 4; k++) x[k] = P{(i + k < n && flags[i + k] != 0u) ? 1u : 0u};
		}
	}

	__device__ __forceinline__ void store(unsigned long long i, bool full, unsigned long long n, const P ex[4],
	                                      const P in[4], unsigned) const {
		// Kept exactly when the count steps (identity items beyond n never do).
		if (in[3].v == ex[0].v) return; // none of the four is kept
		if (full && vec) {
			const uint4 q = load4s<kStream>(src + i);
			const unsigned v[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
			for (int k = 0; k < 4; k++)
				if (in[k].v != ex[k].v) put(ex[k].v, v[k]);
		} else {
#pragma unroll
			for (int k = 0; k < 4; k++)
				if (in[k].v != ex[k].v && i + k < n) put(ex[k].v, src[i + k]);
		}
	}
};
// IoCompactPre: the staged compaction that loads each item's value together
// with its flag at the start of the tile (prefetch, one uint4 per row kept
// in registers), so that the value loads overlap the flag loads and the
// look-back instead of starting after them; kept items are gathered in
// stage and written as one run like IoCompactStaged.
template <class Cfg> struct IoCompactPre {
	using Op = Add<unsigned>;
	using P = Op::P;
	static constexpr bool kStaged = true;
	static constexpr bool kMarks = false;
	static constexpr bool kPrefetch = true;
	IoCompactT<Cfg::kStream, true> c;
	uint4 pre[Cfg::kRows];

	__device__ __forceinline__ IoCompactPre(const unsigned *s, const unsigned *f, unsigned *d, unsigned long long cap,
	                                        unsigned *st)
	    : c(s, f, d, cap, st) {}

	__device__ __forceinline__ void prefetch(int r, unsigned long long i, bool full, unsigned long long n) {
		if (full && c.vec) {
			pre[r] = load4s<Cfg::kStream>(c.src + i);
		} else {
			unsigned v[4];
#pragma unroll
			for (int k = 0; k < 4; k++) v[k] = i + k < n ? c.src[i + k] : 0u;
			pre[r] = make_uint4(v[0], v[1], v[2], v[3]);
		}
	}
	__device__ __forceinline__ void load(unsigned long long i, bool full, unsigned long long n, P x[4]) const {
		c.load(i, full, n, x);
	}
	__device__ __forceinline__ void begin(unsigned carry) { c.begin(carry); }
	__device__ __forceinline__ void finish(unsigned count, int tid, int threads) const {
		c.finish(count, tid, threads);
	}
	__device__ __forceinline__ void store_row(int r, unsigned long long, bool, unsigned long long, const P ex[4],
	                                          const P in[4]) const {
		if (in[3].v == ex[0].v) return; // none of the four is kept (items beyond n never are)
		const unsigned v[4] = {pre[r].x, pre[r].y, pre[r].z, pre[r].w};
#pragma unroll
		for (int k = 0; k < 4; k++)
			if (in[k].v != ex[k].v) c.put(ex[k].v, v[k]);
	}
};

// IoCompact: the unstaged form; IoCompactStaged: the staged one.
template <bool kStream = false> using IoCompact = IoCompactT<kStream, false>;
template <bool kStream = false> using IoCompactStaged = IoCompactT<kStream, true>;

} // namespace kd_scan
