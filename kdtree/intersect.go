package kdtree

import (
	"math"

	"github.com/kdbuild/kdbuild/scenes"
)

// Error bounds of the watertight test, pbrt-v3's gamma(n) = nε/(1−nε) in
// float32 with ε = 2^-24 (half the float32 machine epsilon).
const (
	machineEps = float32(0x1p-24)
	gamma2     = float32(2*machineEps) / float32(1-2*machineEps)
	gamma3     = float32(3*machineEps) / float32(1-3*machineEps)
	gamma5     = float32(5*machineEps) / float32(1-5*machineEps)
)

// triVerts is one triangle as traversal reads it: the vertices A, B, C in
// this order, each as x, y, z (36 bytes, TraceBytesPerTriangle). Tree keeps
// one per triangle of the scene, in Scene.Tris order: one read per
// triangle instead of the index and three vertices. (A 48-byte form with a
// pad word per vertex, which spares the bounds checks of the permuted
// index, traced no faster and takes a third more memory.)
type triVerts [3][3]float32

// vertsOf returns triangle i of s as triVerts.
func vertsOf(s *scenes.Scene, i int) triVerts {
	tri := s.Tris[i]
	a, b, c := s.Verts[tri[0]], s.Verts[tri[1]], s.Verts[tri[2]]
	return triVerts{{a[0], a[1], a[2]}, {b[0], b[1], b[2]}, {c[0], c[1], c[2]}}
}

// rayPre is a ray prepared for the watertight ray-triangle test (Woop,
// Benthin, Wald 2013): the axis of the largest |Dir| component becomes z,
// and the shear that maps Dir to +z. The fields are computed once per ray.
type rayPre struct {
	kx, ky, kz uint    // permuted axes, each 0, 1 or 2
	ox, oy, oz float32 // Org[kx], Org[ky], Org[kz]
	sx, sy, sz float32 // −Dir[kx]/Dir[kz], −Dir[ky]/Dir[kz], 1/Dir[kz]
	tmin, tmax float32
}

// prepare computes rayPre for r:
//
//	kz = pbrt-v3's MaxDimension(|Dir|): x unless beaten strictly, then y vs z
//	kx = kz+1 mod 3, ky = kx+1 mod 3
//	sx = −Dir[kx]/Dir[kz], sy = −Dir[ky]/Dir[kz], sz = 1/Dir[kz]   (float32 divisions)
func prepare(r *Ray) rayPre {
	ax, ay, az := abs32(r.Dir[0]), abs32(r.Dir[1]), abs32(r.Dir[2])
	// The choice above as flags, without a branch: kz = 0 when x beats y
	// and z, else 1 when y beats x (not strictly) and z strictly, else 2.
	var xy, xz, yz uint
	if ax > ay {
		xy = 1
	}
	if ax > az {
		xz = 1
	}
	if ay > az {
		yz = 1
	}
	kz := 2 - 2*(xy&xz) - (xy^1)&yz
	kx, ky := next3[kz], next3[next3[kz]]
	dx, dy, dz := r.Dir[kx], r.Dir[ky], r.Dir[kz]
	return rayPre{
		kx: kx, ky: ky, kz: kz,
		ox: r.Org[kx], oy: r.Org[ky], oz: r.Org[kz],
		sx: -dx / dz, sy: -dy / dz, sz: 1 / dz,
		tmin: r.TMin, tmax: r.TMax,
	}
}

// next3 is the next axis: (k+1) mod 3 (the fourth entry keeps an index
// k&3 in bounds).
var next3 = [4]uint{1, 2, 0, 0}

