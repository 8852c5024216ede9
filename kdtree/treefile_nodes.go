package kdtree

import "fmt"

// The node check makes sure that traversal of loaded nodes stays in
// range: the nodes are in depth-first order (the below child of node i is
// i+1; the above child is the node after the below subtree; every node
// reached once), depth at most MaxTreeDepth, leaf reference ranges inside
// the references. describeBadNodes states it as a plain walk with a stack
// of the above children still to come; checkNodeRun and joinNodeRuns do
// the same walk cut into runs that check on all cores, and ask
// describeBadNodes for the message when something is wrong. The checksums
// catch any other damage.

// nodeRun is what walking the nodes [lo, hi) from an empty stack leaves
// for joinNodeRuns.
type nodeRun struct {
	closes []uint32 // i+1 of each leaf i that pops an above child pushed before lo, in order
	opens  []uint32 // above children pushed in the run and still to come at hi, bottom first
	peak   int      // the most pushes less pops reached from lo (at least 0)
	bad    bool     // a node's own fields out of range, or the run deeper than any tree may be
}

// checkNodeRun walks nodes [lo, hi) of a tree of len(nodes) nodes and
// nrefs references. The walk has no branch that depends on the data (a
// tree's leaves and interior nodes alternate unpredictably) but for a leaf
// that pops past the run's start, which happens at most MaxTreeDepth+1
// times in a valid run.
func checkNodeRun(nodes []Node, lo, hi, nrefs uint64) nodeRun {
	var r nodeRun
	n := uint64(len(nodes))
	// stack[0] is a floor: a leaf that pops it closes an earlier push. The
	// global stack holds at most MaxTreeDepth+1 entries (the sentinel of
	// joinNodeRuns included), so the run's own never more: sp stays at most
	// MaxTreeDepth+2 before a step, MaxTreeDepth+3 after it.
	var stack [MaxTreeDepth + 4]uint32
	sp, rel := 1, 0
	for i := lo; i < hi; i++ {
		w0, w1 := nodes[i].W0, nodes[i].W1
		leaf := b2u(w1&3 == leafTag)
		x := uint64(w1 >> 2) // above child or reference count
		badInterior := b2u(x <= i+1) | b2u(x >= n)
		badLeaf := b2u(uint64(w0)+x > nrefs)
		stack[sp] = uint32(x) // a push for an interior node, a harmless write above the top for a leaf
		step := 1 - 2*int(leaf)
		sp += step
		rel += step
		r.peak = max(r.peak, rel)
		if sp == 0 {
			r.closes = append(r.closes, uint32(i+1))
			sp = 1
			badLeaf |= b2u(len(r.closes) > MaxTreeDepth+1)
		} else {
			badLeaf |= b2u(uint64(stack[sp]) != i+1) // a leaf pops: the next node is the innermost above child
		}
		if leaf&badLeaf|(1-leaf)&badInterior|b2u(sp > MaxTreeDepth+2) != 0 {
			r.bad = true
			return r
		}
	}
	r.opens = append([]uint32(nil), stack[1:sp]...)
	return r
}

// joinNodeRuns joins the runs of checkNodeRun, which cover the nodes in
// order: starting from a stack that holds the sentinel len(nodes) (the
// node after the last leaf), each run's closes pop the stack and must
// match, its depth stays within the limit, its opens are pushed; at the
// end the stack is empty. It returns describeBadNodes' message otherwise.
func joinNodeRuns(nodes []Node, runs []nodeRun, nrefs int) error {
	n := len(nodes)
	if n == 0 || n >= MaxChildIndex {
		return describeBadNodes(nodes, nrefs)
	}
	var stack [MaxTreeDepth + 2]uint32
	stack[0] = uint32(n)
	sp := 1
	for _, r := range runs {
		if r.bad || sp+r.peak > MaxTreeDepth+1 {
			return describeBadNodes(nodes, nrefs)
		}
		for _, c := range r.closes {
			if sp == 0 || stack[sp-1] != c {
				return describeBadNodes(nodes, nrefs)
			}
			sp--
		}
		sp += copy(stack[sp:], r.opens)
	}
	if sp != 0 {
		return describeBadNodes(nodes, nrefs)
	}
	return nil
}

// describeBadNodes is the node check written plainly: nil for nodes that
// pass, else what is wrong with the first node that fails.
func describeBadNodes(nodes []Node, nrefs int) error {
	if len(nodes) == 0 {
		return nil
	}
	if len(nodes) >= MaxChildIndex {
		return fmt.Errorf("kdtree: tree file has %d nodes, limit %d", len(nodes), MaxChildIndex-1)
	}
	var stack [MaxTreeDepth + 1]uint32 // above children to come, innermost last
	sp := 0
	last := uint32(len(nodes) - 1)
	for i := uint32(0); ; i++ {
		n := nodes[i]
		if !n.IsLeaf() {
			above := n.AboveChild()
			if above <= i+1 || above > last {
				return fmt.Errorf("kdtree: tree file node %d above child %d not in [%d, %d]", i, above, i+2, last)
			}
			if sp == MaxTreeDepth {
				return fmt.Errorf("kdtree: tree file node %d deeper than MaxTreeDepth %d", i+1, MaxTreeDepth)
			}
			stack[sp] = above
			sp++
			continue
		}
		if uint64(n.FirstRef())+uint64(n.RefCount()) > uint64(nrefs) {
			return fmt.Errorf("kdtree: tree file leaf %d references [%d, +%d) beyond %d references", i, n.FirstRef(), n.RefCount(), nrefs)
		}
		if sp == 0 {
			if i != last {
				return fmt.Errorf("kdtree: tree file nodes %d to %d not reached from the root", i+1, last)
			}
			return nil
		}
		sp--
		if stack[sp] != i+1 {
			return fmt.Errorf("kdtree: tree file node %d follows leaf %d, its parent names %d (not depth-first)", i+1, i, stack[sp])
		}
	}
}

// b2u is 1 for true, 0 for false, so that the node check stays branch-free.
func b2u(v bool) uint32 {
	if v {
		return 1
	}
	return 0
}
