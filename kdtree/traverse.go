package kdtree

import (
	"github.com/go-gl/mathgl/mgl32"
	"github.com/kdbuild/kdbuild/scenes"
)

// traversalSlack widens every ray-interval bound the traversal computes (the
// root box slabs and each split plane's crossing) by this fraction of the
// magnitudes involved, so that rounding in those float32 computations never
// skips a node that holds the closest hit. Visiting a node too many only
// costs time: the hit found is still the one IntersectBrute finds, since
// every triangle is tested with the caller's own TMin and TMax.
const traversalSlack = float32(0x1p-18)

// stackEntry is a node left for later with its ray interval.
type stackEntry struct {
	node       uint32
	tmin, tmax float32
}

// Intersect returns the closest hit of r with the tree's triangles: the
// smallest T in [r.TMin, r.TMax] of any triangle the watertight test
// accepts, and on equal T the smallest triangle index: the same hit as
// IntersectBrute. It does not allocate and is safe for concurrent use.
func (t *Tree) Intersect(r Ray) (Hit, bool) {
	return t.trace(&r, false)
}

// Occluded reports whether any triangle meets r within [r.TMin, r.TMax]
// (shadow rays); it stops at the first hit found.
func (t *Tree) Occluded(r Ray) bool {
	_, ok := t.trace(&r, true)
	return ok
}

// trace walks the tree front to back with a fixed stack: at an interior node
// the child on the origin's side is visited first, the other one is pushed
// with the part of the ray interval beyond the split plane; a node whose
// interval starts after the best hit so far is skipped.
func (t *Tree) trace(r *Ray, anyHit bool) (Hit, bool) {
	var best Hit
	found := false
	if len(t.Nodes) == 0 || t.Scene == nil {
		return best, false
	}
	pre := prepare(r)
	// Per axis: 1/Dir, and the part of a plane crossing's rounding slack
	// that does not depend on the plane.
	var inv, absInv, orgSlack mgl32.Vec3
	for a := 0; a < 3; a++ {
		inv[a] = 1 / r.Dir[a]
		absInv[a] = abs32(inv[a])
		orgSlack[a] = abs32(r.Org[a]) * absInv[a]
	}
	tmin, tmax, ok := clipBox(t.Bounds, r, inv)
	if !ok {
		return best, false
	}
	var stack [MaxTreeDepth + 1]stackEntry
	nodes, refs := t.Nodes, t.Refs
	soup := t.triangles()
	sp := 0
	node := uint32(0)
	for {
		if !found || tmin <= best.T {
			n := nodes[node]
			if !n.IsLeaf() {
				// Order the children by the origin's side of the plane.
				a, s := n.Axis(), n.Split()
				o, d := r.Org[a], r.Dir[a]
				near, far := node+1, n.AboveChild()
				if o > s || (o == s && d > 0) {
					near, far = far, near
				}
				if d == 0 {
					// Parallel to the plane: the side of the origin, or
					// both when the ray runs (nearly) inside the plane.
					if abs32(o-s) > traversalSlack*(abs32(o)+abs32(s)) {
						node = near
						continue
					}
					stack[sp] = stackEntry{far, tmin, tmax}
					sp++
					node = near
					continue
				}
				tp := (s - o) * inv[a]
				slack := traversalSlack * (abs32(tp) + abs32(s)*absInv[a] + orgSlack[a])
				if (o < s) != (d > 0) || o == s {
					// Moving away from the plane: the near child holds the
					// whole interval; the far one only what rounding may
					// put there when the origin is (nearly) on the plane.
					if reach := tp + slack; !(reach < tmin) { // NaN too
						stack[sp] = stackEntry{near, tmin, tmax}
						sp++
						node, tmax = far, min(tmax, reach)
					} else {
						node = near
					}
					continue
				}
				// Moving towards the plane, crossing it at tp.
				lo, hi := tp-slack, tp+slack
				switch {
				case lo != lo || hi != hi: // NaN: a direction too small to invert
					stack[sp] = stackEntry{far, tmin, tmax}
					sp++
					node = near
				case lo > tmax:
					node = near
				case hi < tmin:
					node = far
				default:
					stack[sp] = stackEntry{far, max(tmin, lo), tmax}
					sp++
					node, tmax = near, min(tmax, hi)
				}
				continue
			}
			first, cnt := n.FirstRef(), n.RefCount()
			for _, prim := range refs[first : first+cnt] {
				var th, u, v float32
				var hit bool
				if soup != nil {
					tri := &soup[prim]
					th, u, v, hit = pre.triangle(tri[0], tri[1], tri[2])
				} else {
					tri := t.Scene.Tris[prim]
					th, u, v, hit = pre.triangle(t.Scene.Verts[tri[0]], t.Scene.Verts[tri[1]], t.Scene.Verts[tri[2]])
				}
				if hit && (!found || best.closer(th, prim)) {
					best, found = Hit{T: th, U: u, V: v, Prim: prim}, true
					if anyHit {
						return best, true
					}
				}
			}
		}
		if sp == 0 {
			return best, found
		}
		sp--
		e := stack[sp]
		node, tmin, tmax = e.node, e.tmin, e.tmax
	}
}

// clipBox returns the part [tmin, tmax] of the ray's interval (TMin raised
// to 0: the triangle test never reports t <= 0) inside box b, widened by
// traversalSlack, and false when the ray misses the widened box.
func clipBox(b scenes.Bounds, r *Ray, inv mgl32.Vec3) (tmin, tmax float32, ok bool) {
	tmin, tmax = max(r.TMin, 0), r.TMax
	for a := 0; a < 3; a++ {
		tol := traversalSlack * (abs32(b.Min[a]) + abs32(b.Max[a]))
		lo, hi := b.Min[a]-tol, b.Max[a]+tol
		o := r.Org[a]
		if r.Dir[a] == 0 {
			if o < lo || o > hi {
				return 0, 0, false
			}
			continue
		}
		t0, t1 := (lo-o)*inv[a], (hi-o)*inv[a]
		if t0 > t1 {
			t0, t1 = t1, t0
		}
		t0 -= traversalSlack * abs32(t0)
		t1 += traversalSlack * abs32(t1)
		if t0 > tmin { // false for NaN
			tmin = t0
		}
		if t1 < tmax {
			tmax = t1
		}
	}
	return tmin, tmax, tmin <= tmax
}

// IntersectBrute is the oracle: the closest hit of r over every
// non-degenerate triangle of scene (scenes.Scene.Degenerate: the triangles a
// tree keeps), by the same watertight test, equal T broken by the smaller
// index. O(len(scene.Tris)) per ray.
func IntersectBrute(scene *scenes.Scene, r Ray) (Hit, bool) {
	var best Hit
	found := false
	pre := prepare(&r)
	for i, tri := range scene.Tris {
		th, u, v, hit := pre.triangle(scene.Verts[tri[0]], scene.Verts[tri[1]], scene.Verts[tri[2]])
		if hit && (!found || best.closer(th, uint32(i))) && !scene.Degenerate(i) {
			best, found = Hit{T: th, U: u, V: v, Prim: uint32(i)}, true
		}
	}
	return best, found
}
