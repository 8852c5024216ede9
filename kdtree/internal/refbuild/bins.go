package refbuild

import "math"

// sahParams are the SAH constants of a build in float64.
type SAHParams struct {
	Ct, Ci float64 // traversal and intersection cost
	Keep   float64 // 1 - EmptyBonus: factor of a split with an empty side
}

func NewSAH(o *Options) SAHParams {
	return SAHParams{Ct: float64(o.TraversalCost), Ci: float64(o.IntersectCost), Keep: 1 - float64(o.EmptyBonus)}
}

// splitCost is the SAH cost, relative to the node's area aN, of splitting it
// into children of areas aL and aR holding nL and nR references:
//
//	ct + ci·(aL·nL + aR·nR)/aN, times (1 − EmptyBonus) on the second term when a side is empty.
//
// kd_split_cost in kernels/kdtree.cu is the same operation sequence.
func (p *SAHParams) splitCost(aN, aL, aR float64, nL, nR uint32) float64 {
	c := float64(aL*float64(nL)) + float64(aR*float64(nR))
	c = c / aN
	if nL == 0 || nR == 0 {
		c = float64(c * p.Keep)
	}
	return p.Ct + float64(p.Ci*c)
}

// leafCost is the SAH cost of making a leaf of n references.
func (p *SAHParams) leafCost(n uint32) float64 { return float64(p.Ci * float64(n)) }

// childAreas returns the areas of the two children of box cut at pos on
// axis a (pos inside the box).
func childAreas(box *AABB, a int, pos float32) (aL, aR float64) {
	u, v := (a+1)%3, (a+2)%3
	du := float64(box.Hi[u]) - float64(box.Lo[u])
	dv := float64(box.Hi[v]) - float64(box.Lo[v])
	cross := float64(du * dv)
	perim := du + dv
	tL := float64(pos) - float64(box.Lo[a])
	tR := float64(box.Hi[a]) - float64(pos)
	aL = 2 * (cross + float64(perim*tL))
	aR = 2 * (cross + float64(perim*tR))
	return aL, aR
}

// choice is the best split found so far. Candidates are ordered by
// (cost, axis, position, index), so that the winner does not depend on the
// order in which they are offered (the CUDA kernels reduce in parallel).
type choice struct {
	cost float64
	axis int // 3: none
	pos  float32
	idx  int
}

func noChoice() choice { return choice{cost: math.Inf(1), axis: 3} }

// better reports whether (cost, axis, pos, idx) precedes c.
func (c *choice) better(cost float64, axis int, pos float32, idx int) bool {
	if cost != c.cost {
		return cost < c.cost
	}
	if axis != c.axis {
		return axis < c.axis
	}
	if pos != c.pos {
		return pos < c.pos
	}
	return idx < c.idx
}

func (c *choice) offer(cost float64, axis int, pos float32, idx int) {
	if c.better(cost, axis, pos, idx) {
		*c = choice{cost: cost, axis: axis, pos: pos, idx: idx}
	}
}

// binGeom places the bins of one axis: nb bins of width w from lo. Bin k
// covers [lo + k·w, lo + (k+1)·w); plane k (1 <= k < nb) is at lo + k·w.
type BinGeom struct {
	lo, hi, w float32
	nb        int
}

func NewBinGeom(lo, hi float32, nb int) BinGeom {
	return BinGeom{lo: lo, hi: hi, w: (hi - lo) / float32(nb), nb: nb}
}

// plane returns the position of plane k.
func (g BinGeom) plane(k int) float32 { return g.lo + float32(float32(k)*g.w) }

// bin returns the bin of x, clamped to [0, nb).
func (g BinGeom) bin(x float32) int {
	f := (x - g.lo) / g.w
	if !(f > 0) {
		return 0
	}
	if f >= float32(g.nb) {
		return g.nb - 1
	}
	return int(f)
}

// hist holds a node's bin counts: for each axis the number of references
// whose box starts (lo) and ends (hi) in each bin.
type hist struct {
	nb     int
	lo, hi [3][]uint32
}

func NewHist(nb int) *hist {
	h := &hist{nb: nb}
	buf := make([]uint32, 6*nb)
	for a := 0; a < 3; a++ {
		h.lo[a] = buf[(2*a)*nb : (2*a+1)*nb]
		h.hi[a] = buf[(2*a+1)*nb : (2*a+2)*nb]
	}
	return h
}

func (h *hist) clear() {
	for a := 0; a < 3; a++ {
		clear(h.lo[a])
		clear(h.hi[a])
	}
}

func (h *hist) add(o *hist) {
	for a := 0; a < 3; a++ {
		for k := range h.lo[a] {
			h.lo[a][k] += o.lo[a][k]
			h.hi[a][k] += o.hi[a][k]
		}
	}
}

// fill counts boxes into h (which must be clear) with the bins of geo.
func (h *hist) fill(boxes []AABB, geo *[3]BinGeom) {
	for i := range boxes {
		bx := &boxes[i]
		for a := 0; a < 3; a++ {
			h.lo[a][geo[a].bin(bx.Lo[a])]++
			h.hi[a][geo[a].bin(bx.Hi[a])]++
		}
	}
}

// bestBinned returns the cheapest plane of the binned SAH of a node with
// box and n references: plane k (0 <= k <= nb; planes 0 and nb are the
// tight bounds, cutting off empty space) of axis a puts nL = references
// starting in bins < k on the left and nR = references ending in bins >= k
// on the right.
// Planes not strictly inside box are skipped; axes where the tight bounds
// are flat have no bins (geo[a].w == 0).
func BestBinned(p *SAHParams, box *AABB, n uint32, h *hist, geo *[3]BinGeom) choice {
	best := noChoice()
	aN := box.area64()
	for a := 0; a < 3; a++ {
		if !(geo[a].w > 0) {
			continue
		}
		nL, nR := uint32(0), n
		for k := 0; k <= h.nb; k++ {
			if k > 0 {
				nL += h.lo[a][k-1]
				nR -= h.hi[a][k-1]
			}
			pos := geo[a].plane(k)
			if k == h.nb {
				pos = geo[a].hi
			}
			if !(pos > box.Lo[a] && pos < box.Hi[a]) {
				continue
			}
			aL, aR := childAreas(box, a, pos)
			best.offer(p.splitCost(aN, aL, aR, nL, nR), a, pos, k)
		}
	}
	return best
}
