package gpubuild

import (
	"fmt"
	"time"

	"github.com/kdbuild/kdbuild/kdtree/internal/refbuild"
)

// The CUDA build, phase by phase: prepareCUDA and the first level
// (prepareLevels), the large-node levels (largePhase: largeCUDAPipe, or
// largeCUDA, level by level), the small-node subtrees and the layout
// (smallPhase: on the device, or in Go on the parked references), each
// phase in a file of its own (prepare_cuda.go, large_cuda.go,
// large_pipe.go, small_cuda.go, small_early.go, layout_cuda.go,
// top_cuda.go). Every step has a Go reference in refbuild (build.go,
// level.go, small.go, layout.go) that makes the same records.

// Build is the build of b's scene on its CUDA executor, with cfg's
// paths and thresholds (see buildCUDA).
func Build(b *refbuild.Builder, cfg *Config) (*refbuild.BuildResult, error) {
	res, _, err := BuildKept(b, cfg, false)
	return res, err
}

// buildCUDA is the build on the CUDA executor. When it fails or is
// cancelled it waits for the work it queued before it frees the device
// memory: nothing of it is left running.
func (b *gpuBuild) buildCUDA() (_ *refbuild.BuildResult, err error) {
	ctx := b.Ex.CUDA()
	ctx.ResetPeak()
	d := &devLevel{ex: b.Ex, ctx: ctx, cfg: b.cfg, maxDup: b.Opt.MaxDuplication}
	defer func() {
		if err != nil {
			ctx.Synchronize() // the error is err
		}
		d.free()
	}()
	b.Report("prepare", 0, 0, 0)

	// Pipelined levels for scenes under pipeMaxTris triangles: a larger
	// scene's levels keep the device busier than the host (8.9M-triangle
	// grid on an H100: 239-281 ms on the device pipelined, 208-230 level by
	// level, where the host books each level while the device runs the
	// next). A pipelined build does not wait for the count of kept
	// triangles: its first level runs on the scene's count as a bound.
	pipe := b.cfg.on(PathPipeline) && b.OnLevel == nil && len(b.Scene.Tris) < b.cfg.pipeMaxTris
	queued := pipe && b.cfg.on(PathQueuedPrepare) && b.Start == nil
	// A pipelined build lays its tree out on the device (top_cuda.go):
	// the host keeps no records of the levels, unless the device's lists
	// outgrow their room (then level by level, with records).
	d.deviceTop = pipe && b.cfg.deviceTop() && !b.noDeviceTop
	if !d.deviceTop {
		b.room = startHostRoom(len(b.Scene.Tris))
	}
	n, err := b.prepareLevels(d, queued)
	if err != nil || n == 0 {
		return &refbuild.BuildResult{}, err
	}
	rs, n, err := b.largePhase(d, n, pipe, queued)
	if err != nil || n == 0 {
		return &refbuild.BuildResult{}, err
	}
	root, err := d.takeRoot()
	if err != nil {
		return nil, err
	}
	res := &refbuild.BuildResult{Bounds: refbuild.ToBounds(root)}
	if d.deviceTop {
		out, ok, err := b.finishDeviceTop(d, res)
		if err != nil || ok {
			return out, err
		}
		// The small phase's output overflowed every room: build again
		// with the host's records (the Go small phase needs them).
		d.free()
		b.noDeviceTop = true
		b.Phases["small.retry"] += float64(time.Since(b.Phase).Nanoseconds()) / 1e6
		return b.buildCUDA()
	}
	return res, b.smallPhase(d, rs, res)
}

// prepareLevels is the prepare phase: the scene to the device ("upload"),
// then triangles gathered, tested and listed there (prepareCUDA), the
// level buffers, the first level and the root box queued. It returns the
// first level's references: the kept triangles, or with queued their
// bound, the scene's triangles (0: no triangle is kept).
func (b *gpuBuild) prepareLevels(d *devLevel, queued bool) (int, error) {
	b.StartPhase()
	n, err := b.prepareCUDA(d, queued)
	if err != nil || n == 0 {
		b.EndPhase("prepare")
		return 0, err
	}
	t0 := b.subPhase("prepare.kept", b.Phase) // gather, test and compact (the count read back unless queued)
	if st := b.Start; st != nil {
		// A part of a larger build: its boxes and root box (every
		// triangle of a part is kept, so the kept list is the identity).
		if err := st.Check(len(b.Scene.Tris)); err != nil {
			return 0, err
		}
		if n != len(b.Scene.Tris) {
			return 0, fmt.Errorf("kdtree: a part's start with %d of its %d triangles dropped", len(b.Scene.Tris)-n, len(b.Scene.Tris))
		}
		d.start = st
	}
	if err := d.reserve(n, b.Opt.Bins); err != nil {
		return 0, err
	}
	if err := d.startLevels(n); err != nil {
		return 0, err
	}
	t0 = b.subPhase("prepare.levels", t0) // the level buffers, the first level queued
	// The root box: tight bounds of one node holding every reference
	// (queued; the first level's bookkeeping waits for it: takeRoot).
	if err := d.rootBox(n); err != nil {
		return 0, err
	}
	b.subPhase("prepare.root", t0) // its reduction queued
	b.EndPhase("prepare")
	b.RootRefs = n
	return n, b.Ctx.Err()
}

