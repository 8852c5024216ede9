package kdtree

import (
	"context"
	"math"
	"testing"

	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// serialShape is the reference for treeShape: one serial walk.
func serialShape(t *Tree) shape {
	var s shape
	if len(t.Nodes) == 0 {
		return s
	}
	rootArea := boxOf(t.Bounds).area()
	t.walk(func(i uint32, depth int, box boxF64) {
		ratio := 1.0
		if rootArea > 0 {
			ratio = box.area() / rootArea
		}
		n := t.Nodes[i]
		s.maxDepth = max(s.maxDepth, depth)
		if n.IsLeaf() {
			s.leaves++
			if n.RefCount() == 0 {
				s.emptyLeaves++
			}
			s.cost += ratio * float64(n.RefCount()) * sahIntersect
		} else {
			s.cost += ratio * sahTraversal
		}
	})
	return s
}

// TestTreeShapeMatchesSerialWalk: the parallel measurement gives the serial
// walk's counts exactly and its SAH sum up to rounding, on trees shallower
// and deeper than shapeSplitDepth, and ends on a tree whose nodes loop.
func TestTreeShapeMatchesSerialWalk(t *testing.T) {
	ex := exec.Go(2)
	cases := []struct {
		name  string
		scene *scenes.Scene
	}{
		{"one triangle", scenes.Soup(1, 1)},
		{"icosphere 2", scenes.Icosphere(2)},
		{"soup 5000", scenes.Soup(5000, 3)},
		{"grid of icospheres", scenes.Grid(scenes.Icosphere(3), 3, 3, 2)},
	}
	for _, c := range cases {
		tr, err := Build(context.Background(), c.scene, Options{Executor: ex})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, want := treeShape(tr), serialShape(tr)
		if got.leaves != want.leaves || got.emptyLeaves != want.emptyLeaves || got.maxDepth != want.maxDepth {
			t.Errorf("%s: shape %+v, serial walk %+v", c.name, got, want)
		}
		if math.Abs(got.cost-want.cost) > 1e-12*want.cost {
			t.Errorf("%s: SAH sum %v, serial walk %v", c.name, got.cost, want.cost)
		}
		if st := tr.Stats(); st.SAHCost != got.cost || st.Leaves != got.leaves {
			t.Errorf("%s: Stats %v / %d, treeShape %v / %d", c.name, st.SAHCost, st.Leaves, got.cost, got.leaves)
		}
	}
	// A malformed tree: every interior node's above child is the root.
	loop := &Tree{Nodes: make([]Node, 64)}
	for i := range loop.Nodes {
		loop.Nodes[i] = InteriorNode(0, 0.5, 0)
	}
	if s := treeShape(loop); s.leaves != 0 {
		t.Errorf("looping tree: %+v", s)
	}
}
