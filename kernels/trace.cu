// trace.cu: closest-hit and any-hit ray traversal of a kd-tree on the
// device (kdtree/internal/gputrace launches these). The arithmetic repeats
// kdtree/intersect.go (prepare, test, finish) and kdtree/traverse.go
// (trace, descend) operation for operation: the image is compiled with
// --fmad=false, every division is IEEE (no fast math), Go's max (NaN in,
// NaN out) is spelled out where a NaN could change the answer (triangle
// says why its maxima need not), so a hit here has the bits of
// Tree.Intersect's and an any-hit answer equals Tree.Occluded's.
//
// Layouts (all in device memory):
//   nodes: kdtree.Node, 8 bytes (w0, w1), read as uint2.
//   tris:  three float4 per reference, in the order of Tree.Refs (so a
//          leaf's triangles are contiguous): (a.xyz, prim as bits),
//          (b.xyz, 0), (c.xyz, 0).
//   rays:  kdtree.Ray, 8 floats: org.xyz, dir.xyz, tmin, tmax (two float4).
//   hits:  8 words per ray: T, U, V, Prim, N.xyz, 0. A miss is
//          T = +Inf, Prim = 0xFFFFFFFF, U = V = N = 0.
//   occluded: one byte per ray, 1 or 0.
//   box:   9 floats: the tree's root box lo.xyz hi.xyz, then per axis the
//          largest |coordinate| of the box and of every split plane on
//          that axis (kdtree traceData.mag).
//   order: null, or the rays' indices in the order to trace them (made by
//          kd_trace_key, kd_trace_bins and kd_trace_order: rays bucketed by
//          origin and direction); results still go to each ray's index.
// The host checks the tree before upload (child and reference indices in
// range, depth at most kTraceMaxDepth), so the kernels trust it.

