// kdtree_prepare.cu: the build's start: triangles gathered from the
// indexed mesh, their boxes, and the first level's node table.

#include "kdtree.cuh"

// kdtree_root_box_f32: the root's box into the first level's node table
// (nbox, 6 floats) from its tight bounds (the segmented box reduction's
// output, tight), -0 made +0 as canonZero does on the host; one thread a
// coordinate (kdtree/internal/gpubuild/large_cuda.go: the host reads the box back meanwhile).
extern "C" __global__ void kdtree_root_box_f32(const float *tight, float *nbox) {
	unsigned int i = threadIdx.x;
	if (i >= 6) return;
	float v = tight[i];
	if (v == 0.0f) v = 0.0f;
	nbox[i] = v;
}

// kdtree_first_level_u32: the count of kept triangles, *count (left on the
// device by scan.CompactQueued), into the first level's node table and
// sizes, which the host wrote for a bound (kdtree/internal/gpubuild/prepare_cuda.go: it does
// not wait for the count): offsets[1], the root's count info[1] and its
// budget info[3] (root_budget of n and maxDup; the table of a level of
// `layout` nodes, info at layout+1) and, when sz is not null, the level's
// references sz[1]. One thread.
extern "C" __global__ void kdtree_first_level_u32(const unsigned int *count, unsigned int *table, unsigned int layout,
                                                  int maxDup, unsigned int *sz) {
	if (blockIdx.x != 0 || threadIdx.x != 0) return;
	unsigned int n = *count;
	table[1] = n;
	table[layout + 2] = n;
	table[layout + 4] = kd_tree::root_budget(n, maxDup);
	if (sz != nullptr) sz[1] = n;
}

// kdtree_boxes_f32: the box of every initial reference (kept triangle
// kept[i]): triangle.bounds in kdtree/internal/refbuild/clip.go; for i < n, and below *count
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

// kdtree_gather_f32: builder.prepare of kdtree/internal/refbuild/build.go on the device, one
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
