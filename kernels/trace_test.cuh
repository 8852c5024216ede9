// trace_test.cuh: the watertight ray-triangle test of the trace kernels
// (trace.cu says how they fit together): kdtree/intersect.go's prepare,
// test and finish, operation for operation. The image is compiled with
// --fmad=false and every division is IEEE (no fast math), so a hit here
// has the bits of Tree.Intersect's.
#pragma once

namespace kd_trace {

constexpr int kTraceMaxDepth = 64;          // kdtree.MaxTreeDepth

// The trace kernels (trace.cu) run blocks of kTraceBlock threads and keep
// 64 registers (16 blocks per SM): the closest-hit walk would otherwise
// take more, which costs resident warps. The dynamic-fetch kernels keep
// 56 for closest hit (18 blocks; 3-4% faster on random rays than 64, no
// spills) and 48 for any hit (20 blocks; 1-4% faster than 56, no spills;
// closest hit spills there and runs 3-11% slower), where an SM takes that
// many blocks (not sm_75 nor sm_86: 16 at most).
constexpr int kTraceBlock = 64, kTraceBlocksMin = 16;
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 750 || __CUDA_ARCH__ == 860)
constexpr int kTraceBlocksDyn = 16, kTraceBlocksAnyDyn = 16;
#else
constexpr int kTraceBlocksDyn = 18, kTraceBlocksAnyDyn = 20;
#endif
constexpr float kSlack = 0x1p-18f;          // kdtree traversalSlack
constexpr float kGamma2 = 0x1.000002p-23f;  // intersect.go gamma2 (as Go rounds it)
constexpr float kGamma3 = 0x1.800004p-23f;  // gamma3
constexpr float kGamma5 = 0x1.400006p-22f;  // gamma5
constexpr unsigned kNoHit = 0xFFFFFFFFu;

// Go's max of two floats: NaN if either is NaN.
__device__ __forceinline__ float go_max(float a, float b) {
	return (a != a || b != b) ? __int_as_float(0x7fc00000) : fmaxf(a, b);
}

// Component k (0, 1, 2) of (x, y, z) without indexing a local array.
__device__ __forceinline__ float pick(float x, float y, float z, int k) {
	return k == 0 ? x : (k == 1 ? y : z);
}

// A ray prepared for the watertight test (intersect.go rayPre).
struct Pre {
	float ox, oy, oz;
	int kx, ky, kz;
	float sx, sy, sz;
	float tmin, tmax;
};

// prepare is intersect.go prepare for ray (r0, r1), given inv = 1/d per
// axis (IEEE divisions, so sz = 1/dz is inv's component kz).
__device__ __forceinline__ Pre prepare(float4 r0, float4 r1, const float inv[3]) {
	Pre p;
	p.ox = r0.x; p.oy = r0.y; p.oz = r0.z;
	float dx0 = r0.w, dy0 = r1.x, dz0 = r1.y;
	float ax = fabsf(dx0), ay = fabsf(dy0), az = fabsf(dz0);
	int kz = 0;
	if (ax > ay) {
		if (ax <= az) kz = 2;
	} else if (ay > az) {
		kz = 1;
	} else {
		kz = 2;
	}
	int kx = kz + 1 == 3 ? 0 : kz + 1;
	int ky = kx + 1 == 3 ? 0 : kx + 1;
	p.kx = kx; p.ky = ky; p.kz = kz;
	float dx = pick(dx0, dy0, dz0, kx), dy = pick(dx0, dy0, dz0, ky), dz = pick(dx0, dy0, dz0, kz);
	p.sx = -dx / dz;
	p.sy = -dy / dz;
	p.sz = pick(inv[0], inv[1], inv[2], kz);
	p.tmin = r1.z;
	p.tmax = r1.w;
	return p;
}

