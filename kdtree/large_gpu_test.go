package kdtree

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// lgLevel is one large-phase level as the onLevel hook sees it.
type lgLevel struct {
	nodes []lnode
	dec   []decision
}

func lgRecord(out *[]lgLevel) func([]lnode, []decision) {
	return func(n []lnode, d []decision) {
		*out = append(*out, lgLevel{append([]lnode(nil), n...), append([]decision(nil), d...)})
	}
}

// The CUDA large phase (reduce's box reduction, shared-memory histograms,
// the warp-per-node SAH and the node tables made on the device, which the
// onLevel hook makes levelCUDA check against the host's nodes) decides
// every level as the Go one does, for bin counts around the warp width and
// the tile sizes, down to one reference per small node.
func TestLargeGPULevelsEqualGo(t *testing.T) {
	ex, why := exec.TestGPU()
	if ex == nil {
		t.Skip(why)
	}
	list := []*scenes.Scene{scenes.Soup(20000, 5), scenes.Grid(scenes.Icosphere(3), 2, 2, 2),
		scenes.HugeAmongTiny(5000, 3), scenes.Identical(3000), scenes.Soup(1, 1), scenes.Soup(65, 2)}
	opts := []Options{{Bins: 2}, {Bins: 31}, {Bins: 32}, {Bins: 33}, {Bins: 100}, {Bins: MaxBins},
		{SmallNode: 1}, {SmallNode: 1, Bins: 64, EmptyBonus: 0.8}}
	for _, s := range list {
		for _, o := range opts {
			name := fmt.Sprintf("%s %+v", s.Name, o)
			var goLv, gpuLv []lgLevel
			goOpt, gpuOpt := o, o
			goOpt.Executor, gpuOpt.Executor = exec.Go(0), ex
			want, err := build(context.Background(), s, goOpt, lgRecord(&goLv))
			require.NoError(t, err, name)
			got, err := build(context.Background(), s, gpuOpt, lgRecord(&gpuLv))
			require.NoError(t, err, name)
			for l := 0; l < min(len(goLv), len(gpuLv)); l++ {
				g, d := goLv[l], gpuLv[l]
				require.Equal(t, len(g.nodes), len(d.nodes), "%s: level %d node count", name, l)
				for i := range g.nodes {
					gn, dn := g.nodes[i], d.nodes[i]
					gn.rec, dn.rec = 0, 0 // record numbering is each path's own
					require.Equal(t, gn, dn, "%s: level %d node %d", name, l, i)
					require.Equal(t, g.dec[i], d.dec[i], "%s: level %d node %d decision", name, l, i)
				}
			}
			require.Equal(t, len(goLv), len(gpuLv), "%s: levels", name)
			btEqualTrees(t, name, want, got)
		}
	}
}

// lgWarpBest is kdtree_sah_f32's search, lane by lane: the planes of an
// axis 32 at a time, each lane's nL and nR from a scan of the chunk's bin
// counts plus the counts before it, a best plane per lane, then the
// butterfly reduction under choice.better. It must pick bestBinned's plane.
func lgWarpBest(p *sahParams, box *aabb, n uint32, h *hist, geo *[3]binGeom) choice {
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
				if !(pos > box.lo[a] && pos < box.hi[a]) {
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
	p := newSAH(&Options{TraversalCost: 1, IntersectCost: 1.5, EmptyBonus: 0.1})
	for _, nb := range []int{2, 7, 31, 32, 33, 63, 64, 65, 100} {
		for trial := 0; trial < 200; trial++ {
			box := aabb{lo: [3]float32{0, 0, 0}, hi: [3]float32{1, 2, 3}}
			if trial%4 == 0 {
				box.hi[1] = 0 // flat: equal areas
			}
			var geo [3]binGeom
			h := newHist(nb)
			n := uint32(0)
			for a := 0; a < 3; a++ {
				lo, hi := box.lo[a], box.hi[a]
				if trial%5 == 1 {
					lo = box.lo[a] + (box.hi[a]-box.lo[a])/4
				}
				geo[a] = newBinGeom(lo, hi, nb)
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
			want := bestBinned(&p, &box, n, h, &geo)
			got := lgWarpBest(&p, &box, n, h, &geo)
			require.Equal(t, want, got, "bins %d trial %d", nb, trial)
		}
	}
}
