package kdtree

import (
	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"math"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/scenes"
)

// NoPart is the scene index partScene gives its corner markers: no scene
// triangle.
const NoPart = ^uint32(0)

// partScene returns the scene a part is built from, and the scene index of
// each of its triangles (NoPart for a marker). The part's triangles come
// whole (their reach beyond box is pruned by the join); their vertices are
// renumbered in order of first use, so a device build uploads only what
// the part needs. Two marker triangles, one float32 step wide, sit at the
// low and high corners of box cut at cuts, so that the part's root box is
// that box, as the node's box is in the whole build: the part's binned
// planes and empty-space cuts then see the empty space the whole build
// sees (without them, the leaves along an uncut side stretch into it in
// the joined tree). A marker in a flat box is degenerate and dropped.
func (t *partTop) partScene(s *scenes.Scene, refs []splitRef, box refbuild.AABB, cuts []partCut) (*scenes.Scene, []uint32) {
	remap := make([]uint32, len(s.Verts)) // new index + 1; 0: not yet used
	verts := make([]mgl32.Vec3, 0, len(refs))
	tris := make([][3]uint32, 0, len(refs)+2)
	local := make([]uint32, 0, len(refs)+2)
	for _, r := range refs {
		var f [3]uint32
		for c, v := range s.Tris[r.tri] {
			if remap[v] == 0 {
				verts = append(verts, s.Verts[v])
				remap[v] = uint32(len(verts))
			}
			f[c] = remap[v] - 1
		}
		tris = append(tris, f)
		local = append(local, r.tri)
	}
	for _, c := range cuts {
		box = cutBox(box, c, false)
	}
	for k, corner := range [2][3]float32{box.Lo, box.Hi} {
		toward := box.Hi
		if k == 1 {
			toward = box.Lo
		}
		v := mgl32.Vec3(corner)
		b, c := v, v
		b[0] = math.Nextafter32(v[0], toward[0])
		c[1] = math.Nextafter32(v[1], toward[1])
		base := uint32(len(verts))
		verts = append(verts, v, b, c)
		tris = append(tris, [3]uint32{base, base + 1, base + 2})
		local = append(local, NoPart)
	}
	faces := make([]uint32, len(tris))
	for i := range faces {
		faces[i] = uint32(i)
	}
	ps := &scenes.Scene{Name: s.Name + " (part)", Format: s.Format, Verts: verts, Tris: tris, Faces: faces}
	ps.Bounds = scenes.VertexBounds(verts)
	return ps, local
}
