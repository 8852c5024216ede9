package kdtree

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/reduce"
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
func build(ctx context.Context, scene *scenes.Scene, opts Options, onLevel func([]lnode, []decision)) (*Tree, error) {
	return buildHooked(ctx, scene, opts, func(b *builder) { b.onLevel = onLevel })
}

// buildHooked is Build with hook called on the builder before it starts
// (to set the test and workload hooks).
func buildHooked(ctx context.Context, scene *scenes.Scene, opts Options, hook func(*builder)) (*Tree, error) {
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
	b := &builder{ctx: ctx, scene: scene, opt: o, ex: o.Executor, phases: map[string]float64{}}
	hook(b)
	start := time.Now()
	var res *buildResult
	if o.Executor.CUDA() != nil {
		cfg := o.gpu
		if cfg == nil {
			c, err := envGPUConfig()
			if err != nil {
				return nil, err
			}
			cfg = &c
		}
		res, err = (&gpuBuild{builder: b, cfg: cfg}).buildCUDA()
	} else {
		res, err = b.buildGo()
	}
	if err != nil {
		return nil, err
	}
	b.report("layout", 1, b.levels, 0)
	st := Stats{
		Device:           o.Executor.Name(),
		BuildMs:          float64(time.Since(start).Nanoseconds()) / 1e6,
		Phases:           b.phases,
		DroppedTriangles: b.dropped,
		HostPeakBytes:    b.hostPeak,
		DevicePeakBytes:  b.devPeak,
		Levels:           b.levels,
		Limited:          b.limited,
	}
	// The tree-shape figures wait for the first Stats call (lazyShape).
	t := NewTree(scene, res.nodes, res.refs, res.bounds, st)
	t.shape = &lazyShape{}
	t.opts, t.opts.Executor, t.opts.Progress = o, nil, nil
	return t, nil
}

// buildResult is the finished tree's arrays.
type buildResult struct {
	nodes  []Node
	refs   []uint32
	bounds scenes.Bounds
}

// builder holds one build's state, the part the Go reference and the
// CUDA build (gpuBuild) share.
type builder struct {
	ctx   context.Context
	scene *scenes.Scene
	opt   Options
	ex    exec.Executor

	tris    []triangle // vertices of every scene triangle (dropped ones too)
	kept    []uint32   // indices of the kept triangles, ascending
	dropped int

	// onLevel, when set (tests), sees every large-phase level's nodes and
	// their decisions, to compare executors level by level.
	onLevel func(nodes []lnode, dec []decision)

	// red is the build's reducer (the nodes' tight bounds on the Go
	// executor; the CUDA path keeps its own in devLevel). onReduce, when set
	// (ReductionWorkload), sees the boxes (6 floats each) and offsets of
	// every such reduction before it runs; it must copy what it keeps.
	red      *reduce.Reducer
	onReduce func(boxes []float32, offsets []uint32)

	phases   map[string]float64
	phase    time.Time
	levels   int
	reported int     // large-phase levels reported to Progress (levelProgress)
	fraction float64 // the last Progress.Fraction reported
	rootRefs int     // the root's references (levelPart's measure)
	limited  string  // Stats.Limited
	hostPeak uint64
	devPeak  uint64
}

// startPhase and endPhase time a phase into b.phases (accumulating).
func (b *builder) startPhase() { b.phase = time.Now() }

func (b *builder) endPhase(name string) {
	b.phases[name] += float64(time.Since(b.phase).Nanoseconds()) / 1e6
}

// sampleHost records the Go heap in use (MemStats.HeapAlloc) as a peak
// candidate, read from runtime/metrics: runtime.ReadMemStats stops the
// world, and a CUDA build samples between its phases, with the device
// idle.
func (b *builder) sampleHost() {
	s := []metrics.Sample{{Name: heapObjectsMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		b.hostPeak = max(b.hostPeak, s[0].Value.Uint64())
	}
}

// heapObjectsMetric is the runtime/metrics name of MemStats.HeapAlloc.
const heapObjectsMetric = "/memory/classes/heap/objects:bytes"

// prepare gathers the triangles' vertices and drops the degenerate ones
// (see nonDegenerate).
func (b *builder) prepare() error {
	s := b.scene
	nv := uint32(len(s.Verts))
	b.tris = make([]triangle, len(s.Tris))
	keep := make([]bool, len(s.Tris))
	var bad error
	var mu sync.Mutex
	exec.ParallelFor(b.hostWorkers(), len(s.Tris), 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			t := s.Tris[i]
			if t[0] >= nv || t[1] >= nv || t[2] >= nv {
				mu.Lock()
				if bad == nil {
					bad = fmt.Errorf("kdtree: triangle %d has vertex index %v out of range (%d vertices)", i, t, nv)
				}
				mu.Unlock()
				continue
			}
			for k := 0; k < 3; k++ {
				b.tris[i][k] = [3]float32(s.Verts[t[k]])
			}
			keep[i] = nonDegenerate(s, i, &b.tris[i])
		}
	})
	if bad != nil {
		return bad
	}
	b.kept = make([]uint32, 0, len(s.Tris))
	for i, k := range keep {
		if k {
			b.kept = append(b.kept, uint32(i))
		}
	}
	b.dropped = len(s.Tris) - len(b.kept)
	return nil
}

