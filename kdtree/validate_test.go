package kdtree

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kdbuild/kdbuild/scenes"
)

// expectInvalid fails unless Validate reports an error containing want.
func expectInvalid(t *testing.T, tree *Tree, want, what string) {
	t.Helper()
	err := tree.Validate()
	if err == nil {
		t.Errorf("%s: Validate accepted a broken tree, want an error with %q", what, want)
		return
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("%s: Validate: %v, want an error with %q", what, err, want)
	}
}

// mutate returns a copy of tree with its nodes and references changed by f.
func mutate(tree *Tree, f func(nodes []Node, refs []uint32) ([]Node, []uint32)) *Tree {
	nodes, refs := f(slices.Clone(tree.Nodes), slices.Clone(tree.Refs))
	return NewTree(tree.Scene, nodes, refs, tree.Bounds, Stats{})
}

// firstWhere returns the index of the first node that satisfies ok (-1 for none).
func firstWhere(nodes []Node, ok func(Node) bool) int {
	for i, n := range nodes {
		if ok(n) {
			return i
		}
	}
	return -1
}

func TestValidateBrokenTrees(t *testing.T) {
	s := scenes.Soup(300, 21)
	good := refBuild(s, 4, 20)
	requireNoError(t, good.Validate(), "reference tree")
	interior := func(n Node) bool { return !n.IsLeaf() }
	multiLeaf := func(n Node) bool { return n.IsLeaf() && n.RefCount() >= 2 }
	if firstWhere(good.Nodes, multiLeaf) < 0 || len(good.Nodes) < 7 {
		t.Fatalf("reference tree too small for the test: %d nodes", len(good.Nodes))
	}
	cases := []struct {
		name string
		f    func(nodes []Node, refs []uint32) ([]Node, []uint32)
		want string
	}{
		{"above out of range", func(n []Node, r []uint32) ([]Node, []uint32) {
			n[0] = InteriorNode(n[0].Axis(), n[0].Split(), uint32(len(n)))
			return n, r
		}, "above child"},
		{"above is below", func(n []Node, r []uint32) ([]Node, []uint32) {
			n[0] = InteriorNode(n[0].Axis(), n[0].Split(), 1)
			return n, r
		}, "above child 1 not in"},
		{"above misplaced", func(n []Node, r []uint32) ([]Node, []uint32) {
			n[0] = InteriorNode(n[0].Axis(), n[0].Split(), n[0].AboveChild()+1)
			return n, r
		}, "depth-first position"},
		{"cycle", func(n []Node, r []uint32) ([]Node, []uint32) {
			i := firstWhere(n[1:], interior) + 1
			n[i] = InteriorNode(n[i].Axis(), n[i].Split(), n[0].AboveChild())
			return n, r
		}, "depth-first position"},
		{"split outside box", func(n []Node, r []uint32) ([]Node, []uint32) {
			a := n[0].Axis()
			n[0] = InteriorNode(a, good.Bounds.Max[a]+1, n[0].AboveChild())
			return n, r
		}, "outside its box"},
		{"split NaN", func(n []Node, r []uint32) ([]Node, []uint32) {
			n[0] = InteriorNode(n[0].Axis(), float32(math.NaN()), n[0].AboveChild())
			return n, r
		}, "outside its box"},
		{"refs not ascending", func(n []Node, r []uint32) ([]Node, []uint32) {
			l := n[firstWhere(n, multiLeaf)]
			f := l.FirstRef()
			r[f], r[f+1] = r[f+1], r[f]
			return n, r
		}, "not ascending"},
		{"duplicate ref", func(n []Node, r []uint32) ([]Node, []uint32) {
			l := n[firstWhere(n, multiLeaf)]
			r[l.FirstRef()+1] = r[l.FirstRef()]
			return n, r
		}, "not ascending"},
		{"ref out of range", func(n []Node, r []uint32) ([]Node, []uint32) {
			l := n[firstWhere(n, multiLeaf)]
			r[l.FirstRef()+l.RefCount()-1] = uint32(len(s.Tris))
			return n, r
		}, "scene has 300"},
		{"leaf beyond refs", func(n []Node, r []uint32) ([]Node, []uint32) {
			i := firstWhere(n, multiLeaf)
			n[i] = LeafNode(uint32(len(r))-1, n[i].RefCount())
			return n, r
		}, "beyond len(Refs)"},
		{"shared slot", func(n []Node, r []uint32) ([]Node, []uint32) {
			i := firstWhere(n, multiLeaf)
			j := i + 1 + firstWhere(n[i+1:], multiLeaf)
			n[j] = LeafNode(n[i].FirstRef(), n[i].RefCount())
			return n, r
		}, "shared with another leaf"},
		{"slot in no leaf", func(n []Node, r []uint32) ([]Node, []uint32) {
			return n, append(r, 0)
		}, "in no leaf"},
		{"reference far from its leaf", func(n []Node, r []uint32) ([]Node, []uint32) {
			// Give the first multi-reference leaf a triangle that misses its box.
			i := firstWhere(n, multiLeaf)
			var box boxF64
			good.walk(func(k uint32, _ int, b boxF64) {
				if int(k) == i {
					box = b
				}
			})
			leaf := r[n[i].FirstRef() : n[i].FirstRef()+n[i].RefCount()]
			for p := range s.Tris {
				tri := s.Tris[p]
				if !touchesBox(s.Verts[tri[0]], s.Verts[tri[1]], s.Verts[tri[2]], box) && !slices.Contains(leaf, uint32(p)) {
					leaf[0] = uint32(p)
					slices.Sort(leaf)
					break
				}
			}
			return n, r
		}, "does not touch"},
	}
	for _, c := range cases {
		expectInvalid(t, mutate(good, c.f), c.want, c.name)
	}
	// The base tree was not changed by the mutations.
	requireNoError(t, good.Validate(), "reference tree after the mutations")
}

