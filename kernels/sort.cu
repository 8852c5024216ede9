// sort.cu: radix sort of uint32 keys with optional uint32 values.
//  - sort_max_u32: the largest key, so that passes over high zero bits are
//    skipped (a kernel of its own name; reduce/ has its own reductions).
//  - split (the seeds' sort, one bit per pass): sort_split_flags_u32, the
//    production exclusive scan of the flags (its total = number of zero
//    bits, left on the device), sort_split_scatter_u32.
//  - lsd8 (8 bits per pass): sort_hist8_u32 writes per-block digit counts in
//    digit-major order, the production scan turns them into output offsets,
//    sort_scatter8_u32 ranks each sub-tile stably (per-warp ranking with
//    __match_any_sync), reorders it in shared memory and writes each digit's
//    run to its offset.
//  - onesweep (8 bits per pass, one launch per pass): sort_onesweep_hist_u32,
//    sort_onesweep_scan_u32, sort_onesweep_pass_u32 (see below).
// Values pointers may be null (keys only). Every sort pass is stable.
#include "scan.cuh"

namespace kd_sort {

constexpr unsigned kFull = 0xffffffffu;

__device__ __forceinline__ unsigned long long gidx() {
	return (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ unsigned long long gstride() { return (unsigned long long)gridDim.x * blockDim.x; }

// lsd8 tiling: 256 threads; a sub-tile is 2048 keys, warp w ranks the 256
// keys [w*256, (w+1)*256) of it in 8 rounds of 32. Block b handles the
// sub-tiles [b*per_block, (b+1)*per_block) in order.
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kRounds = 8;
constexpr int kSub = kThreads * kRounds;
constexpr int kDigits = 256;

} // namespace kd_sort

// sort_max_u32: *result = max(*result, max of keys[0, n)); *result zeroed
// before. Any grid of 256-thread blocks.
extern "C" __global__ void __launch_bounds__(256) sort_max_u32(const unsigned *keys, unsigned long long n,
                                                                unsigned *result) {
	__shared__ unsigned s_max[8];
	unsigned m = 0;
	for (unsigned long long i = kd_sort::gidx(); i < n; i += kd_sort::gstride()) m = max(m, keys[i]);
#pragma unroll
	for (int d = 16; d > 0; d >>= 1) m = max(m, __shfl_xor_sync(kd_sort::kFull, m, d));
	if ((threadIdx.x & 31) == 0) s_max[threadIdx.x >> 5] = m;
	__syncthreads();
	if (threadIdx.x == 0) {
		for (int w = 1; w < (int)(blockDim.x >> 5); w++) m = max(m, s_max[w]);
		atomicMax(result, m);
	}
}

// sort_split_flags_u32: flags[i] = 1 when bit `bit` of keys[i] is 0, else 0.
extern "C" __global__ void sort_split_flags_u32(const unsigned *keys, unsigned *flags, unsigned long long n,
                                                unsigned bit) {
	for (unsigned long long i = kd_sort::gidx(); i < n; i += kd_sort::gstride()) flags[i] = ((keys[i] >> bit) & 1u) ^ 1u;
}

// sort_split_scatter_u32: with pos the exclusive scan of the flags and
// *zeros their total, key i goes to pos[i] when its bit is 0 and to
// zeros + i - pos[i] when it is 1 (values alongside when not null).
extern "C" __global__ void sort_split_scatter_u32(const unsigned *keys_in, const unsigned *vals_in,
                                                  unsigned *keys_out, unsigned *vals_out, const unsigned *pos,
                                                  const unsigned *zeros, unsigned long long n, unsigned bit) {
	const unsigned long long z = *zeros;
	for (unsigned long long i = kd_sort::gidx(); i < n; i += kd_sort::gstride()) {
		const unsigned k = keys_in[i];
		const unsigned long long p = pos[i];
		const unsigned long long d = ((k >> bit) & 1u) ? z + i - p : p;
		keys_out[d] = k;
		if (vals_in != nullptr) vals_out[d] = vals_in[i];
	}
}

// sort_hist8_u32: counts[d * blocks + b] = how many keys of block b's range
// have digit d ((key >> shift) & 255). grid = blocks blocks of 256 threads.
extern "C" __global__ void __launch_bounds__(256) sort_hist8_u32(const unsigned *keys, unsigned long long n,
                                                                  unsigned shift, unsigned *counts,
                                                                  unsigned long long per_block) {
	using namespace kd_sort;
	__shared__ unsigned s_hist[kWarps][kDigits];
	const int tid = threadIdx.x, warp = tid >> 5;
	for (int i = tid; i < kWarps * kDigits; i += kThreads) (&s_hist[0][0])[i] = 0u;
	__syncthreads();
	const unsigned long long lo = (unsigned long long)blockIdx.x * per_block * kSub;
	const unsigned long long hi = min(n, lo + per_block * kSub);
	if (lo < hi) {
		const bool vec = (((unsigned long long)keys) & 15ull) == 0ull;
		unsigned long long i = lo + 4ull * tid;
		if (vec) {
			// lo is a multiple of 4 (kSub is), so uint4 loads are aligned.
			for (; i + 4 <= hi; i += 4ull * kThreads) {
				uint4 q = *reinterpret_cast<const uint4 *>(keys + i);
				atomicAdd(&s_hist[warp][(q.x >> shift) & 255u], 1u);
				atomicAdd(&s_hist[warp][(q.y >> shift) & 255u], 1u);
				atomicAdd(&s_hist[warp][(q.z >> shift) & 255u], 1u);
				atomicAdd(&s_hist[warp][(q.w >> shift) & 255u], 1u);
			}
			for (unsigned long long j = i; j < hi && j < i + 4; j++) atomicAdd(&s_hist[warp][(keys[j] >> shift) & 255u], 1u);
		} else {
			for (unsigned long long j = lo + tid; j < hi; j += kThreads)
				atomicAdd(&s_hist[warp][(keys[j] >> shift) & 255u], 1u);
		}
	}
	__syncthreads();
	unsigned c = 0;
#pragma unroll
	for (int w = 0; w < kWarps; w++) c += s_hist[w][tid];
	counts[(unsigned long long)tid * gridDim.x + blockIdx.x] = c;
}

// sort_scatter8_u32: moves block b's keys (and values) to their sorted places
// for the digit at `shift`; offsets[d * blocks + b] is where block b's first
// key with digit d goes (the exclusive scan of sort_hist8_u32's counts).
// Stable: equal digits keep their order. grid and per_block as for
// sort_hist8_u32. keys_out must not overlap keys_in.
namespace kd_sort {

// scatter8: the body of both scatter kernels. kPrefetch: the keys and
// values of a sub-tile are loaded into registers all at once, the first
// before the loop and every next one while the current sub-tile is written
// out, so the load latency is paid once per sub-tile and overlaps the
// stores; without it every ranking round waits for its own loads.
template <bool kPrefetch>
__device__ __forceinline__ void scatter8(const unsigned *keys_in, const unsigned *vals_in, unsigned *keys_out,
                                         unsigned *vals_out, unsigned long long n, unsigned shift,
                                         const unsigned *offsets, unsigned long long per_block) {
	__shared__ unsigned s_keys[kSub];
	__shared__ unsigned s_vals[kSub];
	__shared__ unsigned s_whist[kWarps][kDigits]; // per-warp count, then the warp's start inside its digit
	__shared__ unsigned s_start[kDigits];         // start of digit d in the sorted sub-tile
	__shared__ unsigned s_count[kDigits];         // keys with digit d in the sub-tile
	__shared__ unsigned s_goff[kDigits];          // where the next key with digit d goes in keys_out
	__shared__ unsigned s_wsum[kWarps];
	const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
	const bool has_vals = vals_in != nullptr;
	const unsigned lt_mask = (1u << lane) - 1u;

	s_goff[tid] = offsets[(unsigned long long)tid * gridDim.x + blockIdx.x];
	const unsigned long long lo = (unsigned long long)blockIdx.x * per_block * kSub;
	const unsigned long long hi = min(n, lo + per_block * kSub);

	// load_sub: this thread's keys and values of the sub-tile at b.
	unsigned key[kRounds], val[kRounds], rank[kRounds];
	auto load_sub = [&](unsigned long long b) {
		const unsigned long long v = min((unsigned long long)kSub, hi - b);
#pragma unroll
		for (int r = 0; r < kRounds; r++) {
			const unsigned j = (unsigned)(warp * (kRounds * 32) + r * 32 + lane);
			const bool ok = j < v;
			key[r] = ok ? keys_in[b + j] : 0u;
			val[r] = (ok && has_vals) ? vals_in[b + j] : 0u;
		}
	};
	if (kPrefetch && lo < hi) load_sub(lo);

	for (unsigned long long base = lo; base < hi; base += kSub) {
		const unsigned valid = (unsigned)min((unsigned long long)kSub, hi - base);
		for (int i = tid; i < kWarps * kDigits; i += kThreads) (&s_whist[0][0])[i] = 0u;
		__syncthreads();

		// Rank: warp w walks its 256 keys 32 at a time; peers with the same
		// digit in a round get consecutive ranks after the earlier rounds'.
#pragma unroll
		for (int r = 0; r < kRounds; r++) {
			const unsigned j = (unsigned)(warp * (kRounds * 32) + r * 32 + lane); // index inside the sub-tile
			const bool ok = j < valid;
			if (!kPrefetch) {
				key[r] = ok ? keys_in[base + j] : 0u;
				val[r] = (ok && has_vals) ? vals_in[base + j] : 0u;
			}
			const unsigned d = ok ? (key[r] >> shift) & 255u : 256u; // 256: no digit
			const unsigned peers = __match_any_sync(kFull, d);
			const unsigned before = ok ? s_whist[warp][d] : 0u;
			__syncwarp();
			if (ok && lane == __ffs(peers) - 1) s_whist[warp][d] = before + __popc(peers);
			__syncwarp();
			rank[r] = before + __popc(peers & lt_mask);
		}
		__syncthreads();

		// Per digit (thread d): exclusive prefix over warps, and the digit's count.
		{
			unsigned run = 0;
#pragma unroll
			for (int w = 0; w < kWarps; w++) {
				unsigned c = s_whist[w][tid];
				s_whist[w][tid] = run;
				run += c;
			}
			s_count[tid] = run;
			// Exclusive scan of the 256 counts: warp scans, then warp sums.
			unsigned incl = run;
#pragma unroll
			for (int d = 1; d < 32; d <<= 1) {
				unsigned o = __shfl_up_sync(kFull, incl, d);
				if (lane >= d) incl += o;
			}
			if (lane == 31) s_wsum[warp] = incl;
			__syncthreads();
			unsigned wpre = 0;
#pragma unroll
			for (int w = 0; w < kWarps; w++)
				if (w < warp) wpre += s_wsum[w];
			s_start[tid] = wpre + incl - run;
		}
		__syncthreads();

		// Reorder the sub-tile by digit in shared memory.
#pragma unroll
		for (int r = 0; r < kRounds; r++) {
			const unsigned j = (unsigned)(warp * (kRounds * 32) + r * 32 + lane);
			if (j < valid) {
				const unsigned d = (key[r] >> shift) & 255u;
				const unsigned p = s_start[d] + s_whist[warp][d] + rank[r];
				s_keys[p] = key[r];
				if (has_vals) s_vals[p] = val[r];
			}
		}
		__syncthreads();

		// The next sub-tile's loads fly while this one is written out.
		if (kPrefetch && base + kSub < hi) load_sub(base + kSub);

		// Write out: consecutive threads write consecutive keys of a digit's run.
		for (unsigned p = tid; p < valid; p += kThreads) {
			const unsigned k = s_keys[p];
			const unsigned d = (k >> shift) & 255u;
			const unsigned long long g = (unsigned long long)s_goff[d] + (p - s_start[d]);
			keys_out[g] = k;
			if (has_vals) vals_out[g] = s_vals[p];
		}
		__syncthreads();
		s_goff[tid] += s_count[tid];
		// The next sub-tile's first barrier orders this update before its reads.
	}
}

} // namespace kd_sort

// sort_scatter8_u32 (lsd8) and sort_scatter8_prefetch_u32 (lsd8-prefetch,
// the same contract; see kd_sort::scatter8).
extern "C" __global__ void __launch_bounds__(256) sort_scatter8_u32(const unsigned *keys_in, const unsigned *vals_in,
                                                                     unsigned *keys_out, unsigned *vals_out,
                                                                     unsigned long long n, unsigned shift,
                                                                     const unsigned *offsets,
                                                                     unsigned long long per_block) {
	kd_sort::scatter8<false>(keys_in, vals_in, keys_out, vals_out, n, shift, offsets, per_block);
}
extern "C" __global__ void __launch_bounds__(256)
    sort_scatter8_prefetch_u32(const unsigned *keys_in, const unsigned *vals_in, unsigned *keys_out, unsigned *vals_out,
                               unsigned long long n, unsigned shift, const unsigned *offsets,
                               unsigned long long per_block) {
	kd_sort::scatter8<true>(keys_in, vals_in, keys_out, vals_out, n, shift, offsets, per_block);
}

// onesweep (8 bits per pass, one kernel per pass; the idea of Adinets &
// Merrill, "Onesweep", 2022):
//  - sort_onesweep_hist_u32 reads the keys once and adds all four 8-bit
//    digit histograms to hist[4][256] (zeroed before);
//  - sort_onesweep_scan_u32 turns each histogram into exclusive digit
//    offsets in place and writes to *mask bit p when pass p moves keys (no
//    digit holds all n keys);
//  - sort_onesweep_pass_u32, one launch per pass, one block per tile of
//    kOsTile keys in the order of an atomic tile counter: ranks the tile's
//    keys stably by digit (per-warp multi-split with ballots), publishes the
//    tile's per-digit counts, finds by decoupled look-back how many keys of
//    each digit the earlier tiles hold, reorders the tile by digit in shared
//    memory and writes each digit's run contiguously.
namespace kd_sort {

constexpr int kOsThreads = 256;
constexpr int kOsItems = 15;                       // keys per thread
constexpr int kOsWarps = kOsThreads / 32;
constexpr int kOsWarpSpan = 32 * kOsItems;         // 480 consecutive keys per warp
constexpr int kOsTile = kOsThreads * kOsItems;     // 3840 keys per tile
constexpr unsigned kOsAggregate = 1u << 30;        // look-back word: bits 31..30 status,
constexpr unsigned kOsPrefix = 2u << 30;           // bits 29..0 count (n < 2^30)
constexpr unsigned kOsCountMask = (1u << 30) - 1u;
constexpr int kOsHistThreads = 256;
constexpr int kOsHistItems = 16;                   // keys per thread and grid step (4 uint4)

// warp_peers: the lanes whose 8-bit digit equals d (all lanes active).
__device__ __forceinline__ unsigned warp_peers(unsigned d) {
	unsigned m = kFull;
#pragma unroll
	for (int b = 0; b < 8; b++) {
		const unsigned v = __ballot_sync(kFull, (d >> b) & 1u);
		m &= ((d >> b) & 1u) ? v : ~v;
	}
	return m;
}

// hist_add: adds one key to the four shared histograms; when the whole warp
// has the same digit (common: high zero bytes, many equal keys) one lane
// adds 32.
__device__ __forceinline__ void hist_add(unsigned (*s_hist)[kDigits], unsigned k, bool ok, int lane) {
	const unsigned all = __ballot_sync(kFull, ok);
#pragma unroll
	for (int p = 0; p < 4; p++) {
		const unsigned d = (k >> (8 * p)) & 255u;
		const unsigned d0 = __shfl_sync(kFull, d, 0);
		const bool same = all == kFull && __ballot_sync(kFull, d == d0) == kFull;
		if (same) {
			if (lane == 0) atomicAdd(&s_hist[p][d], 32u);
		} else if (ok) {
			atomicAdd(&s_hist[p][d], 1u);
		}
	}
}

} // namespace kd_sort

// sort_onesweep_hist_u32: hist[p * 256 + d] += number of keys of keys[0, n)
// whose byte p is d, for p = 0..3. Any grid of 256-thread blocks.
extern "C" __global__ void __launch_bounds__(256) sort_onesweep_hist_u32(const unsigned *keys, unsigned long long n,
                                                                          unsigned *hist) {
	using namespace kd_sort;
	__shared__ unsigned s_hist[4][kDigits];
	const int tid = threadIdx.x, lane = tid & 31;
	for (int i = tid; i < 4 * kDigits; i += kOsHistThreads) (&s_hist[0][0])[i] = 0u;
	__syncthreads();
	const bool vec = (((unsigned long long)keys) & 15ull) == 0ull;
	const unsigned long long step = (unsigned long long)gridDim.x * kOsHistThreads * kOsHistItems;
	for (unsigned long long base = (unsigned long long)blockIdx.x * kOsHistThreads * kOsHistItems; base < n;
	     base += step) {
		// Row r of the block's chunk: thread t holds keys base + r*1024 + 4t .. +3.
		if (vec && base + kOsHistThreads * kOsHistItems <= n) {
			uint4 q[kOsHistItems / 4];
#pragma unroll
			for (int r = 0; r < kOsHistItems / 4; r++)
				q[r] = __ldcs(reinterpret_cast<const uint4 *>(keys + base + r * 4 * kOsHistThreads + 4 * tid));
#pragma unroll
			for (int r = 0; r < kOsHistItems / 4; r++) {
				hist_add(s_hist, q[r].x, true, lane);
				hist_add(s_hist, q[r].y, true, lane);
				hist_add(s_hist, q[r].z, true, lane);
				hist_add(s_hist, q[r].w, true, lane);
			}
		} else {
			for (int r = 0; r < kOsHistItems; r++) {
				const unsigned long long i = base + (unsigned long long)r * kOsHistThreads + tid;
				const bool ok = i < n;
				hist_add(s_hist, ok ? keys[i] : 0u, ok, lane);
			}
		}
	}
	__syncthreads();
	for (int i = tid; i < 4 * kDigits; i += kOsHistThreads) {
		const unsigned c = (&s_hist[0][0])[i];
		if (c != 0u) atomicAdd(hist + i, c);
	}
}

// sort_onesweep_scan_u32: one block of 256 threads. For p = 0..3 replaces
// hist[p * 256 + d] by the sum of hist[p * 256 + e] over e < d, and sets
// *mask to the passes p whose histogram has no digit counting all n keys.
extern "C" __global__ void __launch_bounds__(256) sort_onesweep_scan_u32(unsigned *hist, unsigned long long n,
                                                                          unsigned *mask) {
	using namespace kd_sort;
	__shared__ unsigned s_wsum[kOsWarps];
	__shared__ unsigned s_trivial[4];
	const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
	if (tid < 4) s_trivial[tid] = 0u;
	__syncthreads();
	for (int p = 0; p < 4; p++) {
		const unsigned c = hist[p * kDigits + tid];
		if ((unsigned long long)c == n) s_trivial[p] = 1u;
		unsigned incl = c;
#pragma unroll
		for (int d = 1; d < 32; d <<= 1) {
			const unsigned o = __shfl_up_sync(kFull, incl, d);
			if (lane >= d) incl += o;
		}
		if (lane == 31) s_wsum[warp] = incl;
		__syncthreads();
		unsigned pre = 0;
		for (int w = 0; w < warp; w++) pre += s_wsum[w];
		hist[p * kDigits + tid] = pre + incl - c;
		__syncthreads();
	}
	if (tid == 0) *mask = (s_trivial[0] ? 0u : 1u) | (s_trivial[1] ? 0u : 2u) | (s_trivial[2] ? 0u : 4u) |
	                      (s_trivial[3] ? 0u : 8u);
}

// sort_onesweep_pass_u32: one pass over the digit at `shift`: key i (and
// value i when vals_in is not null) moves to offsets[d] + the number of
// keys before i with digit d, where d = (keys_in[i] >> shift) & 255 and
// offsets is the pass's exclusive digit offsets (sort_onesweep_scan_u32).
// Stable. grid = ceil(n / 3840) blocks of 256 threads, n < 2^30; state
// holds the tile counter (state[0]) and one look-back word per tile and
// digit (state[1 + t * 256 + d]), all zeroed before the launch. keys_out
// must not overlap keys_in.
extern "C" __global__ void __launch_bounds__(256, 4)
    sort_onesweep_pass_u32(const unsigned *keys_in, const unsigned *vals_in, unsigned *keys_out, unsigned *vals_out,
                           unsigned long long n, unsigned shift, const unsigned *offsets, unsigned *state) {
	using namespace kd_sort;
	__shared__ unsigned s_keys[kOsTile];
	__shared__ unsigned s_vals[kOsTile];
	__shared__ unsigned s_whist[kOsWarps][kDigits]; // per-warp digit counts, then the warp's start in the digit
	__shared__ unsigned s_start[kDigits];           // start of digit d in the tile's sorted order
	__shared__ unsigned s_gbase[kDigits];           // keys_out index of the tile's digit-d run minus s_start[d]
	__shared__ unsigned s_wsum[kOsWarps];
	__shared__ unsigned s_tile;
	const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
	const bool has_vals = vals_in != nullptr;
	const unsigned lt_mask = (1u << lane) - 1u;

	// Tiles are numbered in the order blocks start, so a look-back only
	// waits for blocks that are already running.
	if (tid == 0) s_tile = atomicAdd(state, 1u);
	for (int i = tid; i < kOsWarps * kDigits; i += kOsThreads) (&s_whist[0][0])[i] = 0u;
	__syncthreads();
	const unsigned tile = s_tile;
	const unsigned long long tile_base = (unsigned long long)tile * kOsTile;
	const unsigned valid = (unsigned)min((unsigned long long)kOsTile, n - tile_base);
	const unsigned warp_first = (unsigned)(warp * kOsWarpSpan);

	// Load: round r of warp w holds the tile's keys w*480 + r*32 + lane, so
	// (round, lane) is the keys' order inside the warp.
	unsigned key[kOsItems], pos[kOsItems];
#pragma unroll
	for (int r = 0; r < kOsItems; r++) {
		const unsigned j = warp_first + r * 32 + lane;
		key[r] = j < valid ? __ldcs(keys_in + tile_base + j) : 0u;
	}

	// Rank inside the warp: peers with the same digit in a round get
	// consecutive ranks after those of the earlier rounds.
#pragma unroll
	for (int r = 0; r < kOsItems; r++) {
		const unsigned j = warp_first + r * 32 + lane;
		const bool ok = j < valid;
		const unsigned d = (key[r] >> shift) & 255u;
		const unsigned peers = warp_peers(d) & __ballot_sync(kFull, ok);
		const unsigned before = ok ? s_whist[warp][d] : 0u;
		__syncwarp();
		if (ok && lane == __ffs(peers) - 1) s_whist[warp][d] = before + __popc(peers);
		__syncwarp();
		pos[r] = before + __popc(peers & lt_mask);
	}
	__syncthreads();

	// Thread d: the digit's count in the tile and each warp's start in it.
	const unsigned dg = (unsigned)tid;
	unsigned count = 0;
#pragma unroll
	for (int w = 0; w < kOsWarps; w++) {
		const unsigned c = s_whist[w][dg];
		s_whist[w][dg] = count;
		count += c;
	}
	// Publish the tile's count early, so that later tiles can look past it.
	unsigned *look = state + 1;
	if (tile == 0) {
		*(volatile unsigned *)(look + dg) = (KD_SCAN_PUBLISH_PREFIX(tile) ? kOsPrefix : kOsAggregate) | count;
	} else {
		*(volatile unsigned *)(look + (unsigned long long)tile * kDigits + dg) = kOsAggregate | count;
	}
	// Exclusive scan of the 256 counts: where each digit starts in the tile.
	{
		unsigned incl = count;
#pragma unroll
		for (int d = 1; d < 32; d <<= 1) {
			const unsigned o = __shfl_up_sync(kFull, incl, d);
			if (lane >= d) incl += o;
		}
		if (lane == 31) s_wsum[warp] = incl;
		__syncthreads();
		unsigned pre = 0;
#pragma unroll
		for (int w = 0; w < kOsWarps; w++)
			if (w < warp) pre += s_wsum[w];
		s_start[dg] = pre + incl - count;
	}
	__syncthreads();

	// Reorder the keys by digit in shared memory and start the value loads;
	// the look-back runs while they are in flight.
#pragma unroll
	for (int r = 0; r < kOsItems; r++) {
		const unsigned j = warp_first + r * 32 + lane;
		if (j < valid) {
			const unsigned d = (key[r] >> shift) & 255u;
			pos[r] += s_start[d] + s_whist[warp][d];
			s_keys[pos[r]] = key[r];
		}
	}
	unsigned val[kOsItems];
	if (has_vals) {
#pragma unroll
		for (int r = 0; r < kOsItems; r++) {
			const unsigned j = warp_first + r * 32 + lane;
			val[r] = j < valid ? __ldcs(vals_in + tile_base + j) : 0u;
		}
	}

	// Decoupled look-back, thread d for digit d: add the counts of the
	// earlier tiles back to the nearest one that published its inclusive
	// prefix (or to tile 0).
	if (tile > 0) {
		unsigned excl = 0;
		for (long long t = (long long)tile - 1; t >= 0; t--) {
			const volatile unsigned *w = look + (unsigned long long)t * kDigits + dg;
			unsigned v = *w;
			while ((v >> 30) == 0u) {
				__nanosleep(kd_scan::kBackoffNs);
				v = *w;
			}
			excl += v & kOsCountMask;
			if ((v >> 30) == 2u) break;
		}
		if (KD_SCAN_PUBLISH_PREFIX(tile))
			*(volatile unsigned *)(look + (unsigned long long)tile * kDigits + dg) = kOsPrefix | (excl + count);
		s_gbase[dg] = offsets[dg] + excl - s_start[dg];
	} else {
		s_gbase[dg] = offsets[dg] - s_start[dg];
	}
	if (has_vals) {
#pragma unroll
		for (int r = 0; r < kOsItems; r++) {
			const unsigned j = warp_first + r * 32 + lane;
			if (j < valid) s_vals[pos[r]] = val[r];
		}
	}
	__syncthreads();

	// Write out: consecutive threads write consecutive keys of a digit's run.
#pragma unroll
	for (int r = 0; r < kOsItems; r++) {
		const unsigned p = r * kOsThreads + tid;
		if (p < valid) {
			const unsigned k = s_keys[p];
			const unsigned g = s_gbase[(k >> shift) & 255u] + p;
			keys_out[g] = k;
			if (has_vals) vals_out[g] = s_vals[p];
		}
	}
}
