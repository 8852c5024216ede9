package main

import (
	"context"
	"fmt"
	"sort"

	"github.com/kdbuild/kdbuild/kdtree"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// builderFlags are the kdtree.Options fields as flags, one to one; zero
// means the builder's documented default.
type builderFlags struct {
	traversalCost, intersectCost, emptyBonus float64
	smallNode, bins, maxDepth                int
	maxDuplication                           int
}

func (b builderFlags) options(ex exec.Executor, progress func(kdtree.Progress)) kdtree.Options {
	return kdtree.Options{
		Executor:       ex,
		TraversalCost:  float32(b.traversalCost),
		IntersectCost:  float32(b.intersectCost),
		EmptyBonus:     float32(b.emptyBonus),
		SmallNode:      b.smallNode,
		Bins:           b.bins,
		MaxDepth:       b.maxDepth,
		MaxDuplication: b.maxDuplication,
		Progress:       progress,
	}
}

// built is the outcome of one or more builds of the same scene.
type built struct {
	stats kdtree.Stats // of the build whose time is the median
	tree  *kdtree.Tree // the last build's tree
	runs  int
	ms    float64 // median build time over runs
}

// buildTree builds scene runs times (at least once) and keeps the
// statistics of the median build. progress, when non-nil, shows the levels
// of every build that runs long enough to need it. The tree-shape figures
// (a walk of the whole tree) are computed once, from the last tree: the
// builds are deterministic, so every run makes the same tree (a run whose
// node or reference count differs from the others' is an error).
func buildTree(ctx context.Context, scene *scenes.Scene, ex exec.Executor, bf builderFlags, runs int, progress *levelBar) (*built, error) {
	if runs < 1 {
		runs = 1
	}
	all := make([]kdtree.Stats, 0, runs)
	var last *kdtree.Tree
	nodes, refs := 0, 0
	for i := 0; i < runs; i++ {
		last = nil // no tree of an earlier run stays alive during a build (host peak)
		var cb func(kdtree.Progress)
		if progress != nil {
			progress.begin()
			cb = progress.update
		}
		tree, err := kdtree.Build(ctx, scene, bf.options(ex, cb))
		progress.done()
		if err != nil {
			return nil, err
		}
		if i > 0 && (len(tree.Nodes) != nodes || len(tree.Refs) != refs) {
			return nil, fmt.Errorf("build %d of %d made %d nodes and %d references, build %d made %d and %d: the builds differ",
				i+1, runs, len(tree.Nodes), len(tree.Refs), i, nodes, refs)
		}
		nodes, refs = len(tree.Nodes), len(tree.Refs)
		last = tree
		all = append(all, tree.BuildStats())
	}
	// The median build by time; for an even count the lower middle one, so
	// that the reported phases belong to a build that really ran.
	sort.SliceStable(all, func(a, b int) bool { return all[a].BuildMs < all[b].BuildMs })
	med := all[(len(all)-1)/2]
	shape := last.Stats()
	med.Nodes, med.Leaves, med.EmptyLeaves, med.MaxDepth = shape.Nodes, shape.Leaves, shape.EmptyLeaves, shape.MaxDepth
	med.References, med.ReferencesPerTriangle, med.SAHCost = shape.References, shape.ReferencesPerTriangle, shape.SAHCost
	return &built{stats: med, tree: last, runs: runs, ms: med.BuildMs}, nil
}
