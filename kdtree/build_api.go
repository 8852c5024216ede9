package kdtree

import (
	"context"
	"errors"
	"time"
	"unsafe"

	"github.com/kdbuild/kdbuild/kdtree/internal/gpubuild"
	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"github.com/kdbuild/kdbuild/scenes"
)

// Build constructs an SAH kd-tree over scene's triangles with the executor of
// opts (nil: the Go executor). Zero-area triangles (and triangles with
// non-finite vertices) are dropped and counted in Stats.DroppedTriangles.
//
// The build runs breadth first, all nodes of a level at once: large nodes
// (more than opts.SmallNode references) are split by binned SAH after
// cutting off empty space, references that straddle the plane are clipped
// to each child (the triangle, not its box); small nodes are split by exact
// SAH over every face of their references' boxes, with the reference sets as
// 64-bit masks. The Go and CUDA executors make the same tree, node for node.
//
// It returns an error for bad options, a scene with out-of-range vertex
// indices, a cancelled ctx or an executor failure. The tree is immutable.
// It returns as soon as the tree is built: the statistics' tree-shape
// figures (a walk of the whole tree, which takes about as long as a GPU
// build) are computed by the first Tree.Stats call; Tree.BuildStats never
// walks the tree.
func Build(ctx context.Context, scene *scenes.Scene, opts Options) (*Tree, error) {
	return build(ctx, scene, opts, nil)
}

// build is Build with a per-level hook for tests (nil in Build).
func build(ctx context.Context, scene *scenes.Scene, opts Options, onLevel func([]refbuild.LNode, []refbuild.Decision)) (*Tree, error) {
	return buildHooked(ctx, scene, opts, func(b *refbuild.Builder) { b.OnLevel = onLevel })
}

// buildHooked is Build with hook called on the builder before it starts
// (to set the test and workload hooks).
func buildHooked(ctx context.Context, scene *scenes.Scene, opts Options, hook func(*refbuild.Builder)) (*Tree, error) {
	if scene == nil {
		return nil, errors.New("kdtree: Build of a nil scene")
	}
	o, err := opts.resolved(len(scene.Tris))
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b := &refbuild.Builder{Ctx: ctx, Scene: scene, Opt: o.internal(), Ex: o.Executor, Phases: map[string]float64{}}
	hook(b)
	start := time.Now()
	var res *refbuild.BuildResult
	var kept *gpubuild.Kept
	defer func() { kept.Free() }() // the device copy's triangles are gathered from it
	if o.Executor.CUDA() != nil {
		cfg := o.gpu
		if cfg == nil {
			c, err := gpubuild.EnvConfig()
			if err != nil {
				return nil, err
			}
			cfg = &c
		}
		res, kept, err = gpubuild.BuildKept(b, cfg, o.KeepOnDevice)
	} else {
		res, err = b.BuildGo()
	}
	if err != nil {
		return nil, err
	}
	b.Report("layout", 1, b.Levels, 0)
	st := Stats{
		Device:           o.Executor.Name(),
		BuildMs:          float64(time.Since(start).Nanoseconds()) / 1e6,
		Phases:           b.Phases,
		DroppedTriangles: b.Dropped,
		HostPeakBytes:    b.HostPeak,
		DevicePeakBytes:  b.DevPeak,
		Levels:           b.Levels,
		Limited:          b.LimitedText(),
	}
	// The tree-shape figures wait for the first Stats call (lazyShape).
	t := NewTree(scene, treeNodes(res.Nodes), res.Refs, res.Bounds, st)
	t.shape = &lazyShape{}
	t.opts, t.opts.Executor, t.opts.Progress = o, nil, nil
	if o.KeepOnDevice && o.Executor.CUDA() != nil {
		if err := t.keepOnDevice(o.Executor, kept); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// internal returns resolved options as the builders read them.
func (o Options) internal() refbuild.Options {
	r := refbuild.Options{
		Executor:       o.Executor,
		TraversalCost:  o.TraversalCost,
		IntersectCost:  o.IntersectCost,
		EmptyBonus:     o.EmptyBonus,
		SmallNode:      o.SmallNode,
		Bins:           o.Bins,
		MaxDepth:       o.MaxDepth,
		MaxDuplication: o.MaxDuplication,
	}
	if p := o.Progress; p != nil {
		r.Progress = func(q refbuild.Progress) { p(Progress(q)) }
	}
	return r
}

// treeNodes views the builder's nodes as Nodes, without a copy: the two
// types have the same fields (W0, W1 uint32), so the same layout.
func treeNodes(n []refbuild.Node) []Node {
	if len(n) == 0 {
		return nil
	}
	return unsafe.Slice((*Node)(unsafe.Pointer(unsafe.SliceData(n))), len(n))
}

// The conversion above relies on Node and refbuild.Node being the same
// struct; this conversion fails to compile otherwise.
var _ = Node(refbuild.Node{})

// GPUOffEnv is the environment variable that forces fast paths of the CUDA
// builder off, a comma-separated list of names (pipeline, queued-prepare,
// early-small, device-top, device-small, mapped-log, fused-choose) or
// "all": to compare them with their fallbacks on a device. Every
// combination builds the same tree.
const GPUOffEnv = gpubuild.GPUOffEnv
