// split.cu: addresses of the reference copies of every node of a kd-tree
// level (split.Addresses). The left and right flags are unpacked into one
// array, and one segmented exclusive scan over it (scan's offsets form,
// shared-memory tiles with decoupled look-back) gives every reference its
// rank among the left copies and among the right copies of its node: the
// segments are the nodes' left flags, then the nodes' right flags.
//
// Layout of pre (2(n+1) entries): pre[r] left flag of r, pre[n] = 0,
// pre[n+1+r] right flag of r, pre[2n+1] = 0. Segments (segOff, 2 nodes + 3
// entries): [offsets[s], offsets[s+1]) for each node s, [n, n+1), then
// [n+1+offsets[s], n+1+offsets[s+1]) for each node, [2n+1, 2n+2). After the
// scan pre[r] is r's left rank and pre[n+1+r] its right rank in its node.

#include "split.cuh"

namespace kd_split {

__device__ __forceinline__ unsigned int node_of(const unsigned int *offsets, unsigned int nodes, unsigned int r) {
	// Largest s with offsets[s] <= r among non-empty segments: binary search
	// for the last s in [0, nodes) with offsets[s] <= r.
	unsigned int lo = 0, hi = nodes; // invariant: offsets[lo] <= r, answer in [lo, hi)
	while (hi - lo > 1) {
		unsigned int mid = lo + (hi - lo) / 2;
		if (offsets[mid] <= r) lo = mid; else hi = mid;
	}
	return lo;
}

} // namespace kd_split

// split_unpack_u32: pre[r] = flags[r]&1, pre[n+1+r] = (flags[r]>>1)&1 for
// r < n (kd_split::unpack_flag) and the rest of the unpacking
// (kd_split::unpack_rest in split.cuh: the segment offsets, the ranks'
// scan prepared, the look-back states zeroed). Any grid.
extern "C" __global__ void split_unpack_u32(const unsigned int *flags, unsigned int n, unsigned int *pre,
                                            const unsigned int *offsets, unsigned int nodes, unsigned int *segOff,
                                            unsigned long long *state, unsigned int stateWords,
                                            unsigned int *tileSeg, unsigned int tiles,
                                            unsigned long long *sstate, unsigned int sstateWords) {
	unsigned int r = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
	for (unsigned int k = r; k < n; k += stride) kd_split::unpack_flag(k, flags[k], n, pre);
	kd_split::unpack_rest(r, stride, n, pre, offsets, nodes, segOff, state, stateWords, tileSeg, tiles, sstate,
	                      sstateWords);
}


// split_bases_u32: after the ranks' scan, per node s < nodes the left and
// right copy counts (countL, countR) and the child base (base[s]: the sum of
// the counts of the nodes before s), and *total = the sum of all: one
// single-pass scan over the nodes (decoupled look-back, scan.cuh) whose
// items are made as they are loaded, where a counting kernel and a scan of
// its output were two launches. Grid: ceil((nodes+1)/1024) blocks of 256
// threads; state zeroed (split_unpack_u32 does it).
extern "C" __global__ void __launch_bounds__(256, 4)
    split_bases_u32(const unsigned int *offsets, unsigned int nodes, const unsigned int *pre, unsigned int n,
                    const unsigned int *flags, unsigned int *countL, unsigned int *countR, unsigned int *base,
                    unsigned long long *state, unsigned int *total) {
	kd_scan::IoMade<kd_split::NodeCounts> io{{offsets, pre, flags, nodes, n, countL, countR}, base, nodes};
	kd_scan::tile_scan<kd_scan::Add<unsigned int>, kd_scan::TilingMade>(io, (unsigned long long)nodes + 1, state,
	                                                                     total);
}

// split_dest_u32: the destination of each copy of reference r (0xFFFFFFFF
// where there is none), from the ranks (pre) and the child bases (base).
extern "C" __global__ void split_dest_u32(const unsigned int *flags, const unsigned int *offsets, unsigned int n,
                                          unsigned int nodes, const unsigned int *pre, const unsigned int *base,
                                          const unsigned int *countL, unsigned int *dstL, unsigned int *dstR) {
	unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	unsigned int f = flags[i];
	unsigned int dl = 0xFFFFFFFFu, dr = 0xFFFFFFFFu;
	if ((f & 3u) == 0) { // no copy: no node to find (leaves, padding)
		dstL[i] = dl;
		dstR[i] = dr;
		return;
	}
	unsigned int s = kd_split::node_of(offsets, nodes, i);
	if (f & 1u) dl = base[s] + pre[i];
	if (f & 2u) dr = base[s] + countL[s] + pre[n + 1 + i];
	dstL[i] = dl;
	dstR[i] = dr;
}
