package scenes

import (
	"math"

	"github.com/go-gl/mathgl/mgl32"
)

// EmptyBounds returns the box that contains nothing: Min = +Inf, Max = -Inf,
// so that growing it by any point gives that point.
func EmptyBounds() Bounds {
	inf := float32(math.Inf(1))
	return Bounds{Min: mgl32.Vec3{inf, inf, inf}, Max: mgl32.Vec3{-inf, -inf, -inf}}
}

// Empty reports whether b contains no point (Min > Max on some axis).
func (b Bounds) Empty() bool {
	return b.Min[0] > b.Max[0] || b.Min[1] > b.Max[1] || b.Min[2] > b.Max[2]
}

// Extent returns Max - Min (zero for an empty box).
func (b Bounds) Extent() mgl32.Vec3 {
	if b.Empty() {
		return mgl32.Vec3{}
	}
	return b.Max.Sub(b.Min)
}

// Grow returns the smallest box containing b and p.
func (b Bounds) Grow(p mgl32.Vec3) Bounds {
	for a := 0; a < 3; a++ {
		b.Min[a] = min(b.Min[a], p[a])
		b.Max[a] = max(b.Max[a], p[a])
	}
	return b
}

// VertexBounds returns the box over all of verts (EmptyBounds for none).
func VertexBounds(verts []mgl32.Vec3) Bounds {
	b := EmptyBounds()
	for _, p := range verts {
		b = b.Grow(p)
	}
	return b
}

// Degenerate reports whether triangle t of s has zero area: two equal
// indices, or an edge cross product that is exactly zero when computed in
// float64 from the float32 positions (equal or collinear points).
func (s *Scene) Degenerate(t int) bool {
	tri := s.Tris[t]
	if tri[0] == tri[1] || tri[1] == tri[2] || tri[0] == tri[2] {
		return true
	}
	a, b, c := s.Verts[tri[0]], s.Verts[tri[1]], s.Verts[tri[2]]
	ux, uy, uz := float64(b[0])-float64(a[0]), float64(b[1])-float64(a[1]), float64(b[2])-float64(a[2])
	vx, vy, vz := float64(c[0])-float64(a[0]), float64(c[1])-float64(a[1]), float64(c[2])-float64(a[2])
	cx := uy*vz - uz*vy
	cy := uz*vx - ux*vz
	cz := ux*vy - uy*vx
	return cx == 0 && cy == 0 && cz == 0
}

// finish computes the derived fields every loader and generator fills:
// Bounds over all vertices, the count of degenerate triangles and the
// warning of a scene outside the exact coordinate range.
func (s *Scene) finish() *Scene {
	s.Bounds = VertexBounds(s.Verts)
	n := 0
	for t := range s.Tris {
		if s.Degenerate(t) {
			n++
		}
	}
	s.Stats.DegenerateTriangles = n
	s.rangeWarning()
	if s.Stats.Skipped == nil {
		s.Stats.Skipped = map[string]int{}
	}
	s.oneMesh()
	return s
}

// Validate checks the invariants every Scene keeps: one source face per
// triangle, every index below len(Verts), finite vertices, Meshes tiling
// Tris, and Attr's rows and indices in range (checkAttributes).
func (s *Scene) Validate() error {
	if len(s.Faces) != len(s.Tris) {
		return &ParseError{File: s.Name, Msg: "len(Faces) != len(Tris)"}
	}
	if err := s.checkMeshes(); err != nil {
		return err
	}
	if err := s.checkAttributes(); err != nil {
		return err
	}
	nv := uint32(len(s.Verts))
	for i, t := range s.Tris {
		if t[0] >= nv || t[1] >= nv || t[2] >= nv {
			return parseErr(s.Name, 0, "triangle %d index out of range %v (%d vertices)", i, t, nv)
		}
	}
	for i, p := range s.Verts {
		for _, x := range p {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return parseErr(s.Name, 0, "vertex %d not finite: %v", i, p)
			}
		}
	}
	return nil
}
