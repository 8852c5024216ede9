package kdtree

import (
	"fmt"
	"math"
	"testing"

	"github.com/kdbuild/kdbuild/scenes"
)

func expectClose(t *testing.T, got, want, rel float64, what string, args ...any) {
	t.Helper()
	if math.Abs(got-want) > rel*math.Abs(want) {
		t.Errorf("%s: got %v, want %v", fmt.Sprintf(what, args...), got, want)
	}
}

// unitCubeScene has n small triangles inside [0,1]^3 and corners that make
// its bounds exactly the unit cube.
func unitCubeScene(n int) *scenes.Scene {
	verts := []float32{0, 0, 0, 1, 1, 1, 1, 0, 1}
	tris := [][3]uint32{{0, 1, 2}}
	for i := 1; i < n; i++ {
		x := float32(i) / float32(n+1)
		base := uint32(len(verts) / 3)
		verts = append(verts, x, 0.5, 0.5, x, 0.6, 0.5, x, 0.5, 0.6)
		tris = append(tris, [3]uint32{base, base + 1, base + 2})
	}
	return newScene(verts, tris)
}

func TestSAHCostSingleLeaf(t *testing.T) {
	for _, k := range []int{0, 1, 31, 32, 33} {
		s := unitCubeScene(max(k, 1))
		refs := make([]uint32, k)
		for i := range refs {
			refs[i] = uint32(i)
		}
		tree := NewTree(s, []Node{LeafNode(0, uint32(k))}, refs, s.Bounds, Stats{})
		expectEqual(t, SAHCost(tree), 1.5*float64(k), "SAH of one leaf with %d references", k)
	}
	expectEqual(t, SAHCost(NewTree(unitCubeScene(1), nil, nil, scenes.EmptyBounds(), Stats{})), 0, "SAH of no nodes")
}

func TestSAHCostByHand(t *testing.T) {
	s := unitCubeScene(5)
	// Root [0,1]^3 (area 6) split x at 0.25: below area 3, above area 5.
	// The above child splits y at 0.5: two boxes 0.75×0.5×1, area 3.25 each.
	nodes := []Node{
		InteriorNode(0, 0.25, 2),
		LeafNode(0, 2),
		InteriorNode(1, 0.5, 4),
		LeafNode(2, 3),
		LeafNode(5, 0),
	}
	tree := NewTree(s, nodes, []uint32{0, 1, 0, 2, 3}, s.Bounds, Stats{DroppedTriangles: 1})
	want := 1 + 3.0/6*2*1.5 + 5.0/6*1 + 3.25/6*3*1.5 + 3.25/6*0*1.5
	expectClose(t, SAHCost(tree), want, 1e-15, "SAH by hand")

	st := ComputeShapeStats(tree)
	expectEqual(t, st.Nodes, 5, "Nodes")
	expectEqual(t, st.Leaves, 3, "Leaves")
	expectEqual(t, st.EmptyLeaves, 1, "EmptyLeaves")
	expectEqual(t, st.MaxDepth, 2, "MaxDepth")
	expectEqual(t, st.References, 5, "References")
	expectEqual(t, st.ReferencesPerTriangle, 5.0/4, "ReferencesPerTriangle (5 triangles, 1 dropped)")
	expectEqual(t, st.DroppedTriangles, 1, "DroppedTriangles kept")
	expectClose(t, st.SAHCost, want, 1e-15, "Stats.SAHCost")
}

// TestSAHCostFlat: a flat root box still has an area (two faces); a root
// box of zero area (a point) counts every node with ratio 1.
func TestSAHCostFlat(t *testing.T) {
	s := newScene([]float32{0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0}, [][3]uint32{{0, 1, 2}, {1, 3, 2}})
	nodes := []Node{InteriorNode(0, 0.5, 2), LeafNode(0, 2), LeafNode(2, 1)}
	tree := NewTree(s, nodes, []uint32{0, 1, 1}, s.Bounds, Stats{})
	// Root 1×1×0: area 2; children 0.5×1×0: area 1 each.
	expectEqual(t, SAHCost(tree), 1+0.5*2*1.5+0.5*1*1.5, "flat scene SAH")
	point := scenes.Bounds{Min: s.Bounds.Min, Max: s.Bounds.Min}
	nodes = []Node{InteriorNode(0, 0, 2), LeafNode(0, 2), LeafNode(2, 1)}
	expectEqual(t, SAHCost(NewTree(s, nodes, []uint32{0, 1, 1}, point, Stats{})), 1+2*1.5+1*1.5, "point root box SAH")
}

// sahRecursive is an independent SAH: recursion over float32 boxes.
func sahRecursive(t *Tree, i uint32, b scenes.Bounds, rootArea float64) float64 {
	area := func(b scenes.Bounds) float64 {
		dx, dy, dz := float64(b.Max[0])-float64(b.Min[0]), float64(b.Max[1])-float64(b.Min[1]), float64(b.Max[2])-float64(b.Min[2])
		return 2 * (dx*dy + dy*dz + dz*dx)
	}
	n := t.Nodes[i]
	if n.IsLeaf() {
		return area(b) / rootArea * float64(n.RefCount()) * 1.5
	}
	lo, hi := b, b
	lo.Max[n.Axis()], hi.Min[n.Axis()] = n.Split(), n.Split()
	return area(b)/rootArea + sahRecursive(t, i+1, lo, rootArea) + sahRecursive(t, n.AboveChild(), hi, rootArea)
}

func TestSAHCostMatchesRecursion(t *testing.T) {
	for _, c := range []struct {
		s          *scenes.Scene
		leaf, dept int
	}{
		{scenes.Soup(1000, 31), 4, 20},
		{scenes.Icosphere(3), 8, 12},
		{scenes.Slivers(300, 32), 2, 30},
	} {
		tree := refBuild(c.s, c.leaf, c.dept)
		b := tree.Bounds
		var e [3]float64
		for a := range e {
			e[a] = float64(b.Max[a]) - float64(b.Min[a])
		}
		rootArea := 2 * (e[0]*e[1] + e[1]*e[2] + e[2]*e[0])
		expectClose(t, SAHCost(tree), sahRecursive(tree, 0, b, rootArea), 1e-12, "%s SAH", c.s.Name)
		expectClose(t, tree.Stats().SAHCost, SAHCost(tree), 0, "%s Stats().SAHCost", c.s.Name)
	}
}

// TestStatsCopy: Stats returns a copy; changing its map leaves the tree's.
func TestStatsCopy(t *testing.T) {
	s := unitCubeScene(1)
	tree := NewTree(s, []Node{LeafNode(0, 1)}, []uint32{0}, s.Bounds, Stats{Phases: map[string]float64{"a": 1}})
	st := tree.Stats()
	st.Phases["a"] = 2
	expectEqual(t, tree.Stats().Phases["a"], 1, "phase time after changing a copy")
}
