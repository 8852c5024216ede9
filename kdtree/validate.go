package kdtree

import (
	"fmt"
	"math"
	"sort"

	"github.com/go-gl/mathgl/mgl32"
)

// validateTol is the tolerance of Validate's geometric checks, as a fraction
// of the scene's scale (the largest |coordinate| or extent of the root box):
// a leaf reference must touch the leaf box grown by it, and a triangle must
// be referenced by every leaf whose box, shrunk by it, it enters. It forgives
// the builder's float32 clipping (a few ulps) and nothing more.
const validateTol = 0x1p-16

// Validate checks the invariants of a built tree and returns the first one
// broken, naming the node and both values:
//
//   - the scene is set, the root box contains every kept (non-degenerate)
//     triangle, an empty tree has no kept triangles;
//   - nodes are in depth-first order: the below child of node i is i+1 and
//     its above child follows the below subtree; every node is reached once
//     (no cycle, no orphan); depth at most MaxTreeDepth;
//   - every split is finite and inside its node's box (child boxes are the
//     parent cut at the split, so they nest by construction);
//   - leaf reference ranges lie in Refs, cover it exactly once, hold
//     ascending distinct indices of non-degenerate triangles (a degenerate
//     one could still be reported hit by rounding, and IntersectBrute, the
//     oracle, skips them);
//   - every leaf reference's triangle touches the leaf box (closed, grown by
//     validateTol): touching only the boundary passes;
//   - every kept triangle is in at least one leaf, and in every leaf whose
//     box, shrunk by validateTol, it enters (the condition that traversal
//     needs);
//   - the shape statistics given to NewTree, when set (Nodes != 0), agree
//     with ComputeShapeStats.
//
// Validate costs about a tree build: use it in tests and debugging.
func (t *Tree) Validate() error {
	if t.Scene == nil {
		return fmt.Errorf("kdtree: tree without a scene")
	}
	s := t.Scene
	kept := make([]bool, len(s.Tris))
	nKept := 0
	for i := range s.Tris {
		tri := s.Tris[i]
		if int(tri[0]) >= len(s.Verts) || int(tri[1]) >= len(s.Verts) || int(tri[2]) >= len(s.Verts) {
			return fmt.Errorf("kdtree: triangle %d index %v out of range (%d vertices)", i, tri, len(s.Verts))
		}
		if !s.Degenerate(i) {
			kept[i] = true
			nKept++
		}
	}
	if len(t.Nodes) == 0 {
		if nKept != 0 || len(t.Refs) != 0 {
			return fmt.Errorf("kdtree: no nodes but %d kept triangles and %d references", nKept, len(t.Refs))
		}
		return nil
	}
	if len(t.Nodes) >= MaxChildIndex {
		return fmt.Errorf("kdtree: %d nodes, limit %d", len(t.Nodes), MaxChildIndex)
	}
	root := boxOf(t.Bounds)
	for a := 0; a < 3; a++ {
		if !(root.min[a] <= root.max[a]) || math.IsInf(root.min[a], 0) || math.IsInf(root.max[a], 0) {
			return fmt.Errorf("kdtree: root box %v..%v empty or not finite", t.Bounds.Min, t.Bounds.Max)
		}
	}
	for i, ok := range kept {
		if !ok {
			continue
		}
		for _, v := range s.Tris[i] {
			p := s.Verts[v]
			for a := 0; a < 3; a++ {
				if x := float64(p[a]); x < root.min[a] || x > root.max[a] {
					return fmt.Errorf("kdtree: triangle %d vertex %v outside root box %v..%v", i, p, t.Bounds.Min, t.Bounds.Max)
				}
			}
		}
	}
	tol := 0.0
	for a := 0; a < 3; a++ {
		tol = max(tol, math.Abs(root.min[a]), math.Abs(root.max[a]), root.max[a]-root.min[a])
	}
	tol *= validateTol

	if err := t.validateStructure(kept, tol); err != nil {
		return err
	}
	if err := t.validateComplete(kept, tol); err != nil {
		return err
	}
	if t.stats.Nodes != 0 {
		want := ComputeShapeStats(t)
		got := t.stats
		switch {
		case got.Nodes != want.Nodes:
			return fmt.Errorf("kdtree: Stats.Nodes %d, tree has %d", got.Nodes, want.Nodes)
		case got.Leaves != want.Leaves:
			return fmt.Errorf("kdtree: Stats.Leaves %d, tree has %d", got.Leaves, want.Leaves)
		case got.EmptyLeaves != want.EmptyLeaves:
			return fmt.Errorf("kdtree: Stats.EmptyLeaves %d, tree has %d", got.EmptyLeaves, want.EmptyLeaves)
		case got.MaxDepth != want.MaxDepth:
			return fmt.Errorf("kdtree: Stats.MaxDepth %d, tree has %d", got.MaxDepth, want.MaxDepth)
		case got.References != want.References:
			return fmt.Errorf("kdtree: Stats.References %d, tree has %d", got.References, want.References)
		case math.Abs(got.SAHCost-want.SAHCost) > 1e-6*math.Abs(want.SAHCost):
			return fmt.Errorf("kdtree: Stats.SAHCost %v, tree has %v", got.SAHCost, want.SAHCost)
		}
	}
	return nil
}

