// kdtree_layout.cu: the finished tree laid out on the device in depth-first
// order: the large-phase nodes' plan and places, the small subtrees' sizes
// and nodes, and the leaves' references copied into place.

#include "kdtree_small.cuh"

// The large-phase nodes laid out on the device (layoutGo's depth-first
// order, the below child next; kdtree/internal/gpubuild/top_cuda.go), in two kernels: what
// depends only on the large-phase nodes runs beside the small phase
// (kdtree_top_plan_u32), the rest once the small subtrees' sizes are known
// (kdtree_top_run_u32, kdtree_top_place_u32). top lists the nodes level after level
// (kdtree_tail_f32's top_list: 3 words a node), level l at [levels[l],
// levels[l+1]) for l < nlevels, the root first. plan holds 6 words a node
// (kTopPlan).
namespace kd_tree {
// A node's words in the plan: its subtree's large-phase nodes, small
// roots and large leaves' references; then the large-phase nodes, small
// roots and large leaves' references before it in depth-first order.
enum { kPlanNodes, kPlanSmall, kPlanRefs, kPlanAt, kPlanK, kPlanRef, kTopPlan };
static_assert(kTopPlan == kd_const::kTopPlanWords, "TopPlanWords (package consts) is the plan's words a node");
} // namespace kd_tree

// kdtree_top_plan_u32: the plan, one block: bottom up each subtree's
// counts, top down what comes before each node, and dfs[k] = the k-th
// small root in depth-first order. A programmatic dependent launch of the
// small phase runs beside it (it lets it start at once; the small phase
// waits for it to end before it ends: kd_pdl_exit).
extern "C" __global__ void __launch_bounds__(1024)
    kdtree_top_plan_u32(const unsigned int *top, const unsigned int *levels, unsigned int nlevels,
                        unsigned int *plan, unsigned int *dfs) {
	using namespace kd_tree;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
	for (int l = (int)nlevels - 1; l >= 0; l--) {
		for (unsigned int t = levels[l] + threadIdx.x; t < levels[l + 1]; t += blockDim.x) {
			unsigned int f = top[3 * (size_t)t] & 0xFFu, w2 = top[3 * (size_t)t + 2];
			unsigned int *p = plan + kTopPlan * (size_t)t;
			if (f == kSplit) {
				const unsigned int *a = plan + kTopPlan * (size_t)w2, *b = a + kTopPlan;
				p[kPlanNodes] = 1 + a[kPlanNodes] + b[kPlanNodes];
				p[kPlanSmall] = a[kPlanSmall] + b[kPlanSmall];
				p[kPlanRefs] = a[kPlanRefs] + b[kPlanRefs];
			} else {
				p[kPlanNodes] = 1;
				p[kPlanSmall] = f == kSmall ? 1u : 0u;
				p[kPlanRefs] = f == kLeaf ? w2 : 0u;
			}
		}
		__syncthreads();
	}
	if (threadIdx.x == 0) plan[kPlanAt] = plan[kPlanK] = plan[kPlanRef] = 0;
	__syncthreads();
	for (unsigned int l = 0; l < nlevels; l++) {
		for (unsigned int t = levels[l] + threadIdx.x; t < levels[l + 1]; t += blockDim.x) {
			unsigned int f = top[3 * (size_t)t] & 0xFFu, w1 = top[3 * (size_t)t + 1], w2 = top[3 * (size_t)t + 2];
			const unsigned int *p = plan + kTopPlan * (size_t)t;
			if (f == kSplit) {
				unsigned int *a = plan + kTopPlan * (size_t)w2, *b = a + kTopPlan;
				a[kPlanAt] = p[kPlanAt] + 1;
				a[kPlanK] = p[kPlanK];
				a[kPlanRef] = p[kPlanRef];
				b[kPlanAt] = p[kPlanAt] + 1 + a[kPlanNodes];
				b[kPlanK] = p[kPlanK] + a[kPlanSmall];
				b[kPlanRef] = p[kPlanRef] + a[kPlanRefs];
			} else if (f == kSmall) {
				dfs[p[kPlanK]] = w1;
			}
		}
		__syncthreads();
	}
}

