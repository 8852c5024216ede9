package kdtree

import (
	"fmt"
	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"math"
	"sync"

	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// The split of BuildParts: the top levels of the tree, decided the way the
// builder's large phase decides a node (empty space cut off first, else
// the binned SAH plane over the node's tight bounds, straddling triangles
// clipped to each child), applied to the biggest node first until every
// node fits the budget and there are enough of them. The top tree's leaves
// that hold references are the parts; each is built on its own by Build.
//
// It uses the builder's Go reference helpers of clip.go, bins.go and
// sah.go (clipSplit, clipToBox, binGeom, hist, bestBinned) read-only, and
// nothing of a build's state.

// splitRef is a reference of the split: a triangle of the scene and its
// box clipped to the node holding it.
type splitRef struct {
	tri uint32
	box refbuild.AABB
}

// partTopNode is a node of the split's top tree. An interior node has both
// children (indices into partTop.nodes); a leaf holds refs (a part) or
// none (empty space cut off).
type partTopNode struct {
	box      refbuild.AABB
	depth    int
	budget   uint32 // the node's duplication budget in the whole build
	interior bool
	axis     int
	pos      float32
	below    int
	above    int

	refs   []splitRef    // a leaf's references; nil once its part is built
	tight  refbuild.AABB // tight bounds of refs (the node's content)
	final  bool          // no plane separates refs: the node is not split again
	queued bool          // handed out to be built
	part   *partResult
}

// partTop is the split's top tree; node 0 is the root.
type partTop struct {
	nodes []partTopNode
	scene *scenes.Scene
}

// triangle returns the vertices of scene triangle i.
func (t *partTop) triangle(i uint32) refbuild.Triangle {
	v, f := t.scene.Verts, &t.scene.Tris[i]
	return refbuild.Triangle{[3]float32(v[f[0]]), [3]float32(v[f[1]]), [3]float32(v[f[2]])}
}

// splitChunk is the number of references a worker takes at a time.
const splitChunk = 1 << 14

// newPartTop returns the top tree of scene's kept triangles (finite
// vertices, not degenerate): a root leaf holding them all, with its box the
// triangles' tight bounds, and the number of triangles dropped; a nil tree
// when none is kept. The error names a triangle with a vertex index out of
// range. It makes one pass over the triangles on the workers, allocating
// only the references.
func newPartTop(scene *scenes.Scene, workers int) (t *partTop, dropped int, err error) {
	nv := uint32(len(scene.Verts))
	for i, tri := range scene.Tris {
		if tri[0] >= nv || tri[1] >= nv || tri[2] >= nv {
			return nil, 0, fmt.Errorf("kdtree: triangle %d has vertex index %v out of range (%d vertices)", i, tri, nv)
		}
	}
	t = &partTop{scene: scene}
	n := len(scene.Tris)
	nc := (n + splitChunk - 1) / splitChunk
	refs := make([]splitRef, n)
	kept := make([]int, nc) // references written at the start of each chunk
	exec.ParallelFor(workers, nc, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			k := c * splitChunk
			for i := k; i < min((c+1)*splitChunk, n); i++ {
				tri := t.triangle(uint32(i))
				if finiteTriangle(&tri) && !scene.Degenerate(i) {
					refs[k] = splitRef{tri: uint32(i), box: tri.Bounds()}
					k++
				}
			}
			kept[c] = k - c*splitChunk
		}
	})
	// Close the gaps of dropped triangles (chunks move down, in order).
	w := 0
	for c := 0; c < nc; c++ {
		if src := c * splitChunk; w != src {
			copy(refs[w:], refs[src:src+kept[c]])
		}
		w += kept[c]
	}
	refs = refs[:w:w]
	dropped = n - len(refs)
	if len(refs) == 0 {
		return nil, dropped, nil
	}
	root := refsBounds(refs, workers)
	refbuild.CanonZero(&root)
	t.nodes = []partTopNode{{box: root, refs: refs, tight: root}}
	return t, dropped, nil
}

// refsBounds returns the union of the references' boxes.
func refsBounds(refs []splitRef, workers int) refbuild.AABB {
	var mu sync.Mutex
	t := refbuild.EmptyBox()
	exec.ParallelFor(workers, len(refs), 1<<14, func(lo, hi int) {
		p := refbuild.EmptyBox()
		for i := lo; i < hi; i++ {
			p.Union(&refs[i].box)
		}
		mu.Lock()
		t.Union(&p)
		mu.Unlock()
	})
	return t
}