// validateStructure walks the nodes in preorder and checks layout, splits,
// leaf ranges and that every reference touches its leaf.
func (t *Tree) validateStructure(kept []bool, tol float64) error {
	s := t.Scene
	type item struct {
		i     uint32
		depth int
		box   boxF64
	}
	covered := make([]bool, len(t.Refs))
	referenced := make([]bool, len(s.Tris))
	stack := []item{{0, 0, boxOf(t.Bounds)}}
	next := uint32(0) // preorder position the next visited node must have
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.i != next {
			return fmt.Errorf("kdtree: node %d found at depth-first position %d (cycle, shared or misplaced subtree)", it.i, next)
		}
		next++
		if it.depth > MaxTreeDepth {
			return fmt.Errorf("kdtree: node %d depth %d > MaxTreeDepth %d", it.i, it.depth, MaxTreeDepth)
		}
		n := t.Nodes[it.i]
		if !n.IsLeaf() {
			a, sp := n.Axis(), n.Split()
			x := float64(sp)
			if math.IsNaN(x) || math.IsInf(x, 0) || x < it.box.min[a] || x > it.box.max[a] {
				return fmt.Errorf("kdtree: node %d split %v on axis %d outside its box [%v, %v]", it.i, sp, a, it.box.min[a], it.box.max[a])
			}
			above := n.AboveChild()
			if above <= it.i+1 || int(above) >= len(t.Nodes) {
				return fmt.Errorf("kdtree: node %d above child %d not in [%d, %d)", it.i, above, it.i+2, len(t.Nodes))
			}
			if int(it.i)+1 >= len(t.Nodes) {
				return fmt.Errorf("kdtree: node %d below child %d not in [0, %d)", it.i, it.i+1, len(t.Nodes))
			}
			below, abv := it.box, it.box
			below.max[a], abv.min[a] = x, x
			stack = append(stack, item{above, it.depth + 1, abv}, item{it.i + 1, it.depth + 1, below})
			continue
		}
		first, cnt := uint64(n.FirstRef()), uint64(n.RefCount())
		if cnt == 0 {
			continue
		}
		if first+cnt > uint64(len(t.Refs)) {
			return fmt.Errorf("kdtree: leaf %d references [%d, %d) beyond len(Refs) %d", it.i, first, first+cnt, len(t.Refs))
		}
		grown := it.box
		for a := 0; a < 3; a++ {
			grown.min[a] -= tol
			grown.max[a] += tol
		}
		for k := first; k < first+cnt; k++ {
			if covered[k] {
				return fmt.Errorf("kdtree: leaf %d reference slot %d shared with another leaf", it.i, k)
			}
			covered[k] = true
			prim := t.Refs[k]
			if int(prim) >= len(s.Tris) {
				return fmt.Errorf("kdtree: leaf %d reference %d is triangle %d, scene has %d", it.i, k, prim, len(s.Tris))
			}
			if k > first && t.Refs[k-1] >= prim {
				return fmt.Errorf("kdtree: leaf %d references not ascending: %d then %d", it.i, t.Refs[k-1], prim)
			}
			if !kept[prim] {
				return fmt.Errorf("kdtree: leaf %d references degenerate triangle %d (degenerate triangles are dropped)", it.i, prim)
			}
			referenced[prim] = true
			tri := s.Tris[prim]
			if !touchesBox(s.Verts[tri[0]], s.Verts[tri[1]], s.Verts[tri[2]], grown) {
				return fmt.Errorf("kdtree: leaf %d box %v..%v does not touch its triangle %d %v %v %v",
					it.i, it.box.min, it.box.max, prim, s.Verts[tri[0]], s.Verts[tri[1]], s.Verts[tri[2]])
			}
		}
	}
	if int(next) != len(t.Nodes) {
		return fmt.Errorf("kdtree: %d nodes reached from the root, len(Nodes) %d", next, len(t.Nodes))
	}
	for k, c := range covered {
		if !c {
			return fmt.Errorf("kdtree: reference slot %d (triangle %d) in no leaf; len(Refs) %d", k, t.Refs[k], len(t.Refs))
		}
	}
	for i, ok := range kept {
		if ok && !referenced[i] {
			return fmt.Errorf("kdtree: kept triangle %d in no leaf", i)
		}
	}
	return nil
}

