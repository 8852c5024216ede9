package kdtree

import (
	"math"
	"math/bits"
	"slices"
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
	var ord [128]uint64
	var ordLo, ordHi [64]uint64
	for a := 0; a < 3; a++ {
		c := out[a][:0]
		for r := 0; r < m; r++ {
			lo, hi := sr.box2[r].lo[a], sr.box2[r].hi[a]
			c = append(c, smallCand{pos: lo}, smallCand{pos: hi})
			ord[2*r] = sortKey(lo)<<8 | uint64(2*r)
			ord[2*r+1] = sortKey(hi)<<8 | uint64(2*r+1)
			ordLo[r] = sortKey(lo)<<8 | uint64(r)
			ordHi[r] = sortKey(hi)<<8 | uint64(r)
		}
		slices.Sort(ord[:2*m])
		slices.Sort(ordLo[:m])
		slices.Sort(ordHi[:m])
		// Sweep: lt grows with the lower faces below pos, le with the upper
		// faces at or below pos; gt is the rest.
		all := fullMask(m)
		var lt, le uint64
		i, j := 0, 0
		for _, o := range ord[:2*m] {
			k := o & 0xFF
			p := c[k].pos
			for i < m && sr.box2[ordLo[i]&0xFF].lo[a] < p {
				lt |= 1 << (ordLo[i] & 0xFF)
				i++
			}
			for j < m && sr.box2[ordHi[j]&0xFF].hi[a] <= p {
				le |= 1 << (ordHi[j] & 0xFF)
				j++
			}
			c[k].lt, c[k].gt = lt, all&^le
		}
		out[a] = c
	}
}

// sortKey maps a float32 (not NaN) to a uint64 with the same order
// (-0 and +0 are equal: both map to the key of +0).
func sortKey(f float32) uint64 {
	if f == 0 {
		f = 0
	}
	b := math.Float32bits(f)
	if b&0x80000000 != 0 {
		b = ^b
	} else {
		b |= 0x80000000
	}
	return uint64(b)
}

func fullMask(m int) uint64 {
	if m >= 64 {
		return ^uint64(0)
	}
	return 1<<m - 1
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
// childAreas and splitCost are inlined by hand with the same operations.
func (sb *smallBuilder) best(S uint64, box *aabb, n uint32) choice {
	best := noChoice()
	aN := box.area64()
	p := sb.p
	for a := 0; a < 3; a++ {
		cands := sb.cands[a]
		u, v := (a+1)%3, (a+2)%3
		du := float64(box.hi[u]) - float64(box.lo[u])
		dv := float64(box.hi[v]) - float64(box.lo[v])
		cross := float64(du * dv)
		perim := du + dv
		lo, hi := box.lo[a], box.hi[a]
		lo64, hi64 := float64(lo), float64(hi)
		for m := S; m != 0; m &= m - 1 {
			r := bits.TrailingZeros64(m)
			for k := 2 * r; k < 2*r+2; k++ {
				c := &cands[k]
				if !(c.pos > lo && c.pos < hi) {
					continue
				}
				nL := uint32(bits.OnesCount64(S & (c.lt | ^c.gt)))
				nR := uint32(bits.OnesCount64(S & c.gt))
				pos64 := float64(c.pos)
				aL := 2 * (cross + float64(perim*(pos64-lo64)))
				aR := 2 * (cross + float64(perim*(hi64-pos64)))
				cost := p.splitCost(aN, aL, aR, nL, nR)
				if cost <= best.cost {
					best.offer(cost, a, c.pos, k)
				}
			}
		}
	}
	return best
}
