// kdtree_tail.cu: the end of a large-node level: the references scattered
// to the children (their next level's tight bounds made on the way), the
// next level's node table, and the level's log for the host.

#include "kdtree.cuh"

namespace kd_tree {

// kTailBlock: the most threads a block of kdtree_tail_f32 may have (its
// ChildKeys slots are in static shared memory).
constexpr unsigned int kTailBlock = 256;
// The words of a level's sizes (kdtree_tail_f32) and of its log's head:
// nodes, references, references parked before it, overflow, small roots
// before it, nodes of the levels before it (kdtree/internal/gpubuild/large_cuda.go: szWords).
using kd_const::kSizeWords;

// top_list: where the build's list of large-phase nodes starts in the
// small-root words sroot of room rootCap (kdtree/internal/gpubuild/small_cuda.go's smallAt:
// past the roots' words, 12·rootCap + 5 of them), and its room, 4·rootCap
// nodes of 3 words (kdtree/internal/gpubuild/top_cuda.go).
__device__ __forceinline__ unsigned int *top_list(unsigned int *sroot, unsigned int rootCap) {
	return sroot + 12 * (size_t)rootCap + 5;
}
__device__ __forceinline__ unsigned int top_cap(unsigned int rootCap) { return 4 * rootCap; }

// ChildKeys: the next level's tight bounds made as the references are
// scattered, each child's the minima and maxima of its copies' boxes over
// order-preserving keys (key_of: exact, in any order, so they equal
// reduce's segmented box reduction of the next level, which they replace).
// A block first folds its copies into shared memory, one slot per child:
// its references lie in consecutive nodes s0..s1, and each of those that
// splits holds at least one of them, so at most blockDim of them split and
// child c has slot c - 2·pre[s0] < 2·(pre[s1] - pre[s0]) + 2 <= 2·blockDim
// (a child past the slots, which cannot happen, would take global atomics
// at once); then one atomic per touched slot and word folds the slots into
// tkey (6 words a child: 3 minima, 3 maxima, readied by the decisions' kernel),
// for children below cap.
struct ChildKeys {
	unsigned int *slots;          // in shared memory, 6 words each; null: off
	unsigned int nslots, c0, cap; // slot k is child c0 + k; children below cap
	unsigned int *tkey;

	__device__ __forceinline__ bool on() const { return slots != nullptr; }

	__device__ __forceinline__ void add(unsigned int c, const float *b) {
		unsigned int *k = c - c0 < nslots ? slots + 6 * (c - c0) : (c < cap ? tkey + 6 * (size_t)c : nullptr);
		if (k == nullptr) return;
		for (int i = 0; i < 3; i++) atomicMin(&k[i], key_of(b[i]));
		for (int i = 3; i < 6; i++) atomicMax(&k[i], key_of(b[i]));
	}
};

// scatter_ref: reference r's copies (flags f != 0) to their places in the
// next level: node s's children start at base[s] = cnt[2·nodes+s], the left
// one holds cnt[s] copies, and r's ranks among its node's left and right
// copies are ranks[r] and ranks[n+1+r] (split.Addresses without
// destinations, n its reference count); the copies' boxes go into keys
// and their nodes into nrnode (node s's children are 2·pre[s] and
// 2·pre[s]+1).
__device__ __forceinline__ void scatter_ref(unsigned int r, unsigned int s, unsigned int f, const unsigned int *tri,
                                            const float *box, const unsigned int *ranks, unsigned int n,
                                            const unsigned int *cnt, unsigned int nodes, const float *clipL,
                                            const float *clipR, unsigned int *ntri, float *nboxOut,
                                            const unsigned int *pre, ChildKeys &keys, unsigned int *nrnode) {
	unsigned int t = tri[r];
	const float *bl = box + 6 * (size_t)r, *br = bl;
	if (f & kClipped) {
		bl = clipL + 6 * (size_t)r;
		br = clipR + 6 * (size_t)r;
	}
	unsigned int base = cnt[2 * nodes + s];
	if (f & kLeft) {
		unsigned int d = base + ranks[r];
		ntri[d] = t;
		nrnode[d] = 2 * pre[s];
		for (int i = 0; i < 6; i++) nboxOut[6 * (size_t)d + i] = bl[i];
		if (keys.on()) keys.add(2 * pre[s], bl);
	}
	if (f & kRight) {
		unsigned int d = base + cnt[s] + ranks[n + 1 + r];
		ntri[d] = t;
		nrnode[d] = 2 * pre[s] + 1;
		for (int i = 0; i < 6; i++) nboxOut[6 * (size_t)d + i] = br[i];
		if (keys.on()) keys.add(2 * pre[s] + 1, br);
	}
}

// park_ref: reference r copied out, its node s ending here (leaf or small
// root): to ptri/pbox[parkBase + pre[nodes+1+s] - pre[nodes+1] + r -
// offsets[s]] (pre: the scanned node words, kdtree_addresses_u32).
__device__ __forceinline__ void park_ref(unsigned int r, unsigned int s, const unsigned int *tri, const float *box,
                                         const unsigned int *offsets, const unsigned int *pre, unsigned int nodes,
                                         unsigned int parkBase, unsigned int *ptri, float *pbox) {
	unsigned int d = parkBase + (pre[nodes + 1 + s] - pre[nodes + 1]) + (r - offsets[s]);
	ptri[d] = tri[r];
	for (int i = 0; i < 6; i++) pbox[6 * (size_t)d + i] = box[6 * (size_t)r + i];
}

} // namespace kd_tree