// kdtree_top_run_u32: one block, the running totals over the small roots
// in depth-first order (dfs) of their subtrees' nodes beyond their roots
// and their references (size: nodes, then references, of each of the
// roots small roots): run, 2·(roots+1) words; totals = the tree's nodes
// (ntop large-phase nodes and the subtrees' beyond their roots) and
// references (the large leaves', plan's root counts them, and the
// subtrees').
extern "C" __global__ void __launch_bounds__(1024)
    kdtree_top_run_u32(unsigned int ntop, const unsigned int *plan, const unsigned int *dfs, const unsigned int *size,
                       unsigned int roots, unsigned int *run, unsigned int *totals) {
	using namespace kd_tree;
	__shared__ unsigned int warpN[32], warpR[32];
	__shared__ unsigned int carry[2];
	unsigned int lane = threadIdx.x & 31u, wid = threadIdx.x >> 5, nw = (blockDim.x + 31) / 32;
	if (threadIdx.x == 0) carry[0] = carry[1] = 0;
	__syncthreads();
	// Exclusive running totals, a block-wide scan a chunk at a time.
	for (unsigned int c = 0; c <= roots; c += blockDim.x) {
		unsigned int k = c + threadIdx.x, vn = 0, vr = 0;
		if (k < roots) {
			unsigned int q = dfs[k];
			vn = size[q] - 1; // the root is one of the large-phase nodes
			vr = size[roots + q];
		}
		unsigned int in = vn, ir = vr;
		for (int o = 1; o < 32; o <<= 1) {
			unsigned int yn = __shfl_up_sync(0xFFFFFFFFu, in, o), yr = __shfl_up_sync(0xFFFFFFFFu, ir, o);
			if (lane >= (unsigned int)o) {
				in += yn;
				ir += yr;
			}
		}
		if (lane == 31) {
			warpN[wid] = in;
			warpR[wid] = ir;
		}
		__syncthreads();
		if (wid == 0) {
			unsigned int sn = lane < nw ? warpN[lane] : 0u, sr = lane < nw ? warpR[lane] : 0u;
			for (int o = 1; o < 32; o <<= 1) {
				unsigned int yn = __shfl_up_sync(0xFFFFFFFFu, sn, o), yr = __shfl_up_sync(0xFFFFFFFFu, sr, o);
				if (lane >= (unsigned int)o) {
					sn += yn;
					sr += yr;
				}
			}
			if (lane < nw) {
				warpN[lane] = sn;
				warpR[lane] = sr;
			}
		}
		__syncthreads();
		unsigned int bn = carry[0] + (wid > 0 ? warpN[wid - 1] : 0u), br = carry[1] + (wid > 0 ? warpR[wid - 1] : 0u);
		if (k <= roots) {
			run[2 * (size_t)k] = bn + in - vn;
			run[2 * (size_t)k + 1] = br + ir - vr;
		}
		__syncthreads();
		if (threadIdx.x == 0) {
			carry[0] += warpN[nw - 1];
			carry[1] += warpR[nw - 1];
		}
		__syncthreads();
	}
	if (threadIdx.x == 0) {
		totals[0] = ntop + run[2 * (size_t)roots];
		totals[1] = plan[kd_tree::kPlanRefs] + run[2 * (size_t)roots + 1];
	}
}

