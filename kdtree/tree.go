package kdtree

import (
	"sync"
	"sync/atomic"

	"github.com/kdbuild/kdbuild/scenes"
)

// MaxTreeDepth bounds the depth (edges from the root) of every tree kdtree
// traverses: the traversal stack is sized for it, and Validate rejects
// deeper trees.
const MaxTreeDepth = 64

// Tree is a built kd-tree: depth-first 8-byte nodes (node 0 is the root),
// the leaf reference array (triangle indices, ascending within each leaf),
// the root box and the scene whose triangles the references name.
//
// A Tree is immutable once made by NewTree; any number of goroutines may
// intersect rays with it at the same time.
type Tree struct {
	Nodes  []Node
	Refs   []uint32      // triangle indices into Scene.Tris
	Bounds scenes.Bounds // root box: the tight bounds of the kept triangles
	Scene  *scenes.Scene // the triangles

	stats Stats
	opts  Options                   // the build's options, resolved, without Executor and Progress
	shape *lazyShape                // non-nil: stats lacks the tree-shape fields, made on first use
	tdata atomic.Pointer[traceData] // traversal's triangle copy, made on the first ray
	dev   *deviceCopy               // the copy in device memory (Upload), nil when none
	mmap  []byte                    // the mapped tree file whose views the arrays are (ReadTreeFile), nil when none
}

// lazyShape holds a built tree's statistics with the tree-shape fields,
// computed by the first Stats call: a walk of the whole tree (5.5 ms for
// the bunny's 326k nodes on 2 cores, as long as a GPU build), which Build
// leaves out so that it returns as soon as the tree is built.
type lazyShape struct {
	once  sync.Once
	stats Stats
}

// NewTree wraps the builder's output. It takes ownership of nodes and refs
// (the caller must not change them afterwards, nor the scene's vertices
// and triangles). It does no work: the first ray makes a copy of the
// triangles' vertex positions (TraceBytesPerTriangle) for traversal. The
// tree-shape fields of stats are kept as given (ComputeShapeStats computes
// them); Build's trees compute them on the first Stats call instead.
// An empty nodes slice is allowed only for a scene without kept triangles
// (the tree then misses every ray).
func NewTree(scene *scenes.Scene, nodes []Node, refs []uint32, bounds scenes.Bounds, stats Stats) *Tree {
	return &Tree{Nodes: nodes, Refs: refs, Bounds: bounds, Scene: scene, stats: stats}
}

// Stats returns the statistics of the tree and its build. For a tree from
// Build, the first call computes the tree-shape fields (Nodes, Leaves,
// EmptyLeaves, MaxDepth, References, ReferencesPerTriangle, SAHCost) with a
// parallel walk of the tree; later calls return them at once. Safe for
// concurrent use.
func (t *Tree) Stats() Stats {
	s := t.stats
	if t.shape != nil {
		t.shape.once.Do(func() { t.shape.stats = withShape(t, t.stats) })
		s = t.shape.stats
	}
	s.TraceBytes = t.traceBytes()
	return copyPhases(s)
}

// BuildStats returns the statistics of the build alone (Device, BuildMs,
// Phases, DroppedTriangles, peak memory, Levels): Stats with the tree-shape
// fields left zero. It never walks the tree.
func (t *Tree) BuildStats() Stats {
	s := t.stats
	s.Nodes, s.Leaves, s.EmptyLeaves, s.MaxDepth = 0, 0, 0, 0
	s.References, s.ReferencesPerTriangle, s.SAHCost = 0, 0, 0
	return copyPhases(s)
}

// copyPhases returns s with its own copy of the Phases map.
func copyPhases(s Stats) Stats {
	if s.Phases != nil {
		p := make(map[string]float64, len(s.Phases))
		for k, v := range s.Phases {
			p[k] = v
		}
		s.Phases = p
	}
	return s
}

// boxF64 is a box in float64 for the SAH and the walk.
type boxF64 struct {
	min, max [3]float64
}

func boxOf(b scenes.Bounds) boxF64 {
	var r boxF64
	for a := 0; a < 3; a++ {
		r.min[a], r.max[a] = float64(b.Min[a]), float64(b.Max[a])
	}
	return r
}

// area returns the surface area of b (0 for an empty or inverted box).
func (b boxF64) area() float64 {
	dx, dy, dz := b.max[0]-b.min[0], b.max[1]-b.min[1], b.max[2]-b.min[2]
	if dx < 0 || dy < 0 || dz < 0 {
		return 0
	}
	return 2 * (dx*dy + dy*dz + dz*dx)
}

// walk visits every node reachable from the root in depth-first order with
// its depth and box (the root box cut at the splits). It stops descending at
// MaxTreeDepth, skips child indices out of range and stops after
// len(Nodes) visits (a valid tree visits each node once), so it terminates
// quickly on any node array.
func (t *Tree) walk(visit func(i uint32, depth int, box boxF64)) {
	if len(t.Nodes) == 0 {
		return
	}
	t.walkFrom(walkItem{0, 0, boxOf(t.Bounds)}, -1, nil, func(it walkItem) { visit(it.i, it.depth, it.box) })
}

// walkFrom is walk over the subtree of start. With stop >= 0 a node at
// depth stop is not visited but appended to frontier, in walk order. It
// pops at most len(t.Nodes) items.
func (t *Tree) walkFrom(start walkItem, stop int, frontier *[]walkItem, visit func(walkItem)) {
	stack := make([]walkItem, 1, 2*MaxTreeDepth+2)
	stack[0] = start
	for pops := 0; len(stack) > 0 && pops < len(t.Nodes); pops++ {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if it.depth == stop {
			*frontier = append(*frontier, it)
			continue
		}
		visit(it)
		n := t.Nodes[it.i]
		if n.IsLeaf() || it.depth >= MaxTreeDepth {
			continue
		}
		a, s := n.Axis(), float64(n.Split())
		below, above := it.box, it.box
		below.max[a], above.min[a] = s, s
		if c := n.AboveChild(); int(c) < len(t.Nodes) {
			stack = append(stack, walkItem{c, it.depth + 1, above})
		}
		if c := it.i + 1; int(c) < len(t.Nodes) {
			stack = append(stack, walkItem{c, it.depth + 1, below})
		}
	}
}

// MeshOf returns the mesh that hit h's triangle belongs to (an index into
// t.Scene.Meshes, whose Name names it) and the triangle's index within that
// mesh: Scene.MeshOf(h.Prim) for a caller holding only the tree and its
// hits. A tree file keeps its scene's meshes, so a loaded tree answers as
// the built one. ok is false, with -1 and -1, for a miss (Prim NoHit), a
// tree without a scene, or a Prim past the scene's triangles. A scene
// without Meshes (built by hand) is one mesh: (0, h.Prim, true).
func (t *Tree) MeshOf(h Hit) (mesh, local int, ok bool) {
	if h.Prim == NoHit || t.Scene == nil {
		return -1, -1, false
	}
	mesh, local = t.Scene.MeshOf(h.Prim)
	if mesh < 0 {
		return -1, -1, false
	}
	return mesh, local, true
}
