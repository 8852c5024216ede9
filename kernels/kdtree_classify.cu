// kdtree_classify.cu: the large-node phase's classification of each
// reference against its node's split (clipping the straddling ones) and the
// level's addresses (the ranks, the children's bases and the node words in
// one launch), as levelGo in kdtree/internal/refbuild/level.go.

#include "kdtree.cuh"

namespace kd_tree {

// classify_clip: the child boxes of reference r of node s, which straddles
// the split plane (axis a, position pos): the triangle clipped to the node
// box and then to each side (clipBoth in kdtree/internal/refbuild/level.go), written to
// clipL/clipR; returns r's flags (kClipped and the sides it reaches).
__device__ unsigned int classify_clip(unsigned int r, unsigned int s, int a, float pos,
                                      const float *box, const unsigned int *tri, const float *tv,
                                      const float *nbox, float *clipL, float *clipR) {
	const float *b = box + 6 * (size_t)r;
	const float *nb = nbox + 6 * (size_t)s;
	float lb[6], rb[6], bl[6], br[6];
	for (int i = 0; i < 6; i++) lb[i] = rb[i] = nb[i];
	lb[3 + a] = pos;
	rb[a] = pos;
	bool okL = false, okR = false;
	Poly p, q;
	double lo[3], hi[3];
	const Poly *c = clip_box(tv + 9 * (size_t)tri[r], nb, p, q, lo, hi);
	if (c != nullptr) {
		// The side clips go to the other polygon; each leaves its bounds.
		Poly &o = c == &p ? q : p;
		clip_poly(*c, a, (double)pos, false, o, lo, hi);
		if (o.n > 0) okL = box_of_span(lo, hi, lb, b, bl);
		clip_poly(*c, a, (double)pos, true, o, lo, hi);
		if (o.n > 0) okR = box_of_span(lo, hi, rb, b, br);
	}
	if (!okL && !okR) {
		for (int i = 0; i < 6; i++) bl[i] = br[i] = b[i];
		bl[3 + a] = pos;
		br[a] = pos;
		okL = okR = true;
	}
	for (int i = 0; i < 6; i++) {
		clipL[6 * (size_t)r + i] = bl[i];
		clipR[6 * (size_t)r + i] = br[i];
	}
	return kClipped | (okL ? kLeft : 0) | (okR ? kRight : 0);
}

} // namespace kd_tree

namespace kd_tree {

// count_copies adds, for every lane of the warp (all of them call it), the
// copies its flags f send left and right (none when f is 0) to its node
// s's counts: one atomic per node and side for the warp's lanes of that
// node (a warp's references are mostly one node's).
__device__ __forceinline__ void count_copies(unsigned int s, unsigned int f, unsigned int lane,
                                             unsigned int *countL, unsigned int *countR) {
	unsigned int key = f != 0 ? s : 0xFFFFFFFFu;
	unsigned int peers = __match_any_sync(0xFFFFFFFFu, key);
	unsigned int left = __ballot_sync(0xFFFFFFFFu, (f & kLeft) != 0) & peers;
	unsigned int right = __ballot_sync(0xFFFFFFFFu, (f & kRight) != 0) & peers;
	if (f == 0 || lane != (unsigned int)(__ffs(peers) - 1)) return;
	if (left != 0) atomicAdd(&countL[s], (unsigned int)__popc(left));
	if (right != 0) atomicAdd(&countR[s], (unsigned int)__popc(right));
}

} // namespace kd_tree

