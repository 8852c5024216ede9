package main

import (
	"context"
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
}

func (b builderFlags) options(ex exec.Executor, progress func(level, activeNodes int)) kdtree.Options {
	return kdtree.Options{
		Executor:      ex,
		TraversalCost: float32(b.traversalCost),
		IntersectCost: float32(b.intersectCost),
		EmptyBonus:    float32(b.emptyBonus),
		SmallNode:     b.smallNode,
		Bins:          b.bins,
		MaxDepth:      b.maxDepth,
		Progress:      progress,
	}
}

// built is the outcome of one or more builds of the same scene.
type built struct {
	stats kdtree.Stats // of the build whose time is the median
	runs  int
	ms    float64 // median build time over runs
}

// buildTree builds scene runs times (at least once) and keeps the
// statistics of the median build. progress, when non-nil, shows the levels
// of every build that runs long enough to need it.
func buildTree(ctx context.Context, scene *scenes.Scene, ex exec.Executor, bf builderFlags, runs int, progress *levelBar) (*built, error) {
	if runs < 1 {
		runs = 1
	}
	all := make([]kdtree.Stats, 0, runs)
	for i := 0; i < runs; i++ {
		var cb func(level, activeNodes int)
		if progress != nil {
			progress.begin()
			cb = progress.update
		}
		tree, err := kdtree.Build(ctx, scene, bf.options(ex, cb))
		progress.done()
		if err != nil {
			return nil, err
		}
		all = append(all, tree.Stats())
	}
	// The median build by time; for an even count the lower middle one, so
	// that the reported phases belong to a build that really ran.
	sort.SliceStable(all, func(a, b int) bool { return all[a].BuildMs < all[b].BuildMs })
	med := all[(len(all)-1)/2]
	return &built{stats: med, runs: runs, ms: med.BuildMs}, nil
}
