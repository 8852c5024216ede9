package kdtree

import (
	"math"

	"github.com/go-gl/mathgl/mgl32"
)

// Error bounds of the watertight test, pbrt-v3's gamma(n) = nε/(1−nε) in
// float32 with ε = 2^-24 (half the float32 machine epsilon).
const (
	machineEps = float32(0x1p-24)
	gamma2     = float32(2*machineEps) / float32(1-2*machineEps)
	gamma3     = float32(3*machineEps) / float32(1-3*machineEps)
	gamma5     = float32(5*machineEps) / float32(1-5*machineEps)
)

// rayPre is a ray prepared for the watertight ray-triangle test (Woop,
// Benthin, Wald 2013): the axis of the largest |Dir| component becomes z,
// and the shear that maps Dir to +z. The fields are computed once per ray.
type rayPre struct {
	org        mgl32.Vec3
	kx, ky, kz int
	sx, sy, sz float32
	tmin, tmax float32
}

func prepare(r *Ray) rayPre {
	ax, ay, az := abs32(r.Dir[0]), abs32(r.Dir[1]), abs32(r.Dir[2])
	// pbrt-v3's MaxDimension: x unless beaten strictly, then y vs z.
	kz := 0
	if ax > ay {
		if ax <= az {
			kz = 2
		}
	} else if ay > az {
		kz = 1
	} else {
		kz = 2
	}
	kx := kz + 1
	if kx == 3 {
		kx = 0
	}
	ky := kx + 1
	if ky == 3 {
		ky = 0
	}
	dx, dy, dz := r.Dir[kx], r.Dir[ky], r.Dir[kz]
	return rayPre{
		org: r.Org, kx: kx, ky: ky, kz: kz,
		sx: -dx / dz, sy: -dy / dz, sz: 1 / dz,
		tmin: r.TMin, tmax: r.TMax,
	}
}

// triangle is the watertight ray-triangle test as pbrt-v3 writes it in
// float32: translate the vertices to the ray origin, permute and shear so
// that the ray runs along +z, take the 2D edge functions (recomputed in
// float64 when one is exactly 0, so that edges and vertices shared by
// triangles are never missed by both), reject by sign and determinant, check
// t against TMax in scaled form and against pbrt-v3's conservative bound
// (t must exceed the accumulated rounding error, which also makes t > 0),
// and finally against TMin. It returns t and the barycentrics of b and c.
//
// Every product is wrapped in float32() so that no compiler fuses it into
// an FMA: the result is the same bits on every architecture.
func (p *rayPre) triangle(a, b, c mgl32.Vec3) (t, u, v float32, ok bool) {
	kx, ky, kz := p.kx, p.ky, p.kz
	o := p.org
	// Translate, permute.
	p0x, p0y, p0z := a[kx]-o[kx], a[ky]-o[ky], a[kz]-o[kz]
	p1x, p1y, p1z := b[kx]-o[kx], b[ky]-o[ky], b[kz]-o[kz]
	p2x, p2y, p2z := c[kx]-o[kx], c[ky]-o[ky], c[kz]-o[kz]
	// Shear x and y; z is scaled only once the hit is likely.
	p0x += float32(p.sx * p0z)
	p0y += float32(p.sy * p0z)
	p1x += float32(p.sx * p1z)
	p1y += float32(p.sy * p1z)
	p2x += float32(p.sx * p2z)
	p2y += float32(p.sy * p2z)

	// Edge functions.
	e0 := float32(p1x*p2y) - float32(p1y*p2x)
	e1 := float32(p2x*p0y) - float32(p2y*p0x)
	e2 := float32(p0x*p1y) - float32(p0y*p1x)
	if e0 == 0 || e1 == 0 || e2 == 0 {
		e0 = float32(float64(p2y)*float64(p1x) - float64(p2x)*float64(p1y))
		e1 = float32(float64(p0y)*float64(p2x) - float64(p0x)*float64(p2y))
		e2 = float32(float64(p1y)*float64(p0x) - float64(p1x)*float64(p0y))
	}
	if (e0 < 0 || e1 < 0 || e2 < 0) && (e0 > 0 || e1 > 0 || e2 > 0) {
		return 0, 0, 0, false
	}
	det := e0 + e1 + e2
	if det == 0 {
		return 0, 0, 0, false
	}

	// Scaled distance, checked against TMax without a division.
	p0z = float32(p0z * p.sz)
	p1z = float32(p1z * p.sz)
	p2z = float32(p2z * p.sz)
	tScaled := float32(e0*p0z) + float32(e1*p1z) + float32(e2*p2z)
	if det < 0 && (tScaled >= 0 || tScaled < float32(p.tmax*det)) {
		return 0, 0, 0, false
	}
	if det > 0 && (tScaled <= 0 || tScaled > float32(p.tmax*det)) {
		return 0, 0, 0, false
	}
	invDet := 1 / det
	b1, b2 := float32(e1*invDet), float32(e2*invDet)
	t = float32(tScaled * invDet)

	// Conservatively t > 0 (pbrt-v3 §3.9.6).
	maxZt := max(abs32(p0z), abs32(p1z), abs32(p2z))
	deltaZ := float32(gamma3 * maxZt)
	maxXt := max(abs32(p0x), abs32(p1x), abs32(p2x))
	maxYt := max(abs32(p0y), abs32(p1y), abs32(p2y))
	deltaX := float32(gamma5 * (maxXt + maxZt))
	deltaY := float32(gamma5 * (maxYt + maxZt))
	deltaE := 2 * (float32(float32(gamma2*maxXt)*maxYt) + float32(deltaY*maxXt) + float32(deltaX*maxYt))
	maxE := max(abs32(e0), abs32(e1), abs32(e2))
	deltaT := float32(float32(3*(float32(float32(gamma3*maxE)*maxZt)+float32(deltaE*maxZt)+float32(deltaZ*maxE))) * abs32(invDet))
	if !(t > deltaT) || t < p.tmin { // also rejects NaN (a zero or NaN ray)
		return 0, 0, 0, false
	}
	return t, b1, b2, true
}

func abs32(x float32) float32 {
	return math.Float32frombits(math.Float32bits(x) &^ (1 << 31))
}
