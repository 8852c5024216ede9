// kdtree_choose.cu: the large-node phase's decisions and split choice: each
// node's fate (a leaf, a small root, an empty-space cut, or the binned SAH
// over its references' boxes) as builder.decide in kdtree/internal/refbuild/level.go.

#include "kdtree.cuh"

namespace kd_tree {

// decide_node: builder.decide up to the binned SAH for node s.
// info[4s..4s+3] = off, cnt, depth, budget (a node above its budget becomes
// a leaf, as one at maxDepth does); the node's tight bounds are
// tight[6s..6s+5] (the segmented box reduction of reduce/, -0 not yet
// canonicalised) or, when tkey is not null, the bounds whose keys (key_of:
// 3 minima, 3 maxima) the level before's kdtree_tail_f32 left in
// tkey[6s..6s+5]. Returns the fate; for kSplit (an empty-space cut) sets
// axis and pos, for kPending g = lo, hi, w of each axis's bins. A pure
// function of its inputs: kdtree_choose_f32 calls it for the same node in
// several blocks and relies on every call giving the same bits.
__device__ __forceinline__ int decide_node(unsigned int s, const float *nbox, const unsigned int *info,
                                           const float *tight, const unsigned int *tkey, int smallNode,
                                           int maxDepth, int bins, int &axis, float &pos, float *g) {
	unsigned int cnt = info[4 * s + 1];
	int depth = (int)info[4 * s + 2];
	axis = 0;
	pos = 0.0f;
	if ((int)cnt <= smallNode) return kSmall;
	if (depth >= maxDepth || cnt > info[4 * s + 3]) return kLeaf;
	const float *box = nbox + 6 * (size_t)s;
	float t[6];
	for (int i = 0; i < 6; i++) {
		t[i] = tkey != nullptr ? float_of(tkey[6 * (size_t)s + i]) : tight[6 * (size_t)s + i];
		if (t[i] == 0.0f) t[i] = 0.0f; // canonZero
	}
	float bestFrac = kEmptyCutoff;
	int best = -1;
	for (int a = 0; a < 3; a++) {
		float ext = box[3 + a] - box[a];
		if (!(ext > 0.0f)) continue;
		float f = (t[a] - box[a]) / ext;
		if (f > bestFrac && t[a] > box[a] && t[a] < box[3 + a]) {
			bestFrac = f;
			best = a;
			pos = t[a];
		}
		f = (box[3 + a] - t[3 + a]) / ext;
		if (f > bestFrac && t[3 + a] > box[a] && t[3 + a] < box[3 + a]) {
			bestFrac = f;
			best = a;
			pos = t[3 + a];
		}
	}
	if (best >= 0) {
		axis = best;
		return kSplit;
	}
	pos = 0.0f;
	for (int a = 0; a < 3; a++) {
		g[3 * a] = t[a];
		g[3 * a + 1] = t[3 + a];
		g[3 * a + 2] = (t[3 + a] - t[a]) / (float)bins;
	}
	return kPending;
}

// set_dec writes a node's decision: fate, axis, float bits of pos.
__device__ __forceinline__ void set_dec(unsigned int *dec, unsigned int s, int fate, int axis, float pos) {
	unsigned int *d = dec + 3 * s;
	d[0] = (unsigned int)fate;
	d[1] = (unsigned int)axis;
	d[2] = __float_as_uint(pos);
}

// clear_counts zeroes node s's copy counts, which kdtree_classify_f32
// adds up: dec[3·nodes + s] (left) and dec[4·nodes + s] (right), after the
// level's decisions (the layout of d.dec in kdtree/internal/gpubuild/large_cuda.go).
__device__ __forceinline__ void clear_counts(unsigned int *dec, unsigned int nodes, unsigned int s) {
	dec[3 * (size_t)nodes + s] = 0;
	dec[4 * (size_t)nodes + s] = 0;
}

// ready_keys readies the keys of the next level's nodes (2·nodes, at most
// nextCap; 3 minima then 3 maxima each) for kdtree_tail_f32's minima and
// maxima, thread i of threads taking words i, i+threads, … (coalesced).
__device__ __forceinline__ void ready_keys(unsigned int *tkeyNext, unsigned int nodes, unsigned int nextCap,
                                           unsigned int i, unsigned int threads) {
	unsigned int words = 6 * min(2 * nodes, nextCap);
	for (unsigned int k = i; k < words; k += threads) tkeyNext[k] = k % 6 < 3 ? kKeyMinId : kKeyMaxId;
}

} // namespace kd_tree

