// split.cuh: the unpacking of split.Addresses' flags (kernels/split.cu), as
// device functions, so that a kernel which computes a level's flags can do
// split_unpack_u32's work in its own launch (kdtree_classify_f32; the Go
// side: split.Scratch.Unpacking and split.AddressesUnpacked).
//
// Layout of pre (2(n+1) entries): pre[r] left flag of r, pre[n] = 0,
// pre[n+1+r] right flag of r, pre[2n+1] = 0. Segments (segOff, 2 nodes + 3
// entries): [offsets[s], offsets[s+1]) for each node s, [n, n+1), then
// [n+1+offsets[s], n+1+offsets[s+1]) for each node, [2n+1, 2n+2).
#pragma once
#include "scan.cuh"

namespace kd_split {

// seg_entry: segOff[j] as unpacking writes it.
__device__ __forceinline__ unsigned int seg_entry(const unsigned int *offsets, unsigned int nodes, unsigned int n,
                                                  unsigned int j) {
	if (j <= nodes) return offsets[j];
	if (j <= 2 * nodes + 1) return n + 1 + offsets[j - nodes - 1];
	return 2 * n + 2;
}

// unpack_flag: reference r's (r < n) flags f into pre.
__device__ __forceinline__ void unpack_flag(unsigned int r, unsigned int f, unsigned int n, unsigned int *pre) {
	pre[r] = f & 1u;
	pre[n + 1 + r] = (f >> 1) & 1u;
}

// unpack_rest: the rest of the unpacking, by the threads i, i + stride, ...
// of a launch: pre[n] = pre[2n+1] = 0; the segment offsets segOff[s] =
// offsets[s], segOff[nodes+1+s] = n+1+offsets[s] for s <= nodes,
// segOff[2 nodes+2] = 2n+2; the look-back state of split_bases_u32
// (state[0 .. stateWords)) zeroed; and the ranks' scan prepared
// (scan.SegmentedExclusivePrepared, TilingSegBid tiles): tileSeg[t] = the
// first entry j with segOff[j] >= kTile t for t < tiles (entry j writes the
// tiles whose start lies in (segOff[j-1], segOff[j]]: the segment offsets
// are non-decreasing, so each tile gets one entry, and a segment that spans
// many tiles has its entry write them all), its state sstate[0 ..
// sstateWords) zeroed.
__device__ __forceinline__ void unpack_rest(unsigned int i, unsigned int stride, unsigned int n, unsigned int *pre,
                                            const unsigned int *offsets, unsigned int nodes, unsigned int *segOff,
                                            unsigned long long *state, unsigned int stateWords,
                                            unsigned int *tileSeg, unsigned int tiles, unsigned long long *sstate,
                                            unsigned int sstateWords) {
	constexpr unsigned int kTile = kd_scan::TilingSegBid::kTile;
	if (i == 0) {
		pre[n] = 0;
		pre[2 * n + 1] = 0;
		segOff[2 * nodes + 2] = 2 * n + 2;
	}
	for (unsigned int r = i; r <= nodes; r += stride) {
		unsigned int o = offsets[r];
		segOff[r] = o;
		segOff[nodes + 1 + r] = n + 1 + o;
	}
	for (unsigned int r = i; r < 2 * nodes + 3; r += stride) {
		unsigned int v = seg_entry(offsets, nodes, n, r);
		unsigned int t0 = r == 0 ? 0u : seg_entry(offsets, nodes, n, r - 1) / kTile + 1;
		unsigned int t1 = min(v / kTile + 1, tiles);
		for (unsigned int t = t0; t < t1; t++) tileSeg[t] = r;
	}
	for (unsigned int k = i; k < stateWords; k += stride) state[k] = 0;
	for (unsigned int k = i; k < sstateWords; k += stride) sstate[k] = 0;
}

} // namespace kd_split

namespace kd_split {

// NodeCounts: split_bases_u32's items, node s's left plus right copy count
// (a node's left count is its last reference's left rank plus that
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