func TestValidateSceneLevel(t *testing.T) {
	// Two triangles far apart in a single leaf holding only the first.
	s := newScene([]float32{0, 0, 0, 1, 0, 0, 0, 1, 0, 10, 10, 10, 11, 10, 10, 10, 11, 10}, [][3]uint32{{0, 1, 2}, {3, 4, 5}})
	expectInvalid(t, NewTree(s, []Node{LeafNode(0, 1)}, []uint32{0}, s.Bounds, Stats{}), "kept triangle 1 in no leaf", "triangle missing")
	expectInvalid(t, NewTree(s, nil, nil, s.Bounds, Stats{}), "no nodes but 2 kept triangles", "empty tree")
	expectInvalid(t, NewTree(nil, nil, nil, s.Bounds, Stats{}), "without a scene", "nil scene")
	small := s.Bounds
	small.Max[0] = 5
	expectInvalid(t, NewTree(s, []Node{LeafNode(0, 2)}, []uint32{0, 1}, small, Stats{}), "outside root box", "root box too small")
	expectInvalid(t, NewTree(s, []Node{LeafNode(0, 2)}, []uint32{0, 1}, scenes.EmptyBounds(), Stats{}), "empty or not finite", "empty root box")
	ok := NewTree(s, []Node{LeafNode(0, 2)}, []uint32{0, 1}, s.Bounds, Stats{})
	requireNoError(t, ok.Validate(), "single leaf")
	bad := Stats{Nodes: 1, Leaves: 1, References: 2, SAHCost: 99}
	expectInvalid(t, NewTree(s, ok.Nodes, ok.Refs, s.Bounds, bad), "Stats.SAHCost", "wrong SAH statistic")
	bad = ComputeShapeStats(ok)
	bad.EmptyLeaves = 1
	expectInvalid(t, NewTree(s, ok.Nodes, ok.Refs, s.Bounds, bad), "Stats.EmptyLeaves 1, tree has 0", "wrong empty leaves")
	requireNoError(t, NewTree(s, ok.Nodes, ok.Refs, s.Bounds, ComputeShapeStats(ok)).Validate(), "right statistics")
	// A degenerate triangle (two equal vertices) must not be referenced.
	s3 := newScene([]float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, [][3]uint32{{0, 1, 2}, {0, 1, 1}})
	expectInvalid(t, NewTree(s3, []Node{LeafNode(0, 2)}, []uint32{0, 1}, s3.Bounds, Stats{}), "degenerate triangle 1", "degenerate reference")
	requireNoError(t, NewTree(s3, []Node{LeafNode(0, 1)}, []uint32{0}, s3.Bounds, Stats{}).Validate(), "degenerate triangle dropped")
	// Out-of-range vertex indices are reported, not a panic.
	s2 := newScene([]float32{0, 0, 0, 1, 0, 0, 0, 1, 0}, [][3]uint32{{0, 1, 7}})
	expectInvalid(t, NewTree(s2, []Node{LeafNode(0, 1)}, []uint32{0}, s2.Bounds, Stats{}), "out of range", "bad vertex index")
}

