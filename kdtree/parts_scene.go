package kdtree

import (
	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/scenes"
)

// partInput is what a part's build reads: the part scene (its triangles
// whole, in ascending scene order, vertices renumbered in order of first
// use, so a device build uploads only what the part needs), the scene index
// of each of its triangles, and its start (the top leaf's box and each
// triangle's box as the split clipped it to that box).
type partInput struct {
	scene *scenes.Scene
	ids   []uint32
	start *refbuild.Start
}

// partScene returns the input of the part holding refs in box. remap
// (one word per scene vertex, all zero) is scratch, handed back all zero:
// the part's cost is linear in its own size, not the scene's.
func partScene(s *scenes.Scene, refs []splitRef, box refbuild.AABB, remap []uint32) partInput {
	in := partInput{
		ids:   make([]uint32, len(refs)),
		start: &refbuild.Start{Box: box, Boxes: make([]refbuild.AABB, len(refs))},
	}
	used := make([]uint32, 0, len(refs)) // scene index of each part vertex
	tris := make([][3]uint32, len(refs))
	for k := range refs {
		r := &refs[k]
		for c, v := range s.Tris[r.tri] {
			if remap[v] == 0 {
				used = append(used, v)
				remap[v] = uint32(len(used))
			}
			tris[k][c] = remap[v] - 1
		}
		in.ids[k] = r.tri
		in.start.Boxes[k] = r.box
	}
	verts := make([]mgl32.Vec3, len(used))
	for k, v := range used {
		verts[k] = s.Verts[v]
		remap[v] = 0
	}
	in.scene = &scenes.Scene{Name: s.Name + " (part)", Format: s.Format, Verts: verts, Tris: tris}
	in.scene.Bounds = scenes.VertexBounds(verts)
	return in
}
