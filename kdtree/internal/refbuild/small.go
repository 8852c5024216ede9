package refbuild

import (
	"math"
	"math/bits"
	"slices"
)

// SmallRoot is a node handed to the small-node phase: at most 64
// references, their boxes clipped to the node's box.
type SmallRoot struct {
	Box   AABB
	Depth int
	Tri   []uint32 // ascending
	Box2  []AABB
}

// smallCand is a candidate plane of a small root: a face of one of its
// references' boxes (candidate 2r is the lower face of reference r, 2r+1
// its upper face), with the sets (bit r for reference r of the root) of
// references whose boxes start before the plane (lt) and end after it (gt).
type smallCand struct {
	pos    float32
	lt, gt uint64
	// same holds the owners (bit r for candidates 2r and 2r+1) of the
	// candidates of lower index at the same position: when one of them
	// belongs to the node this candidate is the same plane with the same
	// sets, and the lower index wins the tie, so best skips it.
	same uint64
}

// smallCands computes the candidates of each axis of a small root: the
// references' lower faces and upper faces are sorted, with prefix unions of
// their sets; a sweep over each sorted list, with a pointer into the other,
// counts the lower faces below each candidate (lt) and the upper faces at or
// below it (the complement of gt).
func smallCands(sr *SmallRoot, out *[3][]smallCand) {
	m := len(sr.Tri)
	var ordLo, ordHi [64]uint64
	var valLo, valHi [64]float32
	var preLo, preHi [65]uint64
	all := fullMask(m)
	for a := 0; a < 3; a++ {
		c := out[a][:0]
		for r := 0; r < m; r++ {
			lo, hi := sr.Box2[r].Lo[a], sr.Box2[r].Hi[a]
			c = append(c, smallCand{pos: lo}, smallCand{pos: hi})
			ordLo[r] = sortKey(lo)<<8 | uint64(r)
			ordHi[r] = sortKey(hi)<<8 | uint64(r)
		}
		slices.Sort(ordLo[:m])
		slices.Sort(ordHi[:m])
		for i := 0; i < m; i++ {
			rl, rh := ordLo[i]&0xFF, ordHi[i]&0xFF
			valLo[i], valHi[i] = sr.Box2[rl].Lo[a], sr.Box2[rh].Hi[a]
			preLo[i+1] = preLo[i] | 1<<rl
			preHi[i+1] = preHi[i] | 1<<rh
		}
		// Lower faces, ascending: lt counts the strictly smaller lower
		// faces (the first of a run of equal ones), le the upper faces <= p.
		lt, le := 0, 0
		for i := 0; i < m; i++ {
			p := valLo[i]
			if i == 0 || valLo[i-1] < p {
				lt = i
			}
			for le < m && valHi[le] <= p {
				le++
			}
			k := 2 * (ordLo[i] & 0xFF)
			c[k].lt, c[k].gt = preLo[lt], all&^preHi[le]
		}
		// Upper faces, ascending.
		lt, le = 0, 0
		for i := 0; i < m; i++ {
			p := valHi[i]
			for lt < m && valLo[lt] < p {
				lt++
			}
			for le < m && valHi[le] <= p {
				le++
			}
			k := 2*(ordHi[i]&0xFF) + 1
			c[k].lt, c[k].gt = preLo[lt], all&^preHi[le]
		}
		// Runs of equal positions, merging both sorted lists in (position,
		// index) order.
		i, j := 0, 0
		var runMask uint64
		var runPos float32
		first := true
		for i < m || j < m {
			var k uint64
			if j >= m || (i < m && (valLo[i] < valHi[j] || (valLo[i] == valHi[j] && 2*(ordLo[i]&0xFF) < 2*(ordHi[j]&0xFF)+1))) {
				k = 2 * (ordLo[i] & 0xFF)
				i++
			} else {
				k = 2*(ordHi[j]&0xFF) + 1
				j++
			}
			if first || c[k].pos != runPos {
				runMask, runPos, first = 0, c[k].pos, false
			}
			c[k].same = runMask
			runMask |= 1 << (k >> 1)
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
	b     *Builder
	p     *SAHParams
	sr    *SmallRoot
	cands [3][]smallCand
	out   []Record
	arena []uint32 // leaf references, allocated in blocks
}

// buildSmall returns the subtree of a small root as records (index 0 is the
// root). Each node's split is the exact SAH minimum over the candidates of
// its own references strictly inside its box:
//
//	nL = |S ∩ (lt ∪ ¬gt)|, nR = |S ∩ gt|
//
// (a reference flat in the plane goes left), a leaf when no split beats
// IntersectCost × |S| or at MaxDepth. After a split the straddling
// references' triangles are tested against each child box (reachesSides:
// the separating axis test), and dropped from a child they do not touch.
func (sb *smallBuilder) build(sr *SmallRoot) []Record {
	sb.sr = sr
	sb.out = sb.out[:0]
	if len(sr.Tri) > 0 {
		smallCands(sr, &sb.cands)
	}
	sb.out = append(sb.out, Record{})
	sb.node(0, fullMask(len(sr.Tri)), sr.Box, sr.Depth)
	return append([]Record(nil), sb.out...)
}

func (sb *smallBuilder) node(rec int, S uint64, box AABB, depth int) {
	n := uint32(bits.OnesCount64(S))
	c := noChoice()
	if n > 0 && depth < sb.b.Opt.MaxDepth {
		c = sb.best(S, &box, n)
	}
	if c.axis > 2 || !(c.cost < sb.p.leafCost(n)) {
		if cap(sb.arena)-len(sb.arena) < int(n) {
			sb.arena = make([]uint32, 0, max(4096, int(n)))
		}
		at := len(sb.arena)
		for m := S; m != 0; m &= m - 1 {
			sb.arena = append(sb.arena, sb.sr.Tri[bits.TrailingZeros64(m)])
		}
		sb.out[rec] = Record{Fate: FateLeaf, Refs: sb.arena[at:len(sb.arena):len(sb.arena)]}
		return
	}
	a, pos := c.axis, c.pos
	cand := &sb.cands[a][c.idx]
	SL, SR := S&(cand.lt|^cand.gt), S&cand.gt
	lb, rb := ChildBoxes(box, a, pos)
	for m := SL & SR; m != 0; m &= m - 1 {
		r := bits.TrailingZeros64(m)
		okL, okR := reachesSides(&sb.b.Tris[sb.sr.Tri[r]], &box, a, pos)
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
	sb.out = append(sb.out, Record{}, Record{})
	sb.out[rec] = Record{Fate: FateSplit, Axis: uint8(a), Pos: pos, Left: int32(l)}
	sb.node(l, SL, lb, depth+1)
	sb.node(l+1, SR, rb, depth+1)
}

// best returns the cheapest candidate of S in box (idx: candidate index),
// its cost relative to the node as splitCost defines it. Candidates are
// compared by the weighted half areas w = hL·nL + hR·nR (× (1−EmptyBonus)
// with an empty side), which orders them as splitCost does, without a
// division per candidate; the cost is computed once for the winner.
func (sb *smallBuilder) best(S uint64, box *AABB, n uint32) choice {
	best := noChoice()
	p := sb.p
	for a := 0; a < 3; a++ {
		cands := sb.cands[a]
		u, v := (a+1)%3, (a+2)%3
		du := float64(box.Hi[u]) - float64(box.Lo[u])
		dv := float64(box.Hi[v]) - float64(box.Lo[v])
		cross := float64(du * dv)
		perim := du + dv
		lo, hi := box.Lo[a], box.Hi[a]
		lo64, hi64 := float64(lo), float64(hi)
		for m := S; m != 0; m &= m - 1 {
			r := bits.TrailingZeros64(m)
			for k := 2 * r; k < 2*r+2; k++ {
				c := &cands[k]
				if !(c.pos > lo && c.pos < hi) || S&c.same != 0 {
					continue
				}
				nL := bits.OnesCount64(S & (c.lt | ^c.gt))
				nR := bits.OnesCount64(S & c.gt)
				pos64 := float64(c.pos)
				w := float64((cross+float64(perim*(pos64-lo64)))*float64(nL)) +
					float64((cross+float64(perim*(hi64-pos64)))*float64(nR))
				if nL == 0 || nR == 0 {
					w = float64(w * p.Keep)
				}
				if w <= best.cost {
					best.offer(w, a, c.pos, k)
				}
			}
		}
	}
	if best.axis <= 2 {
		best.cost = p.Ct + float64(p.Ci*float64(2*best.cost)/box.area64())
	}
	return best
}
