package kdtree

import (
	"math"

	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/scenes"
)

// The reference ray sets (docs/performance.md), the ones the other tracers'
// figures are for, so that hit counts compare exactly. All arithmetic is float64 from the float32 bounds,
// rounded to float32 once per stored component; every product is wrapped in
// float64() so that no compiler fuses it into an FMA.

// PrimaryImageSize is the width and height of PrimaryRays' image.
const PrimaryImageSize = 1024

// PrimaryRays returns the 1024×1024 reference camera rays for scene bounds
// b (the min/max over all vertices, scenes.Scene.Bounds), ray index
// py·1024+px, px left to right, py top to bottom:
//
//	c = (b.Min+b.Max)/2, e = b.Max−b.Min, s = max(e.x, e.y)
//	eye = (c.x, c.y, b.Max.z + s), looking along −Z, up +Y
//	u = (2(px+0.5)/1024 − 1)·0.5, v = (1 − 2(py+0.5)/1024)·0.5
//	Org = eye, Dir = normalize(u, v, −1), TMin = 0, TMax = +Inf
func PrimaryRays(b scenes.Bounds) []Ray {
	const n = PrimaryImageSize
	var mn, mx [3]float64
	for a := 0; a < 3; a++ {
		mn[a], mx[a] = float64(b.Min[a]), float64(b.Max[a])
	}
	cx, cy := (mn[0]+mx[0])/2, (mn[1]+mx[1])/2
	s := max(mx[0]-mn[0], mx[1]-mn[1])
	eye := mgl32.Vec3{float32(cx), float32(cy), float32(mx[2] + s)}
	inf := float32(math.Inf(1))
	rays := make([]Ray, n*n)
	for py := 0; py < n; py++ {
		v := (1 - float64(2*(float64(py)+0.5))/n) * 0.5
		for px := 0; px < n; px++ {
			u := (float64(2*(float64(px)+0.5))/n - 1) * 0.5
			l := math.Sqrt(float64(u*u) + float64(v*v) + 1)
			rays[py*n+px] = Ray{
				Org:  eye,
				Dir:  mgl32.Vec3{float32(u / l), float32(v / l), float32(-1 / l)},
				TMin: 0, TMax: inf,
			}
		}
	}
	return rays
}

// splitMix64 is the generator of the reference random rays.
type splitMix64 struct{ state uint64 }

func (g *splitMix64) next() uint64 {
	g.state += 0x9E3779B97F4A7C15
	z := g.state
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// uniform returns a float64 in [0, 1): the top 53 bits of next() · 2^−53.
func (g *splitMix64) uniform() float64 {
	return float64(g.next()>>11) * 0x1p-53
}

// RandomRays returns the n reference random rays for scene bounds b: splitmix64
// seeded with state 42, five uniforms per ray drawn in the order ux, uy,
// uz, u1, u2:
//
//	Org = b.Min + e·(ux, uy, uz) with e = b.Max−b.Min
//	z = 1 − 2·u1, r = sqrt(max(0, 1 − z²)), φ = 2π·u2
//	Dir = (r cos φ, r sin φ, z) (rounded, not renormalised)
//	TMin = 0, TMax = +Inf
//
// The rays of RandomRays(b, n) are the first n of RandomRays(b, m), m > n.
func RandomRays(b scenes.Bounds, n int) []Ray {
	g := splitMix64{state: 42}
	var mn, e [3]float64
	for a := 0; a < 3; a++ {
		mn[a] = float64(b.Min[a])
		e[a] = float64(b.Max[a]) - mn[a]
	}
	inf := float32(math.Inf(1))
	rays := make([]Ray, n)
	for i := range rays {
		ux, uy, uz := g.uniform(), g.uniform(), g.uniform()
		u1, u2 := g.uniform(), g.uniform()
		z := 1 - float64(2*u1)
		r := math.Sqrt(max(0, 1-float64(z*z)))
		phi := float64(2*math.Pi) * u2
		rays[i] = Ray{
			Org: mgl32.Vec3{
				float32(mn[0] + float64(e[0]*ux)),
				float32(mn[1] + float64(e[1]*uy)),
				float32(mn[2] + float64(e[2]*uz)),
			},
			Dir:  mgl32.Vec3{float32(float64(r * math.Cos(phi))), float32(float64(r * math.Sin(phi))), float32(z)},
			TMin: 0, TMax: inf,
		}
	}
	return rays
}