namespace kd_trace {

constexpr int kTraceMaxDepth = 64;          // kdtree.MaxTreeDepth
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

__device__ __forceinline__ Pre prepare(float4 r0, float4 r1) {
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
	p.sz = 1.0f / dz;
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
	if (e0 == 0.0f || e1 == 0.0f || e2 == 0.0f) {
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

// A node left for later with its ray interval.
struct Entry {
	unsigned node;
	float tmin, tmax;
};

// Result of one traced ray: the best hit's t, u, v, prim and the index of
// its reference (for the normal).
struct Best {
	float t, u, v;
	unsigned prim, ref;
	bool found;
};

// clip_box clips the ray to the root box widened by the slack (the start
// of traverse.go trace): false when it misses.
__device__ __forceinline__ bool clip_box(const float *box, const float o[3], const float d[3], const float inv[3],
                                         float rtmin, float rtmax, float &tmin, float &tmax) {
	tmin = go_max(rtmin, 0.0f);
	tmax = rtmax;
#pragma unroll
	for (int a = 0; a < 3; a++) {
		float bl = box[a], bh = box[a + 3];
		float tol = kSlack * (fabsf(bl) + fabsf(bh));
		float lo = bl - tol, hi = bh + tol;
		if (d[a] == 0.0f) {
			if (o[a] < lo || o[a] > hi) return false;
			continue;
		}
		float t0 = (lo - o[a]) * inv[a], t1 = (hi - o[a]) * inv[a];
		if (t0 > t1) {
			float x = t0;
			t0 = t1;
			t1 = x;
		}
		t0 -= kSlack * fabsf(t0);
		t1 += kSlack * fabsf(t1);
		if (t0 > tmin) tmin = t0;
		if (t1 < tmax) tmax = t1;
	}
	return tmin <= tmax;
}

// Per-ray constants of the traversal: origin, direction, 1/direction, and
// per axis the part of a plane crossing's slack that does not depend on
// the crossing, kSlack·(mag+|o|)·|inv| (traverse.go rayAxes.slack).
struct RayAxes {
	float o[3], d[3], inv[3], slack[3];
};

// interior_step is one step of traverse.go descend at interior node n: the
// next node and interval, the far (or near) child pushed when both may hold
// the hit, with traverse.go's branches and compares. A select-only form
// that lets no lane wait for another's case ran 8-10% slower (more
// instructions per step; see docs/performance.md, "GPU tracing").
__device__ __forceinline__ void interior_step(uint2 n, const RayAxes &r, unsigned &node, float &tmin, float &tmax,
                                              Entry *stack, int &sp) {
	unsigned axis = n.y & 3u;
	float s = __uint_as_float(n.x);
	float oa = pick(r.o[0], r.o[1], r.o[2], axis), da = pick(r.d[0], r.d[1], r.d[2], axis);
	unsigned nearc = node + 1, farc = n.y >> 2;
	if (oa > s || (oa == s && da > 0.0f)) {
		unsigned x = nearc;
		nearc = farc;
		farc = x;
	}
	if (da == 0.0f) {
		// Parallel: the origin's side, and the other one too when the ray
		// runs (nearly) inside the plane.
		if (fabsf(oa - s) <= kSlack * (fabsf(oa) + fabsf(s))) stack[sp++] = Entry{farc, tmin, tmax};
		node = nearc;
		return;
	}
	float tp = (s - oa) * pick(r.inv[0], r.inv[1], r.inv[2], axis);
	float slack = kSlack * fabsf(tp) + pick(r.slack[0], r.slack[1], r.slack[2], axis);
	if ((oa < s) != (da > 0.0f) || oa == s) {
		// Moving away: near holds the interval, far what rounding may put
		// there when the origin is (nearly) on the plane.
		float reach = tp + slack;
		if (!(reach < tmin)) {
			stack[sp++] = Entry{nearc, tmin, tmax};
			node = farc;
			if (reach < tmax) tmax = reach;
		} else {
			node = nearc;
		}
		return;
	}
	// Crossing the plane at tp.
	float lo = tp - slack, hi = tp + slack;
	if (lo != lo || hi != hi) {
		stack[sp++] = Entry{farc, tmin, tmax};
		node = nearc;
	} else if (lo > tmax) {
		node = nearc;
	} else if (hi < tmin) {
		node = farc;
	} else {
		stack[sp++] = Entry{farc, lo > tmin ? lo : tmin, tmax};
		node = nearc;
		if (hi < tmax) tmax = hi;
	}
}

// leaf_test tests leaf n's triangles in reference order, keeping the best
// hit (smaller t, or equal t and smaller prim); true when ANY found one.
template <bool ANY>
__device__ __forceinline__ bool leaf_test(uint2 n, const Pre &pre, const float4 *__restrict__ tris, Best &best) {
	unsigned end = n.x + (n.y >> 2);
	for (unsigned r = n.x; r < end; r++) {
		float4 A = tris[3 * r], B = tris[3 * r + 1], C = tris[3 * r + 2];
		unsigned prim = __float_as_uint(A.w);
		float th, u, v;
		if (triangle(pre, A, B, C, best.t, th, u, v) &&
		    (!best.found || th < best.t || (th == best.t && prim < best.prim))) {
			best.t = th;
			best.u = u;
			best.v = v;
			best.prim = prim;
			best.ref = r;
			best.found = true;
			if (ANY) return true;
		}
	}
	return false;
}

// no_hit is the result of a ray that hits nothing.
__device__ __forceinline__ Best no_hit() {
	Best b;
	b.t = __int_as_float(0x7f800000);
	b.u = b.v = 0.0f;
	b.prim = kNoHit;
	b.ref = 0;
	b.found = false;
	return b;
}

// start_ray prepares ray (r0, r1) and clips it to the root box; false when
// it misses the box (traverse.go trace up to the walk).
__device__ __forceinline__ bool start_ray(const float *__restrict__ box, float4 r0, float4 r1, Pre &pre, RayAxes &r,
                                          float &tmin, float &tmax) {
	pre = prepare(r0, r1);
	r.o[0] = r0.x; r.o[1] = r0.y; r.o[2] = r0.z;
	r.d[0] = r0.w; r.d[1] = r1.x; r.d[2] = r1.y;
#pragma unroll
	for (int a = 0; a < 3; a++) {
		r.inv[a] = 1.0f / r.d[a];
		r.slack[a] = kSlack * (box[6 + a] + fabsf(r.o[a])) * fabsf(r.inv[a]);
	}
	return clip_box(box, r.o, r.d, r.inv, r1.z, r1.w, tmin, tmax);
}

// trace_ray is traverse.go trace for one ray: front to back with a stack,
// the far child pushed with the part of the interval beyond the plane,
// nodes starting after the best hit skipped. ANY stops at the first hit.
// Each iteration takes one interior step or one leaf ("if-if"; the
// speculative while-while loop of Aila and Laine ran slower here, see
// docs/performance.md).
template <bool ANY>
__device__ __forceinline__ Best trace_ray(const uint2 *__restrict__ nodes, const float4 *__restrict__ tris,
                                          const float *__restrict__ box, float4 r0, float4 r1) {
	Best best = no_hit();
	Pre pre;
	RayAxes r;
	float tmin, tmax;
	if (!start_ray(box, r0, r1, pre, r, tmin, tmax)) return best;
	Entry stack[kTraceMaxDepth + 1];
	int sp = 0;
	unsigned node = 0;
	for (;;) {
		if (!best.found || tmin <= best.t) {
			uint2 n = nodes[node];
			if ((n.y & 3u) != 3u) {
				interior_step(n, r, node, tmin, tmax, stack, sp);
				continue;
			}
			if (leaf_test<ANY>(n, pre, tris, best)) return best;
		}
		if (sp == 0) return best;
		Entry e = stack[--sp];
		node = e.node;
		tmin = e.tmin;
		tmax = e.tmax;
	}
}

// store_hit writes ray i's hit record, with the normal (B−A)×(C−A) of the
// hit triangle (kdtree geometricNormal: each product rounded on its own).
__device__ __forceinline__ void store_hit(const float4 *__restrict__ tris, float4 *__restrict__ hits, unsigned i,
                                          const Best &b) {
	float4 h0 = make_float4(b.t, b.u, b.v, __uint_as_float(b.prim));
	float4 h1 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
	if (b.found) {
		float4 A = tris[3 * b.ref], B = tris[3 * b.ref + 1], C = tris[3 * b.ref + 2];
		float e1x = B.x - A.x, e1y = B.y - A.y, e1z = B.z - A.z;
		float e2x = C.x - A.x, e2y = C.y - A.y, e2z = C.z - A.z;
		h1.x = e1y * e2z - e1z * e2y;
		h1.y = e1z * e2x - e1x * e2z;
		h1.z = e1x * e2y - e1y * e2x;
	}
	hits[2 * i] = h0;
	hits[2 * i + 1] = h1;
}

// store_result writes ray i's answer: the hit record, or the any-hit byte.
template <bool ANY>
__device__ __forceinline__ void store_result(const float4 *__restrict__ tris, void *__restrict__ out, unsigned i,
                                             const Best &b) {
	if (ANY) {
		((unsigned char *)out)[i] = b.found ? 1 : 0;
	} else {
		store_hit(tris, (float4 *)out, i, b);
	}
}

// ray_at is the index of the i-th ray to trace: order[i], or i without an
// order.
__device__ __forceinline__ unsigned ray_at(const unsigned *__restrict__ order, unsigned i) {
	return order != nullptr ? order[i] : i;
}

template <bool ANY>
__device__ __forceinline__ void trace_index(const uint2 *__restrict__ nodes, const float4 *__restrict__ tris,
                                            const float *__restrict__ box, const float4 *__restrict__ rays,
                                            void *__restrict__ out, unsigned i, bool empty) {
	float4 r0 = rays[2 * i], r1 = rays[2 * i + 1];
	Best b = empty ? no_hit() : trace_ray<ANY>(nodes, tris, box, r0, r1);
	store_result<ANY>(tris, out, i, b);
}

// One thread per ray.
template <bool ANY>
__device__ __forceinline__ void trace_grid(const uint2 *__restrict__ nodes, unsigned nnodes,
                                           const float4 *__restrict__ tris, const float *__restrict__ box,
                                           const float4 *__restrict__ rays, void *__restrict__ out, unsigned n,
                                           const unsigned *__restrict__ order) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) trace_index<ANY>(nodes, tris, box, rays, out, ray_at(order, i), nnodes == 0);
}

// Persistent warps (Aila and Laine 2009): each warp takes the next 32 rays
// from *counter (zero before the launch) until none are left.
template <bool ANY>
__device__ __forceinline__ void trace_persistent(const uint2 *__restrict__ nodes, unsigned nnodes,
                                                 const float4 *__restrict__ tris, const float *__restrict__ box,
                                                 const float4 *__restrict__ rays, void *__restrict__ out, unsigned n,
                                                 const unsigned *__restrict__ order, unsigned *counter) {
	unsigned lane = threadIdx.x & 31u;
	for (;;) {
		unsigned base = 0;
		if (lane == 0) base = atomicAdd(counter, 32u);
		base = __shfl_sync(0xFFFFFFFFu, base, 0);
		if (base >= n) return;
		unsigned i = base + lane;
		if (i < n) trace_index<ANY>(nodes, tris, box, rays, out, ray_at(order, i), nnodes == 0);
		__syncwarp();
	}
}

// Persistent warps with dynamic fetch (Aila and Laine 2009, their
// "replacing terminated rays"): every iteration each live lane takes one
// traversal step (an interior node, a leaf, or a pop); when fewer than
// refill lanes of the warp are live, the idle ones take new rays from
// *counter (zero before the launch) together, so that a warp is not held
// by its longest ray. A lane stops for good once the rays are used up.
template <bool ANY>
__device__ __forceinline__ void trace_dynamic(const uint2 *__restrict__ nodes, unsigned nnodes,
                                              const float4 *__restrict__ tris, const float *__restrict__ box,
                                              const float4 *__restrict__ rays, void *__restrict__ out, unsigned n,
                                              const unsigned *__restrict__ order, unsigned *counter,
                                              unsigned refill) {
	const unsigned lane = threadIdx.x & 31u;
	Entry stack[kTraceMaxDepth + 1];
	Pre pre;
	RayAxes r;
	Best best = no_hit();
	float tmin = 0.0f, tmax = 0.0f;
	int sp = 0;
	unsigned node = 0, i = 0;
	bool live = false, spent = false;
	for (;;) {
		unsigned liveMask = __ballot_sync(0xFFFFFFFFu, live);
		if ((unsigned)__popc(liveMask) < refill) {
			unsigned need = __ballot_sync(0xFFFFFFFFu, !live && !spent);
			if (need != 0) {
				unsigned base = 0;
				if (lane == 0) base = atomicAdd(counter, (unsigned)__popc(need));
				base = __shfl_sync(0xFFFFFFFFu, base, 0);
				if (!live && !spent) {
					i = base + __popc(need & ((1u << lane) - 1u));
					if (i >= n) {
						spent = true;
					} else {
						i = ray_at(order, i);
						float4 r0 = rays[2 * i], r1 = rays[2 * i + 1];
						best = no_hit();
						if (nnodes != 0 && start_ray(box, r0, r1, pre, r, tmin, tmax)) {
							live = true;
							sp = 0;
							node = 0;
						} else {
							store_result<ANY>(tris, out, i, best);
						}
					}
				}
			}
			if (__ballot_sync(0xFFFFFFFFu, live) == 0 && __all_sync(0xFFFFFFFFu, spent || live)) return;
		}
		if (!live) continue;
		bool end = false;
		if (!best.found || tmin <= best.t) {
			uint2 nd = nodes[node];
			if ((nd.y & 3u) != 3u) {
				interior_step(nd, r, node, tmin, tmax, stack, sp);
				continue;
			}
			end = leaf_test<ANY>(nd, pre, tris, best);
		}
		if (!end && sp > 0) {
			Entry e = stack[--sp];
			node = e.node;
			tmin = e.tmin;
			tmax = e.tmax;
			continue;
		}
		store_result<ANY>(tris, out, i, best);
		live = false;
	}
}

// Ray bucketing before a trace: a key per ray from its origin's cell in the
// root box and its direction, a counting sort of the rays by key, then the
// trace in that order (results still go to each ray's own index, so every
// answer is unchanged). The key is made of six 3-bit coordinates: the
// direction's x, y, z over its largest |component| and the origin's x, y,
// z over the box, each cut into 8 cells. kSortMorton interleaves all six
// bits by bits, most significant first (rays next to each other in the
// order start near each other and point the same way); kSortDirection puts
// the direction's three interleaved first, then the origin's; kSortOrigin
// the origin's first.
constexpr int kBinBits = 18;
constexpr unsigned kBins = 1u << kBinBits;
constexpr int kScanThreads = 1024;
constexpr unsigned kSortMorton = 1, kSortDirection = 2, kSortOrigin = 3;

// cell quantises x in [0, 1] to 0..7 (NaN to 0).
__device__ __forceinline__ unsigned cell(float x) {
	return (unsigned)fminf(fmaxf(x * 8.0f, 0.0f), 7.0f);
}

// interleave3 spreads the 3-bit a, b, c into 9 bits a2 b2 c2 a1 b1 c1 a0 b0 c0.
__device__ __forceinline__ unsigned interleave3(unsigned a, unsigned b, unsigned c) {
	unsigned key = 0;
#pragma unroll
	for (int k = 2; k >= 0; k--) key = key << 3 | ((a >> k) & 1u) << 2 | ((b >> k) & 1u) << 1 | ((c >> k) & 1u);
	return key;
}

__device__ __forceinline__ unsigned ray_key(float4 r0, float4 r1, const float *__restrict__ box, unsigned mode) {
	float dx = r0.w, dy = r1.x, dz = r1.y;
	float m = fmaxf(fmaxf(fabsf(dx), fabsf(dy)), fabsf(dz));
	unsigned c[6];
	c[0] = cell(0.5f * (dx / m) + 0.5f);
	c[1] = cell(0.5f * (dy / m) + 0.5f);
	c[2] = cell(0.5f * (dz / m) + 0.5f);
	c[3] = cell((r0.x - box[0]) / (box[3] - box[0]));
	c[4] = cell((r0.y - box[1]) / (box[4] - box[1]));
	c[5] = cell((r0.z - box[2]) / (box[5] - box[2]));
	unsigned d = interleave3(c[0], c[1], c[2]), o = interleave3(c[3], c[4], c[5]);
	if (mode == kSortDirection) return d << 9 | o;
	if (mode == kSortOrigin) return o << 9 | d;
	unsigned key = 0;
#pragma unroll
	for (int k = 8; k >= 0; k -= 3) key = key << 6 | ((d >> k) & 7u) << 3 | ((o >> k) & 7u);
	return key;
}

// add_grouped adds 1 to counts[key] for each active lane of the warp with
// one atomic per distinct key, and returns the count before this lane's
// (the lanes of one key numbered in lane order).
__device__ __forceinline__ unsigned add_grouped(unsigned *counts, unsigned key) {
	unsigned peers = __match_any_sync(__activemask(), key);
	unsigned lane = threadIdx.x & 31u;
	unsigned leader = __ffs(peers) - 1;
	unsigned base = 0;
	if (lane == leader) base = atomicAdd(&counts[key], (unsigned)__popc(peers));
	base = __shfl_sync(peers, base, leader);
	return base + __popc(peers & ((1u << lane) - 1u));
}

} // namespace kd_trace

