// kdtree_small.cu: the small-node phase: every small root's subtree built
// by one warp (smallBuilder in kdtree/internal/refbuild/small.go), and the order the roots
// are dealt out in.

#include "kdtree_small.cuh"

// kdtree_small_w_f32: the small-node phase (smallBuilder of
// kdtree/internal/refbuild/small.go, the same tree) with kd_small::kWarps
// roots per block, one warp each:
//   - the SAH evaluates only the candidates of the node's references, dealt
//     out over all 32 lanes (6n candidates for n references), and the
//     winner is found with a butterfly so every lane has it;
//   - a warp reserves records (kRecChunk) and leaf references (at least
//     kRefChunk) in chunks, not with one global atomic per node, so the
//     output has up to one partly used chunk of each per root (recCap and
//     refCap must allow for it; ctr[2] is set on overflow as before);
//   - the node stack shares memory with the references' boxes and the
//     straddling test clips without copying polygons;
//   - it also writes the subtrees' sizes: size[r] = nodes of
//     root r's subtree, size[roots + r] = its leaves' references (a warp
//     pops its root's nodes one by one and counts them);
//   - place, chunkRoot (both null, or both set): kdtree_small_place_u32's
//     input. A warp pops its root's nodes in depth-first order (the below
//     child next), so the count of nodes popped before a node is its
//     position in the root's subtree, and the references of the leaves
//     popped before a leaf are where its references start: place[j] =
//     position | (leaf start << 16) for record j, ~0 for a record reserved
//     but unused. A warp then starts a record chunk for every root, and
//     chunkRoot[c] is the root of chunk c (records roots + kRecChunk*c on);
//     ctr[4] is set when a subtree has more than placeLimit nodes or leaf
//     references (at most 0xFFFF, so that the places fit in their 16 bits
//     and none is ~0; tests lower it): the host then walks the records;
//   - roots: root order[i] is the i-th (order: a permutation of the
//     roots, or null for the identity). A grid of a warp per root gives
//     warp w of block b the i = 4b + w-th; a smaller grid (the host makes
//     one when the roots are many more than the warps the device holds)
//     has its warps take the next i from a counter (ctr[3], 0 at the
//     start) until none is left, so a warp that is done with a small root
//     takes the next one at once instead of idling until its block's
//     slowest warp is done (with a warp per root, conference keeps only 12
//     of 20 possible warps per SM active). With few roots a warp per root
//     is faster: the phase then waits for its largest roots,
//     whose warps run faster as the other warps finish and leave the SM.
//     The host lists the roots by decreasing reference count, so the
//     largest start first; a warp keeps its reserved record and reference
//     chunks from root to root. Nothing else depends on the order: every
//     output of a root is keyed by its number.
extern "C" __global__ void __launch_bounds__(32 * kd_small::kWarps) kdtree_small_w_f32(
    const unsigned int *ptri, const float *pbox, const float *tv, const unsigned int *rootOff,
    const unsigned int *rootCnt, const float *rootBox, const unsigned int *rootDepth, unsigned int roots, int maxDepth,
    double ct, double ci, double keep, unsigned int *rec, unsigned int recCap, unsigned int *refs,
    unsigned int refCap, unsigned int *ctr, unsigned int *size, const unsigned int *order, unsigned int *place,
    unsigned int *chunkRoot, unsigned int placeLimit) {
	using namespace kd_tree;
	using kd_small::kRecChunk;
	using kd_small::kRefChunk;
	using kd_small::sel3d;
	using kd_small::sel3f;
	// kWarps Warps of dynamic shared memory (more than the 48 KB a block's
	// static shared memory may hold; the host opts in).
	extern __shared__ __align__(16) unsigned char smallShared[];
	kd_small::Warp *warps = reinterpret_cast<kd_small::Warp *>(smallShared);
	const unsigned int full = 0xFFFFFFFFu;
	unsigned int lane = threadIdx.x & 31u;
	kd_small::Warp &w = warps[threadIdx.x >> 5];
	// The warp's reserved output: records [recNext, recEnd), references
	// [refNext, refEnd) (the same in every lane), kept from root to root.
	unsigned int recNext = 0, recEnd = 0, refNext = 0, refEnd = 0;
	// A grid with a warp per root: one root each. Else roots from ctr[3].
	bool taking = gridDim.x * kd_small::kWarps < roots;
	unsigned int mine = blockIdx.x * kd_small::kWarps + (threadIdx.x >> 5);
	for (;;) {
		unsigned int root = mine;
		if (taking) {
			if (lane == 0) root = atomicAdd(&ctr[3], 1u);
			root = __shfl_sync(full, root, 0);
		}
		mine = roots; // a warp per root: done after this one
		if (place != nullptr) {
			// Records of a chunk belong to one root (chunkRoot): the rest of
			// the last root's chunk is left, marked unused.
			for (unsigned int j = recNext + lane; j < recEnd; j += 32) place[j] = ~0u;
			recNext = recEnd;
		}
		if (root >= roots) {
			kd_pdl_exit(); // launched beside kdtree_top_plan_u32 (kdtree/internal/gpubuild/top_cuda.go)
			return;
		}
		if (order != nullptr) root = order[root];
		__syncwarp(); // the last root's stack is read
		int m = (int)rootCnt[root];
		unsigned int off = rootOff[root];
		for (int r = lane; r < m; r += 32) {
			unsigned int t = ptri[off + r];
			w.tri[r] = t;
			for (int i = 0; i < 6; i++) w.u.box[i][r] = pbox[6 * (size_t)(off + r) + i];
			for (int i = 0; i < 9; i++) w.tv[r][i] = tv[9 * (size_t)t + i];
		}
		// The rows past the references, up to the 32 or 64 the masks read:
		// boxes no plane is above (lo +inf) or below (hi -inf), whose bits
		// stay clear.
		for (int r = m + lane; r < (m > 32 ? 64 : 32); r += 32) {
			for (int i = 0; i < 3; i++) {
				w.u.box[i][r] = INFINITY;
				w.u.box[3 + i][r] = -INFINITY;
			}
		}
		__syncwarp();
		// Candidates: face k of axis a (2r lower, 2r+1
		// upper face of reference r), lt = {q : lo[q] < pos}, gt = {q : hi[q] > pos}.
		for (int a = 0; a < 3; a++) {
			const float *lo = w.u.box[a], *hi = w.u.box[3 + a];
			for (int k = lane; k < 2 * m; k += 32) {
				float pos = (k & 1) ? hi[k >> 1] : lo[k >> 1];
				unsigned int lt0 = 0, gt0 = 0, lt1 = 0, gt1 = 0;
				kd_small::half_masks(lo, hi, pos, lt0, gt0);
				if (m > 32) kd_small::half_masks(lo + 32, hi + 32, pos, lt1, gt1);
				w.pos[a][k] = pos;
				w.lt[a][k] = ((unsigned long long)lt1 << 32) | lt0;
				w.gt[a][k] = ((unsigned long long)gt1 << 32) | gt0;
			}
		}
		__syncwarp(); // the boxes are read; the stack takes their place
		if (lane == 0) {
			w.u.st.S[0] = m >= 64 ? ~0ull : ((1ull << m) - 1);
			for (int i = 0; i < 6; i++) w.u.st.B[0][i] = rootBox[6 * (size_t)root + i];
			w.u.st.D[0] = (int)rootDepth[root];
			w.u.st.R[0] = root;
		}
		int sp = 1;
		unsigned int popped = 0, leafRefs = 0;
		__syncwarp();
		while (sp > 0) {
			sp--;
			popped++;
			unsigned long long S = w.u.st.S[sp];
			float box[6];
			for (int i = 0; i < 6; i++) box[i] = w.u.st.B[sp][i];
			int depth = w.u.st.D[sp];
			unsigned int me = w.u.st.R[sp];
			int n = __popcll(S);
			kd_small::rank_lanes(S, lane, [&](unsigned int k, unsigned int r) { w.act[k] = (unsigned char)r; });
			__syncwarp(); // the entry is read (pushes overwrite it), act is written
			// The best candidate (smallBuilder.best): candidate j of the node is
			// face j&1 of its reference act[(j mod 2n)>>1] on axis j / 2n.
			double bw = INFINITY;
			int ba = 3, bk = 0;
			float bp = 0.0f;
			if (n > 0 && depth < maxDepth) {
				double cross[3], perim[3];
	#pragma unroll
				for (int a = 0; a < 3; a++) {
					int u = (a + 1) % 3, v = (a + 2) % 3;
					double du = (double)box[3 + u] - (double)box[u];
					double dv = (double)box[3 + v] - (double)box[v];
					cross[a] = du * dv;
					perim[a] = du + dv;
				}
				int nc = 2 * n;
				for (int j = lane; j < 3 * nc; j += 32) {
					int a = (j >= nc) + (j >= 2 * nc);
					int t = j - a * nc;
					int k = 2 * (int)w.act[t >> 1] + (t & 1);
					float pos = w.pos[a][k];
					float lo = sel3f(a, box[0], box[1], box[2]), hi = sel3f(a, box[3], box[4], box[5]);
					if (!(pos > lo && pos < hi)) continue;
					unsigned long long lt = w.lt[a][k], gt = w.gt[a][k];
					int nL = __popcll(S & (lt | ~gt));
					int nR = __popcll(S & gt);
					double cr = sel3d(a, cross[0], cross[1], cross[2]);
					double pe = sel3d(a, perim[0], perim[1], perim[2]);
					double lo64 = (double)lo, hi64 = (double)hi, pos64 = (double)pos;
					double wt = ((cr + pe * (pos64 - lo64)) * (double)nL) + ((cr + pe * (hi64 - pos64)) * (double)nR);
					if (nL == 0 || nR == 0) wt = wt * keep;
					if (better(wt, a, pos, k, bw, ba, bp, bk)) {
						bw = wt;
						ba = a;
						bp = pos;
						bk = k;
					}
				}
				__syncwarp(); // act is read
				// The winner. better orders by cost, axis, position and index,
				// and every lane holds a different candidate (or none: infinite
				// cost, axis 3). The weighted costs are never negative or NaN,
				// so their bits order them as integers, and key_of orders the
				// positions as better does (-0 = +0): from sm_80 on, warp
				// minima (one instruction each) over the cost's halves, then,
				// where lanes tie (planes at one place, no candidate at all),
				// over the axis, the position's key and the index find the
				// lane that wins (Nsight Compute: the butterfly under better
				// that did this was 8% of the kernel's warp samples, then 3.5%
				// with the ties alone). Before sm_80, that butterfly.
#if __CUDA_ARCH__ >= 800
				{
					unsigned long long key = (unsigned long long)__double_as_longlong(bw);
					unsigned int hi = (unsigned int)(key >> 32), lo = (unsigned int)key;
					// (Every lane takes part in every minimum: none may sit
					// behind a && that skips it.)
					auto least = [&](bool in, unsigned int v) {
						unsigned int m = __reduce_min_sync(full, in ? v : 0xFFFFFFFFu);
						return in && v == m;
					};
					bool in = least(true, hi);
					in = least(in, lo);
					unsigned int tie = __ballot_sync(full, in);
					if (__popc(tie) > 1) {
						in = least(in, (unsigned int)ba);
						in = least(in, key_of(bp));
						in = least(in, (unsigned int)bk);
						tie = __ballot_sync(full, in);
					}
					int src = __ffs(tie) - 1;
					bw = __shfl_sync(full, bw, src);
					int oak = __shfl_sync(full, (ba << 8) | bk, src);
					bp = __shfl_sync(full, bp, src);
					ba = oak >> 8;
					bk = oak & 0xFF;
				}
#else
				for (int o = 16; o > 0; o >>= 1) {
					double ow = __shfl_xor_sync(full, bw, o);
					int oak = __shfl_xor_sync(full, (ba << 8) | bk, o);
					float op = __shfl_xor_sync(full, bp, o);
					if (better(ow, oak >> 8, op, oak & 0xFF, bw, ba, bp, bk)) {
						bw = ow;
						ba = oak >> 8;
						bp = op;
						bk = oak & 0xFF;
					}
				}
#endif
			}
			double cost = INFINITY;
			if (ba <= 2) {
				// area64 of box.
				double dx = (double)box[3] - (double)box[0];
				double dy = (double)box[4] - (double)box[1];
				double dz = (double)box[5] - (double)box[2];
				double area = 2.0 * ((dx * dy) + (dy * dz) + (dz * dx));
				cost = ct + (ci * (2.0 * bw)) / area;
			}
			if (ba > 2 || !(cost < ci * (double)n)) {
				// A leaf of S's triangles, ascending.
				if (refNext + (unsigned int)n > refEnd &&
				    !kd_small::reserve(&ctr[1], &ctr[2], max((unsigned int)n, kRefChunk), refCap, lane, refNext, refEnd)) {
					kd_pdl_exit();
					return;
				}
				unsigned int first = refNext;
				refNext += (unsigned int)n;
				if (lane == 0 && place != nullptr) {
					place[me] = (popped - 1) | (leafRefs << 16);
					if (popped > placeLimit || leafRefs + (unsigned int)n > placeLimit) ctr[4] = 1;
				}
				leafRefs += (unsigned int)n;
				if (lane == 0) {
					rec[3 * (size_t)me] = 1;
					rec[3 * (size_t)me + 1] = first;
					rec[3 * (size_t)me + 2] = (unsigned int)n;
				}
				kd_small::rank_lanes(S, lane, [&](unsigned int k, unsigned int r) { refs[first + k] = w.tri[r]; });
				continue;
			}
			int a = ba;
			float pos = bp;
			unsigned long long SL = S & (w.lt[a][bk] | ~w.gt[a][bk]), SR = S & w.gt[a][bk];
			unsigned long long X = SL & SR;
			drop_one_sided(&w.tv[0][0], nullptr, X, box, a, pos, lane, SL, SR);
			if (recNext + 2 > recEnd) {
				if (!kd_small::reserve(&ctr[0], &ctr[2], kRecChunk, recCap, lane, recNext, recEnd)) {
					kd_pdl_exit();
					return;
				}
				if (lane == 0 && chunkRoot != nullptr) chunkRoot[(recNext - roots) / kRecChunk] = root;
			}
			unsigned int left = recNext;
			recNext += 2;
			if (lane == 0) {
				if (place != nullptr) {
					place[me] = popped - 1;
					if (popped > placeLimit) ctr[4] = 1;
				}
				rec[3 * (size_t)me] = 0u | ((unsigned int)a << 8);
				rec[3 * (size_t)me + 1] = __float_as_uint(pos);
				rec[3 * (size_t)me + 2] = left;
				// Push the above child, then the below child (next popped).
				w.u.st.S[sp] = SR;
				w.u.st.S[sp + 1] = SL;
				for (int i = 0; i < 6; i++) w.u.st.B[sp][i] = w.u.st.B[sp + 1][i] = box[i];
				w.u.st.B[sp][a] = pos;
				w.u.st.B[sp + 1][3 + a] = pos;
				w.u.st.D[sp] = w.u.st.D[sp + 1] = depth + 1;
				w.u.st.R[sp] = left + 1;
				w.u.st.R[sp + 1] = left;
			}
			sp += 2;
			__syncwarp();
		}
		if (lane == 0) {
			size[root] = popped;
			size[roots + root] = leafRefs;
		}
	}
}

