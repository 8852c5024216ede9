package kdtree

import (
	"context"
	"errors"
	"fmt"
	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
	"maps"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kdbuild/kdbuild/kernels/exec"
	"github.com/kdbuild/kdbuild/scenes"
)

// PartOptions tune BuildParts. The zero value builds one part on
// Options.Executor, which is Build.
type PartOptions struct {
	// Executors build the parts, each one part at a time, a part handed to
	// whichever executor frees up first (biggest parts first). Empty means
	// Options.Executor alone (the Go executor when that is nil). With one
	// executor the parts are built one after another: out of core.
	Executors []exec.Executor

	// Parts is the least number of parts to split the scene into (default
	// len(Executors)); the split goes on while a part exceeds the budget.
	Parts int

	// MemoryBudget is the memory in bytes one part's build may use on an
	// executor. Zero means, on a CUDA executor, 90% of the device memory
	// free when BuildParts starts (the driver's cuMemGetInfo), the smallest
	// over the executors; on the Go executor, no limit.
	MemoryBudget int64

	// BytesPerTriangle is the memory a build uses per triangle, which turns
	// the budget into a triangle count. Zero means GPUBytesPerTriangle when
	// any executor is a GPU, else GoBytesPerTriangle.
	BytesPerTriangle int64
}

// Memory per triangle of a build, for PartOptions.MemoryBudget: the CUDA
// build's peak device memory (436–470 B per triangle on the shared scenes
// and the bunny grid) and the Go build's peak heap in use, garbage not yet
// collected included, which depends on when the collector runs and grows with
// the machine (1,050–1,310 B per triangle on procedural scenes of 80k
// triangles on 2 cores, 1,860–2,690 on 16; TestGoBytesPerTriangle).
const (
	GPUBytesPerTriangle = 470
	GoBytesPerTriangle  = 3000
)

// maxSplitParts bounds the number of parts of a split.
const maxSplitParts = 1 << 16

// PartsReport describes a BuildParts run.
type PartsReport struct {
	Parts       int     // parts built (top leaves holding triangles)
	TopDepth    int     // depth of the deepest part below the root
	Resplits    int     // parts split again after running out of device memory
	MaxPartTris int     // triangles of the biggest part
	MaxTris     int     // the budget as triangles per part (0: no limit)
	SplitMs     float64 // the split: gathering triangles, choosing planes, clipping
	PartsMs     float64 // from the first part's build to the last one's end (wall time; overlaps the split)
	JoinMs      float64 // writing the joined tree
	Devices     []PartDevice
}

// PartDevice is one executor's share of a BuildParts run.
type PartDevice struct {
	Name      string
	Parts     int     // parts it built
	Triangles int     // their triangles
	BusyMs    float64 // time spent in their builds
	PeakBytes uint64  // the highest peak memory of its builds (device, or host on Go)
	// Phases sums its builds' phases (Stats.Phases: upload, large, small,
	// layout, download, ...) and "part_scene", the host's making of its
	// part scenes.
	Phases map[string]float64
}

// BuildParts builds the tree of scene as parts: the scene's top levels are
// split the way the builder's large phase splits a node (empty space first,
// then binned SAH with straddling triangles clipped), the biggest node
// first, until there are at least po.Parts parts and each fits the memory
// budget; each part (the triangles reaching its box) is built by Build with
// opts on one of po.Executors; the parts' trees are joined under the top
// nodes into one tree in the standard node format, referring to scene's
// triangles. A part whose build runs out of device memory is split in two
// and built again.
//
// With one part (po.Parts <= 1 and the scene within the budget) it returns
// Build's tree itself. The joined tree passes Validate and gives the same
// hits as Build's; its SAH cost is close to Build's (docs/parts.md).
// It returns ctx.Err() when ctx is cancelled, with no build left running.
func BuildParts(ctx context.Context, scene *scenes.Scene, opts Options, po PartOptions) (*Tree, *PartsReport, error) {
	return buildParts(ctx, scene, opts, po, buildStart)
}

// partBuild builds a part scene from its start: buildStart, or a test's
// stand-in.
type partBuild func(context.Context, *scenes.Scene, Options, *refbuild.Start) (*Tree, error)

