package kdtree

import (
	"fmt"
	"slices"
)

// The join of BuildParts: the top tree's nodes, each part's tree below its
// top leaf, written depth first into one node array in the standard format
// (node.go), with child indices and reference offsets relocated and each
// part's references translated back to the scene's triangle indices.
//
// A part's tree was built over the part's whole triangles, whose bounds
// may reach beyond the part's top box X. The join walks it with X: a split
// at or beyond a side of X keeps only the child that covers X (the other
// holds nothing that enters X, see docs/parts.md), and a leaf keeps only
// the references whose triangle touches its box cut to X. Before the
// part's tree, empty space between X and the part's content is cut off by
// the builder's rule (partCuts).

// partResult is a part: its triangles (ascending scene indices), the
// scene index of each triangle of its part scene (local), the cuts above
// its tree and its tree (nil: the part is one leaf, at the depth limit).
type partResult struct {
	ids   []uint32
	local []uint32
	cuts  []partCut
	tree  *Tree
	dev   int // the device (index in the executors) that built it
}

// partCut is an empty-space cut above a part's tree: the node box cut at
// (axis, pos), the empty side above when emptyAbove.
type partCut struct {
	axis       int
	pos        float32
	emptyAbove bool
}

// partCuts returns the cuts of empty space around content inside box: the
// widest slab of more than partEmptyCut of the box's extent first, the
// lowest axis and side on ties, until none is left.
func partCuts(box, content aabb) []partCut {
	partCanonZero(&content)
	var cuts []partCut
	for len(cuts) < 6 {
		best, axis, pos, above := float32(partEmptyCut), -1, float32(0), false
		for a := 0; a < 3; a++ {
			ext := box.hi[a] - box.lo[a]
			if !(ext > 0) {
				continue
			}
			if f := (content.lo[a] - box.lo[a]) / ext; f > best && content.lo[a] > box.lo[a] && content.lo[a] < box.hi[a] {
				best, axis, pos, above = f, a, content.lo[a], false
			}
			if f := (box.hi[a] - content.hi[a]) / ext; f > best && content.hi[a] > box.lo[a] && content.hi[a] < box.hi[a] {
				best, axis, pos, above = f, a, content.hi[a], true
			}
		}
		if axis < 0 {
			return cuts
		}
		cuts = append(cuts, partCut{axis, pos, above})
		if above {
			box.hi[axis] = pos
		} else {
			box.lo[axis] = pos
		}
	}
	return cuts
}

// joiner writes the joined tree.
type joiner struct {
	top   *partTop
	nodes []Node
	refs  []uint32
	depth int // the deepest node written
}

// join returns the joined tree's nodes and references.
func (t *partTop) join() ([]Node, []uint32, error) {
	nodes, refs := 1, 0
	for i := range t.nodes {
		if p := t.nodes[i].part; p != nil && p.tree != nil {
			nodes += len(p.tree.Nodes) + 2*len(p.cuts) + 1
			refs += len(p.tree.Refs)
		} else if p != nil {
			refs += len(p.ids)
		}
		nodes++
	}
	j := &joiner{top: t, nodes: make([]Node, 0, nodes), refs: make([]uint32, 0, refs)}
	if err := j.topNode(0, 0); err != nil {
		return nil, nil, err
	}
	if len(j.nodes) >= MaxChildIndex {
		return nil, nil, fmt.Errorf("kdtree: joined tree of %d nodes, limit %d", len(j.nodes), MaxChildIndex)
	}
	return j.nodes, j.refs, nil
}

// interior writes an interior node whose children below and above write
// themselves, and fills in its above index once the below subtree is
// written.
func (j *joiner) interior(axis int, pos float32, depth int, below, above func() error) error {
	if len(j.nodes) >= MaxChildIndex {
		return fmt.Errorf("kdtree: joined tree exceeds %d nodes", MaxChildIndex)
	}
	j.depth = max(j.depth, depth)
	at := len(j.nodes)
	j.nodes = append(j.nodes, Node{})
	if err := below(); err != nil {
		return err
	}
	j.nodes[at] = InteriorNode(axis, pos, uint32(len(j.nodes)))
	return above()
}

// leaf writes a leaf of the given scene triangles.
func (j *joiner) leaf(tris []uint32, depth int) {
	j.depth = max(j.depth, depth)
	j.nodes = append(j.nodes, LeafNode(uint32(len(j.refs)), uint32(len(tris))))
	j.refs = append(j.refs, tris...)
}

