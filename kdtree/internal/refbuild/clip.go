package refbuild

import "math"

// AABB is a float32 box, the builder's working type (scenes.Bounds without
// the vector type, so that the CUDA kernels see the same six floats).
type AABB struct {
	Lo, Hi [3]float32
}

// EmptyBox has lo = +Inf and hi = -Inf, the identity of union.
func EmptyBox() AABB {
	inf := float32(math.Inf(1))
	return AABB{Lo: [3]float32{inf, inf, inf}, Hi: [3]float32{-inf, -inf, -inf}}
}

// Union grows b to hold c.
func (b *AABB) Union(c *AABB) {
	for a := 0; a < 3; a++ {
		b.Lo[a] = min32(b.Lo[a], c.Lo[a])
		b.Hi[a] = max32(b.Hi[a], c.Hi[a])
	}
}

// area64 is the surface area in float64 of a box given in float32, the
// operation sequence the CUDA kernels repeat (kernels/kdtree.cu, area64).
func (b *AABB) area64() float64 {
	dx := float64(b.Hi[0]) - float64(b.Lo[0])
	dy := float64(b.Hi[1]) - float64(b.Lo[1])
	dz := float64(b.Hi[2]) - float64(b.Lo[2])
	return 2 * (float64(dx*dy) + float64(dy*dz) + float64(dz*dx))
}

// Triangle holds a triangle's three vertices.
type Triangle [3][3]float32

// bounds returns the triangle's box.
func (t *Triangle) bounds() AABB {
	var b AABB
	for a := 0; a < 3; a++ {
		b.Lo[a] = min32(min32(t[0][a], t[1][a]), t[2][a])
		b.Hi[a] = max32(max32(t[0][a], t[1][a]), t[2][a])
	}
	return b
}

// maxPoly bounds the vertices of a triangle clipped by seven planes (the
// six of a box and a split plane): each plane adds at most one vertex.
const maxPoly = 10

// Poly is a convex polygon in float64.
type Poly struct {
	n int
	v [maxPoly][3]float64
}

// clip keeps the part of p in the closed half-space x[a] >= v (above) or
// x[a] <= v, writing it to out (Sutherland–Hodgman: new vertices are
// interpolated along the edge from the current vertex to the next one and
// get x[a] = v exactly). When every vertex is inside, out is p.
func (p *Poly) clip(a int, v float64, above bool, out *Poly) {
	out.n = 0
	for i := 0; i < p.n; i++ {
		c, d := &p.v[i], &p.v[(i+1)%p.n]
		var cin, din bool
		if above {
			cin, din = c[a] >= v, d[a] >= v
		} else {
			cin, din = c[a] <= v, d[a] <= v
		}
		if cin {
			out.v[out.n] = *c
			out.n++
		}
		if cin != din {
			s := (v - c[a]) / (d[a] - c[a])
			w := &out.v[out.n]
			for k := 0; k < 3; k++ {
				w[k] = c[k] + float64(s*(d[k]-c[k]))
			}
			w[a] = v
			out.n++
		}
	}
}

// bounds returns the polygon's box (p.n > 0).
func (p *Poly) bounds() (lo, hi [3]float64) {
	lo, hi = p.v[0], p.v[0]
	for i := 1; i < p.n; i++ {
		for a := 0; a < 3; a++ {
			lo[a] = min64(lo[a], p.v[i][a])
			hi[a] = max64(hi[a], p.v[i][a])
		}
	}
	return lo, hi
}

// clipToBox sets p to the part of triangle t inside box, clipping against
// box.lo and box.hi of axis 0, 1, 2 in that order, and reports whether
// anything is left. A plane that every vertex is inside of leaves the
// polygon as it is, so it is skipped (the result is the same).
func ClipToBox(t *Triangle, box *AABB, p *Poly) bool {
	var tmp Poly
	p.n = 3
	for i := 0; i < 3; i++ {
		for a := 0; a < 3; a++ {
			p.v[i][a] = float64(t[i][a])
		}
	}
	src, dst := p, &tmp
	for a := 0; a < 3; a++ {
		lo, hi := float64(box.Lo[a]), float64(box.Hi[a])
		outLo, outHi := false, false
		for i := 0; i < src.n; i++ {
			outLo = outLo || src.v[i][a] < lo
			outHi = outHi || src.v[i][a] > hi
		}
		if outLo {
			src.clip(a, lo, true, dst)
			if dst.n == 0 {
				return false
			}
			src, dst = dst, src
		}
		if outHi {
			src.clip(a, hi, false, dst)
			if dst.n == 0 {
				return false
			}
			src, dst = dst, src
		}
	}
	if src != p {
		*p = *src
	}
	return true
}

