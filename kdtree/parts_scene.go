package kdtree

import (
	"sync/atomic"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/kernels/exec"
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

// vertexScratch is an executor's scratch for partScene: two words per
// scene vertex, all zero between parts.
type vertexScratch struct {
	first []uint32 // 1 + the first part triangle using the vertex
	remap []uint32 // 1 + the vertex's index in the part
}

func newVertexScratch(verts int) *vertexScratch {
	return &vertexScratch{first: make([]uint32, verts), remap: make([]uint32, verts)}
}

// partScene returns the input of the part holding refs in box, on workers
// goroutines. sc is handed back all zero: the part's cost is linear in its
// own size, not the scene's. Four passes over the part's triangles: each
// vertex's first user (an atomic minimum), the first uses counted per chunk,
// the part's vertices numbered in order of first use, then the part's
// triangles, scene indices and start boxes.
func partScene(s *scenes.Scene, refs []splitRef, box refbuild.AABB, sc *vertexScratch, workers int) partInput {
	n := len(refs)
	in := partInput{
		ids:   make([]uint32, n),
		start: &refbuild.Start{Box: box, Boxes: make([]refbuild.AABB, n)},
	}
	const chunk = 1 << 14
	nc := (n + chunk - 1) / chunk
	chunks := func(f func(c, lo, hi int)) {
		exec.ParallelFor(workers, nc, 1, func(a, b int) {
			for c := a; c < b; c++ {
				f(c, c*chunk, min((c+1)*chunk, n))
			}
		})
	}
	chunks(func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			for _, v := range s.Tris[refs[k].tri] {
				p, me := &sc.first[v], uint32(k+1)
				for old := atomic.LoadUint32(p); old == 0 || old > me; old = atomic.LoadUint32(p) {
					if atomic.CompareAndSwapUint32(p, old, me) {
						break
					}
				}
			}
		}
	})
	// firstUse calls f on each vertex that triangle k uses first (once).
	firstUse := func(k int, f func(v uint32)) {
		t := &s.Tris[refs[k].tri]
		for c, v := range t {
			if sc.first[v] == uint32(k+1) && (c == 0 || v != t[0]) && (c < 2 || v != t[1]) {
				f(v)
			}
		}
	}
	offs := make([]int, nc+1)
	chunks(func(c, lo, hi int) {
		for k := lo; k < hi; k++ {
			firstUse(k, func(uint32) { offs[c+1]++ })
		}
	})
	for c := 0; c < nc; c++ {
		offs[c+1] += offs[c]
	}
	used := make([]uint32, offs[nc]) // scene index of each part vertex
	verts := make([]mgl32.Vec3, offs[nc])
	chunks(func(c, lo, hi int) {
		at := offs[c]
		for k := lo; k < hi; k++ {
			firstUse(k, func(v uint32) {
				sc.remap[v], used[at], verts[at] = uint32(at+1), v, s.Verts[v]
				at++
			})
		}
	})
	tris := make([][3]uint32, n)
	chunks(func(_, lo, hi int) {
		for k := lo; k < hi; k++ {
			r := &refs[k]
			for c, v := range s.Tris[r.tri] {
				tris[k][c] = sc.remap[v] - 1
			}
			in.ids[k], in.start.Boxes[k] = r.tri, r.box
		}
	})
	exec.ParallelFor(workers, len(used), chunk, func(lo, hi int) {
		for _, v := range used[lo:hi] {
			sc.first[v], sc.remap[v] = 0, 0
		}
	})
	in.scene = &scenes.Scene{Name: s.Name + " (part)", Format: s.Format, Verts: verts, Tris: tris}
	in.scene.Bounds = scenes.VertexBounds(verts)
	return in
}
