package refbuild

// meetsBox reports whether triangle t meets the closed box b: whether no
// axis separates them among the box's three face normals, the nine cross
// products of the triangle's edges with the coordinate axes and the
// triangle's normal (the separating axis theorem, as in Akenine-Möller's
// triangle-box overlap test, here with the box's projection taken from its
// corners instead of its centre, so that no half extent is rounded).
//
// The small-node phase asks it, for every straddling reference of a split,
// in place of clipping the triangle to the node box (reachesSides): the
// clipping, a polygon in memory and a division per new vertex, was half to
// two thirds of the CUDA small-node kernel's time.
//
// Arithmetic: float64 from float32 coordinates; an edge component is a
// difference of two float32 values, a projection on an edge axis the sum
// of two products of such a difference and a float32 coordinate. Every
// product is written float64(x*y), so that no compiler fuses it into a
// multiply-add, and every sum is left to right, so that the CUDA kernels
// (meets_box in kernels/kdtree.cu, compiled with --fmad=false) compute the
// same bits and decide the same. A triangle touching the box counts as
// meeting it (closed box, strict separation).
func meetsBox(t *Triangle, b *AABB) bool {
	// The box's face normals: the triangle's bounds.
	for a := 0; a < 3; a++ {
		lo, hi := t[0][a], t[0][a]
		for i := 1; i < 3; i++ {
			lo, hi = min32(lo, t[i][a]), max32(hi, t[i][a])
		}
		if lo > b.Hi[a] || hi < b.Lo[a] {
			return false
		}
	}
	var v [3][3]float64
	for i := 0; i < 3; i++ {
		for a := 0; a < 3; a++ {
			v[i][a] = float64(t[i][a])
		}
	}
	var e [3][3]float64 // edge j: v[j+1] - v[j]
	for j := 0; j < 3; j++ {
		for a := 0; a < 3; a++ {
			e[j][a] = v[(j+1)%3][a] - v[j][a]
		}
	}
	// Edge j × axis k: the axis (0 on k, e[j][k2] on k1, -e[j][k1] on k2)
	// for k1 = k+1, k2 = k+2 (mod 3).
	for j := 0; j < 3; j++ {
		for k := 0; k < 3; k++ {
			k1, k2 := (k+1)%3, (k+2)%3
			c1, c2 := e[j][k2], -e[j][k1]
			if !separates(c1, c2, k1, k2, &v, b) {
				continue
			}
			return false
		}
	}
	// The triangle's normal e0 × e1.
	var n [3]float64
	for a := 0; a < 3; a++ {
		a1, a2 := (a+1)%3, (a+2)%3
		n[a] = float64(e[0][a1]*e[1][a2]) - float64(e[0][a2]*e[1][a1])
	}
	var p [3]float64
	for i := 0; i < 3; i++ {
		p[i] = float64(n[0]*v[i][0]) + float64(n[1]*v[i][1]) + float64(n[2]*v[i][2])
	}
	pmin, pmax := span3(&p)
	bmin, bmax := 0.0, 0.0
	for a := 0; a < 3; a++ {
		x, y := float64(n[a]*float64(b.Lo[a])), float64(n[a]*float64(b.Hi[a]))
		bmin += min64(x, y)
		bmax += max64(x, y)
	}
	return !(pmax < bmin || pmin > bmax)
}

// separates reports whether the axis with components c1 on k1 and c2 on k2
// (0 on the third) separates the triangle v from box b (meetsBox).
func separates(c1, c2 float64, k1, k2 int, v *[3][3]float64, b *AABB) bool {
	var p [3]float64
	for i := 0; i < 3; i++ {
		p[i] = float64(c1*v[i][k1]) + float64(c2*v[i][k2])
	}
	pmin, pmax := span3(&p)
	x1, y1 := float64(c1*float64(b.Lo[k1])), float64(c1*float64(b.Hi[k1]))
	x2, y2 := float64(c2*float64(b.Lo[k2])), float64(c2*float64(b.Hi[k2]))
	bmin := min64(x1, y1) + min64(x2, y2)
	bmax := max64(x1, y1) + max64(x2, y2)
	return pmax < bmin || pmin > bmax
}

// span3 returns the least and the greatest of p, picked in p's order (as
// meets_box does).
func span3(p *[3]float64) (lo, hi float64) {
	return min64(min64(p[0], p[1]), p[2]), max64(max64(p[0], p[1]), p[2])
}
