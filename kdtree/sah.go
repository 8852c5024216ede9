package kdtree

// SAH constants of the reported cost (docs/sah.md): every interior
// node costs one traversal step, every reference in a leaf 1.5.
const (
	sahTraversal = 1.0
	sahIntersect = 1.5
)

// SAHCost returns the tree's SAH cost as kdbuild reports it, in float64:
//
//	Σ over interior nodes  area(node)/area(root) × 1
//	+ Σ over leaves        area(leaf)/area(root) × refs(leaf) × 1.5
//
// where the root box is t.Bounds and a child's box is its parent's box cut
// at the split (below: max[axis] = split; above: min[axis] = split). A tree
// without nodes costs 0. When the root box has zero area (a flat scene) the
// ratio is taken as 1 for every node, so that such trees still compare.
//
// The terms are summed subtree by subtree below a fixed depth, the
// subtrees in parallel (treeShape): the result is the same on every
// machine, and may differ from a single serial sum in the last bits.
func SAHCost(t *Tree) float64 {
	return treeShape(t).cost
}
