// kdtree.cuh: what the kd-tree builder's kernels share (kernels/kdtree_*.cu,
// one file per phase). Every floating-point step repeats the Go reference
// operation for operation (kernels are compiled with --fmad=false, so no
// product is fused into an FMA), and every reduction is either exact
// (min/max through order-preserving keys) or over integers, so that the tree
// equals the Go executor's node for node.
//
// Layouts: a box is 6 floats lo.x lo.y lo.z hi.x hi.y hi.z; triangle t's
// vertices are tv[9t .. 9t+8] (x y z of each vertex). A level's nodes are
// segments of its reference list: node s holds references
// offsets[s] .. offsets[s+1]-1, and rnode[r] is the node of reference r
// (written by the level before's kdtree_tail_f32 as it scatters each copy,
// zero for the first level): one load where a binary search over offsets
// made a chain of dependent loads (11 at the bunny's 1452 nodes, which
// made the levels' kernels slower as the nodes grew).

#pragma once

#include "consts_gen.cuh"
#include "split.cuh"

namespace kd_tree {

// The tree node shared with Go (kdtree.Node): 8 bytes.
struct Node {
	unsigned int w0, w1;
};
static_assert(sizeof(Node) == kd_const::kNodeBytes, "kd-tree node must be NodeBytes (package consts)");

// Node fates (kdtree/internal/refbuild/level.go) and the pending state of a node waiting for
// the binned SAH.
enum {
	kSplit = kd_const::kFateSplit,
	kLeaf = kd_const::kFateLeaf,
	kSmall = kd_const::kFateSmall,
	kPending = kd_const::kFatePending
};

// Flags of a reference (split.Left, split.Right, flagClipped).
enum { kLeft = kd_const::kFlagLeft, kRight = kd_const::kFlagRight, kClipped = kd_const::kFlagClipped };

using kd_const::kEmptyCutoff;
constexpr int kMaxPoly = 10;

// The duplication budget (kdtree/internal/refbuild/budget.go): a node's is
// the fourth word of its info, kNoBudget for none, kPadBudget marking a
// padding node.
using kd_const::kPadBudget;
constexpr unsigned int kNoBudget = kPadBudget - 1u;

// RootBudget: n references, maxDup per triangle (negative: none).
__device__ __forceinline__ unsigned int root_budget(unsigned int n, int maxDup) {
	if (maxDup < 0 || n == 0) return kNoBudget;
	unsigned long long b = (unsigned long long)n * (unsigned long long)maxDup;
	return b < (unsigned long long)kNoBudget ? (unsigned int)b : kNoBudget;
}

// ChildBudget: the budget of a child holding c of the sum references both
// children of a node of budget a hold.
__device__ __forceinline__ unsigned int child_budget(unsigned int a, unsigned int c, unsigned int sum) {
	if (a == kNoBudget || sum == 0) return a;
	return (unsigned int)((unsigned long long)a * (unsigned long long)c / (unsigned long long)sum);
}

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

// aabb.area64 in kdtree/internal/refbuild/clip.go.
__device__ __forceinline__ double area64(const float *b) {
	double dx = (double)b[3] - (double)b[0];
	double dy = (double)b[4] - (double)b[1];
	double dz = (double)b[5] - (double)b[2];
	return 2.0 * ((dx * dy) + (dy * dz) + (dz * dx));
}

// sahParams.splitCost in kdtree/internal/refbuild/bins.go.
__device__ __forceinline__ double split_cost(double ct, double ci, double keep, double aN, double aL, double aR,
                                             unsigned int nL, unsigned int nR) {
	double c = (aL * (double)nL) + (aR * (double)nR);
	c = c / aN;
	if (nL == 0 || nR == 0) c = c * keep;
	return ct + ci * c;
}

// childAreas in kdtree/internal/refbuild/bins.go.
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

// choice.better in kdtree/internal/refbuild/bins.go: order by (cost, axis, pos, idx).
__device__ __forceinline__ bool better(double cost, int axis, float pos, int idx, double bc, int ba, float bp, int bi) {
	if (cost != bc) return cost < bc;
	if (axis != ba) return axis < ba;
	if (pos != bp) return pos < bp;
	return idx < bi;
}

// binGeom in kdtree/internal/refbuild/bins.go.
__device__ __forceinline__ int bin_of(float x, float lo, float w, int nb) {
	float f = (x - lo) / w;
	if (!(f > 0.0f)) return 0;
	if (f >= (float)nb) return nb - 1;
	return (int)f;
}

// roundDown / roundUp in kdtree/internal/refbuild/clip.go.
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

// poly.clip in kdtree/internal/refbuild/clip.go; lo and hi are set to the bounds of the
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

// clipToBox in kdtree/internal/refbuild/clip.go: per axis the lower then the upper face,
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

// boxOfPoly in kdtree/internal/refbuild/clip.go, from the polygon's bounds lo, hi (as
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
