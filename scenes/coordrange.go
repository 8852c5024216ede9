package scenes

import (
	"fmt"
	"math"
)

// The coordinate range in which kdtree's float32 watertight ray-triangle
// test (kdtree/intersect.go) is exact: scaling a scene inside it by a power
// of two scales every hit's T by the same power and changes no hit.
//
// The test's products reach the third power of coordinate differences
// (vertex minus ray origin): the scaled distance is a sum of three edge
// functions (each a difference of products of two differences) times a
// third difference, and the rounding-error bound multiplies such products
// by γ3 ≈ 2^-22.4. With differences d:
//
//   - overflow: 6·d³ must stay below the float32 maximum 2^128, so d below
//     2^41; coordinates up to MaxExactCoordinate = 2^40 keep every
//     difference within 2^41. Beyond, T and the bound overflow to ±Inf and
//     hits are lost (a soup scaled by 2^50 keeps 85% of its hits, by 1e16
//     almost none).
//   - underflow: γ3·d³ must stay a normal float32 (above 2^-126), so d above
//     about 2^-34.5; a scene whose extent (its box's longest side) is at
//     least MinExactExtent = 2^-32 has triangle edges and ray distances well
//     above that unless its triangles are under 1/8 of its extent. Below,
//     T and the bound lose bits and hits are lost (a soup scaled by 2^-46,
//     about 1e-14, keeps 95% of its hits, by 2^-50 none).
//
// Outside the range the tree and IntersectBrute mostly agree (they share the
// test), so a check against brute force hardly sees the loss; only the
// scene at unit scale does. A load warns outside the range
// (Scene.Warnings).
const (
	MaxExactCoordinate = 0x1p40  // ≈ 1.1e12
	MinExactExtent     = 0x1p-32 // ≈ 2.3e-10
)

// rangeWarning adds a warning when s lies outside the exact range: a
// coordinate above MaxExactCoordinate in magnitude, or a non-empty extent
// below MinExactExtent (a scene of one point has no extent and no hits).
func (s *Scene) rangeWarning() {
	b := s.Bounds
	if b.Empty() {
		return
	}
	big, ext := 0.0, 0.0
	for a := 0; a < 3; a++ {
		big = max(big, math.Abs(float64(b.Min[a])), math.Abs(float64(b.Max[a])))
		ext = max(ext, float64(b.Max[a])-float64(b.Min[a]))
	}
	switch {
	case big > MaxExactCoordinate:
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: coordinates up to %.3g, above %.3g (2^40): the float32 ray-triangle test may overflow and miss hits; scale the scene down", s.Name, big, MaxExactCoordinate))
	case ext > 0 && ext < MinExactExtent:
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: extent %.3g, below %.3g (2^-32): the float32 ray-triangle test may underflow and miss hits; scale the scene up", s.Name, ext, MinExactExtent))
	}
}