// buildParts is BuildParts with the parts built by build when there are
// several.
func buildParts(ctx context.Context, scene *scenes.Scene, opts Options, po PartOptions, build partBuild) (*Tree, *PartsReport, error) {
	if scene == nil {
		return nil, nil, errors.New("kdtree: BuildParts of a nil scene")
	}
	o, err := opts.resolved(len(scene.Tris))
	if err != nil {
		return nil, nil, err
	}
	exs := po.Executors
	if len(exs) == 0 {
		exs = []exec.Executor{o.Executor}
	}
	want := po.Parts
	if want <= 0 {
		want = len(exs)
	}
	maxTris, err := partBudget(exs, po)
	if err != nil {
		return nil, nil, err
	}
	if want > maxSplitParts {
		return nil, nil, fmt.Errorf("kdtree: %d parts asked, limit %d", want, maxSplitParts)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if want <= 1 && (maxTris == 0 || len(scene.Tris) <= maxTris) {
		opts.Executor = exs[0]
		t, err := Build(ctx, scene, opts)
		if err == nil || !errors.Is(err, exec.ErrOutOfMemory) {
			rep := &PartsReport{Parts: 1, MaxPartTris: len(scene.Tris), MaxTris: maxTris}
			if t != nil {
				st := t.BuildStats()
				peak := st.DevicePeakBytes
				if exs[0].CUDA() == nil {
					peak = st.HostPeakBytes
				}
				rep.PartsMs = st.BuildMs
				rep.Devices = []PartDevice{{Name: exs[0].Name(), Parts: 1, Triangles: len(scene.Tris),
					BusyMs: st.BuildMs, PeakBytes: peak}}
			}
			return t, rep, err
		}
		want = 2
	}
	r := &partsRun{ctx: ctx, scene: scene, opts: opts, maxDepth: o.MaxDepth, exs: exs,
		rep: &PartsReport{MaxTris: maxTris}, build: build, scratch: make([]*vertexScratch, len(exs))}
	return r.run(splitGoal{maxTris: maxTris, parts: want, maxDepth: max(1, o.MaxDepth/2),
		bins: o.Bins, sah: refbuild.NewSAH(ptr(o.internal())), workers: runtime.GOMAXPROCS(0),
		smallNode: o.SmallNode, maxDup: o.MaxDuplication})
}

// partBudget returns the most triangles of a part (0: no limit).
func partBudget(exs []exec.Executor, po PartOptions) (int, error) {
	bpt := po.BytesPerTriangle
	budget := po.MemoryBudget
	anyGPU := false
	for _, ex := range exs {
		c := ex.CUDA()
		if c == nil {
			continue
		}
		anyGPU = true
		if po.MemoryBudget > 0 {
			continue
		}
		free, _, err := c.MemInfo()
		if err != nil {
			return 0, fmt.Errorf("kdtree: free memory of %s: %w", ex.Name(), err)
		}
		if b := int64(free / 10 * 9); budget == 0 || b < budget {
			budget = b
		}
	}
	if bpt <= 0 {
		bpt = GoBytesPerTriangle
		if anyGPU {
			bpt = GPUBytesPerTriangle
		}
	}
	switch {
	case budget < 0:
		return 0, fmt.Errorf("kdtree: MemoryBudget %d is negative", budget)
	case budget == 0:
		return 0, nil
	case budget/bpt < 1:
		return 0, fmt.Errorf("kdtree: MemoryBudget %d bytes holds no triangle at %d bytes per triangle", budget, bpt)
	}
	return int(min(budget/bpt, int64(MaxChildIndex-1))), nil
}

// partsRun is one BuildParts run past the one-part case.
type partsRun struct {
	ctx      context.Context
	scene    *scenes.Scene
	opts     Options
	maxDepth int
	exs      []exec.Executor
	rep      *PartsReport
	top      *partTop
	goal     splitGoal
	stats    []Stats // the parts' build statistics, for the joined tree's
	build    partBuild
	scratch  []*vertexScratch // each executor's (partScene)

	mu      sync.Mutex
	cond    *sync.Cond
	pending []int // top leaves waiting for an executor
	running int
	// splitting: the split still runs (a worker without a part waits);
	// firstBuild: when the first part's build started.
	splitting  bool
	firstBuild time.Time
	err        error
}

// run splits, builds the parts and joins them. The executors' workers
// start with the split: a part is handed out as soon as the split will not
// divide it again (splitGoal.ready), so the first parts build while the
// split goes on.
func (r *partsRun) run(g splitGoal) (*Tree, *PartsReport, error) {
	start := time.Now()
	r.goal = g
	t, dropped, err := newPartTop(r.scene, g.workers)
	if err != nil {
		return nil, nil, err
	}
	if t == nil {
		return NewTree(r.scene, nil, nil, scenes.Bounds{}, Stats{Device: r.deviceNames(), DroppedTriangles: dropped}),
			r.rep, nil
	}
	t.nodes[0].budget = refbuild.RootBudget(len(t.nodes[0].refs), g.maxDup)
	r.top = t
	r.cond = sync.NewCond(&r.mu)
	r.splitting = true
	wg := r.startWorkers()
	t.split(0, g, &r.mu, func() { r.handOut(false) }, func() bool { return r.err != nil || r.ctx.Err() != nil })
	r.mu.Lock()
	r.splitting = false
	r.handOut(true)
	r.rep.SplitMs = msSince(start)
	r.mu.Unlock()
	wg.Wait()
	if r.err == nil {
		r.err = r.ctx.Err()
	}
	if r.err != nil {
		return nil, nil, r.err
	}
	r.rep.PartsMs = msSince(r.firstBuild)

	r.report()
	mark := time.Now()
	nodes, refs, err := t.join(r.goal.workers)
	if err != nil {
		// The parts were built: say what that took.
		var peak uint64
		for _, d := range r.rep.Devices {
			peak = max(peak, d.PeakBytes)
		}
		return nil, r.rep, fmt.Errorf("%w; %d parts built (split %.0f ms, parts %.0f ms, peak %d bytes per part)",
			err, r.rep.Parts, r.rep.SplitMs, r.rep.PartsMs, peak)
	}
	r.rep.JoinMs = msSince(mark)
	st := Stats{Device: r.deviceNames(), BuildMs: msSince(start), DroppedTriangles: dropped,
		Phases: map[string]float64{"split": r.rep.SplitMs, "parts": r.rep.PartsMs, "join": r.rep.JoinMs}}
	for _, s := range r.stats {
		st.HostPeakBytes = max(st.HostPeakBytes, s.HostPeakBytes)
		st.DevicePeakBytes = max(st.DevicePeakBytes, s.DevicePeakBytes)
		st.Levels = max(st.Levels, s.Levels)
		if st.Limited == "" {
			st.Limited = s.Limited // a guard that cut a part's tree
		}
	}
	st.Levels += r.rep.TopDepth
	root := t.nodes[0].box
	tree := NewTree(r.scene, nodes, refs, scenes.Bounds{Min: root.Lo, Max: root.Hi}, st)
	tree.shape = &lazyShape{}
	return tree, r.rep, nil
}

// startWorkers starts one goroutine per executor, each building the
// biggest pending part as it frees up, until none is left and the split is
// done, or one fails; the returned group waits for them.
func (r *partsRun) startWorkers() *sync.WaitGroup {
	r.rep.Devices = make([]PartDevice, len(r.exs))
	var wg sync.WaitGroup
	for d := range r.exs {
		r.rep.Devices[d].Name = r.exs[d].Name()
		wg.Add(1)
		go func(d int) {
			defer wg.Done()
			r.worker(d)
		}(d)
	}
	return &wg
}

// handOut (r.mu held) adds to the pending parts every leaf holding
// references, not yet handed out, that the split will not divide again, or
// with all every such leaf, and wakes the workers.
func (r *partsRun) handOut(all bool) {
	have := r.top.countParts(0)
	added := false
	r.top.visit(0, func(i int) {
		n := &r.top.nodes[i]
		if !n.interior && len(n.refs) > 0 && !n.queued && (all || r.goal.ready(n, have)) {
			n.queued = true
			r.pending = append(r.pending, i)
			added = true
		}
	})
	if added {
		r.sortPending()
	}
	r.cond.Broadcast()
}

// sortPending orders the pending parts biggest first (ties by node index).
func (r *partsRun) sortPending() {
	n := r.top.nodes
	sort.SliceStable(r.pending, func(a, b int) bool {
		return len(n[r.pending[a]].refs) > len(n[r.pending[b]].refs)
	})
}

// worker builds parts on executor d until none is left.
func (r *partsRun) worker(d int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		for len(r.pending) == 0 && (r.running > 0 || r.splitting) && r.err == nil {
			r.cond.Wait()
		}
		if r.err == nil {
			r.err = r.ctx.Err()
		}
		if len(r.pending) == 0 || r.err != nil {
			r.cond.Broadcast()
			return
		}
		if r.firstBuild.IsZero() {
			r.firstBuild = time.Now()
		}
		i := r.pending[0]
		r.pending = r.pending[1:]
		n := &r.top.nodes[i]
		refs, depth, box, budget := n.refs, n.depth, n.box, n.budget
		r.running++
		r.mu.Unlock()
		start := time.Now()
		p, st, err := r.buildPart(d, refs, depth, box, budget)
		busy := msSince(start)
		r.mu.Lock()
		r.running--
		r.done(i, d, p, st, busy, err)
		r.cond.Broadcast()
	}
}

