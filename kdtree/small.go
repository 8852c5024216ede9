package kdtree

import (
	"math/bits"
)

// smallRoot is a node handed to the small-node phase: at most 64
// references, their boxes clipped to the node's box.
type smallRoot struct {
	box   aabb
	depth int
	tri   []uint32 // ascending
	box2  []aabb
}

// smallCand is a candidate plane of a small root: a face of one of its
// references' boxes (candidate 2r is the lower face of reference r, 2r+1
// its upper face), with the sets (bit r for reference r of the root) of
// references whose boxes start before the plane (lt) and end after it (gt).
type smallCand struct {
	pos    float32
	lt, gt uint64
}

// smallCands computes the candidates of each axis of a small root: the
// faces are sorted by (position, index) and swept, the references' lower
// and upper faces sorted alongside.
func smallCands(sr *smallRoot, out *[3][]smallCand) {
	m := len(sr.tri)
	var ord [128]uint8
	var ordLo, ordHi [64]uint8
	for a := 0; a < 3; a++ {
		c := out[a][:0]
		for r := 0; r < m; r++ {
			c = append(c, smallCand{pos: sr.box2[r].lo[a]}, smallCand{pos: sr.box2[r].hi[a]})
		}
		for k := range c {
			ord[k] = uint8(k)
		}
		sortByKey(ord[:2*m], func(k uint8) float32 { return c[k].pos })
		for r := 0; r < m; r++ {
			ordLo[r], ordHi[r] = uint8(r), uint8(r)
		}
		sortByKey(ordLo[:m], func(r uint8) float32 { return sr.box2[r].lo[a] })
		sortByKey(ordHi[:m], func(r uint8) float32 { return sr.box2[r].hi[a] })
		// Sweep: lt grows with the lower faces below pos, le with the upper
		// faces at or below pos; gt is the rest.
		all := fullMask(m)
		var lt, le uint64
		i, j := 0, 0
		for _, k := range ord[:2*m] {
			p := c[k].pos
			for i < m && sr.box2[ordLo[i]].lo[a] < p {
				lt |= 1 << ordLo[i]
				i++
			}
			for j < m && sr.box2[ordHi[j]].hi[a] <= p {
				le |= 1 << ordHi[j]
				j++
			}
			c[k].lt, c[k].gt = lt, all&^le
		}
		out[a] = c
	}
}

func fullMask(m int) uint64 {
	if m >= 64 {
		return ^uint64(0)
	}
	return 1<<m - 1
}

func sortByKey(o []uint8, key func(uint8) float32) {
	for i := 1; i < len(o); i++ {
		x := o[i]
		kx := key(x)
		j := i
		for j > 0 && key(o[j-1]) > kx {
			o[j] = o[j-1]
			j--
		}
		o[j] = x
	}
}

// smallBuilder splits one small root.
type smallBuilder struct {
	b     *builder
	p     *sahParams
	sr    *smallRoot
	cands [3][]smallCand
	out   []record
}

// buildSmall returns the subtree of a small root as records (index 0 is the
// root). Each node's split is the exact SAH minimum over the candidates of
// its own references strictly inside its box:
//
//	nL = |S ∩ (lt ∪ ¬gt)|, nR = |S ∩ gt|
//
// (a reference flat in the plane goes left), a leaf when no split beats
// IntersectCost × |S| or at MaxDepth. After a split the straddling
// references are tested against each child by clipping their triangles, and
// dropped from a child they do not touch.
func (sb *smallBuilder) build(sr *smallRoot) []record {
	sb.sr = sr
	sb.out = sb.out[:0]
	if len(sr.tri) > 0 {
		smallCands(sr, &sb.cands)
	}
	sb.out = append(sb.out, record{})
	sb.node(0, fullMask(len(sr.tri)), sr.box, sr.depth)
	return append([]record(nil), sb.out...)
}

func (sb *smallBuilder) node(rec int, S uint64, box aabb, depth int) {
	n := uint32(bits.OnesCount64(S))
	c := noChoice()
	if n > 0 && depth < sb.b.opt.MaxDepth {
		c = sb.best(S, &box, n)
	}
	if c.axis > 2 || !(c.cost < sb.p.leafCost(n)) {
		refs := make([]uint32, 0, n)
		for m := S; m != 0; m &= m - 1 {
			refs = append(refs, sb.sr.tri[bits.TrailingZeros64(m)])
		}
		sb.out[rec] = record{fate: fateLeaf, refs: refs}
		return
	}
	a, pos := c.axis, c.pos
	cand := &sb.cands[a][c.idx]
	SL, SR := S&(cand.lt|^cand.gt), S&cand.gt
	lb, rb := childBoxes(box, a, pos)
	for m := SL & SR; m != 0; m &= m - 1 {
		r := bits.TrailingZeros64(m)
		okL, okR := reachesSides(&sb.b.tris[sb.sr.tri[r]], &box, a, pos)
		if okL == okR {
			continue
		}
		if okL {
			SR &^= 1 << r
		} else {
			SL &^= 1 << r
		}
	}
	l := len(sb.out)
	sb.out = append(sb.out, record{}, record{})
	sb.out[rec] = record{fate: fateSplit, axis: uint8(a), pos: pos, left: int32(l)}
	sb.node(l, SL, lb, depth+1)
	sb.node(l+1, SR, rb, depth+1)
}

// best returns the cheapest candidate of S in box (idx: candidate index).
func (sb *smallBuilder) best(S uint64, box *aabb, n uint32) choice {
	best := noChoice()
	aN := box.area64()
	for a := 0; a < 3; a++ {
		cands := sb.cands[a]
		for m := S; m != 0; m &= m - 1 {
			r := bits.TrailingZeros64(m)
			for k := 2 * r; k < 2*r+2; k++ {
				c := &cands[k]
				if !(c.pos > box.lo[a] && c.pos < box.hi[a]) {
					continue
				}
				nL := uint32(bits.OnesCount64(S & (c.lt | ^c.gt)))
				nR := uint32(bits.OnesCount64(S & c.gt))
				aL, aR := childAreas(box, a, c.pos)
				best.offer(sb.p.splitCost(aN, aL, aR, nL, nR), a, c.pos, k)
			}
		}
	}
	return best
}
