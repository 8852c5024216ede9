package kdtree

// Stats describes a built tree and its build. The builder fills the build
// fields (Device, BuildMs, Phases, DroppedTriangles, peak memory, Levels);
// the tree-shape fields come from the nodes and references alone
// (ComputeShapeStats, or a Build tree's first Stats call).
type Stats struct {
	Device  string             // "cpu" or the GPU's name
	BuildMs float64            // wall time of the build
	Phases  map[string]float64 // build phase name -> ms

	Nodes       int // len(Tree.Nodes)
	Leaves      int // leaf nodes
	EmptyLeaves int // leaves without references
	MaxDepth    int // edges from the root to the deepest node (0 for a lone root)

	References            int     // len(Tree.Refs)
	ReferencesPerTriangle float64 // References / kept (non-degenerate) triangles
	SAHCost               float64 // SAHCost(t), see sah.go

	DroppedTriangles int    // degenerate triangles left out of the tree
	HostPeakBytes    uint64 // peak host memory of the build
	DevicePeakBytes  uint64 // peak device memory of the build
	TraceBytes       uint64 // host memory traversal adds, made on the first ray: TraceBytesPerTriangle per scene triangle
	Levels           int    // breadth-first levels the builder processed
	// Limited is empty, or why a guard of the builder cut the tree short:
	// the duplication budget (Options.MaxDuplication) made large nodes
	// leaves, saying how many and their references, or the memory guard
	// stopped the large phase (a level's references outgrew 64 per
	// triangle).
	Limited string
}

// ComputeShapeStats returns t.Stats() with the tree-shape fields (Nodes,
// Leaves, EmptyLeaves, MaxDepth, References, ReferencesPerTriangle,
// SAHCost) recomputed from t.Nodes and t.Refs; the build fields given to
// NewTree are kept. ReferencesPerTriangle divides by the kept triangles,
// len(Scene.Tris) minus Stats.DroppedTriangles (0 when none are kept).
// For a tree made with NewTree from the builder's arrays:
//
//	t := kdtree.NewTree(scene, nodes, refs, bounds, buildStats)
//	t = kdtree.NewTree(scene, nodes, refs, bounds, kdtree.ComputeShapeStats(t))
//
// (Build's own trees compute the same on their first Stats call.) Run on a
// tree that fails Validate, it still terminates (it never follows an
// out-of-range index nor descends below MaxTreeDepth) but the figures mean
// little.
func ComputeShapeStats(t *Tree) Stats {
	return withShape(t, t.BuildStats())
}

// withShape returns s with the tree-shape fields of t.
func withShape(t *Tree, s Stats) Stats {
	s.Nodes = len(t.Nodes)
	s.References = len(t.Refs)
	sh := treeShape(t) // one pass for the counts and the SAH cost
	s.Leaves, s.EmptyLeaves, s.MaxDepth = sh.leaves, sh.emptyLeaves, sh.maxDepth
	kept := 0
	if t.Scene != nil {
		kept = len(t.Scene.Tris) - s.DroppedTriangles
	}
	s.ReferencesPerTriangle = 0
	if kept > 0 {
		s.ReferencesPerTriangle = float64(s.References) / float64(kept)
	}
	s.SAHCost = sh.cost
	s.TraceBytes = t.traceBytes()
	return s
}

// DeviceMs is BuildMs less the phases "upload" (the scene's vertices and
// indices copied to the device) and "download" (the finished tree copied to
// the host): on the CUDA executor the time from the triangles on the device
// to the finished tree on the device, the measure of the GPU goals. A build
// without those phases (the Go executor) gives BuildMs.
func (s Stats) DeviceMs() float64 {
	return s.BuildMs - s.Phases["upload"] - s.Phases["download"]
}