// kdtree_decide_f32: decide_node for every node, one thread per node.
// Writes dec[3s..3s+2] = fate, axis, float bits of pos (kPending for the
// nodes the binned SAH decides), and for pending nodes geo[9s..] = lo, hi,
// w of each axis's bins; clears the copy counts (clear_counts). When
// tkeyNext is not null, the threads also ready the next level's keys
// (ready_keys).
extern "C" __global__ void kdtree_decide_f32(const float *nbox, const unsigned int *info, unsigned int nodes,
                                             const float *tight, const unsigned int *tkey, int smallNode,
                                             int maxDepth, int bins, unsigned int *dec, float *geo,
                                             unsigned int *tkeyNext, unsigned int nextCap) {
	using namespace kd_tree;
	kd_pdl_enter(); // a dependent launch (kdtree/internal/gpubuild/large_cuda.go)
	unsigned int s = blockIdx.x * blockDim.x + threadIdx.x;
	if (tkeyNext != nullptr) ready_keys(tkeyNext, nodes, nextCap, s, gridDim.x * blockDim.x);
	if (s >= nodes) return;
	clear_counts(dec, nodes, s);
	int axis;
	float pos, g[9];
	int fate = decide_node(s, nbox, info, tight, tkey, smallNode, maxDepth, bins, axis, pos, g);
	set_dec(dec, s, fate, axis, pos);
	if (fate == kPending)
		for (int i = 0; i < 9; i++) geo[9 * (size_t)s + i] = g[i];
}

namespace kd_tree {

// kBinTile is the number of references one block of kdtree_bin_u32 counts:
// 512, so that the first levels have enough blocks to fill the device (a
// larger tile leaves them with a few dozen).
using kd_const::kBinTile;

// bin_box counts box b into the histogram h of a node with bins geo g.
__device__ __forceinline__ void bin_box(const float *b, const float *g, int bins, unsigned int *h) {
	for (int a = 0; a < 3; a++) {
		float lo = g[3 * a], w = g[3 * a + 2];
		atomicAdd(&h[(2 * a) * bins + bin_of(b[a], lo, w, bins)], 1u);
		atomicAdd(&h[(2 * a + 1) * bins + bin_of(b[3 + a], lo, w, bins)], 1u);
	}
}

// sah_node: bestBinned and the leaf test of pending node s (bins geo g,
// histogram h: see kdtree_bin_u32) by one warp, which then writes dec[3s..]
// and zeroes h. The lanes take the planes of an axis 32 at a time: a warp
// scan of the bin counts gives each lane its plane's nL and nR, each lane
// keeps its best plane, and a warp reduction under choice.better's total
// order (cost, axis, pos, idx) picks the plane the sequential loop of
// bestBinned picks. The counts are read past the L1 cache (__ldcg: other
// blocks of kdtree_choose_f32 wrote them).
__device__ void sah_node(unsigned int s, unsigned int lane, const float *nbox, const unsigned int *info,
                         const float *g, unsigned int *h, int bins, double ct, double ci, double keep,
                         unsigned int *dec) {
	const float *box = nbox + 6 * (size_t)s;
	unsigned int n = info[4 * s + 1];
	double bc = INFINITY;
	int ba = 3, bi = 0;
	float bp = 0.0f;
	double aN = area64(box);
	float lo[3], hi[3], w[3];
	unsigned int carryL[3], carryR[3]; // counts of bins before the chunk
#pragma unroll
	for (int a = 0; a < 3; a++) {
		lo[a] = g[3 * a];
		hi[a] = g[3 * a + 1];
		w[a] = g[3 * a + 2];
		carryL[a] = carryR[a] = 0;
	}
	// Chunk by chunk, the three axes' counts loaded together (one memory
	// round trip a chunk); the order of the candidates does not matter
	// under better's total order.
	for (int k0 = 0; k0 <= bins; k0 += 32) {
		int k = k0 + (int)lane;
		unsigned int cL[3], cR[3];
#pragma unroll
		for (int a = 0; a < 3; a++) {
			// Plane k has on its left the references starting in bins < k.
			cL[a] = cR[a] = 0;
			if (w[a] > 0.0f && k >= 1 && k <= bins) {
				cL[a] = __ldcg(&h[(2 * a) * bins + k - 1]);
				cR[a] = __ldcg(&h[(2 * a + 1) * bins + k - 1]);
			}
		}
#pragma unroll
		for (int a = 0; a < 3; a++) {
			if (!(w[a] > 0.0f)) continue; // warp-uniform
			unsigned int l = cL[a], r = cR[a];
			for (int o = 1; o < 32; o *= 2) {
				unsigned int uL = __shfl_up_sync(0xFFFFFFFFu, l, o);
				unsigned int uR = __shfl_up_sync(0xFFFFFFFFu, r, o);
				if ((int)lane >= o) {
					l += uL;
					r += uR;
				}
			}
			unsigned int nL = carryL[a] + l, nR = n - (carryR[a] + r);
			carryL[a] += __shfl_sync(0xFFFFFFFFu, l, 31);
			carryR[a] += __shfl_sync(0xFFFFFFFFu, r, 31);
			if (k > bins) continue;
			float pos = lo[a] + (float)k * w[a];
			if (k == bins) pos = hi[a];
			if (!(pos > box[a] && pos < box[3 + a])) continue;
			double aL, aR;
			child_areas(box, a, pos, aL, aR);
			double c = split_cost(ct, ci, keep, aN, aL, aR, nL, nR);
			if (better(c, a, pos, k, bc, ba, bp, bi)) {
				bc = c;
				ba = a;
				bp = pos;
				bi = k;
			}
		}
	}
	for (int o = 16; o > 0; o /= 2) {
		double c = __shfl_xor_sync(0xFFFFFFFFu, bc, o);
		int a = __shfl_xor_sync(0xFFFFFFFFu, ba, o);
		float p = __shfl_xor_sync(0xFFFFFFFFu, bp, o);
		int i = __shfl_xor_sync(0xFFFFFFFFu, bi, o);
		if (better(c, a, p, i, bc, ba, bp, bi)) {
			bc = c;
			ba = a;
			bp = p;
			bi = i;
		}
	}
	__syncwarp(); // every lane has read its bins
	for (int i = (int)lane; i < 6 * bins; i += 32) h[i] = 0;
	if (lane != 0) return;
	if (ba > 2 || !(bc < ci * (double)n)) set_dec(dec, s, kLeaf, 0, 0.0f);
	else set_dec(dec, s, kSplit, ba, bp);
}

} // namespace kd_tree

