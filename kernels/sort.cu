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