// kd_trace_key writes each ray's bucket key (mode: kSortMorton,
// kSortDirection or kSortOrigin) and counts the rays per bucket into hist
// (kBins words, zero before).
extern "C" __global__ void kd_trace_key(const float4 *__restrict__ rays, const float *__restrict__ box, unsigned n,
                                        unsigned mode, unsigned *__restrict__ keys, unsigned *__restrict__ hist) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	unsigned key = kd_trace::ray_key(rays[2 * i], rays[2 * i + 1], box, mode);
	keys[i] = key;
	kd_trace::add_grouped(hist, key);
}

// kd_trace_bins turns the counts of hist into exclusive offsets, in place:
// one block of kScanThreads threads, each summing a run of kBins /
// kScanThreads buckets.
extern "C" __global__ void __launch_bounds__(1024) kd_trace_bins(unsigned *__restrict__ hist) {
	constexpr unsigned per = kd_trace::kBins / kd_trace::kScanThreads;
	__shared__ unsigned sums[kd_trace::kScanThreads];
	unsigned t = threadIdx.x;
	uint4 *run = (uint4 *)(hist + t * per);
	unsigned sum = 0;
	for (unsigned k = 0; k < per / 4; k++) {
		uint4 v = run[k];
		sum += v.x + v.y + v.z + v.w;
	}
	sums[t] = sum;
	__syncthreads();
	for (unsigned d = 1; d < kd_trace::kScanThreads; d <<= 1) {
		unsigned x = t >= d ? sums[t - d] : 0;
		__syncthreads();
		sums[t] += x;
		__syncthreads();
	}
	unsigned acc = sums[t] - sum;
	for (unsigned k = 0; k < per / 4; k++) {
		uint4 v = run[k], o;
		o.x = acc;
		o.y = o.x + v.x;
		o.z = o.y + v.y;
		o.w = o.z + v.z;
		acc = o.w + v.w;
		run[k] = o;
	}
}