// topNode writes top node i at depth.
func (j *joiner) topNode(i, depth int) error {
	n := &j.top.nodes[i]
	if n.interior {
		return j.interior(n.axis, n.pos, depth,
			func() error { return j.topNode(n.below, depth+1) },
			func() error { return j.topNode(n.above, depth+1) })
	}
	if n.part == nil {
		if len(n.refs) > 0 {
			return fmt.Errorf("kdtree: part of top node %d was not built", i)
		}
		j.leaf(nil, depth)
		return nil
	}
	return j.cuts(n.part, n.part.cuts, n.box, depth)
}

// cuts writes the empty-space cuts left, then the part's tree in box.
func (j *joiner) cuts(p *partResult, left []partCut, box aabb, depth int) error {
	if len(left) == 0 {
		if p.tree == nil {
			j.leaf(j.touching(p.ids, nil, &box), depth)
			return nil
		}
		if len(p.tree.Nodes) == 0 {
			j.leaf(nil, depth)
			return nil
		}
		tb := p.tree.Bounds
		return j.partNode(p, 0, box, aabb{lo: tb.Min, hi: tb.Max}, depth)
	}
	c := left[0]
	lb, rb := box, box
	lb.hi[c.axis], rb.lo[c.axis] = c.pos, c.pos
	empty := func() error { j.leaf(nil, depth+1); return nil }
	if c.emptyAbove {
		return j.interior(c.axis, c.pos, depth, func() error { return j.cuts(p, left[1:], lb, depth+1) }, empty)
	}
	return j.interior(c.axis, c.pos, depth, empty, func() error { return j.cuts(p, left[1:], rb, depth+1) })
}

// partNode writes node i of part p's tree with box (the part's top box cut
// at the splits written so far); own is the node's box in the part's tree
// (the part's root box cut at every split on the way, written or not).
func (j *joiner) partNode(p *partResult, i uint32, box, own aabb, depth int) error {
	nd := p.tree.Nodes[i]
	if nd.IsLeaf() {
		local := p.tree.Refs[nd.FirstRef() : nd.FirstRef()+nd.RefCount()]
		if contains(&box, &own) {
			// The leaf is whole: its references are the part tree's.
			j.leaf(j.translate(local, p.local), depth)
			return nil
		}
		j.leaf(j.touching(local, p.local, &box), depth)
		return nil
	}
	a, s := nd.Axis(), nd.Split()
	ob, oa := own, own
	ob.hi[a], oa.lo[a] = s, s
	switch {
	case !(s > box.lo[a]):
		return j.partNode(p, nd.AboveChild(), box, oa, depth)
	case !(s < box.hi[a]):
		return j.partNode(p, i+1, box, ob, depth)
	}
	lb, rb := box, box
	lb.hi[a], rb.lo[a] = s, s
	return j.interior(a, s, depth,
		func() error { return j.partNode(p, i+1, lb, ob, depth+1) },
		func() error { return j.partNode(p, nd.AboveChild(), rb, oa, depth+1) })
}

// contains reports whether box b holds box c.
func contains(b, c *aabb) bool {
	for a := 0; a < 3; a++ {
		if c.lo[a] < b.lo[a] || c.hi[a] > b.hi[a] {
			return false
		}
	}
	return true
}

// translate returns the scene indices ids[r] of refs, ascending, each once,
// without the markers (NoPart).
func (j *joiner) translate(refs, ids []uint32) []uint32 {
	out := make([]uint32, 0, len(refs))
	for _, r := range refs {
		if t := ids[r]; t != NoPart {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// touching returns the scene indices of the triangles of refs (through ids
// when non-nil) that touch the closed box, ascending, each once.
func (j *joiner) touching(refs, ids []uint32, box *aabb) []uint32 {
	out := make([]uint32, 0, len(refs))
	var poly poly
	for _, r := range refs {
		tri := r
		if ids != nil {
			if tri = ids[r]; tri == NoPart {
				continue
			}
		}
		if touches(&j.top.tris[tri], box, &poly) {
			out = append(out, tri)
		}
	}
	if ids != nil {
		slices.Sort(out)
		out = slices.Compact(out)
	}
	return out
}

// cutBox returns the side of box that a cut keeps (the content's side), or
// with empty the other one.
func cutBox(box aabb, c partCut, empty bool) aabb {
	if c.emptyAbove != empty {
		box.hi[c.axis] = c.pos
	} else {
		box.lo[c.axis] = c.pos
	}
	return box
}

// touches reports whether triangle t touches the closed box: at once when
// its bounds are inside the box or apart from it, else by clipping it to
// the box (clipToBox).
func touches(t *triangle, box *aabb, p *poly) bool {
	b := t.bounds()
	inside := true
	for a := 0; a < 3; a++ {
		if b.lo[a] > box.hi[a] || b.hi[a] < box.lo[a] {
			return false
		}
		inside = inside && b.lo[a] >= box.lo[a] && b.hi[a] <= box.hi[a]
	}
	return inside || clipToBox(t, box, p)
}
