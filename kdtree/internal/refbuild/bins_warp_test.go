package refbuild

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// lgWarpBest is kdtree_sah_f32's search, lane by lane: the planes of an
// axis 32 at a time, each lane's nL and nR from a scan of the chunk's bin
// counts plus the counts before it, a best plane per lane, then the
// butterfly reduction under choice.better. It must pick bestBinned's plane.
func lgWarpBest(p *SAHParams, box *AABB, n uint32, h *hist, geo *[3]BinGeom) choice {
	var best [32]choice
	for i := range best {
		best[i] = noChoice()
	}
	nb := h.nb
	aN := box.area64()
	for a := 0; a < 3; a++ {
		if !(geo[a].w > 0) {
			continue
		}
		carryL, carryR := uint32(0), uint32(0)
		for k0 := 0; k0 <= nb; k0 += 32 {
			var cL, cR [32]uint32
			for lane := range 32 {
				if k := k0 + lane; k >= 1 && k <= nb {
					cL[lane], cR[lane] = h.lo[a][k-1], h.hi[a][k-1]
				}
			}
			for lane := 1; lane < 32; lane++ { // inclusive scan
				cL[lane] += cL[lane-1]
				cR[lane] += cR[lane-1]
			}
			for lane := range 32 {
				k := k0 + lane
				nL, nR := carryL+cL[lane], n-(carryR+cR[lane])
				if k > nb {
					continue
				}
				pos := geo[a].plane(k)
				if k == nb {
					pos = geo[a].hi
				}
				if !(pos > box.Lo[a] && pos < box.Hi[a]) {
					continue
				}
				aL, aR := childAreas(box, a, pos)
				best[lane].offer(p.splitCost(aN, aL, aR, nL, nR), a, pos, k)
			}
			carryL += cL[31]
			carryR += cR[31]
		}
	}
	for o := 16; o > 0; o /= 2 {
		var next [32]choice
		for lane := range 32 {
			next[lane] = best[lane]
			x := best[lane^o]
			next[lane].offer(x.cost, x.axis, x.pos, x.idx)
		}
		best = next
	}
	return best[0]
}

// The warp search of kdtree_sah_f32 picks the sequential plane, ties
// included (few distinct counts make many equal costs).
func TestSAHWarpSearchMatchesSequential(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 1))
	p := NewSAH(&Options{TraversalCost: 1, IntersectCost: 1.5, EmptyBonus: 0.1})
	for _, nb := range []int{2, 7, 31, 32, 33, 63, 64, 65, 100} {
		for trial := 0; trial < 200; trial++ {
			box := AABB{Lo: [3]float32{0, 0, 0}, Hi: [3]float32{1, 2, 3}}
			if trial%4 == 0 {
				box.Hi[1] = 0 // flat: equal areas
			}
			var geo [3]BinGeom
			h := NewHist(nb)
			n := uint32(0)
			for a := 0; a < 3; a++ {
				lo, hi := box.Lo[a], box.Hi[a]
				if trial%5 == 1 {
					lo = box.Lo[a] + (box.Hi[a]-box.Lo[a])/4
				}
				geo[a] = NewBinGeom(lo, hi, nb)
			}
			m := 1 + rng.IntN(3)
			for i := 0; i < 50+rng.IntN(500); i++ {
				for a := 0; a < 3; a++ {
					k0 := rng.IntN(nb)
					k1 := min(nb-1, k0+rng.IntN(m))
					h.lo[a][k0]++
					h.hi[a][k1]++
				}
				n++
			}
			want := BestBinned(&p, &box, n, h, &geo)
			got := lgWarpBest(&p, &box, n, h, &geo)
			require.Equal(t, want, got, "bins %d trial %d", nb, trial)
		}
	}
}
