// split.cu: addresses of the reference copies of every node of a kd-tree
// level (split.Addresses). A global exclusive scan over the unpacked flags
// (scan.Exclusive) replaces a segmented scan: the rank of a reference within
// its node is its prefix minus the prefix at the node's first reference.
//
// Layout of pre (2(n+1) entries): pre[r] left flag of r, pre[n] = 0,
// pre[n+1+r] right flag of r, pre[2n+1] = 0; after the scan pre[n] is the
// number of left copies and pre[n+1+r] - pre[n+1] the right rank of r.

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
// r < n; pre[n] = pre[2n+1] = 0.
extern "C" __global__ void split_unpack_u32(const unsigned int *flags, unsigned int n, unsigned int *pre) {
	unsigned int r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r < n) {
		unsigned int f = flags[r];
		pre[r] = f & 1u;
		pre[n + 1 + r] = (f >> 1) & 1u;
	} else if (r == n) {
		pre[n] = 0;
		pre[2 * n + 1] = 0;
	}
}

// split_counts_u32: per node s < nodes the left and right copy counts, and
// tot[s] = their sum (tot[nodes] = 0, so that an exclusive scan of tot
// gives every node's child base and the grand total at tot[nodes]).
extern "C" __global__ void split_counts_u32(const unsigned int *offsets, unsigned int nodes, const unsigned int *pre,
                                            unsigned int n, unsigned int *countL, unsigned int *countR,
                                            unsigned int *tot) {
	unsigned int s = blockIdx.x * blockDim.x + threadIdx.x;
	if (s < nodes) {
		unsigned int o0 = offsets[s], o1 = offsets[s + 1];
		unsigned int l = pre[o1] - pre[o0];
		unsigned int r = pre[n + 1 + o1] - pre[n + 1 + o0];
		countL[s] = l;
		countR[s] = r;
		tot[s] = l + r;
	} else if (s == nodes) {
		tot[nodes] = 0;
	}
}

// split_dest_u32: the destination of each copy of reference r (0xFFFFFFFF
// where there is none), and childBase[s] = base[s] for s < nodes.
extern "C" __global__ void split_dest_u32(const unsigned int *flags, const unsigned int *offsets, unsigned int n,
                                          unsigned int nodes, const unsigned int *pre, const unsigned int *base,
                                          const unsigned int *countL, unsigned int *dstL, unsigned int *dstR,
                                          unsigned int *childBase) {
	unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < nodes) childBase[i] = base[i];
	if (i >= n) return;
	unsigned int s = kd_split::node_of(offsets, nodes, i);
	unsigned int o0 = offsets[s], f = flags[i];
	unsigned int dl = 0xFFFFFFFFu, dr = 0xFFFFFFFFu;
	if (f & 1u) dl = base[s] + (pre[i] - pre[o0]);
	if (f & 2u) dr = base[s] + countL[s] + (pre[n + 1 + i] - pre[n + 1 + o0]);
	dstL[i] = dl;
	dstR[i] = dr;
}