// largePhase runs the large-node levels from the first level of n
// references: pipelined (largeCUDAPipe) when pipe, falling back to
// largeCUDA when a level outgrew the pipeline's buffers, else largeCUDA.
// It returns the records and the kept triangles (0: none, the levels ran
// on an empty root).
func (b *gpuBuild) largePhase(d *devLevel, n int, pipe, queued bool) (*refbuild.Records, int, error) {
	b.StartPhase()
	rs := &refbuild.Records{}
	// The root's box is filled in by takeRoot before the level is booked
	// (a part's is known: its first level's table is uploaded with it).
	nodes := []refbuild.LNode{{Off: 0, Cnt: uint32(n), Depth: 0, Rec: rs.Add(), Budget: b.StartBudget(n)}}
	if d.start != nil {
		nodes[0].Box = d.root
	}
	over := false
	if pipe {
		// (The parked ranges' records are in rs: see levelBook.book.)
		var err error
		if _, over, err = b.largeCUDAPipe(d, nodes, n, rs); err != nil {
			return nil, 0, err
		}
	}
	if queued {
		// The count the levels ran on (home with the root box).
		var err error
		if n, err = b.keptCount(d); err != nil || n == 0 {
			// n == 0: every triangle dropped, the empty tree, as when the
			// count is read back.
			b.EndPhase("large")
			return nil, 0, err
		}
	}
	if over {
		if d.topMissed {
			b.cfg.Counts.add(CountTopFallback)
		} else {
			b.cfg.Counts.add(CountPipeFallback)
		}
		d.deviceTop = false
		b.Phases["large.retry"] += float64(time.Since(b.Phase).Nanoseconds()) / 1e6
		// A level outgrew the buffers reserved for the pipeline: the
		// level-synchronous phase, which grows them, builds again.
		root, err := d.takeRoot()
		if err != nil {
			return nil, 0, err
		}
		if err := d.restart(n); err != nil {
			return nil, 0, err
		}
		b.Levels = 0
		b.ResetBudgetLeaves()
		rs = &refbuild.Records{}
		nodes = []refbuild.LNode{{Box: root, Off: 0, Cnt: uint32(n), Depth: 0, Rec: rs.Add(), Budget: b.StartBudget(n)}}
	}
	if !pipe || over {
		if _, err := b.largeCUDA(d, nodes, n, rs); err != nil {
			return nil, 0, err
		}
	}
	return rs, n, nil
}

// smallPhase runs the small-node phase and the layout after a large phase
// whose records (rs) the host kept: on the device (smallAndLayoutCUDA), or
// in Go on the parked references brought home (KDBUILD_GPU_OFF=device-small,
// or the device's output overflowed every room it tried). It sets res's
// nodes and references.
func (b *gpuBuild) smallPhase(d *devLevel, rs *refbuild.Records, res *refbuild.BuildResult) error {
	// The records of the parked ranges (leaves and small roots whose
	// references stay on the device) were made as they were booked;
	// parkedToHost brings the references home when a host step needs them.
	t0 := time.Now()
	devSmall := b.cfg.on(PathDeviceSmall)
	smallOff, smallCnt := rs.SmallOff, rs.SmallCnt
	if !devSmall {
		if err := d.parkedToHost(rs, smallOff, smallCnt); err != nil {
			return err
		}
	}
	b.subPhase("large.parked", t0)
	b.EndPhase("large")
	b.SampleHost()
	b.StartPhase()
	if err := b.Enter("small", b.Levels, len(rs.Small)); err != nil {
		return err
	}
	if devSmall {
		done, err := b.smallAndLayoutCUDA(d, rs, res, smallOff, smallCnt)
		if err != nil || done {
			return err
		}
		// The device small phase overflowed its output: Go small phase.
		if err := d.parkedToHost(rs, smallOff, smallCnt); err != nil {
			return err
		}
	}
	if err := d.smallBoxes(rs, smallOff); err != nil {
		return err
	}
	b.gatherTris() // the Go small phase clips the triangles
	if err := b.SmallGo(rs); err != nil {
		return err
	}
	b.DevPeak = d.ctx.PeakBytes()
	b.EndPhase("small")
	if err := b.Enter("layout", b.Levels, 0); err != nil {
		return err
	}
	b.StartPhase()
	var err error
	if res.Nodes, res.Refs, err = refbuild.LayoutGo(rs); err != nil {
		return err
	}
	b.EndPhase("layout")
	return nil
}