// validateComplete pushes every kept triangle down the tree into each child
// whose box, shrunk by tol, it enters, and checks that each leaf reached
// references it. Run after validateStructure (layout known good).
func (t *Tree) validateComplete(kept []bool, tol float64) error {
	s := t.Scene
	shrink := func(b boxF64) boxF64 {
		for a := 0; a < 3; a++ {
			b.min[a] += tol
			b.max[a] -= tol
		}
		return b
	}
	var rec func(i uint32, box boxF64, list []uint32) error
	rec = func(i uint32, box boxF64, list []uint32) error {
		n := t.Nodes[i]
		if n.IsLeaf() {
			refs := t.Refs[n.FirstRef() : n.FirstRef()+n.RefCount()]
			for _, prim := range list {
				k := sort.Search(len(refs), func(j int) bool { return refs[j] >= prim })
				if k == len(refs) || refs[k] != prim {
					tri := s.Tris[prim]
					return fmt.Errorf("kdtree: leaf %d box %v..%v lacks triangle %d %v %v %v, which enters it",
						i, box.min, box.max, prim, s.Verts[tri[0]], s.Verts[tri[1]], s.Verts[tri[2]])
				}
			}
			return nil
		}
		a, x := n.Axis(), float64(n.Split())
		below, above := box, box
		below.max[a], above.min[a] = x, x
		// Every triangle of list meets the node's shrunk interior; one
		// wholly on one side of the split (beyond tol) meets that child's
		// and not the other's. Only the rest need clipping.
		sbelow, sabove := shrink(below), shrink(above)
		var lb, la []uint32
		for _, prim := range list {
			tri := s.Tris[prim]
			p0, p1, p2 := s.Verts[tri[0]], s.Verts[tri[1]], s.Verts[tri[2]]
			tb := triangleBox(p0, p1, p2)
			switch {
			case tb.max[a] < x-tol:
				lb = append(lb, prim)
			case tb.min[a] > x+tol:
				la = append(la, prim)
			case tb.min[a] >= x-tol && tb.max[a] <= x+tol:
				// Within tol of the plane: in neither shrunk child.
			default:
				if meetsInterior(p0, p1, p2, sbelow) {
					lb = append(lb, prim)
				}
				if meetsInterior(p0, p1, p2, sabove) {
					la = append(la, prim)
				}
			}
		}
		if err := rec(i+1, below, lb); err != nil {
			return err
		}
		return rec(n.AboveChild(), above, la)
	}
	sroot := shrink(boxOf(t.Bounds))
	var all []uint32
	for i, ok := range kept {
		tri := s.Tris[i]
		if ok && meetsInterior(s.Verts[tri[0]], s.Verts[tri[1]], s.Verts[tri[2]], sroot) {
			all = append(all, uint32(i))
		}
	}
	return rec(0, boxOf(t.Bounds), all)
}