// done records the outcome of top leaf i's build on executor d (r.mu
// held): the part, or its split into two pending parts after running out
// of device memory, or the run's error.
func (r *partsRun) done(i, d int, p *partResult, st Stats, busy float64, err error) {
	dev := &r.rep.Devices[d]
	dev.BusyMs += busy
	switch {
	case err == nil:
		n := &r.top.nodes[i]
		p.top = i
		n.part, n.refs = p, nil
		r.stats = append(r.stats, st)
		dev.Parts++
		dev.Triangles += len(p.ids)
		peak := st.DevicePeakBytes
		if r.exs[d].CUDA() == nil {
			peak = st.HostPeakBytes
		}
		dev.PeakBytes = max(dev.PeakBytes, peak)
		if dev.Phases == nil {
			dev.Phases = map[string]float64{}
		}
		for k, v := range st.Phases {
			dev.Phases[k] += v
		}
	case errors.Is(err, exec.ErrOutOfMemory) && r.ctx.Err() == nil:
		n := &r.top.nodes[i]
		axis, pos, ok := r.top.splitPlane(n, &r.goal.sah, r.goal.bins, r.goal.workers)
		if !ok || !r.top.divide(i, axis, pos, r.goal.workers) {
			r.err = fmt.Errorf("kdtree: part of %d triangles out of memory on %s and cannot be split: %w",
				len(n.refs), r.exs[d].Name(), err)
			return
		}
		r.rep.Resplits++
		for _, k := range r.top.leaves(i) {
			r.top.nodes[k].queued = true
			r.pending = append(r.pending, k)
		}
		r.sortPending()
	case r.err == nil:
		r.err = err
	}
}