// splitPlane chooses the plane of top node n: the builder's empty-space
// cut (refbuild.EmptyCut), else the cheapest binned SAH plane (taken even
// when a leaf would be cheaper: the node must be divided).
// ok is false when no plane lies strictly inside the node's box.
func (t *partTop) splitPlane(n *partTopNode, p *refbuild.SAHParams, bins, workers int) (axis int, pos float32, ok bool) {
	tb := n.tight
	refbuild.CanonZero(&tb)
	if axis, pos, ok := refbuild.EmptyCut(&n.box, &tb); ok {
		return axis, pos, true
	}
	var geo [3]refbuild.BinGeom
	for a := 0; a < 3; a++ {
		geo[a] = refbuild.NewBinGeom(tb.Lo[a], tb.Hi[a], bins)
	}
	h := refbuild.NewHist(bins)
	var mu sync.Mutex
	exec.ParallelFor(workers, len(n.refs), 1<<14, func(lo, hi int) {
		part := refbuild.NewHist(bins)
		for i := lo; i < hi; i++ {
			bx := &n.refs[i].box
			for a := 0; a < 3; a++ {
				part.CountBox(a, geo[a].Bin(bx.Lo[a]), geo[a].Bin(bx.Hi[a]))
			}
		}
		mu.Lock()
		h.Add(part)
		mu.Unlock()
	})
	return refbuild.BestBinned(p, &n.box, uint32(len(n.refs)), h, &geo).Split()
}

// divide splits leaf i of the top tree at (axis, pos): references that
// straddle the plane are clipped to each child (ClipSplit, as the builder
// clips them), each child gets its references in the parent's order and
// their tight bounds. It reports false, changing nothing, when both
// children would hold every reference of the parent (no progress).
//
// It makes two passes over the references on the workers: the first
// counts each chunk's references per side and clips its straddlers (kept
// per chunk: only they allocate), the second writes the children's
// references and their bounds.
func (t *partTop) divide(i, axis int, pos float32, workers int) bool {
	ch, ok := t.cut(&t.nodes[i], axis, pos, workers)
	if ok {
		t.install(i, axis, pos, ch)
	}
	return ok
}

// cut returns the children of leaf n cut at (axis, pos) (divide), ok false
// when both would hold every reference of n. It reads n and the scene and
// changes nothing.
func (t *partTop) cut(n *partTopNode, axis int, pos float32, workers int) (ch [2]partTopNode, ok bool) {
	refs := n.refs
	nc := (len(refs) + splitChunk - 1) / splitChunk
	type clip struct {
		l, r     refbuild.AABB
		okL, okR bool
	}
	type chunk struct {
		nl, nr         int
		clips          []clip // the chunk's straddlers, in order
		tightL, tightR refbuild.AABB
	}
	cs := make([]chunk, nc)
	exec.ParallelFor(workers, nc, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			ch := &cs[c]
			for k := c * splitChunk; k < min((c+1)*splitChunk, len(refs)); k++ {
				r := &refs[k]
				left, right := sides(&r.box, axis, pos)
				if left && right {
					tri := t.triangle(r.tri)
					var cl clip
					cl.l, cl.r, cl.okL, cl.okR = refbuild.ClipSplit(&tri, &n.box, &r.box, axis, pos)
					if !cl.okL && !cl.okR {
						cl.l, cl.r = r.box, r.box
						cl.l.Hi[axis], cl.r.Lo[axis] = pos, pos
						cl.okL, cl.okR = true, true
					}
					left, right = cl.okL, cl.okR
					ch.clips = append(ch.clips, cl)
				}
				if left {
					ch.nl++
				}
				if right {
					ch.nr++
				}
			}
		}
	})
	var nl, nr int
	for c := range cs {
		nl, nr = nl+cs[c].nl, nr+cs[c].nr
	}
	if nl == len(refs) && nr == len(refs) {
		return ch, false
	}
	l, r := make([]splitRef, nl), make([]splitRef, nr)
	offL, offR := make([]int, nc), make([]int, nc)
	for c := 1; c < nc; c++ {
		offL[c], offR[c] = offL[c-1]+cs[c-1].nl, offR[c-1]+cs[c-1].nr
	}
	exec.ParallelFor(workers, nc, 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			ch := &cs[c]
			kl, kr, s := offL[c], offR[c], 0
			tl, tr := refbuild.EmptyBox(), refbuild.EmptyBox()
			for k := c * splitChunk; k < min((c+1)*splitChunk, len(refs)); k++ {
				ref := &refs[k]
				left, right := sides(&ref.box, axis, pos)
				bl, br := &ref.box, &ref.box
				if left && right {
					cl := &ch.clips[s]
					s++
					left, right, bl, br = cl.okL, cl.okR, &cl.l, &cl.r
				}
				if left {
					l[kl] = splitRef{ref.tri, *bl}
					tl.Union(bl)
					kl++
				}
				if right {
					r[kr] = splitRef{ref.tri, *br}
					tr.Union(br)
					kr++
				}
			}
			ch.tightL, ch.tightR, ch.clips = tl, tr, nil
		}
	})
	tl, tr := refbuild.EmptyBox(), refbuild.EmptyBox()
	for c := range cs {
		tl.Union(&cs[c].tightL)
		tr.Union(&cs[c].tightR)
	}
	lb, rb := refbuild.ChildBoxes(n.box, axis, pos)
	child := func(box refbuild.AABB, refs []splitRef, tight refbuild.AABB) partTopNode {
		if len(refs) == 0 {
			refs = nil
		}
		return partTopNode{box: box, depth: n.depth + 1, refs: refs, tight: tight,
			budget: refbuild.ChildBudget(n.budget, uint32(len(refs)), uint32(len(l)+len(r)))}
	}
	return [2]partTopNode{child(lb, l, tl), child(rb, r, tr)}, true
}

