package kdtree

import (
	"math"

	"github.com/go-gl/mathgl/mgl32"
)

// Ray is the half-line Org + t·Dir for t in [TMin, TMax]. Dir need not be
// normalised; T of a hit is in units of Dir. There is no hidden epsilon: a
// ray that starts on a surface and must not hit it again sets TMin.
type Ray struct {
	Org, Dir   mgl32.Vec3
	TMin, TMax float32
}

// NewRay returns the ray from org along dir with TMin 0 and TMax +Inf.
func NewRay(org, dir mgl32.Vec3) Ray {
	return Ray{Org: org, Dir: dir, TMax: float32(math.Inf(1))}
}

// NoHit is Hit.Prim of a miss.
const NoHit = ^uint32(0)

// Hit is a ray-triangle intersection: the ray parameter T, the barycentric
// coordinates U and V of the triangle's second and third vertex (the first
// vertex has weight 1-U-V), the triangle's index in Scene.Tris, and the
// triangle's geometric normal N = (B−A)×(C−A) for its vertices A, B, C,
// not normalised, each component computed in float32 as
// float32(e1.y·e2.z) − float32(e1.z·e2.y) (no fused multiply-add, so that
// every executor gives the same bits).
//
// A miss is Hit{T: +Inf, Prim: NoHit} (U, V and N zero).
type Hit struct {
	T, U, V float32
	Prim    uint32
	N       mgl32.Vec3
}

// missHit is the Hit of a miss.
func missHit() Hit { return Hit{T: float32(math.Inf(1)), Prim: NoHit} }

// closer reports whether a hit at t of triangle prim beats h: a smaller T,
// or an equal T and a smaller triangle index (so that every traversal order
// picks the same hit). Every hit beats missHit().
func (h *Hit) closer(t float32, prim uint32) bool {
	return t < h.T || (t == h.T && prim < h.Prim)
}

// geometricNormal returns (b−a)×(c−a) with every product rounded to float32
// on its own (see Hit.N).
func geometricNormal(a, b, c mgl32.Vec3) mgl32.Vec3 {
	e1 := mgl32.Vec3{b[0] - a[0], b[1] - a[1], b[2] - a[2]}
	e2 := mgl32.Vec3{c[0] - a[0], c[1] - a[1], c[2] - a[2]}
	return mgl32.Vec3{
		float32(e1[1]*e2[2]) - float32(e1[2]*e2[1]),
		float32(e1[2]*e2[0]) - float32(e1[0]*e2[2]),
		float32(e1[0]*e2[1]) - float32(e1[1]*e2[0]),
	}
}

// RayStats counts the work of traced rays: interior and leaf nodes
// visited, and ray-triangle tests run. IntersectStats adds to it.
type RayStats struct {
	Nodes, Tris uint32
}
