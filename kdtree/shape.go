package kdtree

import (
	"runtime"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// shape holds the figures ComputeShapeStats and SAHCost take from the
// nodes of a tree or of one subtree.
type shape struct {
	leaves, emptyLeaves, maxDepth int
	cost                          float64 // the SAH sum of SAHCost, unnormalised terms added in walk order
}

// shapeSplitDepth is the depth whose nodes start the subtrees that
// treeShape measures in parallel: at most 2^10 of them. A fixed depth, not
// one derived from the worker count, so that the SAH sum is added in the
// same order, and gives the same bits, on every machine.
const shapeSplitDepth = 10

// walkItem is a node to visit with its depth and box (walk's order).
type walkItem struct {
	i     uint32
	depth int
	box   boxF64
}

// treeShape measures t in walk's order: the nodes above shapeSplitDepth
// serially, the subtrees below in parallel, their sums added in walk order.
// Like walk it never follows an index out of range, never descends below
// MaxTreeDepth and visits at most len(t.Nodes) nodes per subtree, so it ends
// on any input.
func treeShape(t *Tree) shape {
	if len(t.Nodes) == 0 {
		return shape{}
	}
	rootArea := boxOf(t.Bounds).area()
	var roots []walkItem
	top := t.measure(walkItem{0, 0, boxOf(t.Bounds)}, rootArea, shapeSplitDepth, &roots)
	parts := make([]shape, len(roots))
	exec.ParallelFor(runtime.GOMAXPROCS(0), len(roots), 1, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			parts[r] = t.measure(roots[r], rootArea, -1, nil)
		}
	})
	s := top
	for _, p := range parts {
		s.leaves += p.leaves
		s.emptyLeaves += p.emptyLeaves
		s.maxDepth = max(s.maxDepth, p.maxDepth)
		s.cost += p.cost
	}
	return s
}

// measure sums the figures of the subtree of start in walk order
// (walkFrom, with its stop and frontier).
func (t *Tree) measure(start walkItem, rootArea float64, stop int, frontier *[]walkItem) shape {
	var s shape
	t.walkFrom(start, stop, frontier, func(it walkItem) {
		ratio := 1.0
		if rootArea > 0 {
			ratio = it.box.area() / rootArea
		}
		n := t.Nodes[it.i]
		s.maxDepth = max(s.maxDepth, it.depth)
		if !n.IsLeaf() {
			s.cost += ratio * sahTraversal
			return
		}
		s.leaves++
		rc := n.RefCount()
		if rc == 0 {
			s.emptyLeaves++
		}
		s.cost += ratio * float64(rc) * sahIntersect
	})
	return s
}