// kdtree_top_place_u32: a thread per large-phase node t < ntop: its first
// node and reference (its plan's counts before it plus the running totals
// of kdtree_top_run_u32 there); an interior node written (its above
// child's place the same way), a leaf written with copies[3t..3t+2] = its
// parked references' offset, its first reference and its count, for
// kdtree_copy_ranges_u32 (empty for the other nodes), and for small root
// q, base[q] and base[roots + q], where kdtree_small_place_u32 or
// kdtree_small_emit_u32 write its subtree.
extern "C" __global__ void kdtree_top_place_u32(const unsigned int *top, unsigned int ntop, const unsigned int *plan,
                                                const unsigned int *run, unsigned int roots, unsigned int *base,
                                                unsigned int *copies, unsigned int *nodes) {
	using namespace kd_tree;
	unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
	if (t < ntop) {
		unsigned int w0 = top[3 * (size_t)t], w1 = top[3 * (size_t)t + 1], w2 = top[3 * (size_t)t + 2];
		const unsigned int *p = plan + kTopPlan * (size_t)t;
		const unsigned int *rk = run + 2 * (size_t)p[kPlanK];
		unsigned int at = p[kPlanAt] + rk[0], ref = p[kPlanRef] + rk[1];
		unsigned int f = w0 & 0xFFu;
		unsigned int *cp = copies + 3 * (size_t)t;
		cp[0] = w1;
		cp[1] = ref;
		cp[2] = f == kLeaf ? w2 : 0u;
		if (f == kSplit) {
			const unsigned int *b = plan + kTopPlan * (size_t)(w2 + 1);
			unsigned int above = b[kPlanAt] + run[2 * (size_t)b[kPlanK]];
			nodes[2 * (size_t)at] = w1;
			nodes[2 * (size_t)at + 1] = ((w0 >> 8) & 3u) | (above << 2);
		} else if (f == kLeaf) {
			nodes[2 * (size_t)at] = ref;
			nodes[2 * (size_t)at + 1] = (w2 << 2) | 3u;
		} else {
			base[w1] = at;
			base[roots + w1] = ref;
		}
	}
}

// The layout of the small subtrees on the device (the host half is in
// kdtree/internal/gpubuild/layout_cuda.go). kdtree_small_w_f32 leaves every small
// root's subtree as records (rec, refs); the host lays out the large-phase
// nodes depth first and gives every small root the index of its first node
// and first reference in the final arrays; these kernels write the subtrees
// there, depth first with the below child next, as layoutGo does.

namespace kd_tree {

// Depth of the explicit stacks of the layout walks: a small subtree is at
// most MaxTreeDepth (64) levels deep, and a walk that pushes both children
// holds at most one entry per level plus one.
constexpr int kLayoutStack = 72;

} // namespace kd_tree

// kdtree_small_emit_u32: one thread per small root r: its subtree written
// depth first into nodes (2 words per kdtree.Node) from node base[r], its
// leaves' references (copied from srefs, in order) into refs from reference
// base[roots + r]. err[0] is set to 1 on stack overflow.
//
// The walk is one dependent load after another, so it keeps the loads off
// its path where it can: a node's children's records are loaded together
// when the node is written (the below child is written next; the above
// child's record waits on the stack with the node whose second word it
// completes), and an interior node's second word (axis and above child
// index) is written once, when the walk reaches that child, instead of
// read, or-ed and written back.
extern "C" __global__ void kdtree_small_emit_u32(const unsigned int *rec, const unsigned int *srefs, unsigned int roots,
                                                 const unsigned int *base, unsigned int *nodes, unsigned int *refs,
                                                 unsigned int *err) {
	using namespace kd_tree;
	unsigned int r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= roots) return;
	// Pending above children: their record words and the interior node
	// whose second word they complete, with its axis.
	unsigned int stW0[kLayoutStack], stW1[kLayoutStack], stW2[kLayoutStack], stParent[kLayoutStack];
	int sp = 0;
	unsigned int at = base[r], ref = base[roots + r];
	unsigned int w0 = rec[3 * (size_t)r], w1 = rec[3 * (size_t)r + 1], w2 = rec[3 * (size_t)r + 2];
	for (;;) {
		unsigned int me = at++;
		if ((w0 & 0xFFu) == 1u) {
			// A leaf: LeafNode(ref, count), its references in order.
			nodes[2 * (size_t)me] = ref;
			nodes[2 * (size_t)me + 1] = (w2 << 2) | 3u;
#pragma unroll 4
			for (unsigned int k = 0; k < w2; k++) refs[ref + k] = srefs[w1 + k];
			ref += w2;
			if (sp == 0) break;
			// Next: the deepest pending above child.
			sp--;
			w0 = stW0[sp];
			w1 = stW1[sp];
			w2 = stW2[sp];
			unsigned int parent = stParent[sp];
			nodes[2 * (size_t)(parent >> 2) + 1] = (parent & 3u) | (at << 2);
			continue;
		}
		// Interior: InteriorNode(axis, pos, above); its second word is
		// written when the walk reaches the above child.
		nodes[2 * (size_t)me] = w1;
		if (sp + 1 > kLayoutStack) {
			err[0] = 1u;
			return;
		}
		unsigned int below = w2, axis = (w0 >> 8) & 3u;
		stW0[sp] = rec[3 * (size_t)(below + 1)];
		stW1[sp] = rec[3 * (size_t)(below + 1) + 1];
		stW2[sp] = rec[3 * (size_t)(below + 1) + 2];
		stParent[sp] = (me << 2) | axis;
		sp++;
		w0 = rec[3 * (size_t)below];
		w1 = rec[3 * (size_t)below + 1];
		w2 = rec[3 * (size_t)below + 2];
	}
}