// boxOfPoly rounds the polygon's bounds outwards to float32 and intersects
// them with box and cur; ok is false when that is empty.
func boxOfPoly(p *Poly, box, cur *AABB) (AABB, bool) {
	lo, hi := p.bounds()
	var r AABB
	for a := 0; a < 3; a++ {
		r.Lo[a] = max32(max32(roundDown(lo[a]), box.Lo[a]), cur.Lo[a])
		r.Hi[a] = min32(min32(roundUp(hi[a]), box.Hi[a]), cur.Hi[a])
		if r.Lo[a] > r.Hi[a] {
			return AABB{}, false
		}
	}
	return r, true
}

// clipSplit clips triangle t, a reference with box cur in node box, to the
// two children of the split (a, pos): the triangle is clipped to the node
// box, then that polygon to each side of the plane; each side's bounds are
// rounded outwards and intersected with the child box and cur. okL/okR are
// false for a side the triangle does not reach. The CUDA kernels repeat
// this operation for operation (kd_clip_split in kernels/kdtree.cu).
func ClipSplit(t *Triangle, box, cur *AABB, a int, pos float32) (bl, br AABB, okL, okR bool) {
	var p, q Poly
	if !ClipToBox(t, box, &p) {
		return AABB{}, AABB{}, false, false
	}
	lb, rb := ChildBoxes(*box, a, pos)
	p.clip(a, float64(pos), false, &q)
	if q.n > 0 {
		bl, okL = boxOfPoly(&q, &lb, cur)
	}
	p.clip(a, float64(pos), true, &q)
	if q.n > 0 {
		br, okR = boxOfPoly(&q, &rb, cur)
	}
	return bl, br, okL, okR
}

// reachesSides reports which children of the split (a, pos) of node box
// the triangle t reaches (closed boxes): whether it meets box ∩ {x_a <=
// pos} and box ∩ {x_a >= pos} (meetsBox, the separating axis test).
//
// A vertex inside box settles its side at once.
func reachesSides(t *Triangle, box *AABB, a int, pos float32) (okL, okR bool) {
	for i := 0; i < 3; i++ {
		v := &t[i]
		if v[0] >= box.Lo[0] && v[0] <= box.Hi[0] && v[1] >= box.Lo[1] && v[1] <= box.Hi[1] &&
			v[2] >= box.Lo[2] && v[2] <= box.Hi[2] {
			okL = okL || v[a] <= pos
			okR = okR || v[a] >= pos
		}
	}
	if okL && okR {
		return true, true
	}
	lb, rb := ChildBoxes(*box, a, pos)
	return okL || meetsBox(t, &lb), okR || meetsBox(t, &rb)
}

// roundDown returns the largest float32 <= x.
func roundDown(x float64) float32 {
	f := float32(x)
	if float64(f) > x {
		f = math.Nextafter32(f, float32(math.Inf(-1)))
	}
	return f
}

// roundUp returns the smallest float32 >= x.
func roundUp(x float64) float32 {
	f := float32(x)
	if float64(f) < x {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// min32, max32, min64 and max64 pick with one comparison (the first
// argument on a tie), exactly like kd_min/kd_max in kernels/kdtree.cu, so
// that signed zeros come out the same on both executors (Go's built-in min
// and CUDA's fminf treat -0 and +0 differently).
func min32(a, b float32) float32 {
	if b < a {
		return b
	}
	return a
}

func max32(a, b float32) float32 {
	if b > a {
		return b
	}
	return a
}

func min64(a, b float64) float64 {
	if b < a {
		return b
	}
	return a
}

func max64(a, b float64) float64 {
	if b > a {
		return b
	}
	return a
}