// install makes leaf i an interior node cut at (axis, pos) with children
// ch (below, above).
func (t *partTop) install(i, axis int, pos float32, ch [2]partTopNode) {
	below, above := len(t.nodes), len(t.nodes)+1
	n := &t.nodes[i]
	n.interior, n.axis, n.pos, n.below, n.above, n.refs = true, axis, pos, below, above, nil
	t.nodes = append(t.nodes, ch[0], ch[1])
}

// sides returns the children of the plane (axis, pos) a reference with box
// bx goes to before clipping (the builder's classify): right when it
// reaches beyond pos, left when it starts before pos or does not go right
// (a box flat in the plane goes left).
func sides(bx *refbuild.AABB, axis int, pos float32) (left, right bool) {
	right = bx.Hi[axis] > pos
	return bx.Lo[axis] < pos || !right, right
}

// splitGoal says when the split stops: every part at most maxTris
// references (0: no limit) and at least parts parts, within maxDepth
// levels of top tree.
type splitGoal struct {
	maxTris  int
	parts    int
	maxDepth int
	bins     int
	sah      refbuild.SAHParams
	workers  int
	// smallNode is the builder's SmallNode: a node over its duplication
	// budget and above smallNode references is a leaf of the whole build.
	smallNode int
	// maxDup is the builder's resolved MaxDuplication (the root budget).
	maxDup int
}

// overBudget reports whether the whole build makes n a leaf for its
// duplication budget (refbuild's OverBudget, depth aside: parts keep
// their own depth bound).
func (g *splitGoal) overBudget(n *partTopNode) bool {
	c := len(n.refs)
	return c > g.smallNode && uint64(c) > uint64(n.budget)
}

// split divides the top tree's leaves, the biggest first, until the goal
// is met or no leaf can be divided. mu guards t.nodes: split holds it but
// while it chooses a plane and cuts (a leaf not yet handed out changes
// only here), and calls step after each cut with mu held; stop, called
// with mu held, ends the split early.
func (t *partTop) split(root int, g splitGoal, mu sync.Locker, step func(), stop func() bool) {
	for {
		mu.Lock()
		i := t.biggest(root, g.maxDepth)
		if i < 0 || stop() ||
			(g.maxTris <= 0 || len(t.nodes[i].refs) <= g.maxTris) && t.countParts(root) >= g.parts {
			mu.Unlock()
			return
		}
		n := t.nodes[i]
		mu.Unlock()
		if g.overBudget(&n) {
			// The whole build makes it a leaf: so does its part's build.
			mu.Lock()
			t.nodes[i].final = true
			step()
			mu.Unlock()
			continue
		}
		axis, pos, ok := t.splitPlane(&n, &g.sah, g.bins, g.workers)
		var ch [2]partTopNode
		if ok {
			ch, ok = t.cut(&n, axis, pos, g.workers)
		}
		mu.Lock()
		if ok {
			t.install(i, axis, pos, ch)
		} else {
			t.nodes[i].final = true
		}
		step()
		mu.Unlock()
	}
}

// ready reports whether leaf n will not be divided again: a part to build
// as soon as the goal's count of parts is met (have parts) and it fits the
// budget, or when no plane or depth is left for it.
func (g *splitGoal) ready(n *partTopNode, have int) bool {
	return n.final || n.depth >= g.maxDepth || have >= g.parts && (g.maxTris <= 0 || len(n.refs) <= g.maxTris)
}

// biggest returns the leaf under root with the most references that can
// still be divided (not final, not handed out, above maxDepth), or -1.
func (t *partTop) biggest(root, maxDepth int) int {
	best, most := -1, 0
	t.visit(root, func(i int) {
		n := &t.nodes[i]
		if !n.interior && !n.final && !n.queued && n.depth < maxDepth && len(n.refs) > most {
			best, most = i, len(n.refs)
		}
	})
	return best
}

// countParts returns the number of leaves under root holding references.
func (t *partTop) countParts(root int) int {
	c := 0
	t.visit(root, func(i int) {
		if n := &t.nodes[i]; !n.interior && (len(n.refs) > 0 || n.part != nil) {
			c++
		}
	})
	return c
}

// leaves returns the leaves under root holding references, depth first.
func (t *partTop) leaves(root int) []int {
	var out []int
	t.visit(root, func(i int) {
		if n := &t.nodes[i]; !n.interior && len(n.refs) > 0 {
			out = append(out, i)
		}
	})
	return out
}

// visit calls f on every leaf under root, depth first, below child first.
func (t *partTop) visit(root int, f func(i int)) {
	if n := &t.nodes[root]; n.interior {
		below, above := n.below, n.above
		t.visit(below, f)
		t.visit(above, f)
		return
	}
	f(root)
}

// finiteTriangle reports whether every coordinate of t is finite (the
// builder drops the others, as it drops degenerate triangles).
func finiteTriangle(t *refbuild.Triangle) bool {
	for k := 0; k < 3; k++ {
		for a := 0; a < 3; a++ {
			if v := float64(t[k][a]); math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
	}
	return true
}