// kdtree_classify_f32: the flags of every reference (classify and clipBoth
// in kdtree/internal/refbuild/level.go), 0 for the padding at or past offsets[nodes] (see
// kdtree_tail_f32); straddling references get their clipped child boxes
// in clipL/clipR. It also zeroes state[0 .. stateWords), the look-back
// state of the level's node-words scan (kdtree_addresses_u32;
// grid-stride), and, when
// pre is not null, does split_unpack_u32's work for the level's
// split.AddressesUnpacked (kernels/split.cuh; the parameters from pre on
// are split.Scratch.Unpacking's): one launch less a level. It adds every
// node's left and right copies to countL[s] and countR[s] (zero before it:
// kdtree_choose_f32 or kdtree_decide_f32 clears them), the children's
// counts that kdtree_addresses_u32 scans into their bases. Blocks of at
// most 256 threads.
//
// The clipping is long and only the straddling references need it, a few
// in a warp: done where they lie, every warp with one of them ran it. So
// the block first lists its straddling references in shared memory (a
// warp's in reference order, the warps in any order: each is clipped on
// its own), then its threads clip them from the list: the clipping runs
// on as few warps as the list needs.
extern "C" __global__ void __launch_bounds__(256) kdtree_classify_f32(
    const float *box, const unsigned int *tri, const float *tv, const float *nbox, const unsigned int *offsets,
    unsigned int nodes, unsigned int n, const unsigned int *dec, unsigned int *flags, float *clipL, float *clipR,
    unsigned long long *state, unsigned int stateWords, unsigned int *pre, unsigned int *segOff,
    unsigned long long *bstate, unsigned int bstateWords, unsigned int *tileSeg, unsigned int tiles,
    unsigned long long *sstate, unsigned int sstateWords, const unsigned int *rnode, unsigned int *countL,
    unsigned int *countR) {
	using namespace kd_tree;
	kd_pdl_enter(); // a dependent launch (kdtree/internal/gpubuild/large_cuda.go)
	__shared__ unsigned int listR[256], listS[256], listN;
	unsigned int r = blockIdx.x * blockDim.x + threadIdx.x;
	for (unsigned int k = r; k < stateWords; k += gridDim.x * blockDim.x) state[k] = 0;
	if (pre != nullptr)
		kd_split::unpack_rest(r, gridDim.x * blockDim.x, n, pre, offsets, nodes, segOff, bstate, bstateWords, tileSeg,
		                      tiles, sstate, sstateWords);
	if (threadIdx.x == 0) listN = 0;
	__syncthreads();
	bool straddles = false;
	unsigned int s = 0, counted = 0; // counted: the flags count_copies adds for r
	if (r < n && r >= offsets[nodes]) {
		flags[r] = 0; // padding past the last node's end (see kdtree_tail_f32)
		if (pre != nullptr) kd_split::unpack_flag(r, 0, n, pre);
	} else if (r < n) {
		s = rnode[r];
		const unsigned int *d = dec + 3 * s;
		unsigned int f = 0;
		if (d[0] == kSplit) {
			int a = (int)d[1];
			float pos = __uint_as_float(d[2]);
			const float *b = box + 6 * (size_t)r;
			if (b[3 + a] > pos) f = kRight;
			if (b[a] < pos || f == 0) f |= kLeft;
		}
		straddles = f == (kLeft | kRight);
		if (!straddles) {
			flags[r] = f;
			if (pre != nullptr) kd_split::unpack_flag(r, f, n, pre);
			counted = f;
		}
	}
	unsigned int lane = threadIdx.x & 31u;
	count_copies(s, counted, lane, countL, countR);
	unsigned int mask = __ballot_sync(0xFFFFFFFFu, straddles);
	unsigned int first = 0;
	if (lane == 0 && mask != 0) first = atomicAdd(&listN, (unsigned int)__popc(mask));
	first = __shfl_sync(0xFFFFFFFFu, first, 0);
	if (straddles) {
		unsigned int k = first + __popc(mask & ((1u << lane) - 1u));
		listR[k] = r;
		listS[k] = s;
	}
	__syncthreads();
	unsigned int count = listN;
	for (unsigned int k = threadIdx.x; k < count; k += blockDim.x) {
		unsigned int rr = listR[k], ss = listS[k];
		const unsigned int *d = dec + 3 * ss;
		unsigned int f = classify_clip(rr, ss, (int)d[1], __uint_as_float(d[2]), box, tri, tv, nbox, clipL, clipR);
		flags[rr] = f;
		if (pre != nullptr) kd_split::unpack_flag(rr, f, n, pre);
		if (f & kLeft) atomicAdd(&countL[ss], 1u);
		if (f & kRight) atomicAdd(&countR[ss], 1u);
	}
}

namespace kd_tree {

// NodeWords: item j of the node-words scan (see kdtree_addresses_u32).
struct NodeWords {
	const unsigned int *info, *dec;
	unsigned int nodes;

