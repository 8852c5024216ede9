// kdtree.cu: the data-parallel steps of the kd-tree builder's large-node
// phase (kdtree/level.go is the Go reference; kdtree/large_cuda.go launches
// these). Every floating-point step repeats the Go code operation for
// operation (kernels are compiled with --fmad=false, so no product is fused
// into an FMA), and every reduction is either exact (min/max through
// order-preserving keys) or over integers, so that the tree equals the Go
// executor's node for node.
//
// Layouts: a box is 6 floats lo.x lo.y lo.z hi.x hi.y hi.z; triangle t's
// vertices are tv[9t .. 9t+8] (x y z of each vertex). A level's nodes are
// segments of its reference list: node s holds references
// offsets[s] .. offsets[s+1]-1, and rnode[r] is the node of reference r
// (written by the level before's kdtree_tail_f32 as it scatters each copy,
// zero for the first level): one load where a binary search over offsets
// made a chain of dependent loads (11 at the bunny's 1452 nodes; Nsight
// Compute, H200: the levels' kernels grew from 10-12 us to 15-18 us with
// the nodes).

#include "split.cuh"

namespace kd_tree {

// The tree node shared with Go (kdtree.Node): 8 bytes.
struct Node {
	unsigned int w0, w1;
};
static_assert(sizeof(Node) == 8, "kd-tree node must be 8 bytes");

// Node fates (kdtree/level.go) and the pending state of a node waiting for
// the binned SAH.
enum { kSplit = 0, kLeaf = 1, kSmall = 2, kPending = 3 };

// Flags of a reference (split.Left, split.Right, flagClipped).
enum { kLeft = 1, kRight = 2, kClipped = 4 };

constexpr float kEmptyCutoff = 0.25f;
constexpr int kMaxPoly = 10;

// Minimum and maximum picking the first argument on ties (Go min32 etc.).
__device__ __forceinline__ float min32(float a, float b) { return b < a ? b : a; }
__device__ __forceinline__ float max32(float a, float b) { return b > a ? b : a; }
__device__ __forceinline__ double min64(double a, double b) { return b < a ? b : a; }
__device__ __forceinline__ double max64(double a, double b) { return b > a ? b : a; }

// Order-preserving key of a float (not NaN); -0 and +0 share +0's key.
__device__ __forceinline__ unsigned int key_of(float f) {
	if (f == 0.0f) f = 0.0f;
	unsigned int b = __float_as_uint(f);
	return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}

__device__ __forceinline__ float float_of(unsigned int k) {
	unsigned int b = (k & 0x80000000u) ? (k & 0x7FFFFFFFu) : ~k;
	return __uint_as_float(b);
}

// The identities of minima and maxima over keys (no finite float has
// either key).
constexpr unsigned int kKeyMinId = 0xFFFFFFFFu, kKeyMaxId = 0u;

// The node of reference r: the last s with offsets[s] <= r.
__device__ __forceinline__ unsigned int node_of(const unsigned int *offsets, unsigned int nodes, unsigned int r) {
	unsigned int lo = 0, hi = nodes;
	while (hi - lo > 1) {
		unsigned int mid = lo + (hi - lo) / 2;
		if (offsets[mid] <= r) lo = mid; else hi = mid;
	}
	return lo;
}

// aabb.area64 in kdtree/clip.go.
__device__ __forceinline__ double area64(const float *b) {
	double dx = (double)b[3] - (double)b[0];
	double dy = (double)b[4] - (double)b[1];
	double dz = (double)b[5] - (double)b[2];
	return 2.0 * ((dx * dy) + (dy * dz) + (dz * dx));
}

// sahParams.splitCost in kdtree/bins.go.
__device__ __forceinline__ double split_cost(double ct, double ci, double keep, double aN, double aL, double aR,
                                             unsigned int nL, unsigned int nR) {
	double c = (aL * (double)nL) + (aR * (double)nR);
	c = c / aN;
	if (nL == 0 || nR == 0) c = c * keep;
	return ct + ci * c;
}

// childAreas in kdtree/bins.go.
__device__ __forceinline__ void child_areas(const float *box, int a, float pos, double &aL, double &aR) {
	int u = (a + 1) % 3, v = (a + 2) % 3;
	double du = (double)box[3 + u] - (double)box[u];
	double dv = (double)box[3 + v] - (double)box[v];
	double cross = du * dv;
	double perim = du + dv;
	double tL = (double)pos - (double)box[a];
	double tR = (double)box[3 + a] - (double)pos;
	aL = 2.0 * (cross + perim * tL);
	aR = 2.0 * (cross + perim * tR);
}

// choice.better in kdtree/bins.go: order by (cost, axis, pos, idx).
__device__ __forceinline__ bool better(double cost, int axis, float pos, int idx, double bc, int ba, float bp, int bi) {
	if (cost != bc) return cost < bc;
	if (axis != ba) return axis < ba;
	if (pos != bp) return pos < bp;
	return idx < bi;
}

// binGeom in kdtree/bins.go.
__device__ __forceinline__ int bin_of(float x, float lo, float w, int nb) {
	float f = (x - lo) / w;
	if (!(f > 0.0f)) return 0;
	if (f >= (float)nb) return nb - 1;
	return (int)f;
}

// roundDown / roundUp in kdtree/clip.go.
__device__ __forceinline__ float round_down(double x) {
	float f = __double2float_rn(x);
	if ((double)f > x) f = nextafterf(f, -INFINITY);
	return f;
}

__device__ __forceinline__ float round_up(double x) {
	float f = __double2float_rn(x);
	if ((double)f < x) f = nextafterf(f, INFINITY);
	return f;
}

struct Poly {
	int n;
	double v[kMaxPoly][3];
};

__device__ __forceinline__ double sel3(int a, const double *x) { return a == 0 ? x[0] : (a == 1 ? x[1] : x[2]); }

// grow_span: the bounds lo, hi of a polygon's first n vertices, with
// vertex n (x, y, z) added.
__device__ __forceinline__ void grow_span(int n, double x, double y, double z, double *lo, double *hi) {
	if (n == 0) {
		lo[0] = hi[0] = x;
		lo[1] = hi[1] = y;
		lo[2] = hi[2] = z;
		return;
	}
	lo[0] = min64(lo[0], x);
	lo[1] = min64(lo[1], y);
	lo[2] = min64(lo[2], z);
	hi[0] = max64(hi[0], x);
	hi[1] = max64(hi[1], y);
	hi[2] = max64(hi[2], z);
}

// poly.clip in kdtree/clip.go; lo and hi are set to the bounds of the
// output polygon when it has a vertex (see clip_box).
__device__ void clip_poly(const Poly &p, int a, double v, bool above, Poly &out, double *lo, double *hi) {
	out.n = 0;
	for (int i = 0; i < p.n; i++) {
		const double *c = p.v[i];
		const double *d = p.v[i + 1 == p.n ? 0 : i + 1];
		bool cin, din;
		if (above) {
			cin = c[a] >= v;
			din = d[a] >= v;
		} else {
			cin = c[a] <= v;
			din = d[a] <= v;
		}
		if (cin) {
			double x = c[0], y = c[1], z = c[2];
			out.v[out.n][0] = x;
			out.v[out.n][1] = y;
			out.v[out.n][2] = z;
			grow_span(out.n, x, y, z, lo, hi);
			out.n++;
		}
		if (cin != din) {
			double s = (v - c[a]) / (d[a] - c[a]);
			double x = c[0] + s * (d[0] - c[0]);
			double y = c[1] + s * (d[1] - c[1]);
			double z = c[2] + s * (d[2] - c[2]);
			if (a == 0) x = v;
			else if (a == 1) y = v;
			else z = v;
			double *w = out.v[out.n];
			w[0] = x;
			w[1] = y;
			w[2] = z;
			grow_span(out.n, x, y, z, lo, hi);
			out.n++;
		}
	}
}

// clipToBox in kdtree/clip.go: per axis the lower then the upper face,
// each clip only where a vertex lies outside that face (a clip that keeps
// every vertex adds none: skipping it gives the same polygon, bit for bit,
// and most straddling triangles cross one or two faces of the box). The
// clips ping-pong between p and q; the result is whichever holds the last
// polygon (null: nothing of the triangle is in the box), and lo, hi its
// bounds. Each polygon's bounds are kept as its vertices are made, so
// whether a face cuts the polygon is one comparison instead of a pass over
// its vertices in local memory (Nsight Compute, bunny: the clipping was
// half of the small-node kernel's warp samples, most of them on those
// loads). One clip_poly in a loop, not six inlined copies: with six, the
// small-node kernel's code overflowed the instruction caches (45% of the
// cycles between two instructions of a warp were waits for an
// instruction).
__device__ Poly *clip_box(const float *tv, const float *box, Poly &p, Poly &q, double *lo, double *hi) {
	p.n = 3;
	for (int i = 0; i < 3; i++) {
		double x = (double)tv[3 * i], y = (double)tv[3 * i + 1], z = (double)tv[3 * i + 2];
		p.v[i][0] = x;
		p.v[i][1] = y;
		p.v[i][2] = z;
		grow_span(i, x, y, z, lo, hi);
	}
	Poly *src = &p, *dst = &q;
#pragma unroll 1
	for (int k = 0; k < 6; k++) {
		int b = k >> 1;
		bool above = (k & 1) == 0;
		double v = (double)box[above ? b : 3 + b];
		bool out = above ? sel3(b, lo) < v : sel3(b, hi) > v;
		if (!out) continue;
		clip_poly(*src, b, v, above, *dst, lo, hi);
		if (dst->n == 0) return nullptr;
		Poly *t = src;
		src = dst;
		dst = t;
	}
	return src;
}

// boxOfPoly in kdtree/clip.go, from the polygon's bounds lo, hi (as
// clip_poly keeps them: the same minima and maxima in the same order as a
// pass over its vertices): out = rounded bounds ∩ box ∩ cur.
__device__ bool box_of_span(const double *lo, const double *hi, const float *box, const float *cur, float *out) {
#pragma unroll
	for (int a = 0; a < 3; a++) {
		out[a] = max32(max32(round_down(lo[a]), box[a]), cur[a]);
		out[3 + a] = min32(min32(round_up(hi[a]), box[3 + a]), cur[3 + a]);
		if (out[a] > out[3 + a]) return false;
	}
	return true;
}

} // namespace kd_tree


