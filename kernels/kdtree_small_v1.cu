// kdtree_small_v1.cu: the small-node phase with one warp per block and a
// global atomic per record (kdtree_small_w_f32 replaces it; kept for
// comparisons).

#include "kdtree_small.cuh"

// kdtree_small_f32: the small-node phase (smallBuilder in kdtree/small.go),
// one warp (block of 32 threads) per small root, depth first inside the
// root. Root i's references are ptri/pbox[rootOff[i] ..+rootCnt[i]] (at most
// 64); its record is rec[3i..3i+2]. A record is (fate | axis<<8, split bits
// or first leaf reference, above... below child record or leaf count):
//   split: rec = {0 | axis<<8, float bits of pos, index of the below child
//          (the above child is the next record)}
//   leaf:  rec = {1, offset of its first reference in refs, count}
// ctr[0] is the next free record (start: number of roots), ctr[1] the next
// free leaf reference (start 0); ctr[2] is set to 1 when recCap or refCap
// would overflow (the host then builds the small phase in Go). Records and
// references land in an order that depends on scheduling; the tree they
// describe does not.
extern "C" __global__ void __launch_bounds__(32) kdtree_small_f32(
    const unsigned int *ptri, const float *pbox, const float *tv, const unsigned int *rootOff,
    const unsigned int *rootCnt, const float *rootBox, const unsigned int *rootDepth, unsigned int roots, int maxDepth,
    double ct, double ci, double keep, unsigned int *rec, unsigned int recCap, unsigned int *refs,
    unsigned int refCap, unsigned int *ctr) {
	using namespace kd_tree;
	__shared__ float sbox[64][6];
	__shared__ unsigned int stri[64];
	__shared__ float cpos[3][128];
	__shared__ unsigned long long clt[3][128], cgt[3][128];
	__shared__ unsigned long long stS[kStack];
	__shared__ float stB[kStack][6];
	__shared__ int stD[kStack];
	__shared__ unsigned int stR[kStack];
	const unsigned int full = 0xFFFFFFFFu;
	unsigned int root = blockIdx.x, lane = threadIdx.x;
	if (root >= roots) return;
	int m = (int)rootCnt[root];
	unsigned int off = rootOff[root];
	for (int r = lane; r < m; r += 32) {
		stri[r] = ptri[off + r];
		for (int i = 0; i < 6; i++) sbox[r][i] = pbox[6 * (size_t)(off + r) + i];
	}
	__syncwarp();
	// Candidates: face k of axis a (2r lower, 2r+1 upper face of reference r)
	// with lt = {q : lo[q] < pos} and gt = {q : hi[q] > pos}.
	for (int a = 0; a < 3; a++) {
		for (int k = lane; k < 2 * m; k += 32) {
			float pos = (k & 1) ? sbox[k >> 1][3 + a] : sbox[k >> 1][a];
			unsigned long long lt = 0, gt = 0;
			for (int q = 0; q < m; q++) {
				if (sbox[q][a] < pos) lt |= 1ull << q;
				if (sbox[q][3 + a] > pos) gt |= 1ull << q;
			}
			cpos[a][k] = pos;
			clt[a][k] = lt;
			cgt[a][k] = gt;
		}
	}
	int sp = 0;
	if (lane == 0) {
		stS[0] = m >= 64 ? ~0ull : ((1ull << m) - 1);
		for (int i = 0; i < 6; i++) stB[0][i] = rootBox[6 * (size_t)root + i];
		stD[0] = (int)rootDepth[root];
		stR[0] = root;
	}
	sp = 1;
	__syncwarp();
	while (sp > 0) {
		sp--;
		unsigned long long S = stS[sp];
		float box[6];
		for (int i = 0; i < 6; i++) box[i] = stB[sp][i];
		int depth = stD[sp];
		unsigned int me = stR[sp];
		__syncwarp();
		unsigned int n = (unsigned int)__popcll(S);
		// The best candidate (smallBuilder.best).
		double bw = INFINITY;
		int ba = 3, bk = 0;
		float bp = 0.0f;
		if (n > 0 && depth < maxDepth) {
			for (int a = 0; a < 3; a++) {
				int u = (a + 1) % 3, v = (a + 2) % 3;
				double du = (double)box[3 + u] - (double)box[u];
				double dv = (double)box[3 + v] - (double)box[v];
				double cross = du * dv;
				double perim = du + dv;
				float lo = box[a], hi = box[3 + a];
				double lo64 = (double)lo, hi64 = (double)hi;
				for (int r = lane; r < m; r += 32) {
					if (!((S >> r) & 1ull)) continue;
					for (int k = 2 * r; k < 2 * r + 2; k++) {
						float pos = cpos[a][k];
						if (!(pos > lo && pos < hi)) continue;
						int nL = __popcll(S & (clt[a][k] | ~cgt[a][k]));
						int nR = __popcll(S & cgt[a][k]);
						double pos64 = (double)pos;
						double w = ((cross + perim * (pos64 - lo64)) * (double)nL) +
						           ((cross + perim * (hi64 - pos64)) * (double)nR);
						if (nL == 0 || nR == 0) w = w * keep;
						if (better(w, a, pos, k, bw, ba, bp, bk)) {
							bw = w;
							ba = a;
							bp = pos;
							bk = k;
						}
					}
				}
			}
			for (int o = 16; o > 0; o >>= 1) {
				double ow = __shfl_down_sync(full, bw, o);
				int oa = __shfl_down_sync(full, ba, o);
				float op = __shfl_down_sync(full, bp, o);
				int ok = __shfl_down_sync(full, bk, o);
				if (better(ow, oa, op, ok, bw, ba, bp, bk)) {
					bw = ow;
					ba = oa;
					bp = op;
					bk = ok;
				}
			}
			bw = __shfl_sync(full, bw, 0);
			ba = __shfl_sync(full, ba, 0);
			bp = __shfl_sync(full, bp, 0);
			bk = __shfl_sync(full, bk, 0);
		}
		double cost = INFINITY;
		if (ba <= 2) cost = ct + (ci * (2.0 * bw)) / area64(box);
		if (ba > 2 || !(cost < ci * (double)n)) {
			// A leaf of S's triangles, ascending.
			unsigned int first = 0;
			if (lane == 0) {
				first = atomicAdd(&ctr[1], n);
				if (first + n > refCap) {
					ctr[2] = 1;
				} else {
					rec[3 * (size_t)me] = 1;
					rec[3 * (size_t)me + 1] = first;
					rec[3 * (size_t)me + 2] = n;
				}
			}
			first = __shfl_sync(full, first, 0);
			if (first + n > refCap) return;
			for (int r = lane; r < m; r += 32) {
				if ((S >> r) & 1ull) {
					unsigned long long below = r == 0 ? 0ull : (S & ((1ull << r) - 1));
					refs[first + __popcll(below)] = stri[r];
				}
			}
			__syncwarp();
			continue;
		}
		int a = ba;
		float pos = bp;
		unsigned long long SL = S & (clt[a][bk] | ~cgt[a][bk]), SR = S & cgt[a][bk];
		unsigned long long X = SL & SR;
		drop_one_sided(tv, stri, X, box, a, pos, lane, SL, SR);
		unsigned int left = 0;
		if (lane == 0) {
			left = atomicAdd(&ctr[0], 2u);
			if (left + 2 > recCap) {
				ctr[2] = 1;
			} else {
				rec[3 * (size_t)me] = 0u | ((unsigned int)a << 8);
				rec[3 * (size_t)me + 1] = __float_as_uint(pos);
				rec[3 * (size_t)me + 2] = left;
				// Push the above child, then the below child (next popped).
				stS[sp] = SR;
				stS[sp + 1] = SL;
				for (int i = 0; i < 6; i++) stB[sp][i] = stB[sp + 1][i] = box[i];
				stB[sp][a] = pos;
				stB[sp + 1][3 + a] = pos;
				stD[sp] = stD[sp + 1] = depth + 1;
				stR[sp] = left + 1;
				stR[sp + 1] = left;
			}
		}
		left = __shfl_sync(full, left, 0);
		if (left + 2 > recCap) return;
		sp += 2;
		__syncwarp();
	}
}
