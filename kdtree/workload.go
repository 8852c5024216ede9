package kdtree

import (
	"context"
	"slices"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/reduce"
	"github.com/kdbuild/kdbuild/scenes"
)

// ReductionWorkload returns the node-bounds reductions that a build of
// scene on the Go executor performs, one per level of the large-node phase
// in build order: level k's reduction is the segmented box reduction
// (reduce.SegmentedBoxesAoS) of that level's reference boxes, 6 floats
// each (lo xyz, hi xyz, clipped to their node), with one segment per node
// (Offsets has one entry per node and the level's reference count last).
// The first level is one segment holding every kept triangle's box; the
// CUDA build performs the same reductions on the device.
//
// This is the workload of the reduction table in `kdbuild bench thesis`:
// the reductions a real kd-tree build asks of reduce/, recorded so that
// every reduction design can be timed on them. opts is used as in Build
// except that the Go executor always runs the build (opts.Executor is
// replaced by exec.Go(0) unless it is a Go executor already). The errors
// are Build's.
func ReductionWorkload(ctx context.Context, scene *scenes.Scene, opts Options) ([]reduce.BoxLevel, error) {
	if opts.Executor == nil || opts.Executor.CUDA() != nil {
		opts.Executor = exec.Go(0)
	}
	var levels []reduce.BoxLevel
	_, err := buildHooked(ctx, scene, opts, func(b *refbuild.Builder) {
		b.OnReduce = func(boxes []float32, offsets []uint32) {
			levels = append(levels, reduce.BoxLevel{Boxes: slices.Clone(boxes), Offsets: slices.Clone(offsets)})
		}
	})
	if err != nil {
		return nil, err
	}
	return levels, nil
}