// test is the watertight ray-triangle test, pbrt-v3's in float32, of one
// triangle: it returns t and the barycentrics of B and C, or false. A hit
// with t > bestT is rejected before its error bound is computed (it could
// not win); pass +Inf for the plain test.
//
// test is the reference, run by IntersectBrute; the traversal (descend)
// runs the same operations with the steps up to the sign test written out
// in its leaf loop, so that no call is paid per rejected triangle, and the
// rest through finish. Tree-against-brute tests on every shared scene check
// that the two agree bit for bit. Every operation is a
// float32 operation rounded on its own (each product is wrapped in
// float32() so that no compiler fuses it into an FMA); the GPU mirrors it
// op by op, for a triangle with vertices V0 = A, V1 = B, V2 = C:
//
//	translate, permute:  pNx = VN[kx]−ox, pNy = VN[ky]−oy, pNz = VN[kz]−oz   (N = 0, 1, 2)
//	shear x and y:       pNx = pNx + sx·pNz, pNy = pNy + sy·pNz
//	edge functions:      e0 = p1x·p2y − p1y·p2x, e1 = p2x·p0y − p2y·p0x, e2 = p0x·p1y − p0y·p1x
//	if any e is exactly 0, all three again in float64 from the float32 p's, rounded once:
//	                     e0 = f32(p2y·p1x − p2x·p1y), e1 = f32(p0y·p2x − p0x·p2y), e2 = f32(p1y·p0x − p1x·p0y)
//	reject if (e0 < 0 or e1 < 0 or e2 < 0) and (e0 > 0 or e1 > 0 or e2 > 0)
//	det = (e0 + e1) + e2; reject if det == 0
//	scale z:             pNz = pNz·sz
//	tScaled = (e0·p0z + e1·p1z) + e2·p2z
//	reject if det < 0 and (tScaled >= 0 or tScaled < tmax·det)
//	reject if det > 0 and (tScaled <= 0 or tScaled > tmax·det)
//	invDet = 1/det; u = e1·invDet, v = e2·invDet, t = tScaled·invDet
//	reject if t > bestT (a cut that changes no answer: such a hit cannot win)
//	maxZt = max3(|p0z|, |p1z|, |p2z|); maxXt, maxYt alike; maxE = max3(|e0|, |e1|, |e2|)
//	deltaZ = γ3·maxZt, deltaX = γ5·(maxXt + maxZt), deltaY = γ5·(maxYt + maxZt)
//	deltaE = 2·((γ2·maxXt·maxYt + deltaY·maxXt) + deltaX·maxYt)
//	deltaT = 3·((γ3·maxE·maxZt + deltaE·maxZt) + deltaZ·maxE)·|invDet|
//	reject unless t > deltaT (pbrt-v3 §3.9.6: conservatively t > 0; also rejects NaN); reject if t < tmin
//
// Products of more than two factors are evaluated left to right, γn are the
// float32 constants above, max3(a, b, c) = max(max(a, b), c) with
// max(a, b) = (a > b ? a : b): no NaN reaches it in an accepted hit (a NaN
// p or e makes t NaN, which the last test rejects), so any max gives the same
// bits. The edge functions recomputed in float64 keep edges and vertices
// shared by triangles from being missed by both.
func (p *rayPre) test(v *triVerts, bestT float32) (t, u, w float32, ok bool) {
	p0x, p0y, p0z, p1x, p1y, p1z, p2x, p2y, p2z := p.sheared(v)
	e0 := float32(p1x*p2y) - float32(p1y*p2x)
	e1 := float32(p2x*p0y) - float32(p2y*p0x)
	e2 := float32(p0x*p1y) - float32(p0y*p1x)
	if e0 == 0 || e1 == 0 || e2 == 0 {
		e0, e1, e2 = p.edges64(v)
	}
	if mixedSigns(e0, e1, e2) {
		return 0, 0, 0, false
	}
	return p.finish(e0, e1, e2, p0x, p0y, p1x, p1y, p2x, p2y, p0z, p1z, p2z, bestT)
}

// mixedSigns reports (e0 < 0 || e1 < 0 || e2 < 0) && (e0 > 0 || e1 > 0 ||
// e2 > 0), the watertight test's rejection by the signs of the edge
// functions, with the six compares set as flags and combined without a
// branch: one branch per triangle instead of up to six.
func mixedSigns(e0, e1, e2 float32) bool {
	var n0, n1, n2, p0, p1, p2 uint8
	if e0 < 0 {
		n0 = 1
	}
	if e1 < 0 {
		n1 = 1
	}
	if e2 < 0 {
		n2 = 1
	}
	if e0 > 0 {
		p0 = 1
	}
	if e1 > 0 {
		p1 = 1
	}
	if e2 > 0 {
		p2 = 1
	}
	return (n0|n1|n2)&(p0|p1|p2) != 0
}