// polygon is a convex polygon in float64: a triangle clipped by at most six
// axis-aligned planes has at most 9 vertices.
type polygon struct {
	n int
	p [9][3]float64
}

func trianglePolygon(a, b, c mgl32.Vec3) polygon {
	var q polygon
	q.n = 3
	for k := 0; k < 3; k++ {
		q.p[0][k], q.p[1][k], q.p[2][k] = float64(a[k]), float64(b[k]), float64(c[k])
	}
	return q
}

// clip returns the part of q in the closed half-space p[axis] >= v (keepAbove)
// or p[axis] <= v. New vertices get p[axis] = v exactly; the others are
// interpolated in float64.
func (q *polygon) clip(axis int, v float64, keepAbove bool) polygon {
	var out polygon
	in := func(p *[3]float64) bool {
		if keepAbove {
			return p[axis] >= v
		}
		return p[axis] <= v
	}
	for i := 0; i < q.n; i++ {
		cur, nxt := &q.p[i], &q.p[(i+1)%q.n]
		cin, nin := in(cur), in(nxt)
		if cin {
			out.p[out.n] = *cur
			out.n++
		}
		if cin != nin && cur[axis] != v && nxt[axis] != v {
			t := (v - cur[axis]) / (nxt[axis] - cur[axis])
			var x [3]float64
			for k := 0; k < 3; k++ {
				x[k] = cur[k] + t*(nxt[k]-cur[k])
			}
			x[axis] = v
			out.p[out.n] = x
			out.n++
		}
	}
	return out
}

// clipToBox returns q ∩ b (b closed).
func (q polygon) clipToBox(b boxF64) polygon {
	for a := 0; a < 3 && q.n > 0; a++ {
		q = q.clip(a, b.min[a], true)
		if q.n > 0 {
			q = q.clip(a, b.max[a], false)
		}
	}
	return q
}

// triangleBox returns the bounding box of a triangle in float64.
func triangleBox(a, b, c mgl32.Vec3) boxF64 {
	var r boxF64
	for k := 0; k < 3; k++ {
		r.min[k] = float64(min(a[k], b[k], c[k]))
		r.max[k] = float64(max(a[k], b[k], c[k]))
	}
	return r
}

// touchesBox reports whether triangle abc has a point in the closed box b.
func touchesBox(a, b, c mgl32.Vec3, box boxF64) bool {
	tb := triangleBox(a, b, c)
	inside := true
	for k := 0; k < 3; k++ {
		if tb.max[k] < box.min[k] || tb.min[k] > box.max[k] {
			return false
		}
		if tb.min[k] < box.min[k] || tb.max[k] > box.max[k] {
			inside = false
		}
	}
	if inside {
		return true
	}
	return trianglePolygon(a, b, c).clipToBox(box).n > 0
}

// meetsInterior reports whether triangle abc has a point in the open box b
// (a triangle that only touches b's boundary does not). The part of the
// triangle in the closed box is convex, and a convex set inside the boundary
// of a box lies in one face: so it meets the interior unless every vertex of
// that part lies on one common face plane.
func meetsInterior(a, b, c mgl32.Vec3, box boxF64) bool {
	tb := triangleBox(a, b, c)
	strict := true
	for k := 0; k < 3; k++ {
		if tb.max[k] <= box.min[k] || tb.min[k] >= box.max[k] {
			return false
		}
		if tb.min[k] <= box.min[k] || tb.max[k] >= box.max[k] {
			strict = false
		}
	}
	if strict {
		return true
	}
	q := trianglePolygon(a, b, c).clipToBox(box)
	if q.n == 0 {
		return false
	}
	for k := 0; k < 3; k++ {
		for _, v := range [2]float64{box.min[k], box.max[k]} {
			onFace := true
			for i := 0; i < q.n; i++ {
				if q.p[i][k] != v {
					onFace = false
					break
				}
			}
			if onFace {
				return false
			}
		}
	}
	return true
}