// kdtree_small_place_u32: kdtree_small_emit_u32's output (the same words)
// from kdtree_small_w_f32's places, one thread per record j < nrec instead
// of one walk per root: the walk loads record after record, so the phase
// took as long as the largest subtree's chain of loads (bunny: 0.40 ms of
// a 0.5 ms layout on an H100). place[j] is record j's position in its
// root's depth-first order (low 16 bits) and, for a leaf, the number of
// references of the leaves before it in that order (high 16 bits), or
// ~0 for an unused record; record j's root is j itself for j < roots, else
// chunkRoot[(j - roots) / kRecChunk]. An interior node's second word takes
// its above child's position from that child's place.
extern "C" __global__ void kdtree_small_place_u32(const unsigned int *rec, const unsigned int *srefs,
                                                  const unsigned int *place, const unsigned int *chunkRoot,
                                                  unsigned int nrec, unsigned int roots, const unsigned int *base,
                                                  unsigned int *nodes, unsigned int *refs) {
	unsigned int j = blockIdx.x * blockDim.x + threadIdx.x;
	if (j >= nrec) return;
	unsigned int pl = place[j];
	if (pl == ~0u) return;
	unsigned int r = j < roots ? j : chunkRoot[(j - roots) / kd_small::kRecChunk];
	unsigned int nb = base[r];
	size_t me = nb + (pl & 0xFFFFu);
	unsigned int w0 = rec[3 * (size_t)j], w1 = rec[3 * (size_t)j + 1], w2 = rec[3 * (size_t)j + 2];
	if ((w0 & 0xFFu) == 1u) {
		unsigned int to = base[roots + r] + (pl >> 16);
		nodes[2 * me] = to;
		nodes[2 * me + 1] = (w2 << 2) | 3u;
#pragma unroll 4
		for (unsigned int k = 0; k < w2; k++) refs[to + k] = srefs[w1 + k];
		return;
	}
	unsigned int above = nb + (place[w2 + 1] & 0xFFFFu);
	nodes[2 * me] = w1;
	nodes[2 * me + 1] = ((w0 >> 8) & 3u) | (above << 2);
}

// kdtree_copy_ranges_u32: one block per range k: dst[c[3k+1] + j] =
// src[c[3k] + j] for j < c[3k+2] (the references of the large phase's
// leaves, from where they were parked to their place in the tree).
extern "C" __global__ void kdtree_copy_ranges_u32(const unsigned int *src, const unsigned int *c, unsigned int ranges,
                                                  unsigned int *dst) {
	unsigned int k = blockIdx.x;
	if (k >= ranges) return;
	unsigned int from = c[3 * (size_t)k], to = c[3 * (size_t)k + 1], n = c[3 * (size_t)k + 2];
	for (unsigned int j = threadIdx.x; j < n; j += blockDim.x) dst[to + j] = src[from + j];
}