// nonDegenerate reports whether triangle i is kept: finite vertices and a
// non-zero area as scenes.Scene.Degenerate defines it (the definition
// Validate and the ray oracle share).
func nonDegenerate(s *scenes.Scene, i int, t *triangle) bool {
	for k := 0; k < 3; k++ {
		for a := 0; a < 3; a++ {
			if v := float64(t[k][a]); math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
	}
	return !s.Degenerate(i)
}

// toBounds converts a box to scenes.Bounds.
func toBounds(b aabb) scenes.Bounds {
	return scenes.Bounds{Min: b.lo, Max: b.hi}
}

// buildGo is the whole build on the Go executor.
func (b *builder) buildGo() (*buildResult, error) {
	res, rs, err := b.recordsGo()
	if err != nil || rs == nil {
		return res, err
	}
	if err := b.enter("layout", b.levels, 0); err != nil {
		return nil, err
	}
	b.startPhase()
	res.nodes, res.refs, err = layoutGo(rs)
	if err != nil {
		return nil, err
	}
	b.endPhase("layout")
	return res, b.ctx.Err()
}

// recordsGo runs the Go build up to the layout: the result's bounds and
// the records (nil when no triangle is kept).
func (b *builder) recordsGo() (*buildResult, *records, error) {
	b.report("prepare", 0, 0, 0)
	b.startPhase()
	if err := b.prepare(); err != nil {
		return nil, nil, err
	}
	// Initial references: the kept triangles, ascending, with their boxes.
	cur, next := &refList{}, &refList{}
	cur.resize(len(b.kept))
	copy(cur.tri, b.kept)
	exec.ParallelFor(b.ex.Workers(), len(b.kept), 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			cur.box[i] = b.tris[cur.tri[i]].bounds()
		}
	})
	root := b.tightBounds(cur.box)
	canonZero(&root)
	b.endPhase("prepare")
	b.sampleHost()
	if err := b.ctx.Err(); err != nil {
		return nil, nil, err
	}
	b.rootRefs = len(b.kept)
	res := &buildResult{}
	if len(b.kept) == 0 {
		// No triangle can be hit: a tree without nodes misses every ray.
		return res, nil, nil
	}
	res.bounds = toBounds(root)

	// Large nodes, level by level.
	b.startPhase()
	rs := &records{}
	nodes := []lnode{{box: root, off: 0, cnt: uint32(len(cur.tri)), depth: 0, rec: rs.add()}}
	sc := &levelScratch{}
	capRefs := max(64*len(b.kept), 1<<20)
	for level := 0; len(nodes) > 0; level++ {
		if err := b.ctx.Err(); err != nil {
			return nil, nil, err
		}
		b.levelProgress(level, len(nodes))
		var err error
		nodes, err = b.levelGo(nodes, cur, next, sc, rs)
		if err != nil {
			return nil, nil, err
		}
		cur, next = next, cur
		b.levels++
		if len(cur.tri) > capRefs {
			// Memory guard: no tree needs this; make the rest leaves.
			b.limited = memoryGuardText(len(cur.tri), capRefs)
			for _, n := range nodes {
				rs.setLeaf(n.rec, cur.tri[n.off:n.off+n.cnt])
			}
			nodes = nil
		}
		b.sampleHost()
	}
	b.endPhase("large")

	// Small roots, each independently (depth first in Go; every node's
	// split depends only on its root, set, box and depth).
	if err := b.ctx.Err(); err != nil {
		return nil, nil, err
	}
	b.startPhase()
	if err := b.smallGo(rs); err != nil {
		return nil, nil, err
	}
	b.endPhase("small")
	b.sampleHost()

	return res, rs, nil
}

// hostWorkers is the number of goroutines for host work: the Go
// executor's workers, or GOMAXPROCS beside a GPU.
func (b *builder) hostWorkers() int {
	if b.ex.CUDA() != nil {
		return runtime.GOMAXPROCS(0)
	}
	return b.ex.Workers()
}

// smallGo builds the subtrees of every small root in Go, in parallel, and
// reports its progress from the calling goroutine; it returns ctx.Err()
// (its workers stopped) when the build is cancelled.
func (b *builder) smallGo(rs *records) error {
	R := len(rs.small)
	b.report("small", 0, b.levels, 0)
	p := newSAH(&b.opt)
	rs.smallOut = make([][]record, R)
	var stop atomic.Bool
	var done atomic.Int64
	return b.watch(&stop, func() {
		dynamicFor(b.hostWorkers(), R, 8, func() func(lo, hi int) {
			sb := &smallBuilder{b: b, p: &p}
			return func(lo, hi int) {
				if stop.Load() {
					return
				}
				for i := lo; i < hi; i++ {
					rs.smallOut[i] = sb.build(&rs.small[i])
				}
				done.Add(int64(hi - lo))
			}
		})
	}, func() {
		d := int(done.Load())
		b.report("small", float64(d)/float64(max(R, 1)), b.levels, d)
	})
}

// dynamicFor runs body over [0, n) in chunks of chunk items handed out to
// workers goroutines as they finish the previous one (load balance for
// items of uneven cost); newBody makes each goroutine's body. The results
// must not depend on which goroutine runs which chunk.
func dynamicFor(workers, n, chunk int, newBody func() func(lo, hi int)) {
	if n <= 0 {
		return
	}
	var next atomic.Int64
	exec.ParallelFor(workers, workers, 1, func(lo, hi int) {
		for w := lo; w < hi; w++ {
			body := newBody()
			for {
				i := int(next.Add(int64(chunk))) - chunk
				if i >= n {
					break
				}
				body(i, min(i+chunk, n))
			}
		}
	})
}
