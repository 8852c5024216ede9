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

#include "scan.cuh"

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

namespace kd_split {

// seg_entry: segOff[j] as split_unpack_u32 writes it.
__device__ __forceinline__ unsigned int seg_entry(const unsigned int *offsets, unsigned int nodes, unsigned int n,
                                                  unsigned int j) {
	if (j <= nodes) return offsets[j];
	if (j <= 2 * nodes + 1) return n + 1 + offsets[j - nodes - 1];
	return 2 * n + 2;
}

} // namespace kd_split

// split_unpack_u32: pre[r] = flags[r]&1, pre[n+1+r] = (flags[r]>>1)&1 for
// r < n; pre[n] = pre[2n+1] = 0; and the segment offsets of the scan:
// segOff[s] = offsets[s], segOff[nodes+1+s] = n+1+offsets[s] for s <= nodes,
// segOff[2 nodes+2] = 2n+2; state[0 .. stateWords) = 0 (split_bases_u32's
// look-back state). It also prepares the ranks' scan
// (scan.SegmentedExclusivePrepared, TilingSegBid tiles): tileSeg[t] = the first
// entry j with segOff[j] >= kTile t, for t < tiles (thread j writes the
// tiles whose start lies in (segOff[j-1], segOff[j]]: the segment offsets
// are non-decreasing, so each tile gets one entry, and a segment that spans
// many tiles has its thread write them all), and zeroes the scan's state
// sstate[0 .. sstateWords). Threads: at least max(n+1, 2 nodes+3,
// stateWords, sstateWords).
extern "C" __global__ void split_unpack_u32(const unsigned int *flags, unsigned int n, unsigned int *pre,
                                            const unsigned int *offsets, unsigned int nodes, unsigned int *segOff,
                                            unsigned long long *state, unsigned int stateWords,
                                            unsigned int *tileSeg, unsigned int tiles,
                                            unsigned long long *sstate, unsigned int sstateWords) {
	constexpr unsigned int kTile = kd_scan::TilingSegBid::kTile;
	unsigned int r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r < n) {
		unsigned int f = flags[r];
		pre[r] = f & 1u;
		pre[n + 1 + r] = (f >> 1) & 1u;
	} else if (r == n) {
		pre[n] = 0;
		pre[2 * n + 1] = 0;
	}
	if (r <= nodes) {
		unsigned int o = offsets[r];
		segOff[r] = o;
		segOff[nodes + 1 + r] = n + 1 + o;
	} else if (r == nodes + 1) {
		segOff[2 * nodes + 2] = 2 * n + 2;
	}
	if (r < 2 * nodes + 3) {
		unsigned int v = kd_split::seg_entry(offsets, nodes, n, r);
		unsigned int t0 = r == 0 ? 0u : kd_split::seg_entry(offsets, nodes, n, r - 1) / kTile + 1;
		unsigned int t1 = min(v / kTile + 1, tiles);
		for (unsigned int t = t0; t < t1; t++) tileSeg[t] = r;
	}
	if (r < stateWords) state[r] = 0;
	if (r < sstateWords) sstate[r] = 0;
}

namespace kd_split {

// NodeCounts: split_bases_u32's items, node s's left plus right copy
// count (a node's left count is its last reference's left rank plus that
// reference's left flag, 0 for an empty node; the same on the right),
// which it also writes to countL and countR; item nodes is 0.
struct NodeCounts {
	const unsigned int *offsets, *pre, *flags;
	unsigned int nodes, n;
	unsigned int *countL, *countR;

	__device__ __forceinline__ unsigned int operator()(unsigned long long s) const {
		if (s >= nodes) return 0;
		unsigned int l = 0, r = 0;
		unsigned int o0 = offsets[s], o1 = offsets[s + 1];
		if (o1 > o0) {
			unsigned int f = flags[o1 - 1];
			l = pre[o1 - 1] + (f & 1u);
			r = pre[n + o1] + ((f >> 1) & 1u);
		}
		countL[s] = l;
		countR[s] = r;
		return l + r;
	}
};

} // namespace kd_split

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
