package kdtree

import (
	"math"

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
// IntersectBrute, with the triangle's geometric normal. A miss returns
// Hit{T: +Inf, Prim: NoHit} and false; so does a ray with a NaN component
// in Org or Dir or a zero Dir, at once. It does not allocate and is safe
// for concurrent use.
func (t *Tree) Intersect(r Ray) (Hit, bool) {
	h := t.trace(&r, false, nil, true)
	return h, h.Prim != NoHit
}

// IntersectStats is Intersect that also adds to *st the nodes it visited
// and the ray-triangle tests it ran.
func (t *Tree) IntersectStats(r Ray, st *RayStats) (Hit, bool) {
	h := t.trace(&r, false, st, false)
	return h, h.Prim != NoHit
}

// Occluded reports whether any triangle meets r within [r.TMin, r.TMax]
// (shadow rays); it stops at the first hit found.
func (t *Tree) Occluded(r Ray) bool {
	return t.trace(&r, true, nil, true).Prim != NoHit
}

// unusable reports whether r can hit nothing whatever the scene: a NaN in
// Org or Dir, or a zero Dir (the watertight test rejects every triangle
// for such a ray).
func unusable(r *Ray) bool {
	o, d := &r.Org, &r.Dir
	if o[0] != o[0] || o[1] != o[1] || o[2] != o[2] || d[0] != d[0] || d[1] != d[1] || d[2] != d[2] {
		return true
	}
	return d[0] == 0 && d[1] == 0 && d[2] == 0
}

// rayAxes is a ray's per-axis data for traversal, indexed by a node's axis
// (0..2; the fourth word is padding so that an index a&3 needs no bounds
// check).
type rayAxes struct {
	org, dir, inv [4]float32
	// slack is the part of a plane crossing's rounding slack that does not
	// depend on the crossing: traversalSlack·(mag+|org|)·|inv| (see
	// traceData.mag).
	slack [4]float32
	// wide bounds the whole rounding slack of any plane crossing on the
	// axis, slack·(2 + 2^-16): a split's |coordinate| is at most mag, so
	// |tp| ≤ (mag+|org|)·|inv| up to a few roundings and the crossing's
	// own part, traversalSlack·|tp|, is at most slack·(1 + 8ε). The walks
	// of finite rays widen every crossing by wide, a constant: a larger
	// slack only visits a node more, and the multiply-add per plane leaves
	// the step's chain of dependent operations.
	wide [4]float32
	// flip is all ones where Dir is negative, else zero: the child a ray
	// enters first along the axis is the below one XOR-swapped with the
	// above one by flip.
	flip [4]uint32
}

// finite reports whether every plane crossing of the ray and its slack are
// finite and not NaN: a Dir component that is neither zero nor so small that
// its inverse overflows, and origin and split magnitudes that keep
// (mag+|org|)·|inv| far from overflow (|tp| + slack ≤ 2^120). descendFinite
// needs it; other rays take descendSafe.
func (ax *rayAxes) finite() bool {
	const limit = float32(0x1p100)
	for a := 0; a < 3; a++ {
		if ax.dir[a] == 0 || !(abs32(ax.inv[a]) <= limit) || !(ax.slack[a] <= limit) {
			return false
		}
	}
	return true
}

// trace returns the closest hit of r with its normal, or with anyHit the
// first hit found with T, U, V and Prim set (no normal), or missHit(). With
// st non-nil it adds the nodes visited and triangles tested. It runs
// descendFinite where finite is true and the ray allows it, else
// descendSafe (which counts into st; the two visit the same nodes and
// return the same hit).
func (t *Tree) trace(r *Ray, anyHit bool, st *RayStats, finite bool) Hit {
	if len(t.Nodes) == 0 || unusable(r) {
		return missHit()
	}
	d := t.traceData()
	var ax rayAxes
	tmin, tmax, ok := ax.start(d, r)
	if !ok {
		return missHit()
	}
	pre := prepare(r)
	var h Hit
	if finite && ax.finite() {
		h = t.descendFinite(d, &ax, &pre, tmin, tmax, anyHit)
	} else {
		h = t.descendSafe(d, &ax, &pre, tmin, tmax, anyHit, st)
	}
	if !anyHit && h.Prim != NoHit {
		d.setNormal(&h)
	}
	return h
}

// setNormal sets h.N to the geometric normal of h's triangle (h a hit).
// Callers test anyHit and Prim themselves: kept out of line with the test
// inside, the call and the Hit's copies cost a tenth of a camera-ray batch.
func (d *traceData) setNormal(h *Hit) {
	v := &d.tris[h.Prim]
	h.N = geometricNormal(v[0], v[1], v[2])
}

// start fills ax for r (usable: no NaN, a non-zero Dir) and clips r's
// [max(TMin, 0), TMax] to the widened root box: the interval, and false
// when r misses the box.
func (ax *rayAxes) start(d *traceData, r *Ray) (tmin, tmax float32, ok bool) {
	tmin, tmax = max(r.TMin, 0), r.TMax
	for a := 0; a < 3; a++ {
		o, dir := r.Org[a], r.Dir[a]
		inv := 1 / dir
		ax.org[a], ax.dir[a], ax.inv[a] = o, dir, inv
		// Clip to the widened root box.
		lo, hi := d.lo[a], d.hi[a]
		if dir == 0 {
			if o < lo || o > hi {
				return 0, 0, false
			}
			continue
		}
		t0, t1 := (lo-o)*inv, (hi-o)*inv
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
	if !(tmin <= tmax) {
		return 0, 0, false
	}
	for a := 0; a < 3; a++ {
		ax.slack[a] = traversalSlack * (d.mag[a] + abs32(ax.org[a])) * abs32(ax.inv[a])
		ax.wide[a] = ax.slack[a] * (2 + 0x1p-16)
		ax.flip[a] = uint32(int32(math.Float32bits(ax.dir[a])) >> 31)
	}
	return tmin, tmax, true
}

// descendFinite traverses the tree front to back from the root with the
// ray's interval [tmin, tmax] in the root box, for a ray whose plane
// crossings are finite (rayAxes.finite). At an interior node the plane is
// crossed at tp, widened by the axis's bound on the rounding slack
// (rayAxes.wide) to [lo, hi]; the child the ray is in for t < tp (first:
// below for a positive Dir, above otherwise) holds [tmin, min(tmax, hi)],
// the other one [max(tmin, lo), tmax]. A child whose part is empty is not
// visited; when both are, the second is pushed. This is descendSafe's walk
// with no case for a zero Dir or a NaN crossing, no choice by the origin's
// side and intervals at least as wide (so the nodes it visits include
// descendSafe's, and the hit is the same). A node whose interval starts
// after the best hit so far is skipped.
func (t *Tree) descendFinite(d *traceData, ax *rayAxes, pre *rayPre, tmin, tmax float32, anyHit bool) Hit {
	var stack [MaxTreeDepth + 1]stackEntry
	nodes, refs, tris := t.Nodes, t.Refs, d.tris
	best := missHit()
	sp := 0
	node := uint32(0)
	for {
		if tmin <= best.T {
			n := nodes[node]
			w0, w1 := n.W0, n.W1
			for w1&3 != leafTag {
				a := w1 & 3
				tp := (math.Float32frombits(w0) - ax.org[a]) * ax.inv[a]
				lo, hi := tp-ax.wide[a], tp+ax.wide[a]
				below := node + 1
				swap := (below ^ w1>>2) & ax.flip[a]
				first, second := below^swap, w1>>2^swap
				switch {
				case lo > tmax:
					node = first
				case hi < tmin:
					node = second
				default:
					// min and max compile to MINSS without a branch; no
					// NaN reaches them here.
					stack[sp] = stackEntry{second, max(lo, tmin), tmax}
					sp++
					node = first
					tmax = min(hi, tmax)
				}
				n = nodes[node]
				w0, w1 = n.W0, n.W1
			}
			if cnt := w1 >> 2; cnt != 0 {
				if _, done, _ := testLeaf(refs[w0:w0+cnt], tris, pre, &best, anyHit, false); done {
					return best
				}
			}
		}
		if sp == 0 {
			return best
		}
		sp--
		e := stack[sp]
		node, tmin, tmax = e.node, e.tmin, e.tmax
	}
}

// descendSafe is descendFinite for any ray: it orders the children by the
// origin's side of the plane and handles a Dir component of zero and
// crossings that overflow or are NaN, visiting both children where the
// crossing cannot be placed.
func (t *Tree) descendSafe(d *traceData, ax *rayAxes, pre *rayPre, tmin, tmax float32, anyHit bool, st *RayStats) Hit {
	var stack [MaxTreeDepth + 1]stackEntry
	nodes, refs, tris := t.Nodes, t.Refs, d.tris
	best := missHit()
	var nNodes, nTris uint32
	sp := 0
	node := uint32(0)
	for {
		if tmin <= best.T {
			n := nodes[node]
			for n.W1&3 != leafTag {
				nNodes++
				a := n.W1 & 3
				// Order the children by the origin's side of the plane.
				s := math.Float32frombits(n.W0)
				o, dir := ax.org[a], ax.dir[a]
				near, far := node+1, n.W1>>2
				if o > s || (o == s && dir > 0) {
					near, far = far, near
				}
				switch tp := (s - o) * ax.inv[a]; {
				case dir == 0:
					// Parallel to the plane: the side of the origin, or
					// both when the ray runs (nearly) inside the plane.
					if abs32(o-s) <= traversalSlack*(abs32(o)+abs32(s)) {
						stack[sp] = stackEntry{far, tmin, tmax}
						sp++
					}
					node = near
				case (o < s) != (dir > 0) || o == s:
					// Moving away from the plane: the near child holds the
					// whole interval; the far one only what rounding may
					// put there when the origin is (nearly) on the plane.
					if reach := tp + (traversalSlack*abs32(tp) + ax.slack[a]); !(reach < tmin) { // NaN too
						stack[sp] = stackEntry{near, tmin, tmax}
						sp++
						node = far
						if reach < tmax {
							tmax = reach
						}
					} else {
						node = near
					}
				default:
					// Moving towards the plane, crossing it at tp.
					slack := traversalSlack*abs32(tp) + ax.slack[a]
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
						// lo and hi are not NaN here: plain compares.
						stack[sp] = stackEntry{far, tmin, tmax}
						if lo > tmin {
							stack[sp].tmin = lo
						}
						sp++
						node = near
						if hi < tmax {
							tmax = hi
						}
					}
				}
				n = nodes[node]
			}
			nNodes++
			if cnt := n.W1 >> 2; cnt != 0 {
				k, done, _ := testLeaf(refs[n.W0:n.W0+cnt], tris, pre, &best, anyHit, false)
				nTris += k
				if done {
					return finishStats(best, st, nNodes, nTris)
				}
			}
		}
		if sp == 0 {
			return finishStats(best, st, nNodes, nTris)
		}
		sp--
		e := stack[sp]
		node, tmin, tmax = e.node, e.tmin, e.tmax
	}
}

// testLeaf runs rayPre.test on the triangles of a leaf, its steps up to
// the sign test written out here (the same operations), keeping in *best
// the closest hit by Hit.closer. It returns how many triangles it tested
// and, with anyHit, whether it found a hit (it stops there). With
// stopAtZero it stops instead at the first triangle with an edge function
// of exactly 0, before computing the edges in float64, and reports that in
// stopped (that triangle not tested): the lanes' run does so, and leaves
// the leaf to leafThenPop.
func testLeaf(prims []uint32, tris []triVerts, pre *rayPre, best *Hit, anyHit, stopAtZero bool) (tested uint32, done, stopped bool) {
	kx, ky, kz := pre.kx, pre.ky, pre.kz
	for k, prim := range prims {
		v := &tris[prim]
		p0z, p1z, p2z := v[0][kz]-pre.oz, v[1][kz]-pre.oz, v[2][kz]-pre.oz
		p0x := v[0][kx] - pre.ox + float32(pre.sx*p0z)
		p0y := v[0][ky] - pre.oy + float32(pre.sy*p0z)
		p1x := v[1][kx] - pre.ox + float32(pre.sx*p1z)
		p1y := v[1][ky] - pre.oy + float32(pre.sy*p1z)
		p2x := v[2][kx] - pre.ox + float32(pre.sx*p2z)
		p2y := v[2][ky] - pre.oy + float32(pre.sy*p2z)
		e0 := float32(p1x*p2y) - float32(p1y*p2x)
		e1 := float32(p2x*p0y) - float32(p2y*p0x)
		e2 := float32(p0x*p1y) - float32(p0y*p1x)
		if e0 == 0 || e1 == 0 || e2 == 0 {
			if stopAtZero {
				return uint32(k), false, true
			}
			e0, e1, e2 = pre.edges64(v)
		}
		if mixedSigns(e0, e1, e2) {
			continue
		}
		if th, u, w, ok := pre.finish(e0, e1, e2, p0x, p0y, p1x, p1y, p2x, p2y, p0z, p1z, p2z, best.T); ok && best.closer(th, prim) {
			*best = Hit{T: th, U: u, V: w, Prim: prim}
			if anyHit {
				return uint32(k) + 1, true, false
			}
		}
	}
	return uint32(len(prims)), false, false
}

// finishStats adds the counts to st when it is non-nil and returns h.
func finishStats(h Hit, st *RayStats, nodes, tris uint32) Hit {
	if st != nil {
		st.Nodes += nodes
		st.Tris += tris
	}
	return h
}

// IntersectBrute is the oracle: the closest hit of r over every
// non-degenerate triangle of scene (scenes.Scene.Degenerate: the triangles a
// tree keeps), by the same watertight test, equal T broken by the smaller
// index, with the triangle's geometric normal. O(len(scene.Tris)) per ray.
// A miss returns Hit{T: +Inf, Prim: NoHit} and false.
func IntersectBrute(scene *scenes.Scene, r Ray) (Hit, bool) {
	best := missHit()
	pre := prepare(&r)
	for i := range scene.Tris {
		v := vertsOf(scene, i)
		if th, u, w, hit := pre.test(&v, best.T); hit && best.closer(th, uint32(i)) && !scene.Degenerate(i) {
			best = Hit{T: th, U: u, V: w, Prim: uint32(i)}
		}
	}
	if best.Prim == NoHit {
		return best, false
	}
	tri := scene.Tris[best.Prim]
	best.N = geometricNormal(scene.Verts[tri[0]], scene.Verts[tri[1]], scene.Verts[tri[2]])
	return best, true
}