// next_node: node s's part of the next level's node table, made from this
// level's (the per-node bookkeeping of levelGo): when s splits at (a, pos)
// with child counts cl = cnt[s], cr = cnt[nodes+s] and child base cb =
// cnt[2·nodes+s] (split.Addresses), children j = 2·pre[s] and j+1 get
//   offsets[j] = cb, offsets[j+1] = cb + cl,
//   info[4j..] = cb, cl, depth+1, bl and info[4(j+1)..] = cb+cl, cr, depth+1, br
//   (the children's budgets: child_budget of the node's, info[4s+3]),
//   boxes: the node's box with hi[a] = pos (below) and lo[a] = pos (above)
//   (childBoxes in kdtree/internal/refbuild/level.go).
// The table has the layout of a level of `layout` nodes (offsets at 0,
// info at layout+1, boxes at 5·layout+1; large_cuda.go's upload) and holds
// next = 2·pre[nodes] <= layout nodes; pad_node writes the rest.
namespace kd_tree {
__device__ __forceinline__ void next_node(unsigned int s, const float *nbox, const unsigned int *info,
                                          const unsigned int *dec, const unsigned int *cnt, const unsigned int *pre,
                                          unsigned int nodes, unsigned int layout, unsigned int *table) {
	if (s >= nodes || dec[3 * s] != kSplit) return;
	int a = (int)dec[3 * s + 1];
	float pos = __uint_as_float(dec[3 * s + 2]);
	unsigned int cl = cnt[s], cr = cnt[nodes + s], cb = cnt[2 * nodes + s];
	unsigned int depth = info[4 * s + 2] + 1;
	unsigned int budget = info[4 * s + 3];
	unsigned int j = 2 * pre[s];
	unsigned int *ninfo = table + layout + 1;
	float *nb = (float *)(table + 5 * (size_t)layout + 1);
	table[j] = cb;
	table[j + 1] = cb + cl;
	ninfo[4 * j] = cb;
	ninfo[4 * j + 1] = cl;
	ninfo[4 * j + 2] = depth;
	ninfo[4 * j + 3] = child_budget(budget, cl, cl + cr);
	ninfo[4 * j + 4] = cb + cl;
	ninfo[4 * j + 5] = cr;
	ninfo[4 * j + 6] = depth;
	ninfo[4 * j + 7] = child_budget(budget, cr, cl + cr);
	const float *b = nbox + 6 * (size_t)s;
	for (int i = 0; i < 6; i++) {
		nb[6 * (size_t)j + i] = b[i];
		nb[6 * (size_t)j + 6 + i] = b[i];
	}
	nb[6 * (size_t)j + 3 + a] = pos;
	nb[6 * (size_t)j + 6 + a] = pos;
}

// pad_node: entry j of the next level's table past its next nodes: an
// empty node at the end of the references (offsets[j] = total for next <=
// j <= layout; info = total, 0, 0, kPadBudget for j < layout: info's
// fourth word, a real node's budget below kPadBudget, marks padding). The
// level after can
// then run on any node count up to layout and any reference count: its
// padding nodes are empty (small roots of no reference, which park
// nothing and have no children) and its references at or past
// offsets[nodes] = total are padding that no kernel counts.
__device__ __forceinline__ void pad_node(unsigned int j, unsigned int next, unsigned int layout,
                                         unsigned int total, unsigned int *table) {
	if (j < next || j > layout) return;
	table[j] = total;
	if (j == layout) return;
	unsigned int *ninfo = table + layout + 1;
	ninfo[4 * j] = total;
	ninfo[4 * j + 1] = 0;
	ninfo[4 * j + 2] = 0;
	ninfo[4 * j + 3] = kPadBudget; // padding (NodeWords counts no small root here)
}
} // namespace kd_tree