// kdtree_small_order_u32: kdtree_small_w_f32's order and counters for the
// roots listed on the device (kdtree_tail_f32's sroot): order = the roots
// 0..roots-1 by decreasing reference count cnt[r] (equal counts in any
// order: nothing but the warps' balance depends on it; a count past 64,
// which no small root has, is taken as 64), ctr = {roots, 0, 0, 0, 0}.
// One block (the pipelined builds that list their roots on the device
// have a few thousand).
extern "C" __global__ void __launch_bounds__(1024) kdtree_small_order_u32(const unsigned int *cnt, unsigned int roots,
                                                                          unsigned int *order, unsigned int *ctr) {
	constexpr unsigned int kBins = 65;
	__shared__ unsigned int at[kBins];
	for (unsigned int b = threadIdx.x; b < kBins; b += blockDim.x) at[b] = 0;
	__syncthreads();
	// Bin 64 - count: the largest counts first.
	for (unsigned int r = threadIdx.x; r < roots; r += blockDim.x) atomicAdd(&at[64u - min(cnt[r], 64u)], 1u);
	__syncthreads();
	if (threadIdx.x < 32) {
		// Exclusive scan of the 65 bins by one warp: lane l holds bins
		// 3l..3l+2 (those past 64 empty).
		unsigned int lane = threadIdx.x, v[3], sum = 0;
		for (int k = 0; k < 3; k++) {
			unsigned int b = 3 * lane + k;
			v[k] = b < kBins ? at[b] : 0u;
			sum += v[k];
		}
		unsigned int incl = sum;
		for (int o = 1; o < 32; o <<= 1) {
			unsigned int y = __shfl_up_sync(0xFFFFFFFFu, incl, o);
			if (lane >= (unsigned int)o) incl += y;
		}
		unsigned int run = incl - sum;
		for (int k = 0; k < 3; k++) {
			unsigned int b = 3 * lane + k;
			if (b < kBins) at[b] = run;
			run += v[k];
		}
	}
	if (threadIdx.x < 5) ctr[threadIdx.x] = threadIdx.x == 0 ? roots : 0u;
	__syncthreads();
	for (unsigned int r = threadIdx.x; r < roots; r += blockDim.x) order[atomicAdd(&at[64u - min(cnt[r], 64u)], 1u)] = r;
}