	__device__ __forceinline__ unsigned int operator()(unsigned long long j) const {
		if (j < nodes) return dec[3 * j] == kSplit ? 1u : 0u;
		if (j > nodes && j < 2 * (unsigned long long)nodes + 1) {
			unsigned long long s = j - nodes - 1;
			unsigned int fate = dec[3 * s];
			return (fate == kLeaf || fate == kSmall) ? info[4 * s + 1] : 0u;
		}
		if (j >= 2 * (unsigned long long)nodes + 2 && j < 3 * (unsigned long long)nodes + 2) {
			// A small root (a padding node, info's fourth word kPadBudget, is none).
			unsigned long long s = j - 2 * (unsigned long long)nodes - 2;
			return dec[3 * s] == kSmall && info[4 * s + 3] != kPadBudget ? 1u : 0u;
		}
		return 0;
	}
};

} // namespace kd_tree

namespace kd_tree {

// ChildCounts: the child bases' scan items (kdtree_addresses_u32): node
// s's left plus right copy count, which kdtree_classify_f32 counted into
// countL[s] and countR[s]; item nodes is 0.
struct ChildCounts {
	const unsigned int *countL, *countR;
	unsigned int nodes;

	__device__ __forceinline__ unsigned int operator()(unsigned long long s) const {
		return s < nodes ? countL[s] + countR[s] : 0u;
	}
};

} // namespace kd_tree

// kdtree_addresses_u32: a level's three scans in one launch, each on its
// own blocks (all three can run once the references are classified: one
// launch where there were two, the ranks' segmented scan and then
// kdtree_addresses_u32):
//   - blocks [0, rankBlocks): the ranks, segscan_off_excl_u32 on pre (in
//     place: m items, segOff's segEntries segment starts, tileSeg, sstate;
//     split.Unpacking, which kdtree_classify_f32 readied);
//   - the next basesBlocks: the children's bases, base[s] = the copies of
//     the nodes before s (ChildCounts, countL and countR from
//     kdtree_classify_f32), and their total in *total;
//   - the rest: the node words, which place a level's children and parked
//     references, laid out like the split's unpacked flags: word s = 1 when
//     node s splits, word nodes = 0, word nodes+1+s = its reference count
//     when it ends here (leaf or small), else 0, word 2·nodes+1 = 0, word
//     2·nodes+2+s = 1 when node s is a small root (not padding), and word
//     3·nodes+2 = 0; the scan makes them as it loads them (NodeWords).
//     After it, npre holds their exclusive scan: node s's children are
//     nodes 2·npre[s] and 2·npre[s]+1 of the next level (2·npre[nodes]
//     nodes in all), its parked references start npre[nodes+1+s] -
//     npre[nodes+1] after the level's first, and it is small root
//     npre[2·nodes+2+s] - npre[2·nodes+2] of the level.
// Blocks of 256 threads; the three look-back states zeroed
// (kdtree_classify_f32 does it).
extern "C" __global__ void __launch_bounds__(256, 4)
    kdtree_addresses_u32(unsigned int *pre, const unsigned int *segOff, const unsigned int *tileSeg,
                         unsigned long long segEntries, unsigned long long m, unsigned long long *sstate,
                         unsigned int rankBlocks, const unsigned int *countL, const unsigned int *countR,
                         unsigned int nodes, unsigned int *base, unsigned long long *bstate, unsigned int *total,
                         unsigned int basesBlocks, const unsigned int *info, const unsigned int *dec,
                         unsigned int *npre, unsigned long long *wstate) {
	kd_pdl_enter(); // a dependent launch (kdtree/internal/gpubuild/large_cuda.go)
	if (blockIdx.x < rankBlocks) {
		kd_scan::segmented_offsets<kd_scan::TilingSegBid, unsigned, false>(pre, segOff, tileSeg, segEntries, pre, m,
		                                                                    sstate);
	} else if (blockIdx.x < rankBlocks + basesBlocks) {
		kd_scan::IoMade<kd_tree::ChildCounts> io{{countL, countR, nodes}, base, nodes};
		kd_scan::tile_scan<kd_scan::Add<unsigned int>, kd_scan::TilingMade>(io, (unsigned long long)nodes + 1, bstate,
		                                                                     total, rankBlocks);
	} else {
		const unsigned long long w = 3 * (unsigned long long)nodes + 3;
		kd_scan::IoMade<kd_tree::NodeWords> io{{info, dec, nodes}, npre, w};
		kd_scan::tile_scan<kd_scan::Add<unsigned int>, kd_scan::TilingMade>(io, w, wstate, nullptr,
		                                                                     rankBlocks + basesBlocks);
	}
}