// kdtree_tail_f32: the rest of a level in one launch, max(n, nodes+1,
// layout+1) threads, where n and nodes may be bounds past the level's
// references and nodes (see pad_node). The level's sizes come from the
// device: szIn = (nodes, references, references parked before the level,
// overflow, small roots before the level, nodes of the levels before it:
// kSizeWords words) as the level before wrote them, pre
// (kdtree_addresses_u32)
// and *total (split.Addresses' grand total). Thread r < n scatters
// reference r (scatter_ref, from split.Addresses' ranks and counts) and
// parks it when its node ends here (park_ref); thread j <= layout writes entry j of the next level's table
// (next_node, pad_node) when table is not null; thread 0 writes szOut, the
// next level's sizes. When the next level would not fit (more than refCap
// references, more than layout nodes, more than parkCap parked) or szIn
// says overflow, nothing is written but szOut = (0, 0, parked, 1, roots)
// and an empty next table: the host sees it and builds again on grown
// buffers. When log is not null it gets szOut's kSizeWords words, then for
// the level's real node count nn = szIn[0] the decisions (3 words a node),
// CountL, CountR and ChildBase (nn words each), so that one copy of
// kSizeWords + 6·nn words brings the host all of the level. When sroot is
// not null, thread s < nodes of a small root writes its entry of the
// build's small-root list (the order in which the host books them), if it
// is below rootCap: parked offset sroot[q], count sroot[rootCap + q], depth
// sroot[2·rootCap + q], box (float bits) sroot[3·rootCap + 6q ..+5]
// (kdtree_small_w_f32's inputs as kdtree/internal/gpubuild/small_cuda.go's smallRun lays
// them out), so that the small phase can start without the host's list
// (kdtree/internal/gpubuild/small_early.go); and every real node of the level gets its entry
// of the build's list of large-phase nodes (top_list, when below its
// room), which kdtree_top_layout_u32 lays out (kdtree/internal/gpubuild/top_cuda.go).
// When tkey is not null, the copies' boxes also make the next level's tight
// bounds there (ChildKeys; keyCap children, tkey readied by this level's
// kdtree_choose_f32 or kdtree_decide_f32), so that the next level needs no box reduction of its
// own (two launches a level fewer). The outputs are disjoint and every
// thread reads only this level's data: one launch where there were three
// kernels (the small scenes' levels are launch-bound). Blocks of at most
// kTailBlock threads.
extern "C" __global__ void __launch_bounds__(kd_tree::kTailBlock)
    kdtree_tail_f32(const unsigned int *tri, const float *box, const unsigned int *flags, const unsigned int *ranks,
                    const float *clipL, const float *clipR, unsigned int n, unsigned int *ntri, float *nboxOut,
                    const unsigned int *offsets, const unsigned int *pre, unsigned int nodes, const unsigned int *dec,
                    unsigned int *ptri, float *pbox, unsigned int parkCap, const float *nbox,
                    const unsigned int *info, const unsigned int *cnt, const unsigned int *total,
                    unsigned int refCap, unsigned int layout, unsigned int *table, const unsigned int *szIn,
                    unsigned int *szOut, unsigned int *log, unsigned int *tkey, unsigned int keyCap,
                    const unsigned int *rnode, unsigned int *nrnode, unsigned int *sroot,
                    unsigned int rootCap) {
	__shared__ unsigned int slots[2 * kd_tree::kTailBlock * 6];
	kd_pdl_enter(); // a dependent launch (kdtree/internal/gpubuild/large_cuda.go)
	unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned int next = 2 * pre[nodes];
	unsigned int tot = *total;
	unsigned int parkBase = szIn[2];
	unsigned int parkLevel = pre[2 * nodes + 1] - pre[nodes + 1];
	unsigned int rootBase = szIn[4], rootLevel = pre[3 * nodes + 2] - pre[2 * nodes + 2];
	unsigned int topBase = szIn[5], real = szIn[0]; // the level's nodes (nodes may be a bound past them)
	bool over = szIn[3] != 0 || tot > refCap || (unsigned long long)parkBase + parkLevel > parkCap ||
	            (table != nullptr && next > layout) || (table == nullptr && next != 0);
	if (i == 0) {
		unsigned int sz[kd_tree::kSizeWords] = {over ? 0 : next, over ? 0 : tot,
		                                        over ? parkBase : parkBase + parkLevel, over ? 1u : 0u,
		                                        over ? rootBase : rootBase + rootLevel, over ? topBase : topBase + real};
		for (int k = 0; k < kd_tree::kSizeWords; k++) {
			szOut[k] = sz[k];
			if (log != nullptr) log[k] = sz[k];
		}
	}
	if (over) {
		// The next table empty (every node a padding node of no
		// reference): the levels already queued after this one then do
		// nothing, whatever their bounds.
		if (table != nullptr) kd_tree::pad_node(i, 0, layout, 0, table);
		return;
	}
	if (log != nullptr && i < real) {
		unsigned int *l = log + kd_tree::kSizeWords;
		l[3 * i] = dec[3 * i];
		l[3 * i + 1] = dec[3 * i + 1];
		l[3 * i + 2] = dec[3 * i + 2];
		l[3 * real + i] = cnt[i];
		l[4 * real + i] = cnt[nodes + i];
		l[5 * real + i] = cnt[2 * nodes + i];
	}
	if (sroot != nullptr && i < nodes && dec[3 * i] == kd_tree::kSmall && info[4 * i + 3] != kd_tree::kPadBudget) {
		// Small root q of the build (NodeWords' third part), listed as
		// levelBook.book lists it: its parked references (as park_ref
		// parks them), count, depth and box.
		unsigned int q = rootBase + (pre[2 * nodes + 2 + i] - pre[2 * nodes + 2]);
		if (q < rootCap) {
			sroot[q] = parkBase + (pre[nodes + 1 + i] - pre[nodes + 1]);
			sroot[rootCap + q] = info[4 * i + 1];
			sroot[2 * (size_t)rootCap + q] = info[4 * i + 2];
			float *sbox = reinterpret_cast<float *>(sroot + 3 * (size_t)rootCap);
			for (int k = 0; k < 6; k++) sbox[6 * (size_t)q + k] = nbox[6 * (size_t)i + k];
		}
	}
	if (sroot != nullptr && i < real && topBase + i < kd_tree::top_cap(rootCap)) {
		// Node i of the level in the build's list of large-phase nodes (at
		// topBase + i; the next level's at topBase + real on), for
		// kdtree_top_layout_u32: split (axis, position, its children's
		// place in the list), leaf (parked references, as park_ref parks
		// them, and count) or small root (its number).
		unsigned int *t = kd_tree::top_list(sroot, rootCap) + 3 * (size_t)(topBase + i);
		unsigned int fate = dec[3 * i];
		if (fate == kd_tree::kSplit) {
			t[0] = kd_tree::kSplit | (dec[3 * i + 1] << 8);
			t[1] = dec[3 * i + 2];
			t[2] = topBase + real + 2 * pre[i];
		} else if (fate == kd_tree::kLeaf) {
			t[0] = kd_tree::kLeaf;
			t[1] = parkBase + (pre[nodes + 1 + i] - pre[nodes + 1]);
			t[2] = info[4 * i + 1];
		} else {
			t[0] = kd_tree::kSmall;
			t[1] = rootBase + (pre[2 * nodes + 2 + i] - pre[2 * nodes + 2]);
			t[2] = 0;
		}
	}
	unsigned int end = min(n, offsets[nodes]); // past offsets[nodes]: padding
	// The block's references r0..r1, the node of each that needs it, and
	// with tkey the nodes s0 and s1 of the first and the last.
	unsigned int r0 = blockIdx.x * blockDim.x, r1 = min(r0 + blockDim.x, end) - 1;
	bool ref = i < end, edge = tkey != nullptr && ref && (i == r0 || i == r1);
	unsigned int f = 0, s = 0;
	if (ref) {
		f = flags[i];
		if (f != 0 || parkLevel != 0 || edge) s = rnode[i];
	}
	// The next level's tight bounds (ChildKeys), when tkey is set: the
	// block's slots, for the children of s0..s1.
	kd_tree::ChildKeys keys{nullptr, 0, 0, keyCap, tkey};
	if (tkey != nullptr) {
		__shared__ unsigned int ends[2];
		if (edge && i == r0) ends[0] = s;
		if (edge && i == r1) ends[1] = s;
		__syncthreads();
		keys.slots = slots;
		if (r0 < end) {
			unsigned int p0 = pre[ends[0]];
			keys.c0 = 2 * p0;
			keys.nslots = min(2 * (pre[ends[1]] - p0) + 2, 2 * kd_tree::kTailBlock);
		}
		for (unsigned int k = threadIdx.x; k < 6 * keys.nslots; k += blockDim.x)
			slots[k] = k % 6 < 3 ? kd_tree::kKeyMinId : kd_tree::kKeyMaxId;
		__syncthreads();
	}
	if (ref) {
		if (f != 0 || parkLevel != 0) {
			if (f != 0) {
				kd_tree::scatter_ref(i, s, f, tri, box, ranks, n, cnt, nodes, clipL, clipR, ntri, nboxOut, pre, keys,
				                     nrnode);
			} else {
				unsigned int fate = dec[3 * s];
				if (fate == kd_tree::kLeaf || fate == kd_tree::kSmall)
					kd_tree::park_ref(i, s, tri, box, offsets, pre, nodes, parkBase, ptri, pbox);
			}
		}
	}
	if (table != nullptr) {
		kd_tree::next_node(i, nbox, info, dec, cnt, pre, nodes, layout, table);
		kd_tree::pad_node(i, next, layout, tot, table);
	}
	if (tkey != nullptr) {
		__syncthreads();
		for (unsigned int k = threadIdx.x; k < keys.nslots; k += blockDim.x) {
			const unsigned int *v = slots + 6 * k;
			unsigned int c = keys.c0 + k;
			if (v[0] == kd_tree::kKeyMinId || c >= keyCap) continue; // no copy in this child
			unsigned int *t = tkey + 6 * (size_t)c;
			for (int j = 0; j < 3; j++) atomicMin(&t[j], v[j]);
			for (int j = 3; j < 6; j++) atomicMax(&t[j], v[j]);
		}
	}
}