// TestValidateBoundary: references whose triangle only touches the leaf
// box's boundary are valid; a triangle lying in the split plane may sit on
// either side; a triangle entering a leaf must be in it.
func TestValidateBoundary(t *testing.T) {
	// Triangle 0 spans x in [0, 1], triangle 1 x in [1, 2], triangle 2 lies
	// in the plane x = 1. The root splits x at 1.
	s := newScene([]float32{
		0, 0, 0, 1, 0, 0, 1, 1, 1,
		1, 0, 0, 2, 0, 0, 2, 1, 1,
		1, 0, 0, 1, 1, 0, 1, 0, 1,
	}, [][3]uint32{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}})
	split := InteriorNode(0, 1, 2)
	cases := []struct {
		name         string
		below, above []uint32
		want         string // "" for a valid tree
	}{
		{"each side its own", []uint32{0, 2}, []uint32{1}, ""},
		{"plane triangle above", []uint32{0}, []uint32{1, 2}, ""},
		{"plane triangle both", []uint32{0, 2}, []uint32{1, 2}, ""},
		{"touching triangles everywhere", []uint32{0, 1, 2}, []uint32{0, 1, 2}, ""},
		{"plane triangle nowhere", []uint32{0}, []uint32{1}, "kept triangle 2 in no leaf"},
		{"triangle 1 missing above", []uint32{0, 1, 2}, []uint32{2}, "lacks triangle 1"},
	}
	for _, c := range cases {
		nodes := []Node{split, LeafNode(0, uint32(len(c.below))), LeafNode(uint32(len(c.below)), uint32(len(c.above)))}
		tree := NewTree(s, nodes, append(slices.Clone(c.below), c.above...), s.Bounds, Stats{})
		if c.want == "" {
			requireNoError(t, tree.Validate(), "%s", c.name)
		} else {
			expectInvalid(t, tree, c.want, c.name)
		}
	}
	// Triangle 0 put in a leaf whose box it does not touch at all.
	nodes := []Node{InteriorNode(0, 1.5, 2), LeafNode(0, 3), LeafNode(3, 2)}
	expectInvalid(t, NewTree(s, nodes, []uint32{0, 1, 2, 0, 1}, s.Bounds, Stats{}), "does not touch its triangle 0", "far reference")
}

// TestValidateDepth: a chain deeper than MaxTreeDepth is rejected, one at
// the limit is accepted.
func TestValidateDepth(t *testing.T) {
	s := newScene([]float32{0, 0, 0, 1, 0, 0, 0, 1, 1}, [][3]uint32{{0, 1, 2}})
	for _, depth := range []int{1, 2, MaxTreeDepth - 1, MaxTreeDepth, MaxTreeDepth + 1} {
		// Nodes 0..depth-1 split x at the box's max: the below child is the
		// whole box, the above child a flat empty leaf placed after the
		// chain's bottom leaf (node depth).
		var nodes []Node
		for d := 0; d < depth; d++ {
			nodes = append(nodes, InteriorNode(0, 1, uint32(2*depth-d)))
		}
		nodes = append(nodes, LeafNode(0, 1))
		for d := 0; d < depth; d++ {
			nodes = append(nodes, LeafNode(0, 0))
		}
		tree := NewTree(s, nodes, []uint32{0}, s.Bounds, Stats{})
		if depth <= MaxTreeDepth {
			requireNoError(t, tree.Validate(), "chain of depth %d", depth)
			expectEqual(t, ComputeShapeStats(tree).MaxDepth, depth, "MaxDepth of a chain")
			// Traversal copes with the deepest allowed tree.
			// The second ray crosses every split plane: one push per level.
			inf := float32(math.Inf(1))
			sameHit(t, tree, Ray{Org: [3]float32{0.1, 0.1, -1}, Dir: [3]float32{0, 0, 1}, TMax: inf}, "deep chain")
			sameHit(t, tree, Ray{Org: [3]float32{0.1, 0.2, 0.3}, Dir: [3]float32{1, 0, 0}, TMax: inf}, "deep chain, crossing")
		} else {
			expectInvalid(t, tree, "depth 65 > MaxTreeDepth 64", "too deep")
		}
	}
}
