package gputrace

import "math"

// coherenceSamples is the most pairs of neighbouring rays Incoherent
// looks at: enough for a stable mean, few enough to cost nothing beside a
// trace (a few microseconds).
const coherenceSamples = 256

// incoherentCos is the mean cosine between neighbouring rays' directions
// under which a batch counts as incoherent. Rays of one image row (camera
// rays, shadow rays towards one light) are within a degree of each other
// (cosine above 0.999); rays in random directions (ambient occlusion,
// diffuse bounces, the ANCHORS random set) average 0.
const incoherentCos = 0.5

// Incoherent reports whether the batch's neighbouring rays point different
// ways: the mean cosine of the angle between rays i and i+1, over up to
// coherenceSamples pairs spread over the batch, is under incoherentCos.
// Rays with a zero or non-finite direction count as agreeing. A batch of
// fewer than two rays is coherent.
func Incoherent(rays []Ray) bool {
	n := len(rays) - 1
	if n < 1 {
		return false
	}
	pairs := min(n, coherenceSamples)
	sum := 0.0
	for k := 0; k < pairs; k++ {
		i := int(int64(k) * int64(n) / int64(pairs))
		sum += cosine(rays[i].Dir, rays[i+1].Dir)
	}
	return sum/float64(pairs) < incoherentCos
}

// cosine is the cosine of the angle between a and b, 1 when either is zero
// or not finite.
func cosine(a, b [3]float32) float64 {
	var ab, aa, bb float64
	for k := 0; k < 3; k++ {
		x, y := float64(a[k]), float64(b[k])
		ab += x * y
		aa += x * x
		bb += y * y
	}
	c := ab / math.Sqrt(aa*bb)
	if math.IsNaN(c) || math.IsInf(c, 0) {
		return 1
	}
	return c
}
