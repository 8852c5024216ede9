package kdtree

import "github.com/go-gl/mathgl/mgl32"

// Ray is the half-line Org + t·Dir for t in [TMin, TMax]. Dir need not be
// normalised; T of a hit is in units of Dir. There is no hidden epsilon: a
// ray that starts on a surface and must not hit it again sets TMin.
type Ray struct {
	Org, Dir   mgl32.Vec3
	TMin, TMax float32
}

// Hit is a ray-triangle intersection: the ray parameter T, the barycentric
// coordinates U and V of the triangle's second and third vertex (the first
// vertex has weight 1-U-V) and the triangle's index in Scene.Tris.
type Hit struct {
	T, U, V float32
	Prim    uint32
}

// closer reports whether a hit at t of triangle prim beats h: a smaller T,
// or an equal T and a smaller triangle index (so that every traversal order
// picks the same hit).
func (h *Hit) closer(t float32, prim uint32) bool {
	return t < h.T || (t == h.T && prim < h.Prim)
}
