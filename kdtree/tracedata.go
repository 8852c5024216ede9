package kdtree

// traceData is what traversal reads besides the nodes and references,
// derived from the tree once, on its first ray, and then shared by every
// goroutine (see Tree.traceData).
type traceData struct {
	// tris holds every triangle of the scene as triVerts, in Scene.Tris
	// order: 36 bytes per triangle (TraceBytesPerTriangle), the one copy
	// traversal reads instead of the index and three vertices.
	tris []triVerts
	// lo and hi are the root box widened by traversalSlack per axis (the
	// fourth word unused): a ray outside them misses every triangle.
	lo, hi [4]float32
	// mag is per axis the largest |coordinate| of the root box and of every
	// split plane on that axis: it bounds |split| in a plane crossing's
	// rounding slack, so that the part of the slack that does not depend
	// on t is computed once per ray (see traverse).
	mag [4]float32
}

// TraceBytesPerTriangle is the memory traversal adds to a tree per
// triangle of its scene: the triVerts copy, made on the first ray.
const TraceBytesPerTriangle = 36

// traceData returns the tree's traceData, making it on first use. Two
// goroutines may both make it; one copy wins and the other is dropped.
func (t *Tree) traceData() *traceData {
	if d := t.tdata.Load(); d != nil {
		return d
	}
	d := makeTraceData(t)
	if t.tdata.CompareAndSwap(nil, d) {
		return d
	}
	return t.tdata.Load()
}

func makeTraceData(t *Tree) *traceData {
	d := &traceData{}
	if s := t.Scene; s != nil {
		d.tris = make([]triVerts, len(s.Tris))
		for i := range s.Tris {
			d.tris[i] = vertsOf(s, i)
		}
	}
	b := t.Bounds
	for a := 0; a < 3; a++ {
		tol := traversalSlack * (abs32(b.Min[a]) + abs32(b.Max[a]))
		d.lo[a], d.hi[a] = b.Min[a]-tol, b.Max[a]+tol
		d.mag[a] = max(abs32(b.Min[a]), abs32(b.Max[a]))
	}
	for _, n := range t.Nodes {
		if !n.IsLeaf() {
			a := n.Axis()
			d.mag[a] = max(d.mag[a], abs32(n.Split()))
		}
	}
	return d
}

// traceBytes is Stats.TraceBytes: the size of the traceData triangle copy,
// whether or not a ray has made it yet.
func (t *Tree) traceBytes() uint64 {
	if t.Scene == nil {
		return 0
	}
	return uint64(len(t.Scene.Tris)) * TraceBytesPerTriangle
}