// buildPart builds the part of refs (a top leaf at depth with box) on
// executor d: the whole build's subtree of that leaf (refbuild.Start).
func (r *partsRun) buildPart(d int, refs []splitRef, depth int, box refbuild.AABB, budget uint32) (*partResult, Stats, error) {
	left := r.maxDepth - depth
	if left < 1 {
		// A leaf: no depth left below it.
		p := &partResult{ids: make([]uint32, len(refs)), dev: d}
		for k := range refs {
			p.ids[k] = refs[k].tri
		}
		return p, Stats{}, nil
	}
	if r.scratch[d] == nil {
		r.scratch[d] = newVertexScratch(len(r.scene.Verts))
	}
	mark := time.Now()
	in := partScene(r.scene, refs, box, r.scratch[d], r.goal.workers)
	in.start.Budget, in.start.HasBudget = budget, true
	prep := msSince(mark)
	o := r.opts
	o.Executor, o.Progress, o.MaxDepth = r.exs[d], nil, left
	t, err := r.build(r.ctx, in.scene, o, in.start)
	if err != nil {
		return nil, Stats{}, err
	}
	st := t.BuildStats()
	st.Phases = maps.Clone(st.Phases)
	if st.Phases == nil {
		st.Phases = map[string]float64{}
	}
	st.Phases["part_scene"] += prep
	return &partResult{ids: in.ids, tree: t, dev: d}, st, nil
}

// buildStart is Build of a part scene from its start.
func buildStart(ctx context.Context, s *scenes.Scene, o Options, st *refbuild.Start) (*Tree, error) {
	return buildHooked(ctx, s, o, func(b *refbuild.Builder) { b.Start = st })
}

// report fills the report's part counts from the top tree.
func (r *partsRun) report() {
	r.top.visit(0, func(i int) {
		n := &r.top.nodes[i]
		if n.part == nil {
			return
		}
		r.rep.Parts++
		r.rep.TopDepth = max(r.rep.TopDepth, n.depth)
		r.rep.MaxPartTris = max(r.rep.MaxPartTris, len(n.part.ids))
	})
}

// deviceNames returns the executors' names, each once, joined by "+".
func (r *partsRun) deviceNames() string {
	var names []string
	seen := map[string]bool{}
	for _, ex := range r.exs {
		if n := ex.Name(); !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	return strings.Join(names, "+")
}

// msSince returns the milliseconds since t.
func msSince(t time.Time) float64 { return float64(time.Since(t).Nanoseconds()) / 1e6 }

// ptr returns a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }
