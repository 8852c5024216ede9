package refbuild

import "fmt"

// The pieces of a large-phase decision that kdtree.BuildParts uses to split
// a scene by the builder's own top decisions (kdtree/parts_split.go).

// Bounds is the triangle's bounding box.
func (t *Triangle) Bounds() AABB { return t.bounds() }

// Bin is the bin of coordinate x (the same rule as the large phase's).
func (g BinGeom) Bin(x float32) int { return g.bin(x) }

// CountBox counts a reference whose box starts in bin lo and ends in bin hi
// on axis a.
func (h *hist) CountBox(a, lo, hi int) {
	h.lo[a][lo]++
	h.hi[a][hi]++
}

// Add adds o's counts to h's.
func (h *hist) Add(o *hist) { h.add(o) }

// Split is the chosen plane: its axis and position, ok false when the
// node is best left a leaf.
func (c choice) Split() (axis int, pos float32, ok bool) {
	return c.axis, c.pos, c.axis <= 2
}

// Start is where a build of one part of a larger scene begins: the node of
// the larger build that the part is (its box, and each triangle's box as
// the larger build clipped it to that node), so that the part's build
// makes the larger build's decisions below that node, node for node.
type Start struct {
	// Box is the root node's box, in place of the kept triangles' tight
	// bounds.
	Box AABB
	// Boxes holds the first box of each scene triangle (by scene index),
	// within Box, in place of the triangle's bounds.
	Boxes []AABB
	// Budget, when HasBudget, is the node's duplication budget in the
	// larger build (ChildBudget down from its root), in place of the
	// root budget of the part's own references.
	Budget    uint32
	HasBudget bool
}

// StartBudget is the budget of the build's root node of n references: the
// Start's budget for a part of a larger build, else RootBudgetOf(n).
func (b *Builder) StartBudget(n int) uint32 {
	if s := b.Start; s != nil && s.HasBudget {
		return s.Budget
	}
	return b.RootBudgetOf(n)
}

// check reports a Start that does not fit the scene of n triangles.
func (s *Start) check(n int) error {
	if len(s.Boxes) != n {
		return fmt.Errorf("kdtree: a part's start has %d boxes for %d triangles", len(s.Boxes), n)
	}
	return nil
}

// Check is check for the CUDA build.
func (s *Start) Check(n int) error { return s.check(n) }

// BoxFloats views boxes as 6 floats each (lo xyz, hi xyz), the layout of
// the CUDA kernels' boxes.
func BoxFloats(boxes []AABB) []float32 { return boxFloats(boxes) }