// kd_trace_order places each ray's index at its bucket's next free slot of
// order (hist holds the buckets' offsets and is advanced).
extern "C" __global__ void kd_trace_order(const unsigned *__restrict__ keys, unsigned n, unsigned *__restrict__ hist,
                                          unsigned *__restrict__ order) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	order[kd_trace::add_grouped(hist, keys[i])] = i;
}


// The trace kernels run blocks of at most 128 threads and keep 64
// registers (8 blocks of 128 per SM): the closest-hit walk would otherwise
// take 65, which costs a quarter of the resident warps.
constexpr int kTraceBlockMax = 128, kTraceBlocksMin = 8;

// One thread per ray (the default).
extern "C" __global__ void __launch_bounds__(kTraceBlockMax, kTraceBlocksMin) kd_trace_closest(const uint2 *__restrict__ nodes, unsigned nnodes,
                                            const float4 *__restrict__ tris, const float *__restrict__ box,
                                            const float4 *__restrict__ rays, float4 *__restrict__ hits, unsigned n,
                                            const unsigned *__restrict__ order) {
	kd_trace::trace_grid<false>(nodes, nnodes, tris, box, rays, hits, n, order);
}

extern "C" __global__ void __launch_bounds__(kTraceBlockMax, kTraceBlocksMin) kd_trace_any(const uint2 *__restrict__ nodes, unsigned nnodes,
                                        const float4 *__restrict__ tris, const float *__restrict__ box,
                                        const float4 *__restrict__ rays, unsigned char *__restrict__ occluded,
                                        unsigned n, const unsigned *__restrict__ order) {
	kd_trace::trace_grid<true>(nodes, nnodes, tris, box, rays, occluded, n, order);
}