// kdtree_bin_u32: the histograms of pending nodes: hist[(s*6 + 2a)*bins +
// k] counts references whose box starts in bin k of axis a, hist[(s*6 +
// 2a+1)*bins + k] those that end there (integer sums: exact, any order).
// hist must be zero; references at or past offsets[nodes] are padding (see
// kdtree_tail_f32) and not counted. Block b counts references [b·kBinTile, (b+1)·kBinTile):
// those of the node holding the tile's first reference into a histogram in
// shared memory (6·bins words of dynamic shared memory), added to hist once
// at the end (a big node's references then cost shared-memory atomics
// only); those of later nodes in the tile (small nodes) straight into hist.
extern "C" __global__ void kdtree_bin_u32(const float *box, const unsigned int *offsets, unsigned int nodes,
                                          unsigned int n, const unsigned int *dec, const float *geo, int bins,
                                          unsigned int *hist, const unsigned int *rnode) {
	using namespace kd_tree;
	kd_pdl_enter(); // a dependent launch (kdtree/internal/gpubuild/large_cuda.go)
	extern __shared__ unsigned int sh[];
	unsigned int t0 = blockIdx.x * kBinTile;
	n = min(n, offsets[nodes]); // references past the last node's end are padding
	if (t0 >= n) return;
	unsigned int t1 = min(n - t0, kBinTile) + t0;
	unsigned int s0 = rnode[t0];
	unsigned int end0 = offsets[s0 + 1];
	bool pend0 = dec[3 * s0] == kPending;
	unsigned int hw = 6u * (unsigned int)bins;
	if (pend0)
		for (unsigned int i = threadIdx.x; i < hw; i += blockDim.x) sh[i] = 0;
	__syncthreads();
	for (unsigned int r = t0 + threadIdx.x; r < t1; r += blockDim.x) {
		const float *b = box + 6 * (size_t)r;
		if (r < end0) {
			if (pend0) bin_box(b, geo + 9 * (size_t)s0, bins, sh);
			continue;
		}
		unsigned int s = rnode[r];
		if (dec[3 * s] != kPending) continue;
		bin_box(b, geo + 9 * (size_t)s, bins, hist + (size_t)s * hw);
	}
	__syncthreads();
	if (!pend0) return;
	unsigned int *h = hist + (size_t)s0 * hw;
	for (unsigned int i = threadIdx.x; i < hw; i += blockDim.x)
		if (sh[i] != 0) atomicAdd(&h[i], sh[i]);
}

