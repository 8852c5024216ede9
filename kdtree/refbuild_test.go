package kdtree

import (
	"fmt"
	"testing"

	"github.com/kdbuild/kdbuild/scenes"
)

// refBuild is the tests' own kd-tree builder, independent of Build: the
// spatial median of the longest axis, every kept triangle put in each child
// whose closed box it touches (exact float64 clipping), leaves at leafSize
// references or maxDepth. Slow and of poor SAH quality, but obviously
// correct, which is what the traversal and validator tests need.
func refBuild(s *scenes.Scene, leafSize, maxDepth int) *Tree {
	var list []uint32
	bounds := scenes.EmptyBounds()
	dropped := 0
	for i, tri := range s.Tris {
		if s.Degenerate(i) {
			dropped++
			continue
		}
		list = append(list, uint32(i))
		for _, v := range tri {
			bounds = bounds.Grow(s.Verts[v])
		}
	}
	if len(list) == 0 {
		t := NewTree(s, nil, nil, bounds, Stats{DroppedTriangles: dropped})
		return NewTree(s, nil, nil, bounds, ComputeShapeStats(t))
	}
	var nodes []Node
	var refs []uint32
	var rec func(b scenes.Bounds, list []uint32, depth int)
	rec = func(b scenes.Bounds, list []uint32, depth int) {
		leaf := func() {
			nodes = append(nodes, LeafNode(uint32(len(refs)), uint32(len(list))))
			refs = append(refs, list...)
		}
		if len(list) <= leafSize || depth >= maxDepth {
			leaf()
			return
		}
		e := b.Max.Sub(b.Min)
		a := 0
		if e[1] > e[a] {
			a = 1
		}
		if e[2] > e[a] {
			a = 2
		}
		split := (b.Min[a] + b.Max[a]) / 2
		if !(split > b.Min[a] && split < b.Max[a]) {
			leaf()
			return
		}
		below, above := b, b
		below.Max[a], above.Min[a] = split, split
		var lb, la []uint32
		for _, prim := range list {
			tri := s.Tris[prim]
			p0, p1, p2 := s.Verts[tri[0]], s.Verts[tri[1]], s.Verts[tri[2]]
			if touchesBox(p0, p1, p2, boxOf(below)) {
				lb = append(lb, prim)
			}
			if touchesBox(p0, p1, p2, boxOf(above)) {
				la = append(la, prim)
			}
		}
		if len(lb) == len(list) && len(la) == len(list) {
			leaf()
			return
		}
		me := len(nodes)
		nodes = append(nodes, Node{})
		rec(below, lb, depth+1)
		nodes[me] = InteriorNode(a, split, uint32(len(nodes)))
		rec(above, la, depth+1)
	}
	rec(bounds, list, 0)
	t := NewTree(s, nodes, refs, bounds, Stats{Device: "refbuild", DroppedTriangles: dropped})
	return NewTree(s, nodes, refs, bounds, ComputeShapeStats(t))
}

// newScene makes a scene from vertices and triangles the way the loaders
// finish one (Bounds over all vertices, one face per triangle).
func newScene(verts []float32, tris [][3]uint32) *scenes.Scene {
	s := &scenes.Scene{Name: "test", Format: "procedural", Tris: tris}
	for i := 0; i+2 < len(verts); i += 3 {
		s.Verts = append(s.Verts, [3]float32{verts[i], verts[i+1], verts[i+2]})
	}
	s.Faces = make([]uint32, len(tris))
	for i := range s.Faces {
		s.Faces[i] = uint32(i)
	}
	s.Bounds = scenes.VertexBounds(s.Verts)
	return s
}

// expectEqual reports got != want with the context what (testify is not
// usable here: its yaml dependency is missing from go.sum).
func expectEqual[T comparable](t testing.TB, got, want T, what string, args ...any) bool {
	t.Helper()
	if got != want {
		t.Errorf("%s: got %v, want %v", fmt.Sprintf(what, args...), got, want)
		return false
	}
	return true
}

// requireNoError stops the test on err.
func requireNoError(t testing.TB, err error, what string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(what, args...), err)
	}
}

// expectPanic reports a call that does not panic.
func expectPanic(t testing.TB, f func(), what string) {
	t.Helper()
	defer func() {
		t.Helper()
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
}