// sheared returns the triangle's vertices translated to the ray origin,
// permuted, and sheared in x and y (z not yet scaled): the first step of
// test. It is not inlined so that the rare steps that need it again
// (edges64, deltaT) do not keep its values live in the callers' loops.
//
//go:noinline
func (p *rayPre) sheared(v *triVerts) (p0x, p0y, p0z, p1x, p1y, p1z, p2x, p2y, p2z float32) {
	kx, ky, kz := p.kx, p.ky, p.kz
	p0z, p1z, p2z = v[0][kz]-p.oz, v[1][kz]-p.oz, v[2][kz]-p.oz
	p0x = v[0][kx] - p.ox + float32(p.sx*p0z)
	p0y = v[0][ky] - p.oy + float32(p.sy*p0z)
	p1x = v[1][kx] - p.ox + float32(p.sx*p1z)
	p1y = v[1][ky] - p.oy + float32(p.sy*p1z)
	p2x = v[2][kx] - p.ox + float32(p.sx*p2z)
	p2y = v[2][ky] - p.oy + float32(p.sy*p2z)
	return
}

// edges64 returns the edge functions computed in float64 from the float32
// sheared vertices and rounded once, for when one of the float32 ones is 0.
func (p *rayPre) edges64(v *triVerts) (e0, e1, e2 float32) {
	p0x, p0y, _, p1x, p1y, _, p2x, p2y, _ := p.sheared(v)
	e0 = float32(float64(p2y)*float64(p1x) - float64(p2x)*float64(p1y))
	e1 = float32(float64(p0y)*float64(p2x) - float64(p0x)*float64(p2y))
	e2 = float32(float64(p1y)*float64(p0x) - float64(p1x)*float64(p0y))
	return
}

// deltaT is pbrt-v3's bound on the rounding error of t (§3.9.6), from the
// edge functions and the sheared vertices, z scaled (finish's values, not
// computed again): t must exceed it.
func (p *rayPre) deltaT(e0, e1, e2, p0x, p0y, p1x, p1y, p2x, p2y, p0z, p1z, p2z, invDet float32) float32 {
	maxZt := maxAbs3(p0z, p1z, p2z)
	deltaZ := float32(gamma3 * maxZt)
	maxXt := maxAbs3(p0x, p1x, p2x)
	maxYt := maxAbs3(p0y, p1y, p2y)
	deltaX := float32(gamma5 * (maxXt + maxZt))
	deltaY := float32(gamma5 * (maxYt + maxZt))
	deltaE := 2 * (float32(float32(gamma2*maxXt)*maxYt) + float32(deltaY*maxXt) + float32(deltaX*maxYt))
	maxE := maxAbs3(e0, e1, e2)
	return float32(float32(3*(float32(float32(gamma3*maxE)*maxZt)+float32(deltaE*maxZt)+float32(deltaZ*maxE))) * abs32(invDet))
}

// maxAbs3 is max3(|a|, |b|, |c|), taken on the bits: the bits of floats
// without a sign, as uint32, are ordered as their values, so the maximum
// is conditional moves, not branches that random rays mispredict. (A NaN
// operand gives a NaN here where max3 might not; such an operand makes t
// NaN as well, which the test rejects either way.)
func maxAbs3(a, b, c float32) float32 {
	const mag = 1<<31 - 1
	return math.Float32frombits(max(math.Float32bits(a)&mag, math.Float32bits(b)&mag, math.Float32bits(c)&mag))
}

func abs32(x float32) float32 {
	return math.Float32frombits(math.Float32bits(x) &^ (1 << 31))
}

// finish is the rest of test after the sign test, from the edge functions
// and the sheared vertices (z not yet scaled): determinant, scaled distance
// against TMax, t, the cut against bestT, the error bound and TMin.
func (p *rayPre) finish(e0, e1, e2, p0x, p0y, p1x, p1y, p2x, p2y, p0z, p1z, p2z, bestT float32) (t, u, w float32, ok bool) {
	det := e0 + e1 + e2
	if det == 0 {
		return
	}
	p0z = float32(p0z * p.sz)
	p1z = float32(p1z * p.sz)
	p2z = float32(p2z * p.sz)
	tScaled := float32(e0*p0z) + float32(e1*p1z) + float32(e2*p2z)
	if det < 0 && (tScaled >= 0 || tScaled < float32(p.tmax*det)) {
		return
	}
	if det > 0 && (tScaled <= 0 || tScaled > float32(p.tmax*det)) {
		return
	}
	invDet := 1 / det
	t = float32(tScaled * invDet)
	if t > bestT {
		return 0, 0, 0, false
	}
	if !(t > p.deltaT(e0, e1, e2, p0x, p0y, p1x, p1y, p2x, p2y, p0z, p1z, p2z, invDet)) || t < p.tmin {
		return 0, 0, 0, false
	}
	return t, float32(e1 * invDet), float32(e2 * invDet), true
}