// kdtree_sah_f32: sah_node for every pending node, one warp per node
// (blockDim.x a multiple of 32). The warps zero the histograms, so that
// hist is all zero again for the next level's kdtree_bin_u32 (only pending
// nodes' histograms are ever written).
extern "C" __global__ void kdtree_sah_f32(const float *nbox, const unsigned int *info, unsigned int nodes,
                                          const float *geo, unsigned int *hist, int bins, double ct,
                                          double ci, double keep, unsigned int *dec) {
	using namespace kd_tree;
	kd_pdl_enter(); // a dependent launch (kdtree/internal/gpubuild/large_cuda.go)
	unsigned int s = (blockIdx.x * blockDim.x + threadIdx.x) / 32u;
	unsigned int lane = threadIdx.x % 32u;
	if (s >= nodes || dec[3 * s] != kPending) return; // warp-uniform
	sah_node(s, lane, nbox, info, geo + 9 * (size_t)s, hist + (size_t)s * 6 * bins, bins, ct, ci, keep, dec);
}

// kdtree_choose_f32: kdtree_decide_f32, kdtree_bin_u32 and kdtree_sah_f32
// in one launch (two launches less a level), blocks of 256 threads, one
// per kBinTile references (at least one), 6·bins words of dynamic shared
// memory. Every node's decision is decide_node's, computed where it is
// needed instead of read from dec: by each block for the nodes of its tile
// (into shared memory, a thread a node), whose references it bins as
// kdtree_bin_u32 does and of which it writes the final decisions (not
// kPending) of those whose first reference it holds (choose_own); by a
// thread per node (grid-stride, choose_empty) for the nodes of no
// reference, which also clears the copy counts and readies the next
// level's keys when tkeyNext is not null (ready_keys); and by the warp
// that runs sah_node for a pending node, in the block that counts the
// node's last tile: a block adds its counts to hist, then counts itself
// in arrive[s] for each pending node of its tile (a node within one tile
// needs no count), and the block that brings arrive[s] to the node's tile
// count has every count of the node in hist, runs sah_node on it and
// zeroes arrive[s]. hist and arrive (nodes words) must be zero and are
// zero again at the end.
namespace kd_tree {

// kChooseNodes is the number of a tile's nodes whose decisions a block of
// kdtree_choose_f32 keeps in shared memory (a tile of more, counting the
// empty ones, computes the rest where it needs them).
constexpr unsigned int kChooseNodes = 256;

// choose_empty: kdtree_choose_f32's grid-stride part: the next level's
// keys readied (when tkeyNext is not null), every node's copy counts
// cleared and the decisions of the nodes of no reference, which no tile
// holds (decide_node reads only their count).
__device__ __forceinline__ void choose_empty(const float *nbox, const unsigned int *info, unsigned int nodes,
                                             const float *tight, const unsigned int *tkey, int smallNode,
                                             int maxDepth, int bins, unsigned int *dec, unsigned int *tkeyNext,
                                             unsigned int nextCap) {
	unsigned int gid = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
	if (tkeyNext != nullptr) ready_keys(tkeyNext, nodes, nextCap, gid, threads);
	int axis;
	float pos, g[9];
	for (unsigned int s = gid; s < nodes; s += threads) {
		clear_counts(dec, nodes, s);
		if (info[4 * s + 1] != 0) continue;
		int fate = decide_node(s, nbox, info, tight, tkey, smallNode, maxDepth, bins, axis, pos, g);
		set_dec(dec, s, fate, axis, pos);
	}
}

// choose_own: the decision of node s, from a block whose tile holds its
// references: written by the block whose tile holds its first one (each
// node with references has one such block) unless the binned SAH is still
// to come (kPending).
__device__ __forceinline__ void choose_own(unsigned int s, int fate, int axis, float pos, unsigned int t0,
                                           const unsigned int *info, unsigned int *dec) {
	if (fate != kPending && info[4 * s] >= t0) set_dec(dec, s, fate, axis, pos);
}

} // namespace kd_tree

