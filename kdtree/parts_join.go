package kdtree

import (
	"fmt"
	"math"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// The join of BuildParts: the top tree's nodes, each part's tree below its
// top leaf, written depth first into one node array in the standard format
// (node.go), with child indices and reference offsets relocated and each
// part's references translated back to the scene's triangle indices.
//
// A part's tree is the whole build's subtree of its top leaf (the part
// started from the leaf's box and its references' clipped boxes,
// refbuild.Start), so the join changes no node: it only moves them.

// partResult is a built part: the scene index of each triangle of its part
// scene (ascending) and its tree (nil: the part is one leaf, at the depth
// limit).
type partResult struct {
	top  int // its top node
	ids  []uint32
	tree *Tree
	dev  int // the device (index in the executors) that built it
}

// join returns the joined tree's nodes and references: the top tree's
// nodes are laid out first (depth first, each part's subtree given its
// place), then the parts' nodes and references are copied in, relocated
// and translated, in chunks over the workers. Nothing is allocated per
// node or reference beyond the two output arrays.
func (t *partTop) join(workers int) ([]Node, []uint32, error) {
	type place struct {
		p            *partResult
		node, ref    int // where its subtree's nodes and references go
		nodes, nrefs int
	}
	var places []place
	nodes, refs := 0, 0
	var plan func(i int) error
	plan = func(i int) error {
		n := &t.nodes[i]
		if n.interior {
			nodes++
			if err := plan(n.below); err != nil {
				return err
			}
			return plan(n.above)
		}
		if n.part == nil {
			if len(n.refs) > 0 {
				return fmt.Errorf("kdtree: part of top node %d was not built", i)
			}
			nodes++
			return nil
		}
		pl := place{p: n.part, node: nodes, ref: refs, nodes: 1, nrefs: len(n.part.ids)}
		if tr := n.part.tree; tr != nil {
			pl.nodes, pl.nrefs = len(tr.Nodes), len(tr.Refs)
			if pl.nodes == 0 { // a part of dropped triangles only: one empty leaf
				pl.nodes = 1
			}
		}
		places = append(places, pl)
		nodes, refs = nodes+pl.nodes, refs+pl.nrefs
		return nil
	}
	if err := plan(0); err != nil {
		return nil, nil, err
	}
	// The node format's bounds: child indices below 2^30, reference
	// offsets in 32 bits.
	if nodes >= MaxChildIndex {
		return nil, nil, fmt.Errorf("kdtree: joined tree of %d nodes, limit %d (the node format's child index)", nodes, MaxChildIndex)
	}
	if refs > math.MaxUint32 {
		return nil, nil, fmt.Errorf("kdtree: joined tree of %d references, limit %d (the node format's reference offset)", refs, uint64(math.MaxUint32))
	}
	out, outRefs := make([]Node, nodes), make([]uint32, refs)
	t.writeTop(0, out, 0, 0)
	// The parts' nodes and references in chunks, so that every worker has
	// a share however few the parts are.
	const chunk = 1 << 16
	type task struct{ place, lo, hi int } // hi < 0: references -hi-1 ...
	var tasks []task
	for k, pl := range places {
		for lo := 0; lo < pl.nodes; lo += chunk {
			tasks = append(tasks, task{k, lo, min(lo+chunk, pl.nodes)})
		}
		for lo := 0; lo < pl.nrefs; lo += chunk {
			tasks = append(tasks, task{k, lo, -min(lo+chunk, pl.nrefs) - 1})
		}
	}
	exec.ParallelFor(workers, len(tasks), 1, func(a, b int) {
		for _, tk := range tasks[a:b] {
			pl := &places[tk.place]
			tr := pl.p.tree
			if tk.hi < 0 {
				hi := -tk.hi - 1
				dr := outRefs[pl.ref+tk.lo : pl.ref+hi]
				if tr == nil {
					copy(dr, pl.p.ids[tk.lo:hi])
					continue
				}
				for r, local := range tr.Refs[tk.lo:hi] {
					dr[r] = pl.p.ids[local]
				}
				continue
			}
			dst := out[pl.node+tk.lo : pl.node+tk.hi]
			switch {
			case tr == nil: // one leaf of the part's triangles
				dst[0] = LeafNode(uint32(pl.ref), uint32(pl.nrefs))
			case len(tr.Nodes) == 0:
				dst[0] = LeafNode(uint32(pl.ref), 0)
			default:
				relocate(dst, tr.Nodes[tk.lo:tk.hi], uint32(pl.node), uint32(pl.ref))
			}
		}
	})
	return out, outRefs, nil
}

// writeTop writes top node i and the top nodes below it into out from
// node index at, their references from ref (a part's subtree is left to
// join), and returns the node and reference indices after them.
func (t *partTop) writeTop(i int, out []Node, at, ref int) (int, int) {
	n := &t.nodes[i]
	switch {
	case n.interior:
		next, ref := t.writeTop(n.below, out, at+1, ref)
		out[at] = InteriorNode(n.axis, n.pos, uint32(next))
		return t.writeTop(n.above, out, next, ref)
	case n.part == nil:
		out[at] = LeafNode(uint32(ref), 0)
		return at + 1, ref
	}
	if tr := n.part.tree; tr != nil {
		return at + max(len(tr.Nodes), 1), ref + len(tr.Refs)
	}
	return at + 1, ref + len(n.part.ids)
}

// relocate copies a subtree's nodes to dst, its interior nodes' above
// children moved by nodeBase and its leaves' first references by refBase.
func relocate(dst, src []Node, nodeBase, refBase uint32) {
	for k, nd := range src {
		if nd.IsLeaf() {
			nd.W0 += refBase
		} else {
			nd.W1 += nodeBase << 2
		}
		dst[k] = nd
	}
}