namespace kd_tree {

// decide_node: builder.decide up to the binned SAH for node s.
// info[4s..4s+3] = off, cnt, depth, unused; the node's tight bounds are
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
	if (depth >= maxDepth) return kLeaf;
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
// level's decisions (the layout of d.dec in kdtree/large_cuda.go).
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
	kd_pdl_enter(); // a dependent launch (kdtree/large_cuda.go)
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
// 512 (2048 until 2026-11-25 left the first levels with a few dozen blocks;
// Nsight Compute, H100: 13.1 -> 6.8 us a level for the bunny, 18.6 -> 10.5
// for conference).
constexpr unsigned int kBinTile = 512;

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
	kd_pdl_enter(); // a dependent launch (kdtree/large_cuda.go)
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
	kd_pdl_enter(); // a dependent launch (kdtree/large_cuda.go)
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
	kd_pdl_enter(); // a dependent launch (kdtree/large_cuda.go)
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

namespace kd_tree {

// classify_clip: the child boxes of reference r of node s, which straddles
// the split plane (axis a, position pos): the triangle clipped to the node
// box and then to each side (clipBoth in kdtree/level.go), written to
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
// in kdtree/level.go), 0 for the padding at or past offsets[nodes] (see
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
	kd_pdl_enter(); // a dependent launch (kdtree/large_cuda.go)
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

// kTailBlock: the most threads a block of kdtree_tail_f32 may have (its
// ChildKeys slots are in static shared memory).
constexpr unsigned int kTailBlock = 256;
// The words of a level's sizes (kdtree_tail_f32) and of its log's head:
// nodes, references, references parked before it, overflow, small roots
// before it, nodes of the levels before it (kdtree/large_cuda.go: szWords).
constexpr int kSizeWords = 6;

// top_list: where the build's list of large-phase nodes starts in the
// small-root words sroot of room rootCap (kdtree/small_cuda.go's smallAt:
// past the roots' words, 12·rootCap + 5 of them), and its room, 4·rootCap
// nodes of 3 words (kdtree/top_cuda.go).
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
			// A small root (a padding node, info's fourth word 1, is none).
			unsigned long long s = j - 2 * (unsigned long long)nodes - 2;
			return dec[3 * s] == kSmall && info[4 * s + 3] == 0u ? 1u : 0u;
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
	kd_pdl_enter(); // a dependent launch (kdtree/large_cuda.go)
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

// next_node: node s's part of the next level's node table, made from this
// level's (the per-node bookkeeping of levelGo): when s splits at (a, pos)
// with child counts cl = cnt[s], cr = cnt[nodes+s] and child base cb =
// cnt[2·nodes+s] (split.Addresses), children j = 2·pre[s] and j+1 get
//   offsets[j] = cb, offsets[j+1] = cb + cl,
//   info[4j..] = cb, cl, depth+1, 0 and info[4(j+1)..] = cb+cl, cr, depth+1, 0,
//   boxes: the node's box with hi[a] = pos (below) and lo[a] = pos (above)
//   (childBoxes in kdtree/level.go).
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
	unsigned int j = 2 * pre[s];
	unsigned int *ninfo = table + layout + 1;
	float *nb = (float *)(table + 5 * (size_t)layout + 1);
	table[j] = cb;
	table[j + 1] = cb + cl;
	ninfo[4 * j] = cb;
	ninfo[4 * j + 1] = cl;
	ninfo[4 * j + 2] = depth;
	ninfo[4 * j + 3] = 0;
	ninfo[4 * j + 4] = cb + cl;
	ninfo[4 * j + 5] = cr;
	ninfo[4 * j + 6] = depth;
	ninfo[4 * j + 7] = 0;
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
// j <= layout; info = total, 0, 0, 1 for j < layout: info's fourth word,
// 0 for a real node, marks padding). The level after can
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
	ninfo[4 * j + 3] = 1; // padding (NodeWords counts no small root here)
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
// (kdtree_small_w_f32's inputs as kdtree/small_cuda.go's smallRun lays
// them out), so that the small phase can start without the host's list
// (kdtree/small_early.go); and every real node of the level gets its entry
// of the build's list of large-phase nodes (top_list, when below its
// room), which kdtree_top_layout_u32 lays out (kdtree/top_cuda.go).
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
	kd_pdl_enter(); // a dependent launch (kdtree/large_cuda.go)
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
	if (sroot != nullptr && i < nodes && dec[3 * i] == kd_tree::kSmall && info[4 * i + 3] == 0u) {
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

// kdtree_root_box_f32: the root's box into the first level's node table
// (nbox, 6 floats) from its tight bounds (the segmented box reduction's
// output, tight), -0 made +0 as canonZero does on the host; one thread a
// coordinate (kdtree/large_cuda.go: the host reads the box back meanwhile).
extern "C" __global__ void kdtree_root_box_f32(const float *tight, float *nbox) {
	unsigned int i = threadIdx.x;
	if (i >= 6) return;
	float v = tight[i];
	if (v == 0.0f) v = 0.0f;
	nbox[i] = v;
}

// kdtree_first_level_u32: the count of kept triangles, *count (left on the
// device by scan.CompactQueued), into the first level's node table and
// sizes, which the host wrote for a bound (kdtree/prepare_cuda.go: it does
// not wait for the count): offsets[1] and the root's count info[1] (the
// table of a level of `layout` nodes, info at layout+1) and, when sz is
// not null, the level's references sz[1]. One thread.
extern "C" __global__ void kdtree_first_level_u32(const unsigned int *count, unsigned int *table, unsigned int layout,
                                                  unsigned int *sz) {
	if (blockIdx.x != 0 || threadIdx.x != 0) return;
	unsigned int n = *count;
	table[1] = n;
	table[layout + 2] = n;
	if (sz != nullptr) sz[1] = n;
}

// kdtree_boxes_f32: the box of every initial reference (kept triangle
// kept[i]): triangle.bounds in kdtree/clip.go; for i < n, and below *count
// when count is not null (n then a bound).
extern "C" __global__ void kdtree_boxes_f32(const float *tv, const unsigned int *kept, unsigned int n, float *box,
                                            const unsigned int *count) {
	using namespace kd_tree;
	unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n || (count != nullptr && i >= *count)) return;
	const float *v = tv + 9 * (size_t)kept[i];
	for (int a = 0; a < 3; a++) {
		box[6 * (size_t)i + a] = min32(min32(v[a], v[3 + a]), v[6 + a]);
		box[6 * (size_t)i + 3 + a] = max32(max32(v[a], v[3 + a]), v[6 + a]);
	}
}

// kdtree_gather_f32: builder.prepare of kdtree/build.go on the device, one
// thread per scene triangle i (nt of them, vertex indices idx[3i..3i+2] into
// nv vertices of 3 floats): tv[9i..9i+8] = its vertices, keep[i] = 1 when
// it is kept (nonDegenerate: finite vertices, and scenes.Scene.Degenerate's
// test, the same double operations, unfused), else 0; iota[i] = i (the
// list the kept triangles are compacted from). A triangle with an index out
// of range is not kept, its vertices are not read and *err becomes the
// smallest such i (the host sets *err to 0xFFFFFFFF first).
extern "C" __global__ void kdtree_gather_f32(const float *verts, unsigned int nv, const unsigned int *idx,
                                             unsigned int nt, float *tv, unsigned int *keep, unsigned int *iota,
                                             unsigned int *err) {
	unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= nt) return;
	iota[i] = i;
	unsigned int t[3] = {idx[3 * (size_t)i], idx[3 * (size_t)i + 1], idx[3 * (size_t)i + 2]};
	if (t[0] >= nv || t[1] >= nv || t[2] >= nv) {
		atomicMin(err, i);
		keep[i] = 0;
		return;
	}
	float v[9];
	bool finite = true;
	for (int k = 0; k < 3; k++)
		for (int a = 0; a < 3; a++) {
			v[3 * k + a] = verts[3 * (size_t)t[k] + a];
			finite = finite && isfinite(v[3 * k + a]);
		}
	for (int k = 0; k < 9; k++) tv[9 * (size_t)i + k] = v[k];
	bool degenerate = t[0] == t[1] || t[1] == t[2] || t[0] == t[2];
	if (!degenerate) {
		double ux = (double)v[3] - (double)v[0], uy = (double)v[4] - (double)v[1], uz = (double)v[5] - (double)v[2];
		double vx = (double)v[6] - (double)v[0], vy = (double)v[7] - (double)v[1], vz = (double)v[8] - (double)v[2];
		double cx = uy * vz - uz * vy;
		double cy = uz * vx - ux * vz;
		double cz = ux * vy - uy * vx;
		degenerate = cx == 0.0 && cy == 0.0 && cz == 0.0;
	}
	keep[i] = finite && !degenerate ? 1u : 0u;
}

namespace kd_tree {

// separates in kdtree/overlap.go: whether the axis with components c1 on
// k1 and c2 on k2 separates the triangle v from box b (k1, k2 constants
// once inlined in meets_box's unrolled loops: v and b stay in registers).
__device__ __forceinline__ bool separates(double c1, double c2, int k1, int k2, const double (*v)[3], const float *b) {
	double pmin = 0.0, pmax = 0.0;
#pragma unroll
	for (int i = 0; i < 3; i++) {
		double p = (c1 * v[i][k1]) + (c2 * v[i][k2]);
		if (i == 0) {
			pmin = pmax = p;
		} else {
			pmin = min64(pmin, p);
			pmax = max64(pmax, p);
		}
	}
	double x1 = c1 * (double)b[k1], y1 = c1 * (double)b[3 + k1];
	double x2 = c2 * (double)b[k2], y2 = c2 * (double)b[3 + k2];
	double bmin = min64(x1, y1) + min64(x2, y2);
	double bmax = max64(x1, y1) + max64(x2, y2);
	return pmax < bmin || pmin > bmax;
}

// meetsBox in kdtree/overlap.go, operation for operation: whether the
// triangle tv meets the closed box b (no separating axis).
__device__ __forceinline__ bool meets_box(const float *tv, const float *b) {
#pragma unroll
	for (int a = 0; a < 3; a++) {
		float lo = tv[a], hi = tv[a];
		for (int i = 1; i < 3; i++) {
			lo = min32(lo, tv[3 * i + a]);
			hi = max32(hi, tv[3 * i + a]);
		}
		if (lo > b[3 + a] || hi < b[a]) return false;
	}
	double v[3][3], e[3][3];
#pragma unroll
	for (int i = 0; i < 3; i++)
#pragma unroll
		for (int a = 0; a < 3; a++) v[i][a] = (double)tv[3 * i + a];
#pragma unroll
	for (int j = 0; j < 3; j++)
#pragma unroll
		for (int a = 0; a < 3; a++) e[j][a] = v[(j + 1) % 3][a] - v[j][a];
#pragma unroll
	for (int j = 0; j < 3; j++) {
#pragma unroll
		for (int k = 0; k < 3; k++) {
			int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
			if (separates(e[j][k2], -e[j][k1], k1, k2, v, b)) return false;
		}
	}
	double n[3];
#pragma unroll
	for (int a = 0; a < 3; a++) {
		int a1 = (a + 1) % 3, a2 = (a + 2) % 3;
		n[a] = (e[0][a1] * e[1][a2]) - (e[0][a2] * e[1][a1]);
	}
	double pmin = 0.0, pmax = 0.0;
#pragma unroll
	for (int i = 0; i < 3; i++) {
		double p = ((n[0] * v[i][0]) + (n[1] * v[i][1])) + (n[2] * v[i][2]);
		if (i == 0) {
			pmin = pmax = p;
		} else {
			pmin = min64(pmin, p);
			pmax = max64(pmax, p);
		}
	}
	double bmin = 0.0, bmax = 0.0;
#pragma unroll
	for (int a = 0; a < 3; a++) {
		double x = n[a] * (double)b[a], y = n[a] * (double)b[3 + a];
		bmin += min64(x, y);
		bmax += max64(x, y);
	}
	return !(pmax < bmin || pmin > bmax);
}

// reachesSides in kdtree/clip.go: a vertex inside box settles its side,
// else meets_box with the child box (one copy of meets_box's code, for the
// instruction caches: see clip_box).
__device__ void reaches_sides(const float *tv, const float *box, int a, float pos, bool &okL, bool &okR) {
	okL = okR = false;
	for (int i = 0; i < 3; i++) {
		const float *v = tv + 3 * i;
		if (v[0] >= box[0] && v[0] <= box[3] && v[1] >= box[1] && v[1] <= box[4] && v[2] >= box[2] && v[2] <= box[5]) {
			okL = okL || v[a] <= pos;
			okR = okR || v[a] >= pos;
		}
	}
	bool ok[2] = {okL, okR};
#pragma unroll 1
	for (int side = 0; side < 2; side++) {
		if (ok[side]) continue;
		// childBoxes: the left child's hi[a] and the right child's lo[a]
		// are pos.
		float cb[6];
#pragma unroll
		for (int i = 0; i < 6; i++) cb[i] = (side == 0 ? i == 3 + a : i == a) ? pos : box[i];
		ok[side] = meets_box(tv, cb);
	}
	okL = ok[0];
	okR = ok[1];
}

// nth_bit64: the position of the n-th (from 0) set bit of x (n < popc(x)).
__device__ __forceinline__ int nth_bit64(unsigned long long x, int n) {
	int p = 0;
#pragma unroll
	for (int w = 32; w > 0; w >>= 1) {
		int c = __popcll((x >> p) & ((1ull << w) - 1));
		if (c <= n) {
			n -= c;
			p += w;
		}
	}
	return p;
}

// drop_one_sided: of the references X that straddle the plane (axis a at
// pos) in box, a warp's lanes test those the triangle reaches on one side
// only (reaches_sides of tri[r]'s triangle) and clear them from the side
// they miss: from SL when they reach only the right, from SR when they
// reach only the left (smallBuilder.node in kdtree/small.go). Lane i tests
// the i-th reference of X, so up to 32 straddling references take one
// pass of the long clipping whatever their places among the root's 64
// (with lane r mod 32 testing reference r, references in both halves took
// two). Reference r's triangle is tv + 9·tri[r], or tv + 9·r when tri is
// null (the root's triangles copied into shared memory).
__device__ __forceinline__ void drop_one_sided(const float *tv, const unsigned int *tri, unsigned long long X,
                                               const float *box, int a, float pos, unsigned int lane,
                                               unsigned long long &SL, unsigned long long &SR) {
	unsigned long long dropL = 0, dropR = 0;
	const int cnt = __popcll(X);
	for (int base = 0; base < cnt; base += 32) {
		int i = base + (int)lane, r = 0;
		bool dl = false, dr = false;
		if (i < cnt) {
			r = nth_bit64(X, i);
			bool okL, okR;
			reaches_sides(tv + 9 * (size_t)(tri != nullptr ? tri[r] : (unsigned int)r), box, a, pos, okL, okR);
			if (okL != okR) {
				dl = !okL;
				dr = !okR;
			}
		}
		unsigned int bl = __ballot_sync(0xFFFFFFFFu, dl), br = __ballot_sync(0xFFFFFFFFu, dr);
		for (; bl != 0; bl &= bl - 1) dropL |= 1ull << __shfl_sync(0xFFFFFFFFu, r, __ffs(bl) - 1);
		for (; br != 0; br &= br - 1) dropR |= 1ull << __shfl_sync(0xFFFFFFFFu, r, __ffs(br) - 1);
	}
	SL &= ~dropL;
	SR &= ~dropR;
}

constexpr int kStack = 66;

} // namespace kd_tree

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

namespace kd_small {

// Roots (warps) per block of kdtree_small_w_f32, records and leaf
// references a warp reserves at a time, depth of a warp's node stack (at
// most one pending sibling per level below the root, MaxTreeDepth 64).
constexpr int kWarps = 4;
constexpr unsigned int kRecChunk = 32;
constexpr unsigned int kRefChunk = 64;
constexpr int kSmallStack = 66;

// A warp's shared memory: the root's references and candidates; the boxes
// of the references are needed only to make the candidates, so the node
// stack reuses their space.
struct Warp {
	unsigned long long lt[3][128], gt[3][128];
	float pos[3][128];
	unsigned int tri[64];
	// The root's triangles (9 floats each): the straddling test reads
	// them at every split, from shared memory instead of global memory
	// (Nsight Compute: 5.6% of the kernel's warp samples waited on those
	// loads). The 2.3 KB cost no occupancy: the registers allow 4 blocks an
	// SM, which have shared memory to spare.
	float tv[64][9];
	// box[i][r]: coordinate i (lo x, y, z, hi x, y, z) of reference r's
	// box, by coordinate so that the candidates' masks read four
	// references in one load (rows past the root's references: empty
	// boxes, see kdtree_small_w_f32).
	union {
		float box[6][64];
		struct {
			unsigned long long S[kSmallStack];
			float B[kSmallStack][6];
			int D[kSmallStack];
			unsigned int R[kSmallStack];
		} st;
	} u;
	unsigned char act[64];
};

// The dynamic shared memory of a kdtree_small_w_f32 block is kWarps of them
// (kdtree/small_cuda.go: smallWarpBytes).
static_assert(sizeof(Warp) == 12944, "kdtree/small_cuda.go's smallWarpBytes is sizeof(kd_small::Warp)");
static_assert(offsetof(Warp, u) % 16 == 0, "the box rows are read as float4");

__device__ __forceinline__ float sel3f(int a, float x, float y, float z) { return a == 0 ? x : (a == 1 ? y : z); }

// half_masks adds to lt the references q < 32 of a row pair with lo[q] <
// pos and to gt those with hi[q] > pos (bit q each): 32 references, four a
// load, every bit a constant (the loop over a root's references per
// candidate was 7% of the kernel's instructions for the bunny, 13% for
// conference).
__device__ __forceinline__ void half_masks(const float *lo, const float *hi, float pos, unsigned int &lt,
                                           unsigned int &gt) {
#pragma unroll
	for (int q = 0; q < 32; q += 4) {
		float4 l = *reinterpret_cast<const float4 *>(lo + q);
		float4 h = *reinterpret_cast<const float4 *>(hi + q);
		if (l.x < pos) lt |= 1u << q;
		if (l.y < pos) lt |= 2u << q;
		if (l.z < pos) lt |= 4u << q;
		if (l.w < pos) lt |= 8u << q;
		if (h.x > pos) gt |= 1u << q;
		if (h.y > pos) gt |= 2u << q;
		if (h.z > pos) gt |= 4u << q;
		if (h.w > pos) gt |= 8u << q;
	}
}

// rank_lanes calls f(rank, r) for every bit r of S (r < 64) set, in the lane
// r mod 32, where rank is the number of bits of S below r.
template <typename F>
__device__ __forceinline__ void rank_lanes(unsigned long long S, unsigned int lane, F f) {
	unsigned int s0 = (unsigned int)S, s1 = (unsigned int)(S >> 32), below = (1u << lane) - 1u;
	if ((s0 >> lane) & 1u) f(__popc(s0 & below), lane);
	if ((s1 >> lane) & 1u) f(__popc(s0) + __popc(s1 & below), lane + 32u);
}

__device__ __forceinline__ double sel3d(int a, double x, double y, double z) { return a == 0 ? x : (a == 1 ? y : z); }

// reserve gives the warp a chunk of want words of an output counted by
// *ctr: lane 0 takes them with one atomicAdd and sets *overflow when they
// pass cap; every lane learns the chunk [next, end). It returns false when
// the chunk does not fit (the warp must stop; the host retries with more
// room).
__device__ __forceinline__ bool reserve(unsigned int *ctr, unsigned int *overflow, unsigned int want, unsigned int cap,
                                        unsigned int lane, unsigned int &next, unsigned int &end) {
	unsigned int first = 0;
	if (lane == 0) {
		first = atomicAdd(ctr, want);
		if (first + want > cap) *overflow = 1;
	}
	first = __shfl_sync(0xFFFFFFFFu, first, 0);
	if (first + want > cap) return false;
	next = first;
	end = first + want;
	return true;
}

} // namespace kd_small

// kdtree_small_w_f32: kdtree_small_f32 (same parameters, same records, the
// same tree) with kd_small::kWarps roots per block, one warp each:
//   - the SAH evaluates only the candidates of the node's references, dealt
//     out over all 32 lanes (6n candidates for n references), and the
//     winner is found with a butterfly so every lane has it;
//   - a warp reserves records (kRecChunk) and leaf references (at least
//     kRefChunk) in chunks, not with one global atomic per node, so the
//     output has up to one partly used chunk of each per root (recCap and
//     refCap must allow for it; ctr[2] is set on overflow as before);
//   - the node stack shares memory with the references' boxes and the
//     straddling test clips without copying polygons;
//   - it also writes kdtree_small_size_u32's output: size[r] = nodes of
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
//     slowest warp is done (Nsight Compute, conference: 12 of 20 possible
//     warps per SM active with a warp per root; H200, grid small phase
//     117 -> 105 ms). With few roots a warp per root is faster (bunny
//     1.14 against 1.25 ms): the phase then waits for its largest roots,
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
			kd_pdl_exit(); // launched beside kdtree_top_plan_u32 (kdtree/top_cuda.go)
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
		// Candidates as kdtree_small_f32: face k of axis a (2r lower, 2r+1
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

// The large-phase nodes laid out on the device (layoutGo's depth-first
// order, the below child next; kdtree/top_cuda.go), in two kernels: what
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

// The layout of the small subtrees on the device (kdtree/layout_device.go
// is the Go reference and the host half). kdtree_small_f32 left every small
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

// kdtree_small_size_u32: one thread per small root r: size[r] = number of
// nodes of its subtree, size[roots + r] = number of leaf references. err[0]
// is set to 1 when a walk overflows its stack (corrupt records).
extern "C" __global__ void kdtree_small_size_u32(const unsigned int *rec, unsigned int roots, unsigned int *size,
                                                 unsigned int *err) {
	using namespace kd_tree;
	unsigned int r = blockIdx.x * blockDim.x + threadIdx.x;
	if (r >= roots) return;
	unsigned int st[kLayoutStack];
	int sp = 0;
	st[sp++] = r;
	unsigned int nodes = 0, refs = 0;
	while (sp > 0) {
		unsigned int i = st[--sp];
		nodes++;
		if ((rec[3 * (size_t)i] & 0xFFu) == 1u) {
			refs += rec[3 * (size_t)i + 2];
			continue;
		}
		if (sp + 2 > kLayoutStack) {
			err[0] = 1u;
			break;
		}
		unsigned int left = rec[3 * (size_t)i + 2];
		st[sp++] = left + 1; // above child, visited after the below one
		st[sp++] = left;
	}
	size[r] = nodes;
	size[roots + r] = refs;
}

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
