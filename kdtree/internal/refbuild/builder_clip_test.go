package refbuild

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kdbuild/kdbuild/kernels/exec"
)

// btInside reports whether p lies in the closed box.
func btInside(p [3]float64, b *AABB) bool {
	for a := 0; a < 3; a++ {
		if p[a] < float64(b.Lo[a]) || p[a] > float64(b.Hi[a]) {
			return false
		}
	}
	return true
}

// btRandomTriangle returns a triangle with vertices in [-1, 2]^3.
func btRandomTriangle(rng *rand.Rand) Triangle {
	var t Triangle
	for k := 0; k < 3; k++ {
		for a := 0; a < 3; a++ {
			t[k][a] = float32(rng.Float64()*3 - 1)
		}
	}
	return t
}

// btFlatten makes tri flat: every vertex at coordinate at on a random axis.
func btFlatten(rng *rand.Rand, tri *Triangle, at float32) {
	ax := rng.IntN(3)
	for k := 0; k < 3; k++ {
		tri[k][ax] = at
	}
}

// Clipping against a box keeps every point of the triangle inside the box
// (sampled barycentrically) inside the clipped box, and the clipped box
// inside the box; a triangle that has sampled points inside is never lost.
func TestClipSplitContainsTriangle(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	unit := AABB{Lo: [3]float32{0, 0, 0}, Hi: [3]float32{1, 1, 1}}
	lost, kept := 0, 0
	for it := 0; it < 3000; it++ {
		tri := btRandomTriangle(rng)
		if it%7 == 0 { // axis-aligned (flat) triangles too
			btFlatten(rng, &tri, 0.5)
		}
		cur := tri.bounds()
		a := rng.IntN(3)
		pos := float32(rng.Float64())
		bl, br, okL, okR := ClipSplit(&tri, &unit, &cur, a, pos)
		lb, rb := ChildBoxes(unit, a, pos)
		okL2, okR2 := reachesSides(&tri, &unit, a, pos)
		require.Equal(t, okL, okL2, "triangle %v split %d@%v: clipSplit and reachesSides disagree on the left", tri, a, pos)
		require.Equal(t, okR, okR2, "triangle %v split %d@%v: clipSplit and reachesSides disagree on the right", tri, a, pos)
		for _, side := range []struct {
			ok    bool
			clip  AABB
			child AABB
		}{{okL, bl, lb}, {okR, br, rb}} {
			if side.ok {
				kept++
				for ax := 0; ax < 3; ax++ {
					require.LessOrEqual(t, side.child.Lo[ax], side.clip.Lo[ax])
					require.LessOrEqual(t, side.clip.Hi[ax], side.child.Hi[ax])
					require.LessOrEqual(t, side.clip.Lo[ax], side.clip.Hi[ax])
				}
			}
			for s := 0; s < 200; s++ {
				u, v := rng.Float64(), rng.Float64()
				if u+v > 1 {
					u, v = 1-u, 1-v
				}
				var p [3]float64
				for ax := 0; ax < 3; ax++ {
					p[ax] = float64(tri[0][ax]) + u*(float64(tri[1][ax])-float64(tri[0][ax])) + v*(float64(tri[2][ax])-float64(tri[0][ax]))
				}
				// Points strictly inside the child (a margin for the
				// sampling's own rounding) must be in the clipped box.
				in := true
				for ax := 0; ax < 3; ax++ {
					if p[ax] <= float64(side.child.Lo[ax])+1e-6 || p[ax] >= float64(side.child.Hi[ax])-1e-6 {
						in = false
					}
				}
				if in {
					if !side.ok {
						lost++
						t.Errorf("triangle %v: point %v in child %v but the side was dropped", tri, p, side.child)
					}
					require.True(t, btInside(p, &side.clip), "point %v of %v outside clipped box %v", p, tri, side.clip)
				}
			}
		}
	}
	require.Zero(t, lost)
	require.Positive(t, kept)
}

// A triangle entirely on one side of the plane reaches only that side; one
// crossing it reaches both.
func TestReachesSides(t *testing.T) {
	box := AABB{Lo: [3]float32{0, 0, 0}, Hi: [3]float32{4, 4, 4}}
	cases := []struct {
		tri      Triangle
		a        int
		pos      float32
		okL, okR bool
		name     string
	}{
		{Triangle{{1, 1, 1}, {1.5, 1, 1}, {1, 1.5, 1}}, 0, 2, true, false, "left"},
		{Triangle{{3, 1, 1}, {3.5, 1, 1}, {3, 1.5, 1}}, 0, 2, false, true, "right"},
		{Triangle{{1, 1, 1}, {3, 1, 1}, {1, 3, 1}}, 0, 2, true, true, "crossing"},
		{Triangle{{2, 1, 1}, {2, 3, 1}, {2, 1, 3}}, 0, 2, true, true, "in the plane"},
		{Triangle{{2, 1, 1}, {3, 1, 1}, {3, 2, 1}}, 0, 2, true, true, "touching the plane"},
		// Bounding boxes overlap the left child, the triangle does not:
		// the corner cut off by the plane x+y = 7 is outside.
		{Triangle{{1.5, 5.5, 1}, {5.5, 1.5, 1}, {5.5, 5.5, 1}}, 0, 2, false, true, "box straddles, triangle right"},
		{Triangle{{-3, -3, 9}, {-2, -3, 9}, {-3, -2, 9}}, 2, 2, false, false, "outside the box"},
	}
	for _, c := range cases {
		l, r := reachesSides(&c.tri, &box, c.a, c.pos)
		require.Equal(t, c.okL, l, c.name)
		require.Equal(t, c.okR, r, c.name)
	}
}