// Persistent warps (trace_persistent).
extern "C" __global__ void __launch_bounds__(kTraceBlockMax, kTraceBlocksMin) kd_trace_closest_pt(const uint2 *__restrict__ nodes, unsigned nnodes,
                                               const float4 *__restrict__ tris, const float *__restrict__ box,
                                               const float4 *__restrict__ rays, float4 *__restrict__ hits, unsigned n,
                                               const unsigned *__restrict__ order, unsigned *counter) {
	kd_trace::trace_persistent<false>(nodes, nnodes, tris, box, rays, hits, n, order, counter);
}

extern "C" __global__ void __launch_bounds__(kTraceBlockMax, kTraceBlocksMin) kd_trace_any_pt(const uint2 *__restrict__ nodes, unsigned nnodes,
                                           const float4 *__restrict__ tris, const float *__restrict__ box,
                                           const float4 *__restrict__ rays, unsigned char *__restrict__ occluded,
                                           unsigned n, const unsigned *__restrict__ order, unsigned *counter) {
	kd_trace::trace_persistent<true>(nodes, nnodes, tris, box, rays, occluded, n, order, counter);
}

// Dynamic fetch (trace_dynamic).
extern "C" __global__ void __launch_bounds__(kTraceBlockMax, kTraceBlocksMin) kd_trace_closest_dyn(const uint2 *__restrict__ nodes, unsigned nnodes,
                                                const float4 *__restrict__ tris, const float *__restrict__ box,
                                                const float4 *__restrict__ rays, float4 *__restrict__ hits, unsigned n,
                                                const unsigned *__restrict__ order, unsigned *counter,
                                                unsigned refill) {
	kd_trace::trace_dynamic<false>(nodes, nnodes, tris, box, rays, hits, n, order, counter, refill);
}

extern "C" __global__ void __launch_bounds__(kTraceBlockMax, kTraceBlocksMin) kd_trace_any_dyn(const uint2 *__restrict__ nodes, unsigned nnodes,
                                            const float4 *__restrict__ tris, const float *__restrict__ box,
                                            const float4 *__restrict__ rays, unsigned char *__restrict__ occluded,
                                            unsigned n, const unsigned *__restrict__ order, unsigned *counter,
                                            unsigned refill) {
	kd_trace::trace_dynamic<true>(nodes, nnodes, tris, box, rays, occluded, n, order, counter, refill);
}
