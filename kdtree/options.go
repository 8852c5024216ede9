package kdtree

import (
	"fmt"
	"math"

	"github.com/kdbuild/kdbuild/kdtree/internal/gpubuild"
	"github.com/kdbuild/kdbuild/kernels/exec"
)

// Options tune Build. The zero value means the documented defaults, so
// Options{} is a good tree on the Go executor.
type Options struct {
	// Executor runs the data-parallel steps; nil means the Go executor with
	// GOMAXPROCS workers.
	Executor exec.Executor

	// TraversalCost is the SAH cost of visiting an interior node (default 1).
	// IntersectCost is the cost of one ray-triangle test (default 1.5). The
	// pair is the metric of docs/sah.md (interior area × 1, leaf area ×
	// references × 1.5), so the builder minimises what SAHCost reports.
	TraversalCost, IntersectCost float32

	// EmptyBonus scales down the cost of a split that leaves one side empty:
	// cost × (1 − EmptyBonus) on the intersection term, as in pbrt and
	// Mitsuba (both use 0.8 with their own cost constants). It only steers
	// the greedy choice of splits and is not part of the reported SAH cost.
	// Default 0.1: measured on the shared scenes, 0.8 makes trees whose
	// reported SAH cost is 3–6% higher (many thin empty slabs), no bonus
	// about 0.3% higher than 0.1. Range [0, 1); a negative value means 0.
	EmptyBonus float32

	// SmallNode is the number of references at or below which a node is
	// split by exact SAH over every candidate plane (the faces of its
	// references' boxes), with triangle sets as 64-bit masks: default and
	// maximum 64, the width of the mask (Zhou et al. 2008 use 64 too).
	SmallNode int

	// Bins is the number of SAH bins per axis for large nodes, whose planes
	// are the bin boundaries over the node's tight bounds plus the bounds
	// themselves (default 32). Measured, 64 or 128 bins change the SAH cost
	// by under 1% either way: the empty-space cut-off (a side more than 25%
	// empty is cut off first) and the exact small-node phase, where most of
	// the cost lies, do most of the work.
	Bins int

	// MaxDepth bounds the depth of the tree; the root has depth 0. Default
	// round(3 + 1.3·log2(N)) for N triangles, at least 16 and at most 64:
	// pbrt's 8 + 1.3·log2(N) less 5 levels. Measured on the shared scenes,
	// the five deepest levels pbrt's bound allows lower the SAH cost by at
	// most 1.4% (bunny 68.80 → 67.85) but add half again as many nodes and
	// build time; with this bound every shared scene is at or below
	// Mitsuba's cost.
	MaxDepth int

	// MaxDuplication is the duplication budget of the large-node phase, in
	// references per triangle: the root may hold MaxDuplication·n
	// references, each split shares its node's budget between the children
	// in proportion to the references they get, and a large node holding
	// more than its share becomes a leaf (docs/sah.md, "Duplication
	// budget"). Every level of the large phase then holds at most
	// 2·MaxDuplication references per triangle, so scenes whose references
	// multiply level after level (long slivers in every direction) build in
	// O(n log n) time and O(n) memory, with larger leaves; Stats.Limited
	// says when the budget acted. Default DefaultMaxDuplication, under
	// which no scene of ../shared/scenes nor any ordinary procedural scene
	// is touched; negative: no budget (resolved to -1).
	MaxDuplication int

	// Progress, when non-nil, is called on the calling goroutine as the
	// build goes: at the start of each phase, once per level of the large
	// phase, every few milliseconds of the Go small phase, and with
	// Fraction 1 when the build is done (see Progress).
	Progress func(Progress)

	// KeepOnDevice, with a GPU executor, leaves the built tree on the
	// device ready to trace, as Upload would: the trace's copy is made
	// there from the build's own buffers (no upload), so IntersectDevice,
	// OccludedDevice and the batch calls run at once. The host copy
	// (Nodes, Refs) is made as always. The caller frees the device copy
	// with Tree.Close. Ignored by the Go executor.
	KeepOnDevice bool

	// gpu, when set (tests), is the CUDA builder's configuration in place
	// of EnvConfig's.
	gpu *gpubuild.Config
}

// Defaults of Options (see the field comments).
const (
	DefaultTraversalCost  = 1
	DefaultIntersectCost  = 1.5
	DefaultEmptyBonus     = 0.1
	DefaultSmallNode      = 64
	DefaultBins           = 32
	DefaultMaxDuplication = 32
	MaxBins               = 1024
	maxDepthLimit         = MaxTreeDepth
)

// resolved returns the options with every zero field replaced by its default
// for a scene of n triangles, or an error for values out of range.
func (o Options) resolved(n int) (Options, error) {
	if o.Executor == nil {
		o.Executor = exec.Go(0)
	}
	if o.TraversalCost == 0 {
		o.TraversalCost = DefaultTraversalCost
	}
	if o.IntersectCost == 0 {
		o.IntersectCost = DefaultIntersectCost
	}
	if o.EmptyBonus == 0 {
		o.EmptyBonus = DefaultEmptyBonus
	} else if o.EmptyBonus < 0 {
		o.EmptyBonus = 0
	}
	if o.SmallNode == 0 {
		o.SmallNode = DefaultSmallNode
	}
	if o.Bins == 0 {
		o.Bins = DefaultBins
	}
	switch {
	case o.MaxDuplication == 0:
		o.MaxDuplication = DefaultMaxDuplication
	case o.MaxDuplication < 0:
		o.MaxDuplication = -1
	case o.MaxDuplication > math.MaxInt32:
		o.MaxDuplication = math.MaxInt32 // no tree comes near: the same as unbounded
	}
	if o.MaxDepth == 0 {
		d := 3 + int(math.Round(1.3*math.Log2(float64(max(n, 1)))))
		o.MaxDepth = min(max(d, 16), maxDepthLimit)
	}
	switch {
	case !(o.TraversalCost > 0) || math.IsInf(float64(o.TraversalCost), 0):
		return o, fmt.Errorf("kdtree: TraversalCost %v must be positive and finite", o.TraversalCost)
	case !(o.IntersectCost > 0) || math.IsInf(float64(o.IntersectCost), 0):
		return o, fmt.Errorf("kdtree: IntersectCost %v must be positive and finite", o.IntersectCost)
	case !(o.EmptyBonus < 1):
		return o, fmt.Errorf("kdtree: EmptyBonus %v must be below 1", o.EmptyBonus)
	case o.SmallNode < 1 || o.SmallNode > 64:
		return o, fmt.Errorf("kdtree: SmallNode %d must be in [1, 64]", o.SmallNode)
	case o.Bins < 2 || o.Bins > MaxBins:
		return o, fmt.Errorf("kdtree: Bins %d must be in [2, %d]", o.Bins, MaxBins)
	case o.MaxDepth < 1 || o.MaxDepth > maxDepthLimit:
		return o, fmt.Errorf("kdtree: MaxDepth %d must be in [1, %d]", o.MaxDepth, maxDepthLimit)
	}
	return o, nil
}