extern "C" __global__ void __launch_bounds__(256, 3) kdtree_choose_f32(
    const float *nbox, const unsigned int *info, const unsigned int *offsets, unsigned int nodes, unsigned int n,
    const float *tight, const unsigned int *tkey, int smallNode, int maxDepth, int bins, unsigned int *dec,
    unsigned int *tkeyNext, unsigned int nextCap, const float *box, unsigned int *hist, unsigned int *arrive,
    double ct, double ci, double keep, const unsigned int *rnode) {
	using namespace kd_tree;
	kd_pdl_enter(); // a dependent launch (kdtree/internal/gpubuild/large_cuda.go)
	extern __shared__ unsigned int sh[];
	__shared__ unsigned int fin[kBinTile]; // the pending nodes this block finishes
	__shared__ unsigned int nfin;
	__shared__ int cfate[kChooseNodes];
	__shared__ float cgeo[kChooseNodes][9];
	choose_empty(nbox, info, nodes, tight, tkey, smallNode, maxDepth, bins, dec, tkeyNext, nextCap);
	unsigned int t0 = blockIdx.x * kBinTile;
	n = min(n, offsets[nodes]); // references past the last node's end are padding
	if (t0 >= n) return;        // block-uniform
	unsigned int t1 = min(n - t0, kBinTile) + t0;
	unsigned int s0 = rnode[t0], s1 = rnode[t1 - 1];
	unsigned int m = min(s1 - s0 + 1, kChooseNodes), hw = 6u * (unsigned int)bins;
	int axis;
	float pos;
	// The tile's nodes' decisions, kept for the binning; each node's final
	// one written by the block of its first reference (choose_own).
	if (threadIdx.x < m) {
		unsigned int s = s0 + threadIdx.x;
		int fate = decide_node(s, nbox, info, tight, tkey, smallNode, maxDepth, bins, axis, pos, cgeo[threadIdx.x]);
		cfate[threadIdx.x] = fate;
		choose_own(s, fate, axis, pos, t0, info, dec);
	}
	float g[9];
	for (unsigned int j = m + threadIdx.x; j <= s1 - s0; j += blockDim.x) { // nodes past the cache (rare)
		unsigned int s = s0 + j;
		if (info[4 * s + 1] == 0) continue;
		int fate = decide_node(s, nbox, info, tight, tkey, smallNode, maxDepth, bins, axis, pos, g);
		choose_own(s, fate, axis, pos, t0, info, dec);
	}
	if (threadIdx.x == 0) nfin = 0;
	for (unsigned int i = threadIdx.x; i < hw; i += blockDim.x) sh[i] = 0;
	__syncthreads();

	// The histograms, as kdtree_bin_u32.
	unsigned int end0 = offsets[s0 + 1];
	bool pend0 = cfate[0] == kPending;
	unsigned int cs = 0xFFFFFFFFu; // the node whose decision is in cf, cg
	int cf = kSmall;
	const float *cg = g;
	for (unsigned int r = t0 + threadIdx.x; r < t1; r += blockDim.x) {
		const float *b = box + 6 * (size_t)r;
		if (r < end0) {
			if (pend0) bin_box(b, cgeo[0], bins, sh);
			continue;
		}
		unsigned int s = rnode[r];
		if (s != cs) {
			cs = s;
			if (s - s0 < m) {
				cf = cfate[s - s0];
				cg = cgeo[s - s0];
			} else {
				cf = decide_node(s, nbox, info, tight, tkey, smallNode, maxDepth, bins, axis, pos, g);
				cg = g;
			}
		}
		if (cf == kPending) bin_box(b, cg, bins, hist + (size_t)s * hw);
	}
	__syncthreads();
	if (pend0) {
		unsigned int *h = hist + (size_t)s0 * hw;
		for (unsigned int i = threadIdx.x; i < hw; i += blockDim.x)
			if (sh[i] != 0) atomicAdd(&h[i], sh[i]);
	}
	__threadfence(); // the counts before the arrivals
	__syncthreads();

	// Arrivals: the tile's nodes are s0 .. s1.
	for (unsigned int s = s0 + threadIdx.x; s <= s1; s += blockDim.x) {
		unsigned int off = offsets[s], end = offsets[s + 1];
		if (end == off) continue;
		int f = s - s0 < m ? cfate[s - s0]
		                   : decide_node(s, nbox, info, tight, tkey, smallNode, maxDepth, bins, axis, pos, g);
		if (f != kPending) continue;
		unsigned int tiles = (end - 1) / kBinTile - off / kBinTile + 1;
		if (tiles > 1) {
			if (atomicAdd(&arrive[s], 1u) != tiles - 1) continue;
			arrive[s] = 0;
		}
		fin[atomicAdd(&nfin, 1u)] = s;
	}
	__syncthreads();
	unsigned int nf = nfin;
	if (nf > 0) {        // block-uniform
		__threadfence(); // the other blocks' counts after their arrivals
		unsigned int lane = threadIdx.x % 32u;
		for (unsigned int i = threadIdx.x / 32u; i < nf; i += blockDim.x / 32u) { // warp-uniform
			unsigned int s = fin[i];
			const float *gs = cgeo[0];
			if (s - s0 < m) {
				gs = cgeo[s - s0];
			} else {
				decide_node(s, nbox, info, tight, tkey, smallNode, maxDepth, bins, axis, pos, g);
				gs = g;
			}
			sah_node(s, lane, nbox, info, gs, hist + (size_t)s * hw, bins, ct, ci, keep, dec);
		}
	}
}