// intersect.go triangle (rayPre.test with finish): true and t, u, v when
// the watertight test accepts with t <= bestT (finish's early exit: a
// farther triangle cannot be the closest hit). The maxima of the t > 0
// bound use fmaxf, not Go's NaN-propagating max: a NaN in any of their
// inputs (p or e) makes ts and so tt NaN as well, and a NaN tt is rejected
// by the same test whatever deltaT is, so the answer has the same bits.
//
// ANY (an any-hit walk, bestT +Inf) rejects a triangle whose edge
// functions are all nonzero and of mixed signs before the double-precision
// branch, so that the common rejection passes one branch, not two: the
// same answer, since that branch runs only when an edge function is 0.
template <bool ANY>
__device__ __forceinline__ bool triangle(const Pre &p, float4 A, float4 B, float4 C, float bestT, float &t, float &u,
                                         float &v) {
	// Translate (per component, so the same as translating after the
	// permutation), then permute.
	float ax = A.x - p.ox, ay = A.y - p.oy, az = A.z - p.oz;
	float bx = B.x - p.ox, by = B.y - p.oy, bz = B.z - p.oz;
	float cx = C.x - p.ox, cy = C.y - p.oy, cz = C.z - p.oz;
	float p0x = pick(ax, ay, az, p.kx), p0y = pick(ax, ay, az, p.ky), p0z = pick(ax, ay, az, p.kz);
	float p1x = pick(bx, by, bz, p.kx), p1y = pick(bx, by, bz, p.ky), p1z = pick(bx, by, bz, p.kz);
	float p2x = pick(cx, cy, cz, p.kx), p2y = pick(cx, cy, cz, p.ky), p2z = pick(cx, cy, cz, p.kz);
	// Shear x and y.
	p0x = p0x + p.sx * p0z;
	p0y = p0y + p.sy * p0z;
	p1x = p1x + p.sx * p1z;
	p1y = p1y + p.sy * p1z;
	p2x = p2x + p.sx * p2z;
	p2y = p2y + p.sy * p2z;
	// Edge functions, in double when one is exactly 0.
	float e0 = p1x * p2y - p1y * p2x;
	float e1 = p2x * p0y - p2y * p0x;
	float e2 = p0x * p1y - p0y * p1x;
	bool zero = e0 == 0.0f || e1 == 0.0f || e2 == 0.0f;
	if (ANY && !zero && (e0 < 0.0f || e1 < 0.0f || e2 < 0.0f) && (e0 > 0.0f || e1 > 0.0f || e2 > 0.0f)) return false;
	if (zero) {
		e0 = (float)((double)p2y * (double)p1x - (double)p2x * (double)p1y);
		e1 = (float)((double)p0y * (double)p2x - (double)p0x * (double)p2y);
		e2 = (float)((double)p1y * (double)p0x - (double)p1x * (double)p0y);
	}
	if ((e0 < 0.0f || e1 < 0.0f || e2 < 0.0f) && (e0 > 0.0f || e1 > 0.0f || e2 > 0.0f)) return false;
	float det = e0 + e1 + e2;
	if (det == 0.0f) return false;
	// Scaled distance against tmax.
	p0z = p0z * p.sz;
	p1z = p1z * p.sz;
	p2z = p2z * p.sz;
	float ts = e0 * p0z + e1 * p1z + e2 * p2z;
	if (det < 0.0f && (ts >= 0.0f || ts < p.tmax * det)) return false;
	if (det > 0.0f && (ts <= 0.0f || ts > p.tmax * det)) return false;
	float inv = 1.0f / det;
	float tt = ts * inv;
	if (tt > bestT) return false;
	// Conservatively t > 0.
	float maxZt = fmaxf(fmaxf(fabsf(p0z), fabsf(p1z)), fabsf(p2z));
	float deltaZ = kGamma3 * maxZt;
	float maxXt = fmaxf(fmaxf(fabsf(p0x), fabsf(p1x)), fabsf(p2x));
	float maxYt = fmaxf(fmaxf(fabsf(p0y), fabsf(p1y)), fabsf(p2y));
	float deltaX = kGamma5 * (maxXt + maxZt);
	float deltaY = kGamma5 * (maxYt + maxZt);
	float deltaE = 2.0f * ((kGamma2 * maxXt) * maxYt + deltaY * maxXt + deltaX * maxYt);
	float maxE = fmaxf(fmaxf(fabsf(e0), fabsf(e1)), fabsf(e2));
	float deltaT = (3.0f * ((kGamma3 * maxE) * maxZt + deltaE * maxZt + deltaZ * maxE)) * fabsf(inv);
	if (!(tt > deltaT) || tt < p.tmin) return false;
	t = tt;
	u = e1 * inv;
	v = e2 * inv;
	return true;
}

} // namespace kd_trace
