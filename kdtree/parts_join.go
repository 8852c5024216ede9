package kdtree

import (
	"fmt"
	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"slices"

	"github.com/kdbuild/kdbuild/kernels/exec"
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
	top   int // its top node
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
func partCuts(box, content refbuild.AABB) []partCut {
	partCanonZero(&content)
	var cuts []partCut
	for len(cuts) < 6 {
		best, axis, pos, above := float32(partEmptyCut), -1, float32(0), false
		for a := 0; a < 3; a++ {
			ext := box.Hi[a] - box.Lo[a]
			if !(ext > 0) {
				continue
			}
			if f := (content.Lo[a] - box.Lo[a]) / ext; f > best && content.Lo[a] > box.Lo[a] && content.Lo[a] < box.Hi[a] {
				best, axis, pos, above = f, a, content.Lo[a], false
			}
			if f := (box.Hi[a] - content.Hi[a]) / ext; f > best && content.Hi[a] > box.Lo[a] && content.Hi[a] < box.Hi[a] {
				best, axis, pos, above = f, a, content.Hi[a], true
			}
		}
		if axis < 0 {
			return cuts
		}
		cuts = append(cuts, partCut{axis, pos, above})
		if above {
			box.Hi[axis] = pos
		} else {
			box.Lo[axis] = pos
		}
	}
	return cuts
}

// joiner writes a joined tree, or one part's subtree of it.
type joiner struct {
	top   *partTop
	nodes []Node
	refs  []uint32
}

// join returns the joined tree's nodes and references. Each part's
// subtree is written on its own, the parts in parallel, then the top tree
// with the parts' subtrees copied in, relocated.
func (t *partTop) join(workers int) ([]Node, []uint32, error) {
	var parts []*partResult
	nodes, refs := 0, 0
	for i := range t.nodes {
		n := &t.nodes[i]
		if !n.interior && n.part == nil && len(n.refs) > 0 {
			return nil, nil, fmt.Errorf("kdtree: part of top node %d was not built", i)
		}
		if n.part != nil {
			parts = append(parts, n.part)
		}
	}
	subs := make([]joiner, len(parts))
	exec.ParallelFor(workers, len(parts), 1, func(lo, hi int) {
		for k := lo; k < hi; k++ {
			p := parts[k]
			j := &subs[k]
			j.top = t
			if p.tree != nil {
				j.nodes = make([]Node, 0, len(p.tree.Nodes)+2*len(p.cuts))
				j.refs = make([]uint32, 0, len(p.tree.Refs))
			}
			t.nodes[p.top].sub = j
			j.cuts(p, p.cuts, t.nodes[p.top].box)
		}
	})
	for k := range subs {
		nodes += len(subs[k].nodes)
		refs += len(subs[k].refs)
	}
	nodes += len(t.nodes)
	if nodes >= MaxChildIndex {
		return nil, nil, fmt.Errorf("kdtree: joined tree of %d nodes, limit %d", nodes, MaxChildIndex)
	}
	j := &joiner{top: t, nodes: make([]Node, 0, nodes), refs: make([]uint32, 0, refs)}
	j.topNode(0)
	for i := range t.nodes {
		t.nodes[i].sub = nil
	}
	return j.nodes, j.refs, nil
}

// topNode writes top node i, a part's subtree relocated.
func (j *joiner) topNode(i int) {
	n := &j.top.nodes[i]
	switch {
	case n.interior:
		at := j.open()
		j.topNode(n.below)
		j.close(at, n.axis, n.pos)
		j.topNode(n.above)
	case n.sub == nil:
		j.leaf(nil)
	default:
		nb, rb := uint32(len(j.nodes)), uint32(len(j.refs))
		for _, nd := range n.sub.nodes {
			if nd.IsLeaf() {
				nd.W0 += rb
			} else {
				nd.W1 += nb << 2
			}
			j.nodes = append(j.nodes, nd)
		}
		j.refs = append(j.refs, n.sub.refs...)
	}
}

// open writes a placeholder for an interior node and returns its index;
// close fills it in once its below subtree is written.
func (j *joiner) open() int {
	j.nodes = append(j.nodes, Node{})
	return len(j.nodes) - 1
}

func (j *joiner) close(at, axis int, pos float32) {
	j.nodes[at] = InteriorNode(axis, pos, uint32(min(len(j.nodes), MaxChildIndex-1)))
}

// leaf writes a leaf of the given scene triangles.
func (j *joiner) leaf(tris []uint32) {
	j.nodes = append(j.nodes, LeafNode(uint32(len(j.refs)), uint32(len(tris))))
	j.refs = append(j.refs, tris...)
}

// cuts writes the empty-space cuts left, then the part's tree in box.
func (j *joiner) cuts(p *partResult, left []partCut, box refbuild.AABB) {
	if len(left) == 0 {
		switch {
		case p.tree == nil:
			j.leaf(j.touching(p.ids, nil, &box))
		case len(p.tree.Nodes) == 0:
			j.leaf(nil)
		default:
			tb := p.tree.Bounds
			j.partNode(p, 0, box, refbuild.AABB{Lo: tb.Min, Hi: tb.Max})
		}
		return
	}
	c := left[0]
	at := j.open()
	if c.emptyAbove {
		j.cuts(p, left[1:], cutBox(box, c, false))
		j.close(at, c.axis, c.pos)
		j.leaf(nil)
		return
	}
	j.leaf(nil)
	j.close(at, c.axis, c.pos)
	j.cuts(p, left[1:], cutBox(box, c, false))
}

// partNode writes node i of part p's tree with box (the part's top box cut
// at the splits written so far); own is the node's box in the part's tree
// (the part's root box cut at every split on the way, written or not).
func (j *joiner) partNode(p *partResult, i uint32, box, own refbuild.AABB) {
	nd := p.tree.Nodes[i]
	for !nd.IsLeaf() {
		a, s := nd.Axis(), nd.Split()
		if s > box.Lo[a] && s < box.Hi[a] {
			break
		}
		// A split at or beyond a side of box: only one child meets it.
		if s <= box.Lo[a] {
			own.Lo[a], i = s, nd.AboveChild()
		} else {
			own.Hi[a], i = s, i+1
		}
		nd = p.tree.Nodes[i]
	}
	if nd.IsLeaf() {
		local := p.tree.Refs[nd.FirstRef() : nd.FirstRef()+nd.RefCount()]
		first := uint32(len(j.refs))
		if contains(&box, &own) {
			// The leaf is whole: its references are the part tree's.
			j.translate(local, p.local)
		} else {
			j.refs = append(j.refs, j.touching(local, p.local, &box)...)
		}
		j.nodes = append(j.nodes, LeafNode(first, uint32(len(j.refs))-first))
		return
	}
	a, s := nd.Axis(), nd.Split()
	lb, rb, ob, oa := box, box, own, own
	lb.Hi[a], rb.Lo[a], ob.Hi[a], oa.Lo[a] = s, s, s, s
	at := j.open()
	j.partNode(p, i+1, lb, ob)
	j.close(at, a, s)
	j.partNode(p, nd.AboveChild(), rb, oa)
}

// contains reports whether box b holds box c.
func contains(b, c *refbuild.AABB) bool {
	for a := 0; a < 3; a++ {
		if c.Lo[a] < b.Lo[a] || c.Hi[a] > b.Hi[a] {
			return false
		}
	}
	return true
}

// translate appends the scene indices ids[r] of refs to j.refs, ascending,
// each once, without the markers (NoPart).
func (j *joiner) translate(refs, ids []uint32) {
	first := len(j.refs)
	for _, r := range refs {
		if t := ids[r]; t != NoPart {
			j.refs = append(j.refs, t)
		}
	}
	out := j.refs[first:]
	slices.Sort(out)
	j.refs = j.refs[:first+len(slices.Compact(out))]
}

// touching returns the scene indices of the triangles of refs (through ids
// when non-nil) that touch the closed box, ascending, each once.
func (j *joiner) touching(refs, ids []uint32, box *refbuild.AABB) []uint32 {
	out := make([]uint32, 0, len(refs))
	var poly refbuild.Poly
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
func cutBox(box refbuild.AABB, c partCut, empty bool) refbuild.AABB {
	if c.emptyAbove != empty {
		box.Hi[c.axis] = c.pos
	} else {
		box.Lo[c.axis] = c.pos
	}
	return box
}

// touches reports whether triangle t touches the closed box: at once when
// its bounds are inside the box or apart from it, else by clipping it to
// the box (clipToBox).
func touches(t *refbuild.Triangle, box *refbuild.AABB, p *refbuild.Poly) bool {
	b := t.Bounds()
	inside := true
	for a := 0; a < 3; a++ {
		if b.Lo[a] > box.Hi[a] || b.Hi[a] < box.Lo[a] {
			return false
		}
		inside = inside && b.Lo[a] >= box.Lo[a] && b.Hi[a] <= box.Hi[a]
	}
	return inside || refbuild.ClipToBox(t, box, p)
}