// smallCands' sorted sweeps give the sets the CUDA kernel computes directly:
// lt = {q : lo[q] < pos}, gt = {q : hi[q] > pos}, with ties, signed zeros
// and 0, 1, 31, 32, 33, 63 and 64 references.
func TestSmallCandsBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, m := range []int{0, 1, 2, 31, 32, 33, 63, 64} {
		for it := 0; it < 20; it++ {
			sr := SmallRoot{Tri: make([]uint32, m), Box2: make([]AABB, m)}
			vals := []float32{-1, 0, float32(negZero()), 0.25, 0.5, 1}
			for r := 0; r < m; r++ {
				for a := 0; a < 3; a++ {
					x, y := vals[rng.IntN(len(vals))], vals[rng.IntN(len(vals))]
					if it%2 == 1 {
						x, y = float32(rng.Float64()), float32(rng.Float64())
					}
					sr.Box2[r].Lo[a], sr.Box2[r].Hi[a] = min(x, y), max(x, y)
				}
			}
			var cands [3][]smallCand
			smallCands(&sr, &cands)
			for a := 0; a < 3; a++ {
				require.Len(t, cands[a], 2*m)
				for k, c := range cands[a] {
					want := sr.Box2[k/2].Lo[a]
					if k%2 == 1 {
						want = sr.Box2[k/2].Hi[a]
					}
					require.Equal(t, want, c.pos)
					var lt, gt uint64
					for q := 0; q < m; q++ {
						if sr.Box2[q].Lo[a] < c.pos {
							lt |= 1 << q
						}
						if sr.Box2[q].Hi[a] > c.pos {
							gt |= 1 << q
						}
					}
					require.Equal(t, lt, c.lt, "m %d axis %d candidate %d lt", m, a, k)
					require.Equal(t, gt, c.gt, "m %d axis %d candidate %d gt", m, a, k)
				}
			}
		}
	}
}

func negZero() float64 { return math.Copysign(0, -1) }

// best, which skips candidates repeating a plane of the node, picks the
// candidate that evaluating every candidate picks (the CUDA kernel does).
func TestSmallBestSkipsOnlyRepeats(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	// kdtree.Options{} resolved for 100 triangles.
	o := Options{Executor: exec.Go(0), TraversalCost: 1, IntersectCost: 1.5, EmptyBonus: 0.1, SmallNode: 64, Bins: 32, MaxDepth: 16}
	p := NewSAH(&o)
	sb := &smallBuilder{b: &Builder{Opt: o}, p: &p}
	grid := []float32{0, 0.125, 0.25, 0.5, 0.75, 1}
	for it := 0; it < 300; it++ {
		m := 1 + rng.IntN(64)
		sr := SmallRoot{Box: AABB{Hi: [3]float32{1, 1, 1}}, Tri: make([]uint32, m), Box2: make([]AABB, m)}
		for r := 0; r < m; r++ {
			for a := 0; a < 3; a++ {
				x, y := grid[rng.IntN(len(grid))], grid[rng.IntN(len(grid))]
				sr.Box2[r].Lo[a], sr.Box2[r].Hi[a] = min(x, y), max(x, y)
			}
		}
		smallCands(&sr, &sb.cands)
		S := rng.Uint64() & fullMask(m)
		n := uint32(bits.OnesCount64(S))
		got := sb.best(S, &sr.Box, n)
		// Every candidate of S, no skipping.
		want := noChoice()
		for a := 0; a < 3; a++ {
			for k, c := range sb.cands[a] {
				if S&(1<<(k/2)) == 0 || !(c.pos > sr.Box.Lo[a] && c.pos < sr.Box.Hi[a]) {
					continue
				}
				u, v := (a+1)%3, (a+2)%3
				du := float64(sr.Box.Hi[u]) - float64(sr.Box.Lo[u])
				dv := float64(sr.Box.Hi[v]) - float64(sr.Box.Lo[v])
				cross, perim := float64(du*dv), du+dv
				nL := bits.OnesCount64(S & (c.lt | ^c.gt))
				nR := bits.OnesCount64(S & c.gt)
				pos64 := float64(c.pos)
				w := float64((cross+float64(perim*(pos64-float64(sr.Box.Lo[a]))))*float64(nL)) +
					float64((cross+float64(perim*(float64(sr.Box.Hi[a])-pos64)))*float64(nR))
				if nL == 0 || nR == 0 {
					w = float64(w * p.Keep)
				}
				want.offer(w, a, c.pos, k)
			}
		}
		if want.axis <= 2 {
			want.cost = p.Ct + float64(p.Ci*float64(2*want.cost)/sr.Box.area64())
		}
		require.Equal(t, want, got, "iteration %d, m %d, S %x", it, m, S)
	}
}
