package kdtree

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// btInside reports whether p lies in the closed box.
func btInside(p [3]float64, b *aabb) bool {
	for a := 0; a < 3; a++ {
		if p[a] < float64(b.lo[a]) || p[a] > float64(b.hi[a]) {
			return false
		}
	}
	return true
}

// btRandomTriangle returns a triangle with vertices in [-1, 2]^3.
func btRandomTriangle(rng *rand.Rand) triangle {
	var t triangle
	for k := 0; k < 3; k++ {
		for a := 0; a < 3; a++ {
			t[k][a] = float32(rng.Float64()*3 - 1)
		}
	}
	return t
}

// Clipping against a box keeps every point of the triangle inside the box
// (sampled barycentrically) inside the clipped box, and the clipped box
// inside the box; a triangle that has sampled points inside is never lost.
func TestClipSplitContainsTriangle(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	unit := aabb{lo: [3]float32{0, 0, 0}, hi: [3]float32{1, 1, 1}}
	lost, kept := 0, 0
	for it := 0; it < 3000; it++ {
		tri := btRandomTriangle(rng)
		if it%7 == 0 { // axis-aligned (flat) triangles too
			ax := rng.IntN(3)
			for k := 0; k < 3; k++ {
				tri[k][ax] = 0.5
			}
		}
		cur := tri.bounds()
		a := rng.IntN(3)
		pos := float32(rng.Float64())
		bl, br, okL, okR := clipSplit(&tri, &unit, &cur, a, pos)
		lb, rb := childBoxes(unit, a, pos)
		okL2, okR2 := reachesSides(&tri, &unit, a, pos)
		require.Equal(t, okL, okL2, "triangle %v split %d@%v: clipSplit and reachesSides disagree on the left", tri, a, pos)
		require.Equal(t, okR, okR2, "triangle %v split %d@%v: clipSplit and reachesSides disagree on the right", tri, a, pos)
		for _, side := range []struct {
			ok    bool
			clip  aabb
			child aabb
		}{{okL, bl, lb}, {okR, br, rb}} {
			if side.ok {
				kept++
				for ax := 0; ax < 3; ax++ {
					require.LessOrEqual(t, side.child.lo[ax], side.clip.lo[ax])
					require.LessOrEqual(t, side.clip.hi[ax], side.child.hi[ax])
					require.LessOrEqual(t, side.clip.lo[ax], side.clip.hi[ax])
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
					if p[ax] <= float64(side.child.lo[ax])+1e-6 || p[ax] >= float64(side.child.hi[ax])-1e-6 {
						in = false
					}
				}
				if in {
					if !side.ok {
						lost++
						t.Fatalf("triangle %v: point %v in child %v but the side was dropped", tri, p, side.child)
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
	box := aabb{lo: [3]float32{0, 0, 0}, hi: [3]float32{4, 4, 4}}
	cases := []struct {
		tri      triangle
		a        int
		pos      float32
		okL, okR bool
		name     string
	}{
		{triangle{{1, 1, 1}, {1.5, 1, 1}, {1, 1.5, 1}}, 0, 2, true, false, "left"},
		{triangle{{3, 1, 1}, {3.5, 1, 1}, {3, 1.5, 1}}, 0, 2, false, true, "right"},
		{triangle{{1, 1, 1}, {3, 1, 1}, {1, 3, 1}}, 0, 2, true, true, "crossing"},
		{triangle{{2, 1, 1}, {2, 3, 1}, {2, 1, 3}}, 0, 2, true, true, "in the plane"},
		{triangle{{2, 1, 1}, {3, 1, 1}, {3, 2, 1}}, 0, 2, true, true, "touching the plane"},
		// Bounding boxes overlap the left child, the triangle does not:
		// the corner cut off by the plane x+y = 7 is outside.
		{triangle{{1.5, 5.5, 1}, {5.5, 1.5, 1}, {5.5, 5.5, 1}}, 0, 2, false, true, "box straddles, triangle right"},
		{triangle{{-3, -3, 9}, {-2, -3, 9}, {-3, -2, 9}}, 2, 2, false, false, "outside the box"},
	}
	for _, c := range cases {
		l, r := reachesSides(&c.tri, &box, c.a, c.pos)
		require.Equal(t, c.okL, l, c.name)
		require.Equal(t, c.okR, r, c.name)
	}
}
