package scenes

import (
	"math"

	"github.com/go-gl/mathgl/mgl32"
)

// Weld merges vertices whose positions are bit-identical (+0 and -0 count as
// equal), keeping the first of each in order, and renumbers Tris to use it.
// Per-vertex colours follow the kept vertex. Triangles, their order, Faces,
// Meshes, per-corner normals and texture coordinates are unchanged; Bounds
// and the count of degenerate triangles cannot change (equal positions were
// already degenerate). Stats.WeldedVertices grows by the vertices removed.
func (s *Scene) Weld() {
	if len(s.Verts) == 0 {
		return
	}
	first := make(map[[3]uint32]uint32, len(s.Verts)/4)
	remap := make([]uint32, len(s.Verts))
	kept := s.Verts[:0]
	var colors []mgl32.Vec4
	if s.Attr != nil {
		colors = s.Attr.Colors
	}
	keptColors := colors[:0]
	for i, p := range s.Verts {
		k := weldKey(p)
		if j, ok := first[k]; ok {
			remap[i] = j
			continue
		}
		j := uint32(len(kept))
		first[k] = j
		remap[i] = j
		kept = append(kept, p) // writes at or before i: in place is safe
		if colors != nil {
			keptColors = append(keptColors, colors[i])
		}
	}
	s.Stats.WeldedVertices += len(s.Verts) - len(kept)
	s.Verts = kept
	if colors != nil {
		s.Attr.Colors = keptColors
	}
	for t := range s.Tris {
		for c := range s.Tris[t] {
			s.Tris[t][c] = remap[s.Tris[t][c]]
		}
	}
}

// weldKey is p's bit pattern with -0 mapped to +0.
func weldKey(p mgl32.Vec3) [3]uint32 {
	var k [3]uint32
	for a := range k {
		x := p[a]
		if x == 0 {
			x = 0
		}
		k[a] = math.Float32bits(x)
	}
	return k
}
